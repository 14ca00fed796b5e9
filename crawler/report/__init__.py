"""The crawl report: one self-contained HTML page per crawl (:mod:`crawler.report.html`) from its records
(:mod:`crawler.report.summary`), its stats, its template store and, for the sampled screenshots, its archive.

Written when a crawl ends (``crawler.extensions.CrawlReportExtension``, REPORT_ENABLED / REPORT_FILE) and by
``scrapy report`` from a crawl's outputs (the JSONL feed, the stats file, the template store).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from crawler.files import replace_atomically
from crawler.report.summary import CrawlSummary, Sampled
from extraction.warc import read_capture
from templates_db.sqlite import DatabaseError
from templates_db.store import open_store, store_exists

logger = logging.getLogger(__name__)

__all__ = ["CrawlSummary", "load_screenshot", "template_counts", "write_report"]


def load_screenshot(item: Sampled) -> bytes | None:
    """Return a sampled page's screenshot from its WARC capture or its screenshot file (None when gone)."""
    try:
        if item.screenshot_file:
            return Path(item.screenshot_file).read_bytes()
        if item.warc_file and item.warc_offset is not None:
            capture = read_capture(item.warc_file, item.warc_offset)
            return capture.screenshot if capture is not None else None
    except (OSError, ValueError, OverflowError) as exc:  # gone, or an offset no file has
        logger.warning("Screenshot of %s not found: %s", item.url, exc)
    return None


def template_counts(location: str | None, sites: list[str]) -> dict[str, int] | None:
    """Return the number of active templates per site in the store at ``location`` (None when there is none)."""
    if not location or not store_exists(location):
        return None
    try:
        store = open_store(location)
        try:
            return {site: len(store.templates(site)) for site in sites}
        finally:
            store.close()
    except (DatabaseError, OSError) as exc:
        logger.warning("Template store %s not read for the report: %s", location, exc)
        return None


def write_report(path: str | Path, summary: CrawlSummary, stats: Mapping[str, Any] | None,
                 templates_store: str | None = None, title: str = "Crawl report") -> Path:
    """Write the report to ``path`` (atomically: ``crawler.files.replace_atomically``); return the path."""
    from crawler.report.html import render_report  # matplotlib: loaded when a report is made, not by every crawl

    page = render_report(summary, stats, template_counts(templates_store, list(summary.sites)), load_screenshot,
                         title)
    return replace_atomically(path, lambda handle: handle.write(page.encode("utf-8")))
