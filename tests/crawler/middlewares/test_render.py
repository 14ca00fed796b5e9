from __future__ import annotations

import asyncio
import io
import logging
from typing import Any

import numpy as np
import pytest
from PIL import Image
from playwright.async_api import Error as PlaywrightError
from scrapy import Request
from scrapy.exceptions import NotConfigured
from scrapy.http import HtmlResponse, Response
from scrapy.utils.test import get_crawler
from scrapy_playwright.handler import BrowserContextWrapper

from crawler.errors import RenderStuck
from crawler.handlers import SharedPlaywrightDownloadHandler
from crawler.middlewares.render import RenderMiddleware
from crawler.middlewares.render_config import RenderConfig, block_policy


def test_disabled_rendering_is_not_configured(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO), pytest.raises(NotConfigured):
        RenderMiddleware.from_crawler(get_crawler(settings_dict={"RENDER_ENABLED": False}))
    # Said at INFO: Scrapy logs a NotConfigured's message as a warning, and a setting the user chose is none.
    assert [r.levelname for r in caplog.records if "RENDER_ENABLED is off" in r.message] == ["INFO"]


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


def _png(height: int, width: int = 64) -> bytes:
    rng = np.random.default_rng(height)
    image = Image.fromarray(rng.integers(0, 255, size=(height, width), dtype=np.uint8))
    out = io.BytesIO()
    image.save(out, format="PNG")
    return out.getvalue()


class FakeBrowserPage:
    """The Playwright page calls the middleware makes after navigation."""

    def __init__(self, html: str = "<html><body><p>rendered</p></body></html>", height: int = 3000,
                 loads: list[tuple[str | None, str]] | None = None) -> None:
        self.html, self.height = html, height
        self.closed = False
        self.shots: list[dict[str, Any]] = []
        self.url = ""  # the document the browser was asked for (FakeEngine sets it)
        # What the navigation timing entry says per render: (document URL, None: the one asked for; type).
        self.loads = list(loads or [])

    def is_closed(self) -> bool:
        return self.closed

    async def close(self) -> None:
        self.closed = True

    async def wait_for_load_state(self, state: str, timeout: float) -> None:
        return None

    async def evaluate(self, script: str) -> dict[str, Any]:
        document, load = self.loads.pop(0) if self.loads else (None, "navigate")
        return {"height": self.height, "charset": "GBK", "document": document or self.url, "load": load}

    async def content(self) -> str:
        return self.html

    async def bring_to_front(self) -> None:
        return None

    async def screenshot(self, **options: Any) -> bytes:
        self.shots.append(options)
        return _png(int(options["clip"]["height"]))


class FakeEngine:
    """``engine.download_async``: fails ``failures`` times, then returns the browser's response."""

    def __init__(self, page: FakeBrowserPage, failures: list[Exception] | None = None) -> None:
        self.page, self.failures = page, list(failures or [])
        self.requests: list[Request] = []

    async def download_async(self, request: Request) -> HtmlResponse:
        self.requests.append(request)
        if self.failures:
            raise self.failures.pop(0)
        request.meta["playwright_page"] = self.page
        request.meta["render_document_served"] = True
        self.page.url, self.page.closed = request.url, False
        await request.meta["render_capture"](self.page)  # what crawler/handlers.py does once the page is open
        return HtmlResponse(request.url, body=b"", request=request)


def _middleware(engine: FakeEngine, **settings: Any) -> tuple[RenderMiddleware, Any]:
    crawler = get_crawler(settings_dict=settings)
    crawler.stats.open_spider()  # type: ignore[union-attr]
    crawler.engine = engine  # type: ignore[assignment]
    return RenderMiddleware.from_crawler(crawler), crawler.stats


GBK_PAGE = ("<html><head><title>新闻</title></head><body><p>城市新闻报道，记者今天从市政府获悉。</p></body></html>"
            .encode("gbk"))


