"""Downloader middlewares that keep every request of a crawl inside what its site list allows.

- :class:`FetchPolicyMiddleware`: the address policy (:mod:`crawler.fetch_policy`) before a request leaves: a
  refused request (a host on loopback, a private network, link-local, ... that the site list does not name; a
  scheme other than http(s)) fails with :class:`~crawler.fetch_policy.FetchRefused`, stats
  ``fetch/refused/<reason>``; nothing is sent, so nothing of it can be kept. The connection itself then goes to an
  address :class:`~crawler.fetch_policy.PolicyResolver` checked.
- :class:`ScopedRedirectMiddleware` and the meta refresh middleware (crawler/middlewares/refresh.py): a redirect
  whose target leaves the site's scope (:meth:`crawler.sites.SiteConfig.in_scope`) is not followed; the request
  fails with :class:`~crawler.errors.RedirectOffsite`, which the spider turns into a record with
  ``error: "redirect_offsite"`` and the target in ``redirect_to`` (stats ``fetch/refused/redirect_offsite``).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any
from urllib.request import getproxies, proxy_bypass

from scrapy import Request
from scrapy.downloadermiddlewares.redirect import RedirectMiddleware
from scrapy.http import Response
from scrapy.utils.httpobj import urlparse_cached

from crawler.errors import RedirectOffsite
from crawler.fetch_policy import AddressPolicy, FetchRefused, crawl_policy

if TYPE_CHECKING:
    from typing import Self

    from scrapy.crawler import Crawler
    from scrapy.statscollectors import StatsCollector

logger = logging.getLogger(__name__)


class FetchPolicyMiddleware:
    """Refuses, before it is sent, a request the address policy does not allow (module docstring)."""

    def __init__(self, policy: AddressPolicy, stats: StatsCollector, proxies: dict[str, str] | None = None) -> None:
        self.policy = policy
        self.stats = stats
        # The environment's proxies by scheme, as HttpProxyMiddleware (750, after this one) will apply them.
        self.proxies = proxies or {}

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        assert crawler.stats is not None
        proxies = getproxies() if crawler.settings.getbool("HTTPPROXY_ENABLED") else {}
        return cls(crawl_policy(crawler), crawler.stats, proxies)

    def _proxied(self, request: Request) -> bool:
        """Return True when the request goes through a proxy, which then resolves its host."""
        if "proxy" in request.meta:
            return bool(request.meta["proxy"])
        parts = urlparse_cached(request)
        return parts.scheme in self.proxies and not proxy_bypass(parts.hostname or "")

    async def process_request(self, request: Request) -> None:
        if request.meta.get("playwright"):
            return  # the renderer's: its document is the fetched response; Chromium's own go through its proxy
        refusal = self.policy.literal_refusal(request.url)
        if refusal is None and not self._proxied(request):  # through a proxy, the proxy resolves the name
            try:
                await self.policy.addresses(urlparse_cached(request).hostname or "")
            except FetchRefused as refused:
                refusal = refused
            except (OSError, TimeoutError, UnicodeError):
                return  # not resolved: the download fails as an unresolved name does (dns_error)
        if refusal is not None:
            self.stats.inc_value(f"fetch/refused/{refusal.reason}")
            logger.info("%s: not fetched: %s", refusal, request.url)
            raise refusal


def offsite_redirect(crawler: Crawler, request: Request, response: Response, result: Any) -> Any:
    """Return ``result`` (what a redirect middleware made of ``response``), or raise RedirectOffsite when it is a
    redirect of a site's request to a URL outside the site's scope."""
    name = request.meta.get("site")
    site_list = getattr(crawler.spider, "site_list", None)
    if not isinstance(result, Request) or name is None or site_list is None:
        return result
    if site_list.named(name).in_scope(result.url):
        return result
    assert crawler.stats is not None
    crawler.stats.inc_value("fetch/refused/redirect_offsite")
    logger.info("Redirect off the site %s, not followed: %s -> %s", name, request.url, result.url)
    raise RedirectOffsite(result.url, response)


class ScopedRedirectMiddleware(RedirectMiddleware):
    """Scrapy's HTTP redirects (3xx), followed only inside the site's scope (module docstring)."""

    # Without the "spider" argument, which Scrapy 2.19 deprecates (its signature still has it).
    def process_response(self, request: Request, response: Response) -> Request | Response:  # type: ignore[override]
        return offsite_redirect(self.crawler, request, response, super().process_response(request, response))
