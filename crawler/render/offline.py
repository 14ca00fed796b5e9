"""Rendering saved HTML in Chromium without any network: full-page screenshots of stored pages.

Used to build the page-type CNN's training images from dataset pages. Each page is opened at
its own URL (see ``crawler.render.saved_url.page_url``; else ``http://saved.invalid/<key>``) in
one of a few reused browser pages; the main document is served from memory by request
interception and every other request (stylesheets, images, scripts, fonts, frames) is refused,
and no host name resolves, so nothing leaves the machine. JavaScript runs (inline scripts only,
as the crawl would run them). Capture follows the crawl (crawler/middlewares/render.py): wait
for load, read the document height, take one full-page PNG at a time (page brought to front,
puppeteer#1576), height capped, checked for the repeated-top glitch and retaken once.

``render_html`` is a plain synchronous generator: it runs its own asyncio loop in a background
thread, so it works from scripts and from a Scrapy command's ``run()`` alike. This module does
not import Scrapy.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import io
import logging
import threading
from collections import Counter, deque
from collections.abc import Coroutine, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, TypeVar
from urllib.parse import quote, urlsplit

from PIL import Image
from playwright.async_api import (
    Browser,
    BrowserContext,
    FloatRect,
    Page,
    Playwright,
    Request,
    Route,
    WebSocketRoute,
    async_playwright,
)
from playwright.async_api import Error as PlaywrightError
from playwright.async_api import TimeoutError as PlaywrightTimeoutError

from crawler.middlewares.render_config import RenderConfig
from crawler.render.screenshots import is_blank, repeated_top_offset
from extraction.pagetype.models import load_gray

logger = logging.getLogger(__name__)

T = TypeVar("T")

# Pages in flight per rendering slot: while the caller consumes one result the browser
# already works on the next ones (results are yielded in input order).
QUEUE_FACTOR = 3
# The whole render of one page (load, reads, up to two screenshots, waiting for the
# screenshot lock) must end within this many times ``timeout_s``; each browser call has
# ``timeout_s`` of its own.
DEADLINE_FACTOR = 4
CLOSE_TIMEOUT = 10.0  # s; closing (or parking) a hung page must not hold the batch
FALLBACK_ORIGIN = "http://saved.invalid/"
# Main-frame navigations of a loading page that get its document again. Pages redirect to
# their canonical origin or to https from a script in <head>; refusing that navigation leaves
# the document stopped before DOMContentLoaded (seen on gne-chinese pages opened at
# saved.invalid), serving it again lets it load. A redirect loop ends after this many.
MAX_DOCUMENT_SERVES = 4
EMPTY_FRAME = b"<!DOCTYPE html><html><head></head><body></body></html>"  # what every <iframe> gets
# Requests for one URL a page may have refused before it gets an empty stand-in instead. Fallback
# handlers such as sina.com.cn's ``onerror="if (this.src != '//fallback.png') this.src = '//fallback.png'"``
# (the absolute src never equals the relative string) retry forever when the fallback fails too:
# the page never reaches load and burns CPU meanwhile.
MAX_REFUSALS_PER_URL = 3
# A 1x1 transparent PNG: the stand-in for an image requested too often.
BLANK_PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489"
    "0000000d49444154789c6360606060000000050001a5f645400000000049454e44ae426082"
)
_STAND_IN_TYPES = {"image": "image/png", "script": "text/javascript", "stylesheet": "text/css"}
# Chromium switches added to the crawl's launch options: no host name resolves, so even
# preconnects and DNS prefetches (which request interception does not see) go nowhere.
OFFLINE_ARGS = ("--host-resolver-rules=MAP * ~NOTFOUND",)

_HEIGHT_JS = """() => Math.max(
  document.documentElement ? document.documentElement.scrollHeight : 0,
  document.body ? document.body.scrollHeight : 0)"""
_STRIP_STYLES_JS = """() => {
  document.querySelectorAll('style, link[rel~="stylesheet" i]').forEach(e => e.remove());
  document.querySelectorAll('[style]').forEach(e => e.removeAttribute('style'));
  if (document.adoptedStyleSheets) document.adoptedStyleSheets = [];
}"""


def _launch_options(settings: Any = None) -> dict[str, Any]:
    """The crawl's PLAYWRIGHT_LAUNCH_OPTIONS (of ``settings``, default the project's) plus OFFLINE_ARGS."""
    if settings is None:
        from scrapy.utils.project import get_project_settings

        settings = get_project_settings()
    options: dict[str, Any] = {**settings.getdict("PLAYWRIGHT_LAUNCH_OPTIONS")}
    options["args"] = [*options.get("args", []), *OFFLINE_ARGS]
    return options


@dataclass
class OfflineRenderConfig:
    """How saved pages are rendered; the defaults are the crawl's (RenderConfig, the project's settings)."""

    viewport_width: int = RenderConfig.viewport_width
    viewport_height: int = RenderConfig.viewport_height
    max_height: int = RenderConfig.max_height  # screenshots stop here (RENDER_MAX_HEIGHT)
    concurrency: int = 4  # pages rendering at once (PLAYWRIGHT_MAX_PAGES_PER_CONTEXT)
    timeout_s: float = RenderConfig.screenshot_timeout  # per browser call; a page gets DEADLINE_FACTOR x this
    strip_styles: bool = False  # remove <style>, style="" and stylesheet links before capture
    launch_options: dict[str, Any] = field(default_factory=_launch_options)

    @classmethod
    def from_settings(cls, settings: Any, **overrides: Any) -> OfflineRenderConfig:
        """Return the config of Scrapy ``settings`` (RENDER_*, PLAYWRIGHT_*), as ``scrapy extract --render`` uses."""
        render = RenderConfig.from_settings(settings)
        values: dict[str, Any] = {
            "viewport_width": render.viewport_width, "viewport_height": render.viewport_height,
            "max_height": render.max_height, "timeout_s": render.screenshot_timeout,
            "concurrency": settings.getint("PLAYWRIGHT_MAX_PAGES_PER_CONTEXT", cls.concurrency),
            "launch_options": _launch_options(settings)}
        return cls(**{**values, **overrides})


@dataclass
class _Document:
    """The HTML a page's main-frame navigations get while it loads."""

    body: bytes
    serves_left: int = MAX_DOCUMENT_SERVES
    served: int = 0