def test_fetched_page_is_rendered_from_its_own_bytes_with_the_detected_charset() -> None:
    browser_page = FakeBrowserPage()
    engine = FakeEngine(browser_page)
    middleware, stats = _middleware(engine)
    request = Request("http://a.test/news/1.html", meta={"render": True})
    response = HtmlResponse(request.url, body=GBK_PAGE, headers={"Content-Type": "text/html"}, request=request)
    out = _run(middleware.process_response(request, response))
    assert out is response  # the fetched response goes on untouched
    (browser_request,) = engine.requests
    url, body, document_type = browser_request.meta["render_document"]
    assert url == request.url and body == GBK_PAGE and document_type == "text/html; charset=gb18030"
    assert browser_request.meta["playwright"] and browser_request.meta["download_slot"] == "render"
    assert browser_request.meta["dont_obey_robotstxt"] and browser_request.meta["dont_cache"]
    assert browser_request.meta["playwright_context_kwargs"]["viewport"]["height"] == middleware.config.top_height
    assert browser_request.meta["playwright_context_kwargs"]["user_agent"] == middleware.user_agent != ""
    result = request.meta["render_result"]
    assert result.html == browser_page.html and result.page_height == 3000
    assert result.screenshot_height == middleware.config.top_height  # the top region only
    assert browser_page.shots[0]["full_page"] is False and browser_page.closed
    assert request.meta["fetched_page"].decoded.encoding == "gb18030"
    assert stats.get_value("render/page") == 1 and stats.get_value("render/screenshot_bytes") == len(result.screenshot)


def test_full_page_region_captures_the_whole_page_up_to_max_height() -> None:
    browser_page = FakeBrowserPage(height=5000)
    middleware, _ = _middleware(FakeEngine(browser_page), RENDER_SCREENSHOT_REGION="full", RENDER_MAX_HEIGHT=4000)
    request = Request("http://a.test/", meta={"render": True})
    _run(middleware.process_response(request, HtmlResponse(request.url, body=b"<p>x</p>", request=request)))
    result = request.meta["render_result"]
    assert result.screenshot_height == 4000 and "screenshot_capped" in result.flags
    assert browser_page.shots[0]["full_page"] is True


def test_plain_error_and_non_html_responses_are_not_rendered() -> None:
    engine = FakeEngine(FakeBrowserPage())
    middleware, _ = _middleware(engine)
    plain = Request("http://a.test/", meta={"render": False})
    missing = Request("http://a.test/gone", meta={"render": True})
    pdf = Request("http://a.test/a.pdf", meta={"render": True})
    _run(middleware.process_response(plain, HtmlResponse(plain.url, body=b"<p>x</p>", request=plain)))
    _run(middleware.process_response(missing, HtmlResponse(missing.url, status=404, body=b"<p>x</p>", request=missing)))
    _run(middleware.process_response(pdf, Response(pdf.url, body=b"%PDF-1.4", request=pdf,
                                                   headers={"Content-Type": "application/pdf"})))
    assert engine.requests == [] and not any("render_result" in r.meta for r in (plain, missing, pdf))


def test_render_tried_again_after_a_browser_crash_then_given_up_without_losing_the_page() -> None:
    crash = PlaywrightError("Target page, context or browser has been closed")
    engine = FakeEngine(FakeBrowserPage(), failures=[crash])
    middleware, stats = _middleware(engine, RENDER_CRASH_RETRIES=1)
    request = Request("http://a.test/", meta={"render": True})
    _run(middleware.process_response(request, HtmlResponse(request.url, body=b"<p>x</p>", request=request)))
    assert len(engine.requests) == 2 and request.meta["render_result"].html is not None
    assert stats.get_value("render/crash_retry") == 1

    engine = FakeEngine(FakeBrowserPage(), failures=[crash, crash])
    middleware, stats = _middleware(engine, RENDER_CRASH_RETRIES=1)
    request = Request("http://a.test/", meta={"render": True})
    response = HtmlResponse(request.url, body=b"<p>x</p>", request=request)
    assert _run(middleware.process_response(request, response)) is response
    result = request.meta["render_result"]
    assert result.html is None and result.screenshot is None and "render_failed" in result.flags
    assert stats.get_value("render/crash_retry/gave_up") == 1
    assert stats.get_value("render/failed/browser_crash") == 1


def test_other_failures_are_not_retried() -> None:
    engine = FakeEngine(FakeBrowserPage(), failures=[PlaywrightError("net::ERR_TOO_MANY_REDIRECTS")])
    middleware, _ = _middleware(engine)
    request = Request("http://a.test/", meta={"render": True})
    _run(middleware.process_response(request, HtmlResponse(request.url, body=b"<p>x</p>", request=request)))
    assert len(engine.requests) == 1 and "render_failed" in request.meta["render_result"].flags
    engine = FakeEngine(FakeBrowserPage(), failures=[RenderStuck("no answer")])
    middleware, _ = _middleware(engine)
    request = Request("http://a.test/", meta={"render": True})
    _run(middleware.process_response(request, HtmlResponse(request.url, body=b"<p>x</p>", request=request)))
    assert len(engine.requests) == 2  # a hung browser is a retried reason


