"""TemplateLibraryMiddleware and TemplateDenoisePipeline built as Scrapy builds them."""

from __future__ import annotations

import pytest
from scrapy import Request, signals
from scrapy.exceptions import NotConfigured
from scrapy.http import HtmlResponse, TextResponse
from scrapy.utils.test import get_crawler

from crawler.items import PageItem
from crawler.middlewares.templates import TemplateLibraryMiddleware, shared_library
from extraction.dom.text import visible_text
from pipelines.templates import TemplateDenoisePipeline
from templates_db.store import open_store
from tests.extraction.templates.test_templates import FOOTER, _page


def _crawler(tmp_path, **settings):
    crawler = get_crawler(settings_dict={"TEMPLATES_STORE": str(tmp_path), "TEMPLATES_REFRESH_INTERVAL": 0,
                                         **settings})
    crawler.stats.open_spider()
    return crawler


def _response(url: str, html: str, status: int = 200, **meta) -> HtmlResponse:
    request = Request(url, meta={"kind": "page", **meta})
    return HtmlResponse(url, status=status, body=html.encode("utf-8"), encoding="utf-8", request=request)


def _feed(middleware, url: str, html: str, **meta) -> HtmlResponse:
    response = _response(url, html, **meta)
    assert middleware.process_response(response.request, response) is response
    return response


def test_disabled_is_not_configured(tmp_path):
    with pytest.raises(NotConfigured, match="TEMPLATES_ENABLED"):
        TemplateLibraryMiddleware.from_crawler(_crawler(tmp_path, TEMPLATES_ENABLED=False))
    with pytest.raises(NotConfigured, match="TEMPLATES_LEARN"):
        TemplateLibraryMiddleware.from_crawler(_crawler(tmp_path, TEMPLATES_LEARN=False))


def test_middleware_learns_and_pipeline_removes(tmp_path):
    crawler = _crawler(tmp_path)
    middleware = TemplateLibraryMiddleware.from_crawler(crawler)
    pipeline = TemplateDenoisePipeline.from_crawler(crawler)
    assert middleware.library is pipeline.library  # one library per crawler
    for seed in range(10):
        response = _feed(middleware, f"https://news.test/a/{seed}.html", _page(seed)[0], site="gazette")
    # The parse and the key travel with the response (the spider hands them to the item).
    assert response.meta["templates_site"] == "gazette"
    tree, leaves = response.meta["templates_parsed"]
    assert [leaf.text for leaf in leaves][:2] == ["Home", "World"]
    assert leaves[0].element.getroottree().getroot() is tree.getroottree().getroot()
    stats = crawler.stats
    assert stats.get_value("templates/pages") == 10 and stats.get_value("templates/batch") == 1
    html, paragraphs = _page(42)
    item = PageItem(url="u", canonical_url="u", site="gazette", fetched_at="t", html=html)
    pipeline.process_item(item)
    assert item.template_cleaning is not None and item.template_cleaning["removed_nodes"] >= 6
    assert item.tree is not None  # parsed once, handed on to the text stages
    text = visible_text(item.tree)
    assert all(p in text for p in paragraphs) and "Copyright" not in text
    assert stats.get_value("templates/denoised") == 1
    other = PageItem(url="u", canonical_url="u", site="elsewhere", fetched_at="t", html=html)
    pipeline.process_item(other)
    assert other.template_cleaning is None and stats.get_value("templates/no_templates") == 1


def test_site_resolution_and_skipped_responses(tmp_path):
    crawler = _crawler(tmp_path)
    middleware = TemplateLibraryMiddleware.from_crawler(crawler)
    html = _page(1)[0]
    response = _response("https://news.test/x", html)
    assert middleware.site_for(response.request, response) == "https://news.test"
    response = _response("https://news.test/x", html, site="gazette", templates_site="override")
    assert middleware.site_for(response.request, response) == "override"
    _feed(middleware, "https://news.test/404", html, status=404)
    assert crawler.stats.get_value("templates/skipped/status") == 1
    feed = _response("https://news.test/feed", html, kind="feed")
    middleware.process_response(feed.request, feed)
    text = TextResponse("https://news.test/robots.txt", body=b"User-agent: *", request=Request("https://news.test/r"))
    middleware.process_response(text.request, text)
    assert crawler.stats.get_value("templates/pages") is None


def test_unfinished_batch_is_parked_when_the_spider_closes(tmp_path):
    crawler = _crawler(tmp_path)
    middleware = TemplateLibraryMiddleware.from_crawler(crawler)
    for seed in range(4):
        _feed(middleware, f"https://news.test/{seed}", _page(seed)[0], site="gazette")
    crawler.signals.send_catch_log(signals.spider_closed, spider=None, reason="finished")
    store = open_store(tmp_path)
    assert [batch.pages for batch in store.claim("gazette")] == [4]
    store.close()
    assert shared_library(crawler) is not middleware.library  # a closed library is not reused


def test_corrupt_store_is_counted_and_the_crawl_goes_on(tmp_path):
    (tmp_path / "templates.sqlite3").write_bytes(b"garbage" * 1000)
    crawler = _crawler(tmp_path)
    middleware = TemplateLibraryMiddleware.from_crawler(crawler)
    pipeline = TemplateDenoisePipeline.from_crawler(crawler)
    for seed in range(12):
        _feed(middleware, f"https://news.test/{seed}", _page(seed)[0], site="gazette")
    item = PageItem(url="u", canonical_url="u", site="gazette", fetched_at="t", html=_page(1, footer=FOOTER)[0])
    assert pipeline.process_item(item) is item and item.template_cleaning is None
    assert crawler.stats.get_value("templates/store_unusable") == 1
    assert (tmp_path / "templates.sqlite3").read_bytes() == b"garbage" * 1000  # left untouched
