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
  are fetched by Chromium, every one through the renderer's policy proxy (:mod:`crawler.render.policy_proxy`: the
  crawl's address policy, then ``RENDER_PROXY`` when set); media, fonts, frames
  (``subframe``: advertising, embeds) and the other types listed are refused by Chromium itself,
  through the ``Content-Security-Policy`` header the document is served with (:func:`block_policy`).
- **No interception after the document.** Once the document is served the route is removed, so
  Chromium fetches the page's subresources without pausing each one for the driver and this
  process (measured on 120 real pages: 13% more pages a second). A page whose scripts then load
  another document (a redirect, a reload: the navigation timing entry says so) is rendered
  again in the *strict* mode, which intercepts every request, answers reloads with the same bytes
  and stops navigations elsewhere (``render/strict``). A navigation of the main frame outside the site's scope
  is the page's redirect: the spider records it as ``redirect_offsite`` (``RenderResult.navigated_to``).
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
from functools import partial
from typing import Any

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import FloatRect, Page, Route
from playwright.async_api import Request as PlaywrightRequest
from playwright.async_api import TimeoutError as PlaywrightTimeoutError
from scrapy import Request, signals
from scrapy.crawler import Crawler
from scrapy.exceptions import NotConfigured
from scrapy.http import Response
from scrapy.statscollectors import StatsCollector

from crawler.errors import exception_reason, short_message
from crawler.fetch_policy import FetchRefused, crawl_policy
from crawler.middlewares.render_config import RenderConfig, block_policy
from crawler.middlewares.render_result import (
    _PAGE_FACTS_JS,
    RenderResult,
    _CaptureStuck,
    _LeftDocument,
    _without_dom,
    web_label,
)
from crawler.render.policy_proxy import PolicyProxy
from crawler.render.screenshots import is_blank, repeated_top_offset
from crawler.responses import content_type, is_html_type
from extraction.dom.encoding import normalise_encoding
from extraction.dom.html import parse_html
from extraction.dom.text import visible_text
from extraction.page import Page as ExtractionPage
from extraction.pagetype.models import load_gray

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
        # Chromium's own requests: through the address policy, then RENDER_PROXY (crawler/render/policy_proxy.py).
        self.proxy = PolicyProxy(crawl_policy(crawler), self._refused, upstream=config.proxy)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> RenderMiddleware:
        config = RenderConfig.from_settings(crawler.settings)
        if not config.enabled:
            # Scrapy logs a NotConfigured's message as a warning: a setting the user chose is no warning.
            logger.info("RENDER_ENABLED is off: every site is fetched over plain HTTP")
            raise NotConfigured
        middleware = cls(config, crawler)
        crawler.signals.connect(middleware.proxy.close, signal=signals.spider_closed)
        return middleware

    def _refused(self, refusal: FetchRefused, url: str) -> None:
        self.stats.inc_value(f"fetch/refused/{refusal.reason}")
        self.stats.inc_value("render/refused")
        logger.info("%s: not fetched by the browser: %s", refusal, url)

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
        proxy = await self.proxy.url()
        left_to: str | None = None
        while True:
            browser_request = self._browser_request(request, response, page, strict, javascript, proxy)
            started = time.monotonic()
            # Run by the download handler right after navigation (crawler/handlers.py), in place of
            # scrapy-playwright's own reading of the page: the DOM is serialised and sent over once.
            browser_request.meta["render_capture"] = partial(self._read_page, request, browser_request, result,
                                                             None if strict else response.url, started)
            try:
                assert self.crawler.engine is not None
                await self.crawler.engine.download_async(browser_request)
                result.navigated_to = browser_request.meta.get("render_navigated_to") or left_to
                return result
            except _LeftDocument as left:
                if left.url.split("#", 1)[0] != response.url.split("#", 1)[0]:
                    left_to = left.url
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
                         strict: bool = False, javascript: bool = True, proxy: str = "") -> Request:
        """The request scrapy-playwright opens: its main document is answered from ``response``; Chromium's own
        requests go through ``proxy`` (the policy proxy)."""
        context_kwargs: dict[str, Any] = {
            "viewport": {"width": self.config.viewport_width, "height": self.config.render_height},
            "device_scale_factor": self.config.screenshot_scale, "user_agent": self.user_agent,
            "java_script_enabled": javascript}
        if proxy:
            context_kwargs["proxy"] = {"server": proxy}
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
                request.meta.setdefault("render_navigated_to", browser_request.url)
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
        """Add the milliseconds since ``started`` to ``render/ms/<phase>`` (docs/reference/stats.md)."""
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
                raise _LeftDocument(str(facts.get("load")), str(facts.get("document") or ""))
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


async def _close(page: Page) -> None:
    try:
        if not page.is_closed():
            await asyncio.wait_for(page.close(), PAGE_CLOSE_TIMEOUT)
    except (TimeoutError, PlaywrightError) as exc:
        # The browser is gone (crash: scrapy-playwright relaunches it) or not answering.
        logger.debug("Page not closed cleanly: %s", short_message(exc))


_TASKS: set[asyncio.Task[None]] = set()  # background tasks, referenced until done


async def _stop_routing(page: Page) -> None:
    """Remove every route of ``page``: Chromium then fetches without pausing each request."""
    try:
        await page.unroute_all(behavior="ignoreErrors")
    except PlaywrightError as exc:  # the page closed meanwhile
        logger.debug("Routes not removed: %s", short_message(exc))
