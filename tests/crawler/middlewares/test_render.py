from __future__ import annotations

import asyncio
from typing import Any

import pytest
from playwright.async_api import Error as PlaywrightError
from scrapy import Request
from scrapy.exceptions import NotConfigured
from scrapy.utils.test import get_crawler
from scrapy_playwright.handler import BrowserContextWrapper

from crawler.errors import RenderStuck
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


def _run(coro: Any) -> Any:
    loop = asyncio.new_event_loop()  # a private loop: the reactor's loop stays untouched
    try:
        return loop.run_until_complete(coro)
    finally:
        loop.close()


class FakePage:
    def __init__(self) -> None:
        self.closed = False

    def is_closed(self) -> bool:
        return self.closed

    async def close(self) -> None:
        self.closed = True


def test_page_rendered_again_once_after_a_browser_crash() -> None:
    crawler = get_crawler(settings_dict={"RENDER_CRASH_RETRIES": 1})
    crawler.stats.open_spider()  # type: ignore[union-attr]
    middleware = RenderMiddleware.from_crawler(crawler)
    page = FakePage()
    request = Request("http://a.test/", meta={"render": True, "playwright_page": page})
    crash = PlaywrightError("Target page, context or browser has been closed")
    retry = _run(middleware.process_exception(request, crash))
    assert page.closed
    assert isinstance(retry, Request) and retry.url == request.url and retry.dont_filter
    assert retry.meta["render_crash_retries"] == 1 and "playwright_page" not in retry.meta
    assert _run(middleware.process_exception(retry, crash)) is None  # gave up: the errback decides
    stats = crawler.stats.get_stats()  # type: ignore[union-attr]
    assert stats["render/crash_retry"] == 1 and stats["render/crash_retry/gave_up"] == 1


def test_other_failures_are_not_retried() -> None:
    middleware = RenderMiddleware.from_crawler(get_crawler())
    request = Request("http://a.test/", meta={"render": True})
    assert _run(middleware.process_exception(request, PlaywrightError("net::ERR_TOO_MANY_REDIRECTS"))) is None
    assert _run(middleware.process_exception(request, RenderStuck("no answer"))) is not None
    plain = Request("http://a.test/", meta={"render": False})
    assert _run(middleware.process_exception(plain, RenderStuck("no answer"))) is None


class FakeContext:
    async def close(self) -> None:
        return None


def _wrapper(slots: int) -> BrowserContextWrapper:
    return BrowserContextWrapper(context=FakeContext(), semaphore=asyncio.Semaphore(slots),  # type: ignore[arg-type]
                                 persistent=False)


def test_page_slot_goes_back_to_its_own_context_once() -> None:
    handler = SharedPlaywrightDownloadHandler.from_crawler(get_crawler())
    old = _wrapper(1)
    handler.context_wrappers["render"] = old
    _run(old.semaphore.acquire())
    release = handler._make_close_page_callback("render")
    new = _wrapper(4)
    handler.context_wrappers["render"] = new  # the browser was relaunched meanwhile
    release()
    release()  # "crash" then "close": one slot only
    assert old.semaphore._value == 1 and new.semaphore._value == 4


def test_disconnect_wakes_requests_waiting_on_the_dead_context() -> None:
    handler = SharedPlaywrightDownloadHandler.from_crawler(get_crawler(settings_dict={
        "PLAYWRIGHT_MAX_PAGES_PER_CONTEXT": 2, "PLAYWRIGHT_RESTART_DISCONNECTED_BROWSER": False}))
    dead = _wrapper(0)
    handler.context_wrappers["render"] = dead

    async def scenario() -> bool:
        waiter = asyncio.ensure_future(dead.semaphore.acquire())
        await asyncio.sleep(0)
        assert not waiter.done()
        await handler._browser_disconnected_callback()
        await asyncio.wait_for(waiter, 1)
        return waiter.result()

    assert _run(scenario()) is True
    assert handler.context_wrappers == {}
