"""Rendering in Chromium from the fetched bytes: the page is downloaded once, by Scrapy.

Every page is fetched by Scrapy's own HTTP downloader, so robots.txt, AutoThrottle (on the
server's real latency), retries, redirects, the HTTP cache and the raw archive all see the real
response. For a request with ``meta["render"]`` true and an HTML 2xx response,
``process_response`` then renders that response in Chromium through scrapy-playwright:

- **The main document comes from the fetched body.** A second request for the final URL goes
  to scrapy-playwright (download slot ``render``, no robots, cache, retry or AutoThrottle
  accounting: it never reaches the network for its document). Its page's route answers the
  main-frame navigation with the fetched bytes and a ``Content-Type`` naming the charset the
  project detected (:func:`extraction.dom.encoding.decode_html`), so Chromium decodes what the
  extractor decodes: no mojibake from undeclared UTF-8.
- **Subresources by policy** (``RENDER_BLOCK_RESOURCES``): stylesheets, scripts, images and XHR
  are fetched by Chromium (through ``RENDER_PROXY`` when set); media, fonts, frames
  (``subframe``: advertising, embeds) and the other types listed are refused by Chromium itself,
  through the ``Content-Security-Policy`` header the document is served with (:func:`block_policy`).
- **No interception after the document.** Once the document is served the route is removed, so
  Chromium fetches the page's subresources without pausing each one for the driver and this
  process (measured on 120 real pages: 13% more pages a second). A page whose scripts then load
  another document (a redirect, a reload: the navigation timing entry says so) is rendered
  again in the *strict* mode, which intercepts every request, answers reloads with the same bytes
  and stops navigations elsewhere (``render/strict``).
- **Its own concurrency limit**: at most ``PLAYWRIGHT_MAX_PAGES_PER_CONTEXT`` pages render at
  once, apart from the per-site politeness of the HTTP fetches, which are never held by a render.

The render waits (bounded) for the load event, reads the DOM and the document height and takes
one screenshot: by default the top region the page-type model reads (``CROP_RATIO`` x width,
:mod:`extraction.pagetype.models`), captured from a viewport that tall (no full-page resize), or
the whole page up to ``RENDER_MAX_HEIGHT`` with ``RENDER_SCREENSHOT_REGION=full``. The response
handed on is the fetched one, untouched; the DOM, screenshot and notes travel in
``meta["render_result"]``. A render that fails (browser crash, hang, timeout) is retried
``RENDER_CRASH_RETRIES`` times for a crash or hang and then given up: the page goes on with its
fetched HTML alone, flagged, and nothing is lost.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from dataclasses import dataclass, field
from functools import partial
from typing import Any, ClassVar

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import FloatRect, Page, Route
from playwright.async_api import Request as PlaywrightRequest
from playwright.async_api import TimeoutError as PlaywrightTimeoutError
from scrapy import Request
from scrapy.crawler import Crawler
from scrapy.exceptions import NotConfigured
from scrapy.http import Response
from scrapy.statscollectors import StatsCollector

from crawler.errors import exception_reason, short_message
from crawler.render.screenshots import is_blank, repeated_top_offset
from crawler.responses import content_type, is_html_type
from extraction.config import ComponentConfig
from extraction.dom.encoding import normalise_encoding
from extraction.dom.html import parse_html
from extraction.dom.text import visible_text
from extraction.page import Page as ExtractionPage
from extraction.pagetype.models import CROP_RATIO, load_gray

logger = logging.getLogger(__name__)

# Failures after which a page is rendered again (RENDER_CRASH_RETRIES times): the browser
# died under it, or stopped answering (see crawler/handlers.py).
RETRIED_REASONS = frozenset({"browser_crash", "render_stuck"})
PAGE_CLOSE_TIMEOUT = 10.0  # s; closing a page of a dead browser must not hold the crawl
RENDER_SLOT = "render"  # download slot of the browser's requests (DOWNLOAD_SLOTS in crawler/settings.py)
CONTEXT_NAME = "render"
# Main-frame navigations to the page's own URL answered with its bytes (a reload, a script
# that sets location to itself); a loop ends after this many.
MAX_DOCUMENT_SERVES = 4
# Playwright resource types, plus "subframe" for the document of an <iframe>.
RESOURCE_TYPES = frozenset({
    "document", "subframe", "stylesheet", "image", "media", "font", "script", "texttrack", "xhr", "fetch",
    "eventsource", "websocket", "manifest", "other",
})
# RENDER_BLOCK_RESOURCES types as Content-Security-Policy directives: Chromium refuses them itself, with no
# request interception. "websocket" keeps http(s) connections (fetch, XHR, EventSource) and refuses ws:/wss:;
# xhr, fetch and eventsource share connect-src and are refused together; documents and "other" cannot be.
_POLICY = {
    "font": "font-src 'none'", "media": "media-src 'none'", "texttrack": "media-src 'none'",
    "subframe": "frame-src 'none'", "manifest": "manifest-src 'none'", "image": "img-src 'none'",
    "script": "script-src 'unsafe-inline' 'unsafe-eval'", "stylesheet": "style-src 'unsafe-inline'",
    "websocket": "connect-src http: https: data: blob:",
}
_CONNECT = frozenset({"xhr", "fetch", "eventsource"})
SCREENSHOT_REGIONS = ("top", "full")
SCREENSHOT_FORMATS = ("png", "jpeg")

_PAGE_FACTS_JS = """() => {
  const root = document.documentElement, body = document.body;
  let height = Math.max(root ? root.scrollHeight : 0, body ? body.scrollHeight : 0);
  if (height <= window.innerHeight) {  // not taller than the (tall) viewport: measure the content itself
    height = Math.ceil(Math.max(root ? root.getBoundingClientRect().height : 0,
                                body ? body.getBoundingClientRect().bottom : 0));
  }
  const nav = performance.getEntriesByType("navigation")[0];  // how the document on show was loaded
  return {height: height, charset: document.characterSet,
          document: nav ? nav.name : location.href, load: nav ? nav.type : "navigate"};
}"""


@dataclass(frozen=True)
class RenderConfig(ComponentConfig):
    """RENDER_* settings (README, "Settings"); the offline renderer reads the same ones."""

    prefix: ClassVar[str] = "RENDER"
    enabled: bool = True  # off: every site over plain HTTP, no screenshots
    screenshots: bool = True
    viewport_width: int = 1280
    viewport_height: int = 800
    # "top": the region the page-type model reads (CROP_RATIO x viewport width); "full": the whole page,
    # up to max_height.
    screenshot_region: str = "top"
    screenshot_format: str = "png"  # png (lossless) or jpeg
    # Image pixels per CSS pixel (the browser's device scale factor): the page is laid out at viewport_width
    # CSS px either way. 0.5 gives a 640 x 1280 top region, which the page-type model reduces to 224 x 448;
    # rasterising and encoding a quarter of the pixels made rendering 24% faster (README, "Rendering").
    screenshot_scale: float = 0.5
    screenshot_quality: int = 80  # jpeg quality, 1-100
    # Full-page screenshots stop at this height (CSS px = image px). Chromium cannot capture beyond its
    # 16384-px texture limit; 8192 keeps the PNG of a long article around 1-3 MB.
    max_height: int = 8192
    load_timeout: float = 10.0  # s to wait for the load event after DOMContentLoaded
    screenshot_timeout: float = 20.0  # s
    # One capture at a time, page brought to front, for the top region too. Full-page captures always are:
    # several at once sometimes repeat the top of the page down the image (puppeteer#1576); viewport
    # captures of the top region never resize the page and run in parallel (README, "Screenshots").
    serialize_screenshots: bool = False
    block_resources: tuple[str, ...] = ("media", "font", "subframe", "texttrack", "websocket", "manifest")
    proxy: str = ""  # http://host:port for Chromium's own requests (crawler/settings.py: from $http_proxy)
    # Scripts of the page run when rendering: "on", "off", or "auto": on only when the fetched HTML shows less
    # than javascript_below characters of visible text (a page whose scripts build its content); the text
    # comes from the fetched HTML otherwise (SOURCE_*), and the screenshot shows the page as served. Measured
    # on 120 real pages: 25% more pages a second without scripts; 4.6% of 2,000 real pages are under 2,000
    # characters. A site may say `javascript: true|false` in the site list (README, "Rendering").
    javascript: str = "auto"
    javascript_below: int = 2000
    # Pages rendering at once: the renderer's own limit, apart from per-site politeness.
    concurrency: int = field(default=4, metadata={"setting": "PLAYWRIGHT_MAX_PAGES_PER_CONTEXT"})
    # Pages of rendered sites fetched and not yet rendered, at most (0: 4 x the render concurrency). Without a
    # bound the HTTP fetches run far ahead of the renderer (a demo crawl killed three times had 87 of its 100
    # pages fetched and not completed at one kill or another): memory held by waiting pages, and work a killed
    # crawl fetches again.
    fetch_ahead: int = 0
    crash_retries: int = 1  # a page whose browser died under it is rendered again this many times
    # Longest a browser download (navigation, waiting for a page slot included) may take before it
    # fails as render_stuck; Playwright's own timeouts normally end it long before.
    deadline: float = 180.0
    max_size: int = field(default=0, metadata={"setting": "DOWNLOAD_MAXSIZE"})  # applied to the rendered HTML too

    def validate(self) -> None:
        if self.screenshot_region not in SCREENSHOT_REGIONS:
            raise ValueError(f"RENDER_SCREENSHOT_REGION must be one of {', '.join(SCREENSHOT_REGIONS)}, "
                             f"got {self.screenshot_region!r}")
        if self.screenshot_format not in SCREENSHOT_FORMATS:
            raise ValueError(f"RENDER_SCREENSHOT_FORMAT must be one of {', '.join(SCREENSHOT_FORMATS)}, "
                             f"got {self.screenshot_format!r}")
        if self.javascript not in ("auto", "on", "off"):
            raise ValueError(f"RENDER_JAVASCRIPT must be auto, on or off, got {self.javascript!r}")
        if not 0.1 <= self.screenshot_scale <= 4:
            raise ValueError(f"RENDER_SCREENSHOT_SCALE must be between 0.1 and 4, got {self.screenshot_scale}")
        if not 1 <= self.screenshot_quality <= 100:
            raise ValueError(f"RENDER_SCREENSHOT_QUALITY must be 1-100, got {self.screenshot_quality}")
        unknown = set(self.block_resources) - RESOURCE_TYPES
        if unknown:
            raise ValueError(f"RENDER_BLOCK_RESOURCES: unknown resource type(s) {', '.join(sorted(unknown))} "
                             f"(known: {', '.join(sorted(RESOURCE_TYPES))})")
        block_policy(self.block_resources)  # raises for what cannot be blocked
        if self.concurrency < 1:
            raise ValueError(f"PLAYWRIGHT_MAX_PAGES_PER_CONTEXT must be at least 1, got {self.concurrency}")
        if self.fetch_ahead < 0:
            raise ValueError(f"RENDER_FETCH_AHEAD must be >= 0, got {self.fetch_ahead}")

    @property
    def fetch_ahead_pages(self) -> int:
        """Pages of rendered sites between the start of their fetch and the end of their render, at most."""
        return self.fetch_ahead or 4 * self.concurrency

    @property
    def capture_deadline(self) -> float:
        """Seconds the whole capture of one page may take (load wait, reads, two screenshots)."""
        return self.load_timeout + 2 * self.screenshot_timeout + 30.0

    @property
    def top_height(self) -> int:
        """Height of the "top" screenshot region: what the page-type model reads."""
        return round(CROP_RATIO * self.viewport_width)

    @property
    def top_capture(self) -> bool:
        """True when screenshots are of the top region, captured from a viewport that tall."""
        return self.screenshots and self.screenshot_region == "top"

    @property
    def render_height(self) -> int:
        """The browser's viewport height: the top region when that is captured (a viewport capture: no
        full-page resize, about 2x faster and free of the repeated-top glitch), else viewport_height."""
        return max(self.viewport_height, self.top_height) if self.top_capture else self.viewport_height


@dataclass
class RenderResult:
    """What rendering produced for one page, beside the fetched response."""

    html: str | None = None  # the rendered DOM (None: not rendered, the fetched HTML stands alone)
    charset: str | None = None  # the charset the document was served to Chromium with
    page_height: int | None = None
    screenshot: bytes | None = None  # PNG or JPEG (RENDER_SCREENSHOT_FORMAT)
    screenshot_height: int | None = None
    javascript: bool = True  # the page's scripts ran
    flags: list[str] = field(default_factory=list)
    milliseconds: int | None = None  # from a renderer slot to the screenshot (the record's render_ms)


class RenderMiddleware:
    """Downloader middleware that renders fetched ``meta["render"]`` pages from their bytes."""

    def __init__(self, config: RenderConfig, crawler: Crawler) -> None:
        self.config = config
        self.crawler = crawler
        assert crawler.stats is not None
        self.stats: StatsCollector = crawler.stats
        self._slots = asyncio.Semaphore(config.concurrency)
        self._ahead = asyncio.Semaphore(max(config.fetch_ahead_pages, config.concurrency))
        # Chromium's own requests say who fetches them, as Scrapy's do.
        self.user_agent: str = crawler.settings.get("USER_AGENT") or ""
        # One full-page screenshot at a time when serialised (puppeteer#1576).
        self._screenshot_lock = asyncio.Lock()
        self._policy = block_policy(config.block_resources)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> RenderMiddleware:
        config = RenderConfig.from_settings(crawler.settings)
        if not config.enabled:
            raise NotConfigured("RENDER_ENABLED is off: every site is fetched over plain HTTP")
        return cls(config, crawler)

    async def process_request(self, request: Request) -> None:
        """Hold a page of a rendered site until fewer than RENDER_FETCH_AHEAD such pages wait or render."""
        if request.meta.get("render") and not request.meta.get("playwright"):
            await self._ahead.acquire()  # the request waits here, outside every site's download slot
            request.meta["render_ahead"] = True

    def _release(self, request: Request) -> None:
        if request.meta.pop("render_ahead", False):  # popped: a redirect's or retry's copy does not carry it
            self._ahead.release()

    def process_exception(self, request: Request, exception: BaseException) -> None:
        """A fetch that failed leaves the fetch-ahead bound."""
        self._release(request)

    async def process_response(self, request: Request, response: Response) -> Response:
        try:
            return await self._process_response(request, response)
        finally:
            self._release(request)

    async def _process_response(self, request: Request, response: Response) -> Response:
        if not request.meta.get("render") or request.meta.get("playwright"):
            return response  # a plain page, or the browser's own request (below)
        media_type = content_type(response)
        if not 200 <= response.status < 300 or not is_html_type(media_type):
            return response  # errors and non-HTML documents are not rendered
        page = ExtractionPage(response.body, response.url, media_type or None)
        request.meta["fetched_page"] = page  # decoded once: the spider builds its item from it
        if page.refusal is not None:
            return response
        javascript = self._javascript(request, page)
        started = time.monotonic()
        async with self._slots:
            self._seconds("wait", started)
            rendering = time.monotonic()
            result = await self._render(request, response, page, javascript)
            result.milliseconds = round(1000 * (time.monotonic() - rendering))
            request.meta["render_result"] = result
        return response

    def _javascript(self, request: Request, page: ExtractionPage) -> bool:
        """Return whether the page's scripts run (RENDER_JAVASCRIPT, the site's ``javascript``); counted."""
        chosen: bool | None = request.meta.get("render_javascript")
        if chosen is None:
            if self.config.javascript == "auto":
                try:  # a tree of its own: the page's cached one would be held while the page waits for a slot
                    chosen = len(visible_text(parse_html(page.text))) < self.config.javascript_below
                except Exception:  # an unparsable page: let the browser make what it can of it
                    chosen = True
            else:
                chosen = self.config.javascript == "on"
        self.stats.inc_value(f"render/javascript/{'on' if chosen else 'off'}")
        return chosen

    async def _render(self, request: Request, response: Response, page: ExtractionPage,
                      javascript: bool = True) -> RenderResult:
        result = RenderResult(charset=page.decoded.encoding, javascript=javascript)
        strict = False
        attempt = 0
        while True:
            browser_request = self._browser_request(request, response, page, strict, javascript)
            started = time.monotonic()
            # Run by the download handler right after navigation (crawler/handlers.py), in place of
            # scrapy-playwright's own reading of the page: the DOM is serialised and sent over once.
            browser_request.meta["render_capture"] = partial(self._read_page, request, browser_request, result,
                                                             None if strict else response.url, started)
            try:
                assert self.crawler.engine is not None
                await self.crawler.engine.download_async(browser_request)
                return result
            except _LeftDocument as left:
                # Its scripts loaded another document: render it again, intercepting every request.
                self.stats.inc_value("render/strict")
                logger.info("%s loaded another document (%s): rendering it again in the strict mode", request.url,
                            left)
                result, strict = RenderResult(charset=page.decoded.encoding, javascript=javascript), True
                continue
            except _CaptureStuck:
                result.flags.append("capture_stuck")
                self.stats.inc_value("render/capture_stuck")
                logger.warning("Capturing %s took over %.0f s: the fetched HTML goes on alone", request.url,
                               self.config.capture_deadline)
                return _without_dom(result)
            except Exception as exc:  # Playwright errors, render_stuck, a crashed browser
                reason = exception_reason(exc)
                if reason in RETRIED_REASONS and attempt < self.config.crash_retries:
                    attempt += 1
                    self.stats.inc_value("render/crash_retry")
                    logger.info("Rendering %s failed (%s): trying it again", request.url, reason)
                    continue
                if reason in RETRIED_REASONS:
                    self.stats.inc_value("render/crash_retry/gave_up")
                result.flags.append("render_failed")
                self.stats.inc_value(f"render/failed/{reason}")
                logger.warning("Rendering %s failed (%s: %s): the fetched HTML goes on alone", request.url, reason,
                               short_message(exc))
                return _without_dom(result)
            finally:
                opened = browser_request.meta.get("playwright_page")  # set early: there after a failure too
                if opened is not None:
                    await _close(opened)

    def _browser_request(self, request: Request, response: Response, page: ExtractionPage,
                         strict: bool = False, javascript: bool = True) -> Request:
        """The request scrapy-playwright opens: its main document is answered from ``response``."""
        context_kwargs: dict[str, Any] = {
            "viewport": {"width": self.config.viewport_width, "height": self.config.render_height},
            "device_scale_factor": self.config.screenshot_scale, "user_agent": self.user_agent,
            "java_script_enabled": javascript}
        if self.config.proxy:
            context_kwargs["proxy"] = {"server": self.config.proxy}
        return Request(
            response.url, dont_filter=True, priority=request.priority,
            meta={
                "playwright": True,
                "playwright_include_page": True,
                "playwright_context": CONTEXT_NAME if javascript else f"{CONTEXT_NAME}-no-javascript",
                "playwright_context_kwargs": context_kwargs,
                "playwright_page_goto_kwargs": {"wait_until": "domcontentloaded"},
                "playwright_page_init_callback": self._route_page,
                "render_document": (response.url, page.body, f"text/html; charset={web_label(page.decoded.encoding)}"),
                "render_strict": strict,
                "download_slot": RENDER_SLOT,
                "dont_obey_robotstxt": True,
                "dont_cache": True,
                "dont_retry": True,
                "dont_redirect": True,
                "handle_httpstatus_all": True,
                "autothrottle_dont_adjust_delay": True,
            },
        )

    async def _route_page(self, page: Page, request: Request) -> None:
        """scrapy-playwright's page init callback: the document from the fetched bytes (module docstring)."""
        url, body, document_type = request.meta["render_document"]
        own_url = url.split("#", 1)[0]
        headers = {"content-type": document_type}
        if self._policy:
            headers["content-security-policy"] = self._policy
        if not request.meta.get("render_strict"):
            # Only the document is intercepted, then nothing: scrapy-playwright's own route goes too.
            await page.unroute("**")

            async def serve(route: Route, browser_request: PlaywrightRequest) -> None:
                if browser_request.is_navigation_request() and browser_request.frame.parent_frame is None \
                        and not request.meta.get("render_document_served"):
                    request.meta["render_document_served"] = True
                    await route.fulfill(status=200, headers=headers, body=body)
                    task = asyncio.ensure_future(_stop_routing(page))
                    _TASKS.add(task)
                    task.add_done_callback(_TASKS.discard)
                    return
                await route.continue_()

            await page.route(re.compile(re.escape(own_url) + "(#.*)?"), serve)
            return
        blocked = set(self.config.block_resources)
        served = 0

        async def handle(route: Route, browser_request: PlaywrightRequest) -> None:
            nonlocal served
            if browser_request.is_navigation_request():
                if browser_request.frame.parent_frame is not None:  # an <iframe>'s document
                    if "subframe" in blocked:
                        await route.abort("blockedbyclient")
                        self.stats.inc_value("render/blocked/subframe")
                        return
                    await route.continue_()
                    return
                if browser_request.url.split("#", 1)[0] == own_url and served < MAX_DOCUMENT_SERVES:
                    served += 1
                    request.meta["render_document_served"] = True
                    await route.fulfill(status=200, headers=headers, body=body)
                    return
                self.stats.inc_value("render/blocked/navigation")  # the page's script leaves it: stay
                await route.abort("blockedbyclient")
                return
            kind = browser_request.resource_type
            if kind in blocked:
                self.stats.inc_value(f"render/blocked/{kind}")
                await route.abort("blockedbyclient")
                return
            # Fetched by Chromium as it asked (the context carries the crawl's User-Agent). Not handed on to
            # scrapy-playwright's handler, which reads every request's headers over the driver first.
            await route.continue_()

        await page.route("**", handle)

    def _seconds(self, phase: str, started: float) -> None:
        """Add the milliseconds since ``started`` to ``render/ms/<phase>`` (README, "Stats")."""
        self.stats.inc_value(f"render/ms/{phase}", round(1000 * (time.monotonic() - started)))

    async def _read_page(self, request: Request, browser_request: Request, result: RenderResult, document: str | None,
                       started: float, page: Page) -> None:
        """Read the rendered page into ``result`` (the download handler calls this once the page is open)."""
        self._seconds("open", started)
        if not browser_request.meta.get("render_document_served"):
            result.flags.append("document_not_served")  # the route was not in place: counted, kept
            self.stats.inc_value("render/document_not_served")
        try:
            await asyncio.wait_for(self._finish(page, request, result, document), self.config.capture_deadline)
        except TimeoutError:
            raise _CaptureStuck from None

    async def _finish(self, page: Page, request: Request, result: RenderResult, document: str | None) -> None:
        """Wait for the load event, read the DOM and take the screenshot. ``document``: the URL served from
        the fetched bytes, when another document in its place must raise _LeftDocument (None: strict mode)."""
        started = time.monotonic()
        try:
            await page.wait_for_load_state("load", timeout=self.config.load_timeout * 1000)
        except PlaywrightTimeoutError:
            result.flags.append("load_timeout")
            self.stats.inc_value("render/load_timeout")
            logger.info("Page did not finish loading in %.0f s, capturing it as it is: %s",
                        self.config.load_timeout, request.url)
        self._seconds("load", started)
        started = time.monotonic()
        facts: dict[str, Any] = await page.evaluate(_PAGE_FACTS_JS)
        if document is not None:
            shown = str(facts.get("document") or "").split("#", 1)[0]
            if shown != document.split("#", 1)[0] or facts.get("load") == "reload":
                raise _LeftDocument(f"{facts.get('load')} {shown}")
        html = await page.content()
        self._seconds("dom", started)
        if self.config.max_size and len(html) > self.config.max_size:
            result.flags.append("rendered_too_large")
            self.stats.inc_value("render/too_large")
            logger.warning("Rendered %s is over DOWNLOAD_MAXSIZE (%d characters): not kept", request.url, len(html))
            return
        result.html = html
        result.page_height = int(facts.get("height") or 0)
        if facts.get("charset") and normalise_encoding(str(facts["charset"])) != normalise_encoding(result.charset):
            result.flags.append("render_charset_differs")  # a <meta> later in the page overrode the header
            self.stats.inc_value("render/charset_differs")
        if self.config.screenshots:
            started = time.monotonic()
            await self._screenshot(page, request, result)
            self._seconds("screenshot", started)
        self.stats.inc_value("render/page")

    async def _screenshot(self, page: Page, request: Request, result: RenderResult) -> None:
        limit = self.config.top_height if self.config.top_capture else self.config.max_height
        height = max(1, min(result.page_height or self.config.viewport_height, limit))
        if self.config.screenshot_region == "full" and (result.page_height or 0) > self.config.max_height:
            result.flags.append("screenshot_capped")
            self.stats.inc_value("render/screenshot_capped")
        for attempt in (1, 2):
            try:
                image = await self._take_screenshot(page, height)
            except PlaywrightError as exc:
                if exception_reason(exc) == "browser_crash":
                    raise  # the page is rendered again as a whole
                result.flags.append("screenshot_failed")
                self.stats.inc_value("render/screenshot_failed")
                logger.warning("Screenshot failed for %s: %s", request.url, short_message(exc))
                return
            gray = load_gray(image)  # decoded once: the page-type model reads the same array (cached)
            if is_blank(gray):
                result.flags.append("screenshot_blank")
                self.stats.inc_value("render/screenshot_blank")
            band = round(self.config.viewport_height * self.config.screenshot_scale)  # in image pixels
            offset = repeated_top_offset(gray, band)  # every method checked: measured
            if offset is None:
                result.screenshot = image
                result.screenshot_height = height  # CSS px of the page in the image
                self.stats.inc_value("render/screenshot")
                self.stats.inc_value("render/screenshot_bytes", len(image))
                return
            self.stats.inc_value("render/screenshot_glitch")
            logger.warning("Screenshot of %s repeats its top at row %d (attempt %d)",
                           request.url, offset, attempt)
        result.flags.append("screenshot_glitch")  # twice glitched: keep no screenshot

    async def _take_screenshot(self, page: Page, height: int) -> bytes:
        clip: FloatRect = {"x": 0, "y": 0, "width": self.config.viewport_width, "height": height}
        options: dict[str, Any] = {"full_page": not self.config.top_capture, "clip": clip,
                                   "type": self.config.screenshot_format,
                                   "timeout": self.config.screenshot_timeout * 1000}
        if self.config.screenshot_format == "jpeg":
            options["quality"] = self.config.screenshot_quality
        if self.config.top_capture and not self.config.serialize_screenshots:
            return await page.screenshot(**options)
        async with self._screenshot_lock:
            await page.bring_to_front()
            return await page.screenshot(**options)


