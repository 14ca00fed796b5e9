"""crawler.middlewares.refresh: Scrapy's meta refresh redirect, from the top of a large body only."""

from __future__ import annotations

import pytest
from scrapy import Request, Spider
from scrapy.downloadermiddlewares.redirect import MetaRefreshMiddleware as ScrapyMetaRefreshMiddleware
from scrapy.http import HtmlResponse
from scrapy.utils.test import get_crawler

from crawler.middlewares.refresh import HEAD_BYTES, MetaRefreshMiddleware

FILLER = "<p>" + "Words of a long article. " * 2000 + "</p>"  # 50 KB: more than HEAD_BYTES


def _page(head: str, body: str = FILLER, encoding: str = "utf-8") -> HtmlResponse:
    html = f"<html><head>{head}</head><body>{body}</body></html>".encode(encoding)
    return HtmlResponse("http://news.test/a.html", body=html, headers={"Content-Type": "text/html"})


@pytest.mark.parametrize("head", [
    '<meta http-equiv="refresh" content="0; url=http://news.test/b.html">',
    '<meta http-equiv="refresh" content="0; url=/c.html"><title>é</title>',
    "<title>no refresh here</title>",
])
def test_it_decides_as_scrapys_middleware(head: str) -> None:
    crawler = get_crawler(Spider)
    ours, theirs = MetaRefreshMiddleware.from_crawler(crawler), ScrapyMetaRefreshMiddleware.from_crawler(crawler)
    request = Request("http://news.test/a.html")
    response = _page(head)
    assert len(response.body) > HEAD_BYTES
    expected, got = theirs.process_response(request, _page(head)), ours.process_response(request, response)
    if isinstance(expected, Request):
        assert isinstance(got, Request) and got.url == expected.url
    else:
        assert got is response  # the whole response goes on, not the cut one


def test_a_refresh_beyond_the_first_4096_characters_is_not_followed_by_either() -> None:
    crawler = get_crawler(Spider)
    head = "<title>t</title>" + "<!-- padding -->" * 300 + '<meta http-equiv="refresh" content="0; url=/late.html">'
    request = Request("http://news.test/a.html")
    assert ScrapyMetaRefreshMiddleware.from_crawler(crawler).process_response(request, _page(head)).url \
        == "http://news.test/a.html"
    response = _page(head)
    assert MetaRefreshMiddleware.from_crawler(crawler).process_response(request, response) is response
