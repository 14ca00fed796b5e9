"""Types each page as article, list or other (paper 000) before the content stages.

Runs after the archive and before template cleaning, so the DOM/URL model sees the page as it
came (the models were trained on whole pages). With a screenshot (rendered pages) the image CNN
and the DOM/URL model are fused; without one (plain HTTP sites, rendering off, a failed
capture) the DOM/URL model decides alone. Sets ``page_type``, ``page_type_confidence`` and
``page_type_source`` ("fusion" or "dom"), and on list pages (p(list) at least the route
threshold) ``entries`` from the list extractor, taken here before template cleaning.

The models are loaded and checked against ``models/pagetype/meta.json`` when the crawl starts:
a missing or mismatched model stops the crawl with the reason (``PAGETYPE_ENABLED=False`` crawls
without it: the block stage then types pages with the DOM/URL model itself).

Stats: ``pagetype/<article|list|other>``, ``pagetype/source/<fusion|dom>``, ``pagetype/list_entries``,
``pagetype/error``.
"""

from __future__ import annotations

import logging
from pathlib import Path

from scrapy.crawler import Crawler
from scrapy.exceptions import NotConfigured
from scrapy.statscollectors import StatsCollector

from crawler.items import PageItem
from extraction.dom.html import parse_html
from extraction.pagetype.models import MODELS_DIR, PageTypeModels, shared_models
from extraction.process import is_list, list_entries

logger = logging.getLogger(__name__)


class PageTypePipeline:
    """Sets ``page_type``, ``page_type_confidence`` and ``page_type_source``."""

    def __init__(self, models: PageTypeModels, stats: StatsCollector) -> None:
        self.models = models
        self.stats = stats

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> PageTypePipeline:
        if not crawler.settings.getbool("PAGETYPE_ENABLED", True):
            raise NotConfigured("PAGETYPE_ENABLED is off")
        assert crawler.stats is not None
        folder = crawler.settings.get("PAGETYPE_MODEL_DIR") or MODELS_DIR
        models = shared_models(Path(folder))  # PageTypeModelError stops the crawl
        image = models.image.name if models.image else "none"
        logger.info("Page-type models: DOM/URL + %s screenshot model (fusion weight %.2f)", image,
                    models.fusion_weight)
        return cls(models, crawler.stats)

    def process_item(self, item: PageItem) -> PageItem:
        if item.html is None or item.error is not None:
            return item
        try:
            if item.tree is None:
                item.tree = parse_html(item.html)
            decision = self.models.classify(item.tree, item.final_url or item.canonical_url, item.screenshot_png)
        except Exception as exc:  # one page must not stop the crawl: the block stage types it by DOM
            logger.warning("Page type failed on %s: %s", item.canonical_url, exc)
            self.stats.inc_value("pagetype/error")
            item.flags.append("pagetype_failed")
            return item
        item.page_type = decision.page_type
        item.page_type_confidence = round(decision.confidence, 4)
        item.page_type_source = decision.source
        if is_list(decision.page_type, decision.confidence, self.models):
            # Before template cleaning: a list's headlines recur on the site's other list pages.
            entries = list_entries(item.tree, item.final_url or item.canonical_url)
            item.entries = [{"title": entry.text, "url": entry.url} for entry in entries]
            self.stats.inc_value("pagetype/list_entries", len(entries))
        self.stats.inc_value(f"pagetype/{decision.page_type}")
        self.stats.inc_value(f"pagetype/source/{decision.source}")
        return item