class FakeFrame:
    def __init__(self, parent: FakeFrame | None = None) -> None:
        self.parent_frame = parent


class FakeBrowserRequest:
    def __init__(self, url: str, resource_type: str, navigation: bool = False, frame: FakeFrame | None = None) -> None:
        self.url, self.resource_type, self._navigation = url, resource_type, navigation
        self.frame = frame or FakeFrame()

    def is_navigation_request(self) -> bool:
        return self._navigation


class FakeRoute:
    def __init__(self) -> None:
        self.outcome: tuple[str, Any] | None = None

    async def fulfill(self, **kwargs: Any) -> None:
        self.outcome = ("fulfill", kwargs)

    async def abort(self, error_code: str = "failed") -> None:
        self.outcome = ("abort", error_code)

    async def continue_(self) -> None:
        self.outcome = ("continue", None)


class RoutedPage:
    def __init__(self) -> None:
        self.handler: Any = None

    async def route(self, pattern: str, handler: Any) -> None:
        assert pattern == "**"
        self.handler = handler


def test_strict_route_serves_the_document_and_applies_the_subresource_policy() -> None:
    middleware, stats = _middleware(FakeEngine(FakeBrowserPage()))
    request = Request("http://a.test/a.html", meta={
        "render_document": ("http://a.test/a.html", b"<p>bytes</p>", "text/html; charset=utf-8"),
        "render_strict": True})
    page = RoutedPage()
    _run(middleware._route_page(page, request))  # type: ignore[arg-type]

    def answer(browser_request: FakeBrowserRequest) -> tuple[str, Any]:
        route = FakeRoute()
        _run(page.handler(route, browser_request))
        assert route.outcome is not None
        return route.outcome

    kind, served = answer(FakeBrowserRequest("http://a.test/a.html#top", "document", navigation=True))
    assert kind == "fulfill" and served["body"] == b"<p>bytes</p>"
    assert served["headers"]["content-type"] == "text/html; charset=utf-8" and request.meta["render_document_served"]
    assert served["headers"]["content-security-policy"] == block_policy(RenderConfig().block_resources)
    assert answer(FakeBrowserRequest("http://elsewhere.test/", "document", navigation=True))[0] == "abort"
    frame = FakeBrowserRequest("http://ads.test/frame", "document", navigation=True, frame=FakeFrame(FakeFrame()))
    assert answer(frame)[0] == "abort"
    assert answer(FakeBrowserRequest("http://a.test/f.woff2", "font"))[0] == "abort"
    assert answer(FakeBrowserRequest("http://a.test/v.mp4", "media"))[0] == "abort"
    assert answer(FakeBrowserRequest("http://a.test/s.css", "stylesheet"))[0] == "continue"
    assert answer(FakeBrowserRequest("http://a.test/i.png", "image"))[0] == "continue"
    for _ in range(10):  # a page reloading itself forever gets its bytes a few times, then nothing
        answer(FakeBrowserRequest("http://a.test/a.html", "document", navigation=True))
    assert answer(FakeBrowserRequest("http://a.test/a.html", "document", navigation=True))[0] == "abort"
    assert stats.get_value("render/blocked/font") == 1 and stats.get_value("render/blocked/subframe") == 1


class FastRoutedPage:
    """Records the routes of the default (fast) mode."""

    def __init__(self) -> None:
        self.routes: list[tuple[Any, Any]] = [("**", "scrapy-playwright's handler")]
        self.unrouted_all = False

    async def unroute(self, pattern: str) -> None:
        self.routes = [route for route in self.routes if route[0] != pattern]

    async def route(self, pattern: Any, handler: Any) -> None:
        self.routes.append((pattern, handler))

    async def unroute_all(self, behavior: str | None = None) -> None:
        self.routes, self.unrouted_all = [], True


def test_fast_route_serves_the_document_then_intercepts_nothing() -> None:
    middleware, _ = _middleware(FakeEngine(FakeBrowserPage()))
    url = "http://a.test/a.html?id=1&x=[2]"
    request = Request(url, meta={"render_document": (url, b"<p>bytes</p>", "text/html; charset=gb18030")})
    page = FastRoutedPage()

    async def scenario() -> tuple[str, Any]:
        await middleware._route_page(page, request)  # type: ignore[arg-type]
        ((pattern, handler),) = page.routes  # scrapy-playwright's "**" route is gone: only the document's
        assert pattern.fullmatch(url) and pattern.fullmatch(url + "#top") and not pattern.fullmatch(url + "x")
        route = FakeRoute()
        await handler(route, FakeBrowserRequest(url, "document", navigation=True))
        await asyncio.sleep(0.01)  # the routes are removed in a task
        assert route.outcome is not None
        return route.outcome

    kind, served = _run(scenario())
    assert kind == "fulfill" and served["body"] == b"<p>bytes</p>" and request.meta["render_document_served"]
    assert served["headers"] == {"content-type": "text/html; charset=gb18030",
                                 "content-security-policy": block_policy(RenderConfig().block_resources)}
    assert page.unrouted_all and page.routes == []


