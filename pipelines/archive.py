"""Keeps each page's HTML (as fetched, and the browser's DOM when rendered) and screenshot on disk,
content-addressed, for re-extraction.

HTML is stored as gzip of UTF-8 with a byte-order mark: our charset detection (or the browser)
already decoded the page, and the BOM overrides any stale ``<meta charset>``
left in the markup, as the HTML standard's encoding sniffing says, so every reader decodes
it right. Files are named by the SHA-256 of their content (``html/ab/abcd....html.gz``,
``screenshots/ab/abcd....png`` under ARCHIVE_DIR), written atomically, never twice.
"""

from __future__ import annotations

import codecs
import gzip
import hashlib
import logging
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from scrapy.crawler import Crawler
from scrapy.exceptions import NotConfigured
from scrapy.statscollectors import StatsCollector

from extraction.config import ComponentConfig
from extraction.record import Record

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class ArchiveConfig(ComponentConfig):
    """ARCHIVE_* settings."""

    prefix: ClassVar[str] = "ARCHIVE"
    enabled: bool = True  # off: no HTML or screenshots are kept
    dir: str = "output"  # html/ and screenshots/ are created under it


class ContentStore:
    """A folder of files named by the SHA-256 of their bytes."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def put(self, kind: str, data: bytes, suffix: str) -> tuple[str, bool]:
        """Store ``data``; returns (path, written) where written is False if it existed."""
        digest = hashlib.sha256(data).hexdigest()
        path = self.root / kind / digest[:2] / f"{digest}{suffix}"
        if path.exists():
            return str(path), False
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        return str(path), True


def html_archive_bytes(html: str) -> bytes:
    """Return the archived form of a page's HTML: gzip of BOM + UTF-8, reproducible."""
    return gzip.compress(codecs.BOM_UTF8 + html.encode("utf-8", "surrogatepass"), mtime=0)


def read_archived_html(path: str | Path) -> str:
    """Return the HTML text of an archived page."""
    return gzip.decompress(Path(path).read_bytes()).decode("utf-8-sig")


class ArchivePipeline:
    """Writes the page's HTML, rendered DOM and screenshot (``item.page``); sets html_file, rendered_file and
    screenshot_file."""

    def __init__(self, store: ContentStore, stats: StatsCollector) -> None:
        self.store = store
        self.stats = stats

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> ArchivePipeline:
        config = ArchiveConfig.from_settings(crawler.settings)
        if not config.enabled:
            raise NotConfigured("ARCHIVE_ENABLED is off: no HTML or screenshots are kept")
        assert crawler.stats is not None
        return cls(ContentStore(Path(config.dir)), crawler.stats)

    def process_item(self, item: Record) -> Record:
        page = item.page
        if page is None or page.refusal is not None:  # nothing worth keeping: the record says why
            return item
        item.html_file = self._put("html", html_archive_bytes(page.text), ".html.gz")
        if page.rendered is not None:
            item.rendered_file = self._put("html", html_archive_bytes(page.rendered), ".html.gz")
        if page.screenshot is not None:
            suffix = ".jpg" if page.screenshot.startswith(b"\xff\xd8\xff") else ".png"
            item.screenshot_file = self._put("screenshots", page.screenshot, suffix)
        return item

    def _put(self, kind: str, data: bytes, suffix: str) -> str:
        path, written = self.store.put(kind, data, suffix)
        self.stats.inc_value(f"archive/{kind}/{'written' if written else 'exists'}")
        return path
