"""Keeps each page's HTML and screenshot on disk, content-addressed, for re-extraction.

HTML is stored as gzip of UTF-8 with a byte-order mark: the browser (or our charset
detection) already decoded the page, and the BOM overrides any stale ``<meta charset>``
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

from scrapy.crawler import Crawler
from scrapy.exceptions import NotConfigured
from scrapy.settings import BaseSettings
from scrapy.statscollectors import StatsCollector

from crawler.items import PageItem

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class ArchiveConfig:
    """ARCHIVE_* settings."""

    enabled: bool = True
    directory: Path = Path("output")

    @classmethod
    def from_settings(cls, settings: BaseSettings) -> ArchiveConfig:
        """Return the config read from ARCHIVE_ENABLED and ARCHIVE_DIR."""
        return cls(
            enabled=settings.getbool("ARCHIVE_ENABLED", True),
            directory=Path(settings.get("ARCHIVE_DIR", "output")),
        )


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
    """Writes ``item.html`` and ``item.screenshot_png``; sets html_file and screenshot_file."""

    def __init__(self, store: ContentStore, stats: StatsCollector) -> None:
        self.store = store
        self.stats = stats

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> ArchivePipeline:
        config = ArchiveConfig.from_settings(crawler.settings)
        if not config.enabled:
            raise NotConfigured("ARCHIVE_ENABLED is off: no HTML or screenshots are kept")
        assert crawler.stats is not None
        return cls(ContentStore(config.directory), crawler.stats)

    def process_item(self, item: PageItem) -> PageItem:
        if item.html is not None:
            item.html_file = self._put("html", html_archive_bytes(item.html), ".html.gz")
        if item.screenshot_png is not None:
            item.screenshot_file = self._put("screenshots", item.screenshot_png, ".png")
        return item

    def _put(self, kind: str, data: bytes, suffix: str) -> str:
        path, written = self.store.put(kind, data, suffix)
        self.stats.inc_value(f"archive/{kind}/{'written' if written else 'exists'}")
        return path