def test_a_page_that_loads_another_document_is_rendered_again_strictly() -> None:
    for loads in ([("http://a.test/consent", "navigate")], [(None, "reload")]):
        browser_page = FakeBrowserPage(loads=loads)
        engine = FakeEngine(browser_page)
        middleware, stats = _middleware(engine)
        request = Request("http://a.test/a#top", meta={"render": True})
        _run(middleware.process_response(request, HtmlResponse(request.url, body=b"<p>x</p>", request=request)))
        assert [r.meta["render_strict"] for r in engine.requests] == [False, True]
        result = request.meta["render_result"]
        assert result.html == browser_page.html and result.screenshot is not None
        assert result.flags == ["render_charset_differs"]  # the fake says GBK: no flag of the first attempt stays
        assert stats.get_value("render/strict") == 1 and stats.get_value("render/page") == 1


SHORT_PAGE = b"<html><body><div id=app></div><p>Loading</p><script>build()</script></body></html>"
LONG_PAGE = ("<html><body>" + "<p>A paragraph of the article that the server wrote into the page.</p>" * 40
             + "</body></html>").encode()


@pytest.mark.parametrize(("settings", "meta", "body", "expected"), [
    ({}, {}, SHORT_PAGE, True),  # auto: too little text in the fetched HTML, scripts may build it
    ({}, {}, LONG_PAGE, False),  # auto: the server sent the content
    ({"RENDER_JAVASCRIPT_BELOW": 10_000}, {}, LONG_PAGE, True),
    ({"RENDER_JAVASCRIPT": "on"}, {}, LONG_PAGE, True),
    ({"RENDER_JAVASCRIPT": "off"}, {}, SHORT_PAGE, False),
    ({}, {"render_javascript": True}, LONG_PAGE, True),  # the site list's javascript: wins
    ({"RENDER_JAVASCRIPT": "on"}, {"render_javascript": False}, SHORT_PAGE, False),
])
def test_scripts_run_when_the_fetched_html_has_little_text(settings: dict[str, Any], meta: dict[str, Any],
                                                          body: bytes, expected: bool) -> None:
    engine = FakeEngine(FakeBrowserPage())
    middleware, stats = _middleware(engine, **settings)
    request = Request("http://a.test/a", meta={"render": True, **meta})
    _run(middleware.process_response(request, HtmlResponse(request.url, body=body, request=request)))
    (browser_request,) = engine.requests
    assert browser_request.meta["playwright_context_kwargs"]["java_script_enabled"] is expected
    assert browser_request.meta["playwright_context"] == ("render" if expected else "render-no-javascript")
    assert request.meta["render_result"].javascript is expected
    assert stats.get_value(f"render/javascript/{'on' if expected else 'off'}") == 1
    assert "tree" not in request.meta["fetched_page"].__dict__  # not held while the page waits for the browser


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


def test_the_handler_lets_the_renderer_read_the_page_once(monkeypatch: pytest.MonkeyPatch) -> None:
    handler = SharedPlaywrightDownloadHandler.from_crawler(get_crawler())
    page = FakeBrowserPage()
    page.url = "http://a.test/a"
    read: list[Any] = []

    async def opened(request: Request, browser_page: Any, spider: Any) -> tuple[Any, Any]:
        return None, None  # navigated, no download

    async def capture(browser_page: Any) -> None:
        read.append(browser_page)

    monkeypatch.setattr(handler, "_get_response_and_download", opened)
    request = Request(page.url, meta={"playwright": True, "render_capture": capture})
    response = _run(handler._download_request_with_page(request, page, None))  # type: ignore[arg-type]
    assert read == [page] and request.meta["playwright_page"] is page
    assert response.status == 200 and response.body == b"" and "playwright" in response.flags

    async def downloaded(request: Request, browser_page: Any, spider: Any) -> tuple[Any, Any]:
        return None, object()

    monkeypatch.setattr(handler, "_get_response_and_download", downloaded)
    with pytest.raises(PlaywrightError, match="downloaded by the browser"):
        _run(handler._download_request_with_page(Request(page.url, meta={"render_capture": capture}), page, None))