@dataclass
class RenderedPage:
    """The outcome for one input page: a PNG, or an error saying why there is none."""

    key: str
    png: bytes | None = None  # full-page RGB PNG, viewport_width wide, at most max_height tall
    page_height: int | None = None  # document height in CSS px (before the cap)
    error: str | None = None
    # screenshot_capped, load_timeout, script_redirect, retried_glitch, glitch (repeated top kept),
    # blank, retried_crash
    flags: list[str] = field(default_factory=list)


def document_url(key: str, url: str | None) -> str:
    """Return the URL a page is opened at: ``url`` when it is absolute http(s), else one made from the key."""
    if url:
        try:
            parts = urlsplit(url.strip())
        except ValueError:
            parts = None
        if parts is not None and parts.scheme in ("http", "https") and parts.netloc:
            return url.strip()
    return FALLBACK_ORIGIN + quote(key, safe="/")


def _describe(exc: BaseException) -> str:
    """Return the exception's type and the first line of its message (Playwright appends logs)."""
    message = str(exc).strip().split("\n", 1)[0][:300]
    return f"{type(exc).__name__}: {message}" if message else type(exc).__name__


def _check_screenshot(png: bytes, band: int) -> tuple[int | None, bool, bytes]:
    """Return (row where the top ``band`` repeats or None, blank?, the PNG as RGB) of a screenshot."""
    gray = load_gray(png)
    with Image.open(io.BytesIO(png)) as image:
        if image.mode != "RGB":  # Chromium may hand back RGBA
            out = io.BytesIO()
            image.convert("RGB").save(out, format="PNG")
            png = out.getvalue()
    return repeated_top_offset(gray, band), is_blank(gray), png


