"""Runs every fetched page through the library's one flow, :func:`extraction.process.process`.

The page (``item.page``, built by the spider from the response) is typed, its site's templates
learned and removed, its text extracted, exactly as ``scrapy extract`` does offline; the record
the spider started (``item``: URL, fetch fields) is filled in place. The archive runs before this
(it keeps the page as fetched) and the export filter after. The page is dropped from the item
once processed, so it does not stay in memory while the feed is written.

The models are loaded and checked against their ``meta.json`` when the crawl starts: a missing
or mismatched model stops the crawl with the reason (PAGETYPE_ENABLED / BLOCKS_ENABLED off crawl
without them). The site template library (TEMPLATES_*) is opened here and closed with the spider.

Stats: see ``extraction.process`` (``page/refused/<reason>``, ``pagetype/...``, ``templates/...``,
``blocks/...``, ``extract/<method>``, ``extract/empty``).
"""

from __future__ import annotations

import logging

from scrapy import signals
from scrapy.crawler import Crawler
from scrapy.statscollectors import StatsCollector

from extraction.process import Context, process
from extraction.record import Record
from templates_db.library import TemplateLibrary, TemplatesConfig

logger = logging.getLogger(__name__)


def open_library(crawler: Crawler, stats: StatsCollector) -> TemplateLibrary | None:
    """Return the crawl's template library (closed with the spider), or None when TEMPLATES_ENABLED is off."""
    config = TemplatesConfig.from_settings(crawler.settings)
    if not config.enabled:
        return None
    library = TemplateLibrary.open(config, count=stats.inc_value)
    crawler.signals.connect(library.close, signal=signals.spider_closed, weak=False)
    return library


class ProcessPipeline:
    """Fills each item from its page with :func:`extraction.process.process`."""

    def __init__(self, context: Context) -> None:
        self.context = context

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> ProcessPipeline:
        stats = crawler.stats
        assert stats is not None
        context = Context.from_settings(crawler.settings, templates=open_library(crawler, stats),
                                        count=stats.inc_value)  # a ModelError stops the crawl here
        models = context.page_models
        if models is not None:
            image = models.image.name if models.image else "none"
            logger.info("Page-type models: DOM/URL + %s screenshot model (fusion weight %.2f)", image,
                        models.fusion_weight)
        if context.block_models is not None:
            logger.info("Block models: %s", context.block_models.meta.get("summary", "loaded"))
        return cls(context)

    def process_item(self, item: Record) -> Record:
        page, item.page = item.page, None
        if page is None or item.error is not None:
            return item
        return process(page, self.context, item)
