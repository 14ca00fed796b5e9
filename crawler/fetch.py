"""One-off fetches of pages by URL, as the crawl fetches them (``scrapy extract -u URL``).

:func:`fetch_pages` runs a small spider over the URLs with the project's settings and Scrapy's own downloader:
the crawl's user agent, robots.txt (ROBOTSTXT_OBEY), redirects, retries, timeouts and DOWNLOAD_MAXSIZE, and
whatever downloader middlewares the crawl has: its address policy included (docs/fetch-policy.md), so a
loopback or private address is refused (``fetch_refused``) unless the site list (NEWS_SITES_FILE) names its host
or FETCH_ALLOW_HOSTS / FETCH_ALLOW_NETWORKS allow it. Nothing is rendered, archived,
exported or remembered: the pages come back to the caller, which processes them as saved pages. A URL that
cannot be fetched comes back with the crawl's failure reason (``http_404``, ``dns``, ``robots_forbidden``...).
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from scrapy import Request, Spider
from scrapy.crawler import CrawlerProcessBase
from scrapy.http import Response
from scrapy.settings import Settings
from twisted.python.failure import Failure

from crawler.errors import failure_reason
from crawler.responses import content_type, http_exchange
from crawler.sites import SiteList
from extraction.page import Page

logger = logging.getLogger(__name__)

# What a one-off fetch leaves out of the crawl's settings: no item pipeline, feed, report, progress or rendering.
FETCH_SETTINGS: dict[str, Any] = {
    "ITEM_PIPELINES": {}, "FEEDS": {}, "RENDER_ENABLED": False, "REPORT_ENABLED": False, "STATS_FILE": "",
    "DOWNLOAD_HANDLERS": {},  # Scrapy's own HTTP handlers (DOWNLOAD_HANDLERS_BASE), no browser
    "EXTENSIONS": {"crawler.extensions.CrawlProgressExtension": None, "crawler.extensions.CrawlReportExtension": None,
                   "scrapy.extensions.logstats.LogStats": None, "scrapy.extensions.telnet.TelnetConsole": None},
}


@dataclass
class Fetched:
    """A URL asked for, and its page (None when the fetch failed: ``error`` says why)."""

    url: str
    page: Page | None = None
    final_url: str | None = None
    status: int | None = None
    fetched_at: str | None = None
    fetch_ms: int | None = None
    error: str | None = None


class FetchSpider(Spider):
    """Requests each URL once and keeps its response."""

    name = "fetch"

    def __init__(self, urls: list[str], results: dict[str, Fetched], site_list: SiteList | None = None,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.urls = urls
        self.results = results
        self.site_list = site_list  # its hosts are named for the address policy, as in the crawl

    async def start(self) -> AsyncIterator[Request]:
        for url in self.urls:
            yield Request(url, callback=self.parse, errback=self.failed, dont_filter=True, meta={"asked": url})

    def parse(self, response: Response) -> None:
        page = Page(response.body, response.url, content_type(response) or None)
        page.http = http_exchange(response)
        latency = response.meta.get("download_latency")
        self.results[response.meta["asked"]] = Fetched(
            response.meta["asked"], page, response.url, response.status, _now(),
            round(1000 * latency) if latency is not None else None)

    def failed(self, failure: Failure) -> None:
        request: Request = failure.request  # type: ignore[attr-defined]
        response = getattr(failure.value, "response", None)
        reason = failure_reason(failure)
        logger.warning("Could not fetch %s: %s", request.url, reason)
        self.results[request.meta["asked"]] = Fetched(
            request.meta["asked"], None, response.url if response is not None else None,
            response.status if response is not None else None, _now(), error=reason)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def fetch_pages(process: CrawlerProcessBase, settings: Settings, urls: list[str],
                site_list: SiteList | None = None) -> list[Fetched]:
    """Fetch ``urls`` with the crawl's downloader (the reactor runs until they are all done); return one
    :class:`Fetched` per URL, in order. ``site_list``: the sites whose hosts the address policy takes as named."""
    for name, value in FETCH_SETTINGS.items():
        settings.set(name, value, priority="cmdline")
    results: dict[str, Fetched] = {}
    process.crawl(FetchSpider, urls=list(dict.fromkeys(urls)), results=results, site_list=site_list)
    process.start()
    return [results.get(url) or Fetched(url, error="not_fetched") for url in urls]