class OfflineRenderer:
    """One Chromium with one context and a pool of ``concurrency`` reused pages. Async API.

    Pages are reused (a fresh page, or a fresh context, per input costs 2-4x the throughput:
    each spawns a renderer) and parked on about:blank between inputs, so an idle page runs no
    script. A page that failed is closed and replaced; a browser that died is launched again.
    Like the crawl's shared "render" context, pages of one run share cookies and storage.
    """

    def __init__(self, config: OfflineRenderConfig) -> None:
        self.config = config
        self.relaunches = 0
        self._playwright: Playwright | None = None
        self._browser: Browser | None = None
        self._context: BrowserContext | None = None
        self._idle: list[Page] = []
        self._own_pages: set[Page] = set()
        self._opening = 0  # pages being opened by us (not popups)
        self._documents: dict[Page, _Document] = {}  # page -> the document it is loading
        self._crashed: set[Page] = set()  # pages whose renderer died
        self._refused: dict[Page, Counter[str]] = {}  # page -> requests refused per URL (this input)
        self._browser_lock = asyncio.Lock()
        self._slots = asyncio.Semaphore(config.concurrency)
        # One screenshot at a time: concurrent full-page captures sometimes repeat the top
        # of the page down the image (puppeteer#1576, ../shared/ENVIRONMENT.md).
        self._screenshot_lock = asyncio.Lock()

    async def start(self) -> None:
        """Start Playwright and launch the browser."""
        self._playwright = await async_playwright().start()
        await self._ensure_context()

    async def close(self) -> None:
        """Close the browser and stop Playwright (errors of a dead browser are ignored)."""
        if self._browser is not None:
            try:
                await asyncio.wait_for(self._browser.close(), CLOSE_TIMEOUT)
            except (TimeoutError, PlaywrightError) as exc:
                logger.debug("Browser not closed cleanly: %s", _describe(exc))
            self._browser = None
        if self._playwright is not None:
            await self._playwright.stop()
            self._playwright = None

    async def _ensure_context(self) -> BrowserContext:
        """Return the live context, launching the browser (again, after a crash) when needed."""
        async with self._browser_lock:
            if self._browser is not None and self._browser.is_connected() and self._context is not None:
                return self._context
            assert self._playwright is not None, "OfflineRenderer.start() was not called"
            if self._browser is not None:
                self.relaunches += 1
                logger.warning("Chromium died: launching it again (relaunch %d)", self.relaunches)
                try:
                    await asyncio.wait_for(self._browser.close(), CLOSE_TIMEOUT)
                except (TimeoutError, PlaywrightError) as exc:
                    logger.debug("Dead browser not closed cleanly: %s", _describe(exc))
            self._browser = None
            self._context = None
            self._idle.clear()
            self._own_pages.clear()
            self._documents.clear()
            self._crashed.clear()
            browser = await self._playwright.chromium.launch(**self.config.launch_options)
            context = await browser.new_context(
                viewport={"width": self.config.viewport_width, "height": self.config.viewport_height},
                device_scale_factor=1,
                service_workers="block",
            )
            await context.route("**/*", self._route)
            await context.route_web_socket("**/*", _refuse_socket)
            self._browser, self._context = browser, context
            return context

    async def _route(self, route: Route, request: Request) -> None:
        """Serve a loading page's document to its main-frame navigations; nothing else reaches a network.

        Until the page has loaded, its main-frame navigations (the first, and script redirects, up to
        MAX_DOCUMENT_SERVES) get its document. Other navigations (after load, frames, popups) get an
        empty 204, which leaves the current document in place instead of committing Chromium's
        error page; every other request is aborted.
        """
        try:
            if not request.is_navigation_request():
                await self._refuse(route, request)
                return
            frame = request.frame
            headers = {"content-type": "text/html; charset=utf-8"}
            if frame.parent_frame is not None:
                # An empty document: the frame loads (a 204 can leave its parent waiting for load).
                await route.fulfill(status=200, headers=headers, body=EMPTY_FRAME)
                return
            document = self._documents.get(frame.page)
            if document is not None and document.serves_left > 0:
                document.serves_left -= 1
                document.served += 1
                await route.fulfill(status=200, headers=headers, body=document.body)
            else:
                await route.fulfill(status=204, body=b"")
        except PlaywrightError as exc:  # the page went away meanwhile, or the request has no frame
            logger.debug("Routing %s failed: %s", request.url[:200], _describe(exc))
            with contextlib.suppress(PlaywrightError):  # already handled, or its page is gone
                await route.abort("blockedbyclient")

    async def _refuse(self, route: Route, request: Request) -> None:
        """Abort a subresource request; one asked for too often gets an empty stand-in (see MAX_REFUSALS_PER_URL)."""
        try:
            refused = self._refused.setdefault(request.frame.page, Counter())
        except PlaywrightError:  # no frame (a worker's request)
            refused = Counter()
        refused[request.url] += 1
        if refused[request.url] <= MAX_REFUSALS_PER_URL:
            await route.abort("blockedbyclient")
            return
        content_type = _STAND_IN_TYPES.get(request.resource_type, "text/plain")
        body = BLANK_PNG if request.resource_type == "image" else b""
        await route.fulfill(status=200, headers={"content-type": content_type}, body=body)

    async def _acquire_page(self, context: BrowserContext) -> Page:
        while self._idle:
            page = self._idle.pop()
            if not page.is_closed() and page.context is context and page not in self._crashed:
                return page
            self._own_pages.discard(page)
            self._crashed.discard(page)
            await _close_page(page)
        self._opening += 1
        try:
            page = await context.new_page()
        finally:
            self._opening -= 1
        self._own_pages.add(page)
        page.on("crash", self._on_crash)
        return page

    def _on_crash(self, page: Page) -> None:
        logger.info("Renderer of a page crashed: the page will be replaced")
        self._crashed.add(page)

    async def _release_page(self, page: Page, reusable: bool) -> None:
        """Park the page on about:blank for the next input, or close it when it failed."""
        self._documents.pop(page, None)
        self._refused.pop(page, None)
        crashed = page in self._crashed
        self._crashed.discard(page)
        if reusable and not crashed and page.context is self._context and not page.is_closed():
            try:
                await page.goto("about:blank", timeout=CLOSE_TIMEOUT * 1000)
                self._idle.append(page)
                await self._close_popups(page.context)
                return
            except PlaywrightError as exc:
                logger.debug("Page not parked: %s", _describe(exc))
        self._own_pages.discard(page)
        await _close_page(page)

    async def _close_popups(self, context: BrowserContext) -> None:
        """Close pages that scripts opened (window.open); ours are tracked in ``_own_pages``."""
        if self._opening:
            return  # a page of ours may be in context.pages before new_page() returns
        for page in context.pages:
            if page not in self._own_pages:
                await _close_page(page)

    async def render(self, key: str, html: str, url: str | None = None) -> RenderedPage:
        """Return the rendered page; never raises for a bad page (``error`` says what went wrong)."""
        result = RenderedPage(key)
        async with self._slots:
            for attempt in (1, 2):
                try:
                    context = await self._ensure_context()
                    page = await self._acquire_page(context)
                except Exception as exc:  # a launch failure ends this page, not the batch
                    result.error = f"browser_failed: {_describe(exc)}"
                    return result
                ok = False
                try:
                    self._documents[page] = _Document(html.encode("utf-8", "replace"))
                    deadline = DEADLINE_FACTOR * self.config.timeout_s
                    await asyncio.wait_for(self._capture(page, result, document_url(key, url)), deadline)
                    ok = True
                    result.error = None
                    return result
                except TimeoutError:
                    result.error = f"timeout: over {DEADLINE_FACTOR * self.config.timeout_s:.0f} s"
                    return result
                except PlaywrightError as exc:
                    result.error = _describe(exc)
                    browser = context.browser
                    browser_died = browser is None or not browser.is_connected()
                    # A renderer may host several pages of one site: one page's crash takes the
                    # others with it, so a crashed page gets a second chance on a fresh renderer.
                    if attempt == 2 or not (browser_died or page in self._crashed):
                        return result
                    result.flags.append("retried_crash")
                    logger.info("%s crashed under %s: rendering it again", "Browser" if browser_died else "Page", key)
                except Exception as exc:  # anything else is one page's failure, logged
                    logger.exception("Rendering %s failed", key)
                    result.error = _describe(exc)
                    return result
                finally:
                    await self._release_page(page, ok)
        return result

    async def _capture(self, page: Page, result: RenderedPage, url: str) -> None:
        config = self.config
        result.flags = [flag for flag in result.flags if flag == "retried_crash"]
        timeout_ms = config.timeout_s * 1000
        await page.goto(url, wait_until="domcontentloaded", timeout=timeout_ms)
        try:
            await page.wait_for_load_state("load", timeout=timeout_ms)
        except PlaywrightTimeoutError:
            result.flags.append("load_timeout")  # captured as it is, like the crawl does
        document = self._documents.pop(page, None)  # loaded: later navigations are refused
        if document is not None and document.served > 1:
            result.flags.append("script_redirect")
        if config.strip_styles:
            await page.evaluate(_STRIP_STYLES_JS)
        result.page_height = int(await page.evaluate(_HEIGHT_JS) or 0)
        height = min(result.page_height or config.viewport_height, config.max_height)
        if result.page_height > config.max_height:
            result.flags.append("screenshot_capped")
        clip: FloatRect = {"x": 0, "y": 0, "width": config.viewport_width, "height": height}
        for attempt in (1, 2):
            async with self._screenshot_lock:
                await page.bring_to_front()
                png = await page.screenshot(full_page=True, clip=clip, type="png", timeout=timeout_ms)
            # Decoding a tall PNG takes a few hundred ms: off the event loop, which drives the other pages.
            offset, blank, rgb_png = await asyncio.to_thread(_check_screenshot, png, config.viewport_height)
            if offset is None or attempt == 2:
                if offset is not None:
                    result.flags.append("glitch")  # kept, flagged: a consumer may drop it
                if blank:
                    result.flags.append("blank")
                result.png = rgb_png
                return
            result.flags.append("retried_glitch")
            logger.info("Screenshot of %s repeats its top at row %d: taking it again", result.key, offset)


