"""Learns each site's templates (paper 004) from the HTML responses of the crawl.

``TemplateLibraryMiddleware`` parses every successful HTML page response, finds its site
(``request.meta["templates_site"]``, else the spider's site name in ``meta["site"]``, else the
URL's scheme + host), matches the page's leaf tags against the site's templates (for the
layout-drift monitor and the hit counts) and counts them in the site's batch cache; every
``TEMPLATES_BATCH_PAGES`` pages the batch is promoted into the store. The pipeline
``pipelines.templates.TemplateDenoisePipeline`` removes them from the items. The parsed page and
its leaf tags travel to the item (``meta["templates_parsed"]``, taken by the spider) so the
pipeline does not parse the page again; the resolved key goes in ``meta["templates_site"]``. Both
share one
:class:`~templates_db.library.TemplateLibrary` per crawler (:func:`shared_library`).

Stats: ``templates/pages`` (pages learned from), ``templates/pages_matched`` (pages on which at
least one template was found), ``templates/batch``, ``templates/promoted``, ``templates/drift``,
``templates/skipped/<reason>``, ``templates/store_error``, ``templates/store_unusable``.
"""

from __future__ import annotations

import logging
import weakref

from scrapy import Request, signals
from scrapy.crawler import Crawler
from scrapy.exceptions import NotConfigured
from scrapy.http import HtmlResponse, Response

from extraction.dom.html import parse_html
from extraction.templates import leaf_tags
from templates_db.library import TemplateLibrary, TemplatesConfig, site_key

logger = logging.getLogger(__name__)

_LIBRARIES: weakref.WeakKeyDictionary[Crawler, TemplateLibrary] = weakref.WeakKeyDictionary()


def shared_library(crawler: Crawler) -> TemplateLibrary:
    """Return the crawler's template library, opening it (and arranging its close) on first use.

    Raises NotConfigured when TEMPLATES_ENABLED is off.
    """
    library = _LIBRARIES.get(crawler)
    if library is not None:
        return library
    if not crawler.settings.getbool("TEMPLATES_ENABLED", True):
        raise NotConfigured("TEMPLATES_ENABLED is off")
    stats = crawler.stats
    assert stats is not None
    library = TemplateLibrary.open(TemplatesConfig.from_settings(crawler.settings), count=stats.inc_value)
    _LIBRARIES[crawler] = library

    def close() -> None:
        library.close()
        _LIBRARIES.pop(crawler, None)

    crawler.signals.connect(close, signal=signals.spider_closed, weak=False)
    return library


class TemplateLibraryMiddleware:
    """Downloader middleware: every HTML page response feeds its site's template library."""

    def __init__(self, crawler: Crawler, library: TemplateLibrary) -> None:
        self.crawler = crawler
        self.library = library
        assert crawler.stats is not None
        self.stats = crawler.stats

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> TemplateLibraryMiddleware:
        library = shared_library(crawler)
        if not library.config.learn:
            raise NotConfigured("TEMPLATES_LEARN is off: templates are applied, not learned")
        return cls(crawler, library)

    def site_for(self, request: Request, response: Response) -> str | None:
        """Return the library key of the response's site (see the module docstring)."""
        site = request.meta.get("templates_site") or request.meta.get("site")
        if site:
            return str(site)
        spider = self.crawler.spider
        return site_key(response.url, getattr(spider, "site_list", None))

    def process_response(self, request: Request, response: Response) -> Response:
        if not isinstance(response, HtmlResponse) or request.meta.get("kind", "page") != "page":
            return response
        if not 200 <= response.status < 300:
            self.stats.inc_value("templates/skipped/status")
            return response
        if not self.library.available:
            return response
        site = self.site_for(request, response)
        if site is None:
            self.stats.inc_value("templates/skipped/no_site")
            return response
        try:
            root = parse_html(response.text)
        except Exception as exc:  # a page lxml cannot parse is passed on; the pipeline reports it
            logger.debug("Templates: cannot parse %s: %s", response.url, exc)
            self.stats.inc_value("templates/skipped/parse_error")
            return response
        leaves = leaf_tags(root)
        observation = self.library.observe(site, leaves=leaves)
        request.meta["templates_site"] = site
        request.meta["templates_parsed"] = (root, leaves)  # the spider hands them to the item
        self.stats.inc_value("templates/pages")
        if observation.matched:
            self.stats.inc_value("templates/pages_matched")
        if observation.promoted:
            self.stats.inc_value("templates/promoted", observation.promoted)
        logger.debug("Templates %s: %s has %d leaves, %d/%d templates found", site, response.url,
                     observation.leaves, observation.matched, observation.templates)
        return response
