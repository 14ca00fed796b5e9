"""Fills title, language and text of each page with the full-text baseline.

This is the first extraction stage: ``text`` is every visible text block of the body
(``extraction_method = "fulltext"``). Later stages replace it with cleaner text.
"""

from __future__ import annotations

import logging

from scrapy.crawler import Crawler
from scrapy.statscollectors import StatsCollector

from crawler.items import PageItem
from extraction.dom.html import declared_lang, page_title, parse_html
from extraction.dom.lang import script_language
from extraction.dom.text import visible_text

logger = logging.getLogger(__name__)


class FullTextPipeline:
    """Sets ``title``, ``lang``, ``text`` and ``extraction_method`` from ``item.html``."""

    method = "fulltext"

    def __init__(self, stats: StatsCollector) -> None:
        self.stats = stats

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> FullTextPipeline:
        assert crawler.stats is not None
        return cls(crawler.stats)

    def process_item(self, item: PageItem) -> PageItem:
        if item.html is None:
            return item
        root = item.tree if item.tree is not None else parse_html(item.html)
        item.title = page_title(root)
        item.text = visible_text(root)
        item.lang = declared_lang(root) or script_language(item.text)
        item.extraction_method = self.method
        if not item.text:
            self.stats.inc_value("extract/empty")
            logger.debug("No visible text on %s", item.canonical_url)
        else:
            self.stats.inc_value(f"extract/{self.method}")
        return item
