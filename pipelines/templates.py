"""Removes each site's templates (common noise, paper 004) from the page before extraction.

Runs after the archive (which keeps the page as fetched) and before the text stages: it takes
the tree the template middleware parsed (``item.tree``, else parses ``item.html``), uses the
site key the middleware resolved (``item.templates_site``, else ``item.site``), deletes the leaf
tags that match the site's templates (keeping what the guard protects, see
:mod:`extraction.templates`), and records what it did in ``item.template_cleaning``. Later stages read ``item.tree``.

Stats: ``templates/denoised`` (pages with something removed), ``templates/no_templates`` (site
without templates yet), ``templates/removed_nodes``, ``templates/removed_chars``,
``templates/guard/<reason>`` (matched leaves kept), ``templates/parse_error``.
"""

from __future__ import annotations

import logging

from scrapy.crawler import Crawler
from scrapy.statscollectors import StatsCollector

from crawler.items import PageItem
from crawler.middlewares.templates import shared_library
from extraction.dom.html import parse_html
from extraction.process import routed_to_list
from templates_db.library import TemplateLibrary

logger = logging.getLogger(__name__)


class TemplateDenoisePipeline:
    """Deletes template leaf tags from ``item.tree`` and fills ``item.template_cleaning``."""

    def __init__(self, library: TemplateLibrary, stats: StatsCollector) -> None:
        self.library = library
        self.stats = stats

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> TemplateDenoisePipeline:
        assert crawler.stats is not None
        return cls(shared_library(crawler), crawler.stats)

    def process_item(self, item: PageItem) -> PageItem:
        if item.html is None or item.error is not None:
            return item
        leaves = item.leaves
        item.leaves = None  # stale once the tree is cleaned
        if item.tree is None:
            leaves = None
            try:
                item.tree = parse_html(item.html)
            except Exception as exc:  # the text stage reports the page; nothing to clean here
                logger.warning("Templates: cannot parse %s: %s", item.canonical_url, exc)
                self.stats.inc_value("templates/parse_error")
                return item
        if routed_to_list(item.page_type, item.page_type_confidence):
            # ROUTE_LISTS: the list extractor finds the repeated entries itself; a list's headlines
            # recur on the site's other list pages, so its templates would remove list text.
            self.stats.inc_value("templates/skipped_list")
            return item
        site = item.templates_site or item.site
        if not self.library.templates(site):
            self.stats.inc_value("templates/no_templates")
            return item
        result = self.library.denoise(site, item.tree, leaves)
        item.template_cleaning = result.as_dict()
        if result.removed_nodes:
            self.stats.inc_value("templates/denoised")
            self.stats.inc_value("templates/removed_nodes", result.removed_nodes)
            self.stats.inc_value("templates/removed_chars", result.removed_chars)
        for reason, kept in result.kept.items():
            self.stats.inc_value(f"templates/guard/{reason}", kept)
        logger.debug("Templates %s: removed %d nodes (%d chars) from %s", item.site, result.removed_nodes,
                     result.removed_chars, item.canonical_url)
        return item
