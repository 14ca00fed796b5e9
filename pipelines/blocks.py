"""Replaces the full text with the clean text: page type, then block classifier or list extractor.

Runs after the template stage and the full-text stage (which set ``title`` and ``lang`` and
leave the full text as the fallback when this stage is off). It reads ``item.tree`` (the page
after template cleaning) and runs :func:`extraction.process.run`: ``page_type`` from the DOM
models (set by ``PageTypePipeline``; typed here by the DOM/URL model when that stage is off),
articles through the SVM block classifier and paragraph denoiser (ONNX, onnxruntime), lists
through the list extractor. It writes ``text`` (one paragraph per line), ``extraction_method``
("svm" or the list method), ``page_type``, ``block_stats`` and, on lists, ``entries``.

The models are loaded and validated against their ``meta.json`` when the crawl starts: a
missing or mismatched model stops the crawl at once with the reason (``BLOCKS_ENABLED=False``
crawls with the full text instead).

Stats: ``blocks/page_type/<article|list>``, ``blocks/kept``, ``blocks/dropped``,
``blocks/paragraphs_trimmed``, ``blocks/fallback`` (no block passed: the likeliest kept),
``blocks/empty``, ``blocks/error``.
"""

from __future__ import annotations

import logging

from scrapy.crawler import Crawler
from scrapy.exceptions import NotConfigured
from scrapy.statscollectors import StatsCollector

from crawler.items import PageItem
from extraction.blockclf.classifier import BlockModels, shared_models
from extraction.dom.html import parse_html
from extraction.process import LIST_METHOD, run

logger = logging.getLogger(__name__)


class BlockClassifierPipeline:
    """Sets ``text``, ``extraction_method``, ``page_type`` and ``block_stats``."""

    def __init__(self, models: BlockModels, stats: StatsCollector) -> None:
        self.models = models
        self.stats = stats

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> BlockClassifierPipeline:
        if not crawler.settings.getbool("BLOCKS_ENABLED", True):
            raise NotConfigured("BLOCKS_ENABLED is off: the full text is exported")
        assert crawler.stats is not None
        models = shared_models(crawler.settings.get("BLOCKS_MODEL_DIR") or None)  # ModelError stops the crawl
        logger.info("Block models: %s", models.meta.get("summary", "loaded"))
        return cls(models, crawler.stats)

    def process_item(self, item: PageItem) -> PageItem:
        if item.html is None or item.error is not None:
            return item
        try:
            root = item.tree if item.tree is not None else parse_html(item.html)
            result = run(root, item.final_url or item.canonical_url, self.models, page_type=item.page_type,
                         confidence=item.page_type_confidence, screenshot=item.screenshot_png)
        except Exception as exc:  # one page must not stop the crawl: it keeps its full text
            logger.warning("Block classifier failed on %s: %s", item.canonical_url, exc)
            self.stats.inc_value("blocks/error")
            item.flags.append("blocks_failed")
            return item
        extraction = result.extraction
        item.page_type = extraction.page_type
        if result.page_type is not None:  # typed here (the page-type stage is off or failed)
            item.page_type_confidence = round(result.page_type.confidence, 4)
            item.page_type_source = result.page_type.source
        item.text = extraction.text
        self.stats.inc_value(f"blocks/page_type/{extraction.page_type}")
        if result.decision is not None:
            item.extraction_method = "svm"
            item.block_stats = result.decision.stats()
            self.stats.inc_value("blocks/kept", item.block_stats["blocks_kept"])
            self.stats.inc_value("blocks/dropped", item.block_stats["blocks"] - item.block_stats["blocks_kept"])
            self.stats.inc_value("blocks/paragraphs_trimmed", item.block_stats["paragraphs_trimmed"])
            if result.decision.fallback:
                self.stats.inc_value("blocks/fallback")
        else:
            item.extraction_method = LIST_METHOD
        if extraction.entries and item.entries is None:  # the page-type stage found them before cleaning
            item.entries = [{"title": entry.text, "url": entry.url} for entry in extraction.entries]
        if not item.text:
            self.stats.inc_value("blocks/empty")
        return item
