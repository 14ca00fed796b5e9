"""Feeds each processed page to the crawl's page-type site evidence (``crawler/sitetypes.py``).

Runs after ``pipelines.process`` (the record has its page-level type, list entries and whether a
feed listed it) and before the state pipeline, which may drop the record (revisits, duplicates):
a dropped page is evidence too.
"""

from __future__ import annotations

from scrapy.crawler import Crawler

from extraction.record import Record


class SiteTypesPipeline:
    """Gives every record without an error to the spider's ``site_types`` (a spider without one: nothing)."""

    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> SiteTypesPipeline:
        return cls(crawler)

    def process_item(self, item: Record) -> Record:
        evidence = getattr(self.crawler.spider, "site_types", None)
        if evidence is not None and not item.error:
            evidence.observe(item)
        return item