# Python codec names that are not labels of the WHATWG Encoding Standard (what Chromium reads in a
# Content-Type), and the label of the same encoding.
_WEB_LABELS = {"big5hkscs": "big5", "mac-roman": "macintosh", "cp874": "windows-874", "euc_kr": "euc-kr",
               "euc_jp": "euc-jp", "iso2022_jp": "iso-2022-jp", "utf-16-le": "utf-16le", "utf-16-be": "utf-16be"}


def web_label(codec: str) -> str:
    """Return the WHATWG label Chromium understands for a Python codec name (``big5hkscs`` -> ``big5``)."""
    name = _WEB_LABELS.get(codec, codec)
    if name.startswith("iso8859-"):
        return "iso-8859-" + name.removeprefix("iso8859-")
    if name.startswith("cp125"):
        return "windows-" + name.removeprefix("cp")
    return name.replace("_", "-")


def _without_dom(result: RenderResult) -> RenderResult:
    """A failed render keeps its flags and nothing half-made."""
    return RenderResult(charset=result.charset, flags=result.flags)


async def _close(page: Page) -> None:
    try:
        if not page.is_closed():
            await asyncio.wait_for(page.close(), PAGE_CLOSE_TIMEOUT)
    except (TimeoutError, PlaywrightError) as exc:
        # The browser is gone (crash: scrapy-playwright relaunches it) or not answering.
        logger.debug("Page not closed cleanly: %s", short_message(exc))


