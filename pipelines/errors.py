"""Decides whether failed pages (items with ``error``) reach the feed.

With EXPORT_ERROR_ITEMS on (the default) the corpus doubles as a crawl log: every URL the
crawl tried is there, failures with their reason. Off, failed pages are dropped (and
counted under ``export/dropped/<reason>``).
"""

from __future__ import annotations

from scrapy.crawler import Crawler
from scrapy.exceptions import DropItem, NotConfigured
from scrapy.statscollectors import StatsCollector

from crawler.items import PageItem


class ErrorItemFilterPipeline:
    """Drops items whose ``error`` is set, when EXPORT_ERROR_ITEMS is off."""

    def __init__(self, stats: StatsCollector) -> None:
        self.stats = stats

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> ErrorItemFilterPipeline:
        if crawler.settings.getbool("EXPORT_ERROR_ITEMS", True):
            raise NotConfigured("EXPORT_ERROR_ITEMS is on: failed pages are exported")
        assert crawler.stats is not None
        return cls(crawler.stats)

    def process_item(self, item: PageItem) -> PageItem:
        if item.error:
            self.stats.inc_value(f"export/dropped/{item.error}")
            raise DropItem(f"failed page not exported ({item.error}): {item.canonical_url}")
        return item