async def _refuse_socket(socket: WebSocketRoute) -> None:
    """Close a page's WebSocket without ever connecting it to a server."""
    await socket.close()


async def _close_page(page: Page) -> None:
    try:
        if not page.is_closed():
            await asyncio.wait_for(page.close(), CLOSE_TIMEOUT)
    except (TimeoutError, PlaywrightError) as exc:
        logger.debug("Page not closed cleanly: %s", _describe(exc))


class _LoopThread:
    """An asyncio event loop running in a daemon thread; coroutines are submitted to it."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, name="offline-render", daemon=True)
        self._thread.start()

    def submit(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    def call(self, coro: Coroutine[Any, Any, T]) -> T:
        return self.submit(coro).result()

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join()
        self.loop.close()


def render_html(
    pages: Iterable[tuple[str, str, str | None]], config: OfflineRenderConfig | None = None
) -> Iterator[RenderedPage]:
    """Yield a RenderedPage for each ``(key, html_text, url_or_None)``, in input order.

    The input is read lazily, a few pages ahead of the results. One page's failure (timeout,
    renderer or browser crash) gives a result with ``error`` set and ``png`` None; the batch
    goes on. Closing the generator early closes the browser.
    """
    config = config or OfflineRenderConfig()
    runner = _LoopThread()
    renderer = OfflineRenderer(config)
    pending: deque[concurrent.futures.Future[RenderedPage]] = deque()
    try:
        runner.call(renderer.start())
        for key, html, url in pages:
            pending.append(runner.submit(renderer.render(key, html, url)))
            while len(pending) >= QUEUE_FACTOR * config.concurrency:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()
    finally:
        for future in pending:
            future.cancel()
        try:
            runner.call(renderer.close())
        finally:
            runner.stop()