class _CaptureStuck(Exception):
    """Reading the rendered page took over RenderConfig.capture_deadline."""


class _LeftDocument(Exception):
    """The page on show is not the document served from the fetched bytes (a script navigated or reloaded)."""


_TASKS: set[asyncio.Task[None]] = set()  # background tasks, referenced until done


def block_policy(types: tuple[str, ...] | list[str]) -> str:
    """Return the Content-Security-Policy that refuses the resource ``types`` (RENDER_BLOCK_RESOURCES).

    Raises ValueError for what a policy cannot refuse: documents and "other", and only some of xhr, fetch
    and eventsource (one directive, connect-src, governs the three).
    """
    wanted = set(types)
    if wanted & {"document", "other"}:
        raise ValueError("RENDER_BLOCK_RESOURCES: document and other cannot be blocked")
    connect = wanted & _CONNECT
    if connect and connect != _CONNECT:
        raise ValueError("RENDER_BLOCK_RESOURCES: xhr, fetch and eventsource are blocked together (connect-src), "
                         f"got only {', '.join(sorted(connect))}")
    directives = dict.fromkeys(_POLICY[kind] for kind in sorted(wanted - _CONNECT))
    if connect:
        directives = {d: None for d in directives if not d.startswith("connect-src")}
        directives["connect-src 'none'"] = None
    return "; ".join(directives)


async def _stop_routing(page: Page) -> None:
    """Remove every route of ``page``: Chromium then fetches without pausing each request."""
    try:
        await page.unroute_all(behavior="ignoreErrors")
    except PlaywrightError as exc:  # the page closed meanwhile
        logger.debug("Routes not removed: %s", short_message(exc))
