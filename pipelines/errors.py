"""Decides whether failed pages (items with ``error``) reach the feed.

With EXPORT_ERROR_ITEMS on (the default) the corpus doubles as a crawl log: every URL the
crawl tried is there, failures with their reason. Off, failed pages are dropped (and
counted under ``export/dropped/<reason>``).
"""

from __future__ import annotations

from scrapy.crawler import Crawler
from scrapy.exceptions import DropItem
from scrapy.statscollectors import StatsCollector

from extraction.record import Record


class ErrorItemFilterPipeline:
    """Drops items whose ``error`` is set, unless EXPORT_ERROR_ITEMS is on."""

    def __init__(self, export_errors: bool, stats: StatsCollector) -> None:
        self.export_errors = export_errors
        self.stats = stats

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> ErrorItemFilterPipeline:
        assert crawler.stats is not None
        return cls(crawler.settings.getbool("EXPORT_ERROR_ITEMS", True), crawler.stats)

    def process_item(self, item: Record) -> Record:
        if item.error and not self.export_errors:
            self.stats.inc_value(f"export/dropped/{item.error}")
            raise DropItem(f"failed page not exported ({item.error}): {item.canonical_url}")
        return item
