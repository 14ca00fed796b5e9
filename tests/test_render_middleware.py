from __future__ import annotations

import pytest
from scrapy import Request
from scrapy.exceptions import NotConfigured
from scrapy.utils.test import get_crawler

from crawler.handlers import SharedPlaywrightDownloadHandler
from crawler.middlewares.render import RenderConfig, RenderMiddleware


def test_config_from_settings() -> None:
    crawler = get_crawler(settings_dict={"RENDER_MAX_HEIGHT": 4000, "DOWNLOAD_MAXSIZE": 123})
    config = RenderConfig.from_settings(crawler.settings)
    assert config.max_height == 4000 and config.max_size == 123 and config.serialize_screenshots


def test_disabled_rendering_is_not_configured() -> None:
    with pytest.raises(NotConfigured, match="RENDER_ENABLED"):
        RenderMiddleware.from_crawler(get_crawler(settings_dict={"RENDER_ENABLED": False}))


def test_render_meta_becomes_playwright_meta() -> None:
    middleware = RenderMiddleware.from_crawler(get_crawler(settings_dict={"RENDER_VIEWPORT_WIDTH": 1000}))
    rendered = Request("http://a.test/", meta={"render": True})
    plain = Request("http://a.test/", meta={"render": False})
    middleware.process_request(rendered)
    middleware.process_request(plain)
    assert rendered.meta["playwright"] and rendered.meta["playwright_include_page"]
    assert rendered.meta["playwright_context_kwargs"]["viewport"]["width"] == 1000
    assert rendered.meta["playwright_page_goto_kwargs"] == {"wait_until": "domcontentloaded"}
    assert "playwright" not in plain.meta


def test_one_playwright_handler_for_both_schemes() -> None:
    crawler = get_crawler()
    first = SharedPlaywrightDownloadHandler.from_crawler(crawler)
    second = SharedPlaywrightDownloadHandler.from_crawler(crawler)
    assert first is second
    assert SharedPlaywrightDownloadHandler.from_crawler(get_crawler()) is not first
