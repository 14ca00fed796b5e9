"""crawler.middlewares.fetch_policy: requests refused before they leave, redirects kept in the site's scope."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from scrapy import Request, Spider
from scrapy.http import HtmlResponse, Response
from scrapy.utils.test import get_crawler

from crawler.errors import RedirectOffsite, exception_reason
from crawler.fetch_policy import FetchPolicyConfig, FetchRefused
from crawler.middlewares.fetch_policy import FetchPolicyMiddleware, ScopedRedirectMiddleware
from crawler.middlewares.refresh import MetaRefreshMiddleware
from crawler.sites import SiteList, parse_site_list
from tests.crawl_helpers import sites_yaml
from tests.fetch_servers import MappedPolicy

SITES = parse_site_list(sites_yaml([
    {"name": "news", "start_urls": ["http://news.test/en/"], "allowed_prefixes": ["http://news.test/en/"],
     "redirect_domains": ["news-archive.test"]},
    {"name": "lab", "start_urls": ["http://127.0.0.1:8000/lab/"], "allowed_prefixes": ["http://127.0.0.1:8000/lab/"]},
]))


class _ListSpider(Spider):
    name = "list"
    site_list: SiteList = SITES


def _middleware() -> tuple[FetchPolicyMiddleware, Any]:
    crawler = get_crawler(_ListSpider)
    assert crawler.stats is not None
    crawler.stats.open_spider()
    policy = MappedPolicy(FetchPolicyConfig(), ["news.test", "127.0.0.1"])
    policy.hosts = {"news.test": ["93.184.216.34"], "evil.test": ["127.0.0.1"], "meta.test": ["169.254.169.254"]}
    return FetchPolicyMiddleware(policy, crawler.stats), crawler.stats


@pytest.mark.parametrize(("url", "reason"), [
    ("http://news.test/en/a.html", None), ("http://127.0.0.1:8000/lab/x", None), ("http://127.0.0.1:6379/", None),
    ("http://127.0.0.2/", "loopback"), ("http://evil.test/", "loopback"), ("http://meta.test/latest/", "link_local"),
    ("http://[::1]:8000/", "loopback"), ("http://10.0.0.8/", "private"), ("file:///etc/passwd", "scheme"),
])
def test_requests_are_refused_before_they_leave(url: str, reason: str | None) -> None:
    middleware, stats = _middleware()
    if reason is None:
        assert asyncio.run(middleware.process_request(Request(url))) is None
        assert not any(key.startswith("fetch/refused/") for key in stats.get_stats())
        return
    with pytest.raises(FetchRefused) as refused:
        asyncio.run(middleware.process_request(Request(url)))
    assert refused.value.reason == reason and exception_reason(refused.value) == "fetch_refused"
    assert stats.get_value(f"fetch/refused/{reason}") == 1


def test_through_a_proxy_the_name_is_left_to_the_proxy_but_an_address_is_checked() -> None:
    middleware, _ = _middleware()
    proxied = {"proxy": "http://127.0.0.1:3128"}
    assert asyncio.run(middleware.process_request(Request("http://unknown.example/", meta=proxied))) is None
    with pytest.raises(FetchRefused):
        asyncio.run(middleware.process_request(Request("http://169.254.169.254/", meta=proxied)))
    # The environment's proxy (http_proxy), as HttpProxyMiddleware applies it after this middleware.
    by_environment = FetchPolicyMiddleware(middleware.policy, middleware.stats, {"http": "http://127.0.0.1:3128"})
    assert asyncio.run(by_environment.process_request(Request("http://unknown.example/"))) is None
    with pytest.raises(FetchRefused):
        asyncio.run(by_environment.process_request(Request("https://evil.test/")))  # no https proxy: resolved here


def test_an_unresolved_name_fails_as_it_always_did() -> None:
    middleware, stats = _middleware()
    assert asyncio.run(middleware.process_request(Request("http://nowhere.test/"))) is None  # dns_error, later
    assert stats.get_value("fetch/refused/loopback") is None


def _redirect(target: str, site: str = "news", status: int = 302) -> tuple[Request, Response]:
    request = Request("http://news.test/en/a.html", meta={"site": site})
    return request, Response(request.url, status=status, headers={"Location": target}, request=request)


@pytest.mark.parametrize("target", [
    "http://news.test/en/b.html", "https://news.test/en/b.html", "https://www.news.test/en/b.html",
    "http://news.test/fr/", "http://cdn.news.test/x", "https://news-archive.test/2020/a.html",
    "http://old.news-archive.test/x",
])
def test_redirects_in_the_sites_scope_are_followed(target: str) -> None:
    crawler = get_crawler(_ListSpider)
    crawler.spider = _ListSpider()
    middleware = ScopedRedirectMiddleware.from_crawler(crawler)
    request, response = _redirect(target)
    followed = middleware.process_response(request, response)
    assert isinstance(followed, Request) and followed.url == target


@pytest.mark.parametrize("target", [
    "http://127.0.0.2/", "http://169.254.169.254/latest/meta-data/", "http://news.test.evil.example/",
    "http://archive.test/", "ftp://news.test/en/", "http://notnews.test/en/",
])
def test_redirects_off_the_site_are_not_followed(target: str) -> None:
    crawler = get_crawler(_ListSpider)
    crawler.spider = _ListSpider()
    assert crawler.stats is not None
    crawler.stats.open_spider()
    middleware = ScopedRedirectMiddleware.from_crawler(crawler)
    request, response = _redirect(target, status=301)
    if not target.startswith("http"):  # Scrapy's own rule: only http(s) redirects are followed at all
        assert middleware.process_response(request, response) is response
        return
    with pytest.raises(RedirectOffsite) as offsite:
        middleware.process_response(request, response)
    assert offsite.value.target == target and offsite.value.response is response
    assert exception_reason(offsite.value) == "redirect_offsite"
    assert crawler.stats.get_value("fetch/refused/redirect_offsite") == 1


def test_a_meta_refresh_off_the_site_is_not_followed() -> None:
    crawler = get_crawler(_ListSpider)
    crawler.spider = _ListSpider()
    assert crawler.stats is not None
    crawler.stats.open_spider()
    middleware = MetaRefreshMiddleware.from_crawler(crawler)
    request = Request("http://news.test/en/a.html", meta={"site": "news"})
    for filler in ("", "<p>" + "Words. " * 5000 + "</p>"):  # a small page, and one read from its top only
        html = (f'<html><head><meta http-equiv="refresh" content="0; url=http://127.0.0.2/"></head>'
                f"<body>{filler}</body></html>")
        response = HtmlResponse(request.url, body=html.encode(), headers={"Content-Type": "text/html"},
                                request=request)
        with pytest.raises(RedirectOffsite):
            middleware.process_response(request, response)
    inside = HtmlResponse(request.url, body=b'<meta http-equiv="refresh" content="0; url=/en/b.html">',
                          headers={"Content-Type": "text/html"}, request=request)
    assert isinstance(middleware.process_response(request, inside), Request)
