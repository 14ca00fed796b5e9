"""Rendering in Chromium: turns a request into a browser page and finishes the page.

For a request with ``meta["render"]`` true, ``process_request`` asks scrapy-playwright to
open it in a page (kept open for us, navigation returning at DOMContentLoaded).
``process_response`` then waits (bounded) for the load event, reads the final DOM and the
document height, takes one full-page PNG screenshot (height capped), checks it for the
repeated-top glitch and closes the page. The response body becomes the rendered HTML; the
screenshot and notes travel in ``meta["render_result"]``.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from typing import Any, ClassVar

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import FloatRect, Page
from playwright.async_api import TimeoutError as PlaywrightTimeoutError
from scrapy import Request
from scrapy.crawler import Crawler
from scrapy.exceptions import NotConfigured
from scrapy.http import Response
from scrapy.statscollectors import StatsCollector

from crawler.errors import PageTooLarge, exception_reason, short_message
from crawler.render.screenshots import is_blank, repeated_top_offset
from crawler.responses import content_type, is_html_type
from extraction.config import ComponentConfig
from extraction.pagetype.models import load_gray

logger = logging.getLogger(__name__)

# Failures after which a page is rendered again (RENDER_CRASH_RETRIES times): the browser
# died under it, or stopped answering (see crawler/handlers.py).
RETRIED_REASONS = frozenset({"browser_crash", "render_stuck"})
PAGE_CLOSE_TIMEOUT = 10.0  # s; closing a page of a dead browser must not hold the crawl

_PAGE_FACTS_JS = """() => ({
  height: Math.max(document.documentElement ? document.documentElement.scrollHeight : 0,
                   document.body ? document.body.scrollHeight : 0),
  charset: document.characterSet,
})"""


@dataclass(frozen=True)
class RenderConfig(ComponentConfig):
    """RENDER_* settings (README, "Settings"); the offline renderer reads the same ones."""

    prefix: ClassVar[str] = "RENDER"
    enabled: bool = True  # off: every site over plain HTTP, no screenshots
    screenshots: bool = True
    viewport_width: int = 1280
    viewport_height: int = 800
    # Full-page screenshots stop at this height (CSS px = PNG px). Chromium cannot capture beyond its
    # 16384-px texture limit, and the page-type model looks at the top of the page; 8192 keeps the
    # PNG of a long article around 1-3 MB.
    max_height: int = 8192
    load_timeout: float = 10.0  # s to wait for the load event after DOMContentLoaded
    screenshot_timeout: float = 20.0  # s
    serialize_screenshots: bool = True  # one capture at a time, page brought to front
    crash_retries: int = 1  # a page whose browser died under it is rendered again this many times
    # Longest a browser download (navigation, waiting for a page slot included) may take before it
    # fails as render_stuck; Playwright's own timeouts normally end it long before.
    deadline: float = 180.0
    max_size: int = field(default=0, metadata={"setting": "DOWNLOAD_MAXSIZE"})  # applied to the rendered HTML too

    @property
    def capture_deadline(self) -> float:
        """Seconds the whole capture of one page may take (load wait, reads, two screenshots)."""
        return self.load_timeout + 2 * self.screenshot_timeout + 30.0



@dataclass
class RenderResult:
    """What rendering produced for one page, beside the HTML in the response body."""

    charset: str | None = None
    page_height: int | None = None
    screenshot_png: bytes | None = None
    screenshot_height: int | None = None
    flags: list[str] = field(default_factory=list)


class RenderMiddleware:
    """Downloader middleware that renders ``meta["render"]`` requests and screenshots them."""

    def __init__(self, config: RenderConfig, stats: StatsCollector) -> None:
        self.config = config
        self.stats = stats
        # One screenshot at a time: with several pages capturing at once Chromium sometimes
        # repeats the top of the page down the image (puppeteer#1576).
        self._screenshot_lock = asyncio.Lock()

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> RenderMiddleware:
        config = RenderConfig.from_settings(crawler.settings)
        if not config.enabled:
            raise NotConfigured("RENDER_ENABLED is off: every site is fetched over plain HTTP")
        assert crawler.stats is not None
        return cls(config, crawler.stats)

    def process_request(self, request: Request) -> None:
        if not request.meta.get("render"):
            return None
        request.meta.setdefault("playwright", True)
        request.meta.setdefault("playwright_include_page", True)
        request.meta.setdefault("playwright_context", "render")
        request.meta.setdefault(
            "playwright_context_kwargs",
            {"viewport": {"width": self.config.viewport_width, "height": self.config.viewport_height}},
        )
        request.meta.setdefault("playwright_page_goto_kwargs", {"wait_until": "domcontentloaded"})
        return None

    async def process_response(self, request: Request, response: Response) -> Response | Request:
        page: Page | None = request.meta.pop("playwright_page", None)
        if page is None:
            return response
        try:
            return await asyncio.wait_for(self._finish(page, request, response), self.config.capture_deadline)
        except TimeoutError:
            result = request.meta["render_result"]
            result.flags.append("capture_stuck")
            self.stats.inc_value("render/capture_stuck")
            logger.warning("Capturing %s took over %.0f s: kept as it was", request.url,
                           self.config.capture_deadline)
            return response
        except PlaywrightError as exc:
            reason = exception_reason(exc)
            retry = self._retry(request, reason) if reason in RETRIED_REASONS else None
            if retry is not None:
                return retry
            # Keep the page as navigation left it (DOMContentLoaded HTML), flagged.
            result = request.meta["render_result"]
            result.flags.append("capture_failed")
            self.stats.inc_value("render/capture_failed")
            logger.warning("Capture of %s failed: %s", request.url, short_message(exc))
            return response
        finally:
            await _close(page)

    async def process_exception(self, request: Request, exception: Exception) -> Request | None:
        page: Page | None = request.meta.pop("playwright_page", None)
        if page is not None:
            await _close(page)
        reason = exception_reason(exception)
        if request.meta.get("render") and reason in RETRIED_REASONS:
            return self._retry(request, reason)
        return None

    def _retry(self, request: Request, reason: str) -> Request | None:
        """Return the request again after a browser crash or hang, up to RENDER_CRASH_RETRIES."""
        retries = request.meta.get("render_crash_retries", 0)
        if retries >= self.config.crash_retries:
            self.stats.inc_value("render/crash_retry/gave_up")
            return None
        self.stats.inc_value("render/crash_retry")
        logger.info("Rendering %s failed (%s): trying it again", request.url, reason)
        retry = request.copy()
        for key in ("playwright_page", "render_result"):
            retry.meta.pop(key, None)
        retry.meta["render_crash_retries"] = retries + 1
        retry.dont_filter = True
        return retry

    async def _finish(self, page: Page, request: Request, response: Response) -> Response:
        result = RenderResult()
        request.meta["render_result"] = result
        if not 200 <= response.status < 300 or not is_html_type(content_type(response)):
            return response  # errors and non-HTML documents are not captured
        try:
            await page.wait_for_load_state("load", timeout=self.config.load_timeout * 1000)
        except PlaywrightTimeoutError:
            result.flags.append("load_timeout")
            self.stats.inc_value("render/load_timeout")
            logger.warning("Page did not finish loading in %.0f s, capturing it as it is: %s",
                           self.config.load_timeout, request.url)
        facts: dict[str, Any] = await page.evaluate(_PAGE_FACTS_JS)
        html = await page.content()
        body = html.encode("utf-8")
        if self.config.max_size and len(body) > self.config.max_size:
            self.stats.inc_value("render/too_large")
            raise PageTooLarge(
                f"rendered page is {len(body)} bytes, over DOWNLOAD_MAXSIZE {self.config.max_size}"
            )
        result.charset = facts.get("charset")
        result.page_height = int(facts.get("height") or 0)
        if self.config.screenshots:
            await self._screenshot(page, request, result)
        self.stats.inc_value("render/page")
        return response.replace(body=body, encoding="utf-8")

    async def _screenshot(self, page: Page, request: Request, result: RenderResult) -> None:
        height = min(result.page_height or self.config.viewport_height, self.config.max_height)
        if (result.page_height or 0) > self.config.max_height:
            result.flags.append("screenshot_capped")
            self.stats.inc_value("render/screenshot_capped")
        for attempt in (1, 2):
            try:
                png = await self._capture(page, height)
            except PlaywrightError as exc:
                if exception_reason(exc) == "browser_crash":
                    raise  # retried as a whole page by process_response
                result.flags.append("screenshot_failed")
                self.stats.inc_value("render/screenshot_failed")
                logger.warning("Screenshot failed for %s: %s", request.url, short_message(exc))
                return
            gray = load_gray(png)
            if is_blank(gray):
                result.flags.append("screenshot_blank")
                self.stats.inc_value("render/screenshot_blank")
            offset = repeated_top_offset(gray, self.config.viewport_height)
            if offset is None:
                result.screenshot_png = png
                result.screenshot_height = gray.shape[0]
                self.stats.inc_value("render/screenshot")
                return
            self.stats.inc_value("render/screenshot_glitch")
            logger.warning("Screenshot of %s repeats its top at row %d (attempt %d)",
                           request.url, offset, attempt)
        result.flags.append("screenshot_glitch")  # twice glitched: keep no screenshot

    async def _capture(self, page: Page, height: int) -> bytes:
        clip: FloatRect = {"x": 0, "y": 0, "width": self.config.viewport_width, "height": height}
        timeout = self.config.screenshot_timeout * 1000
        if not self.config.serialize_screenshots:
            return await page.screenshot(full_page=True, clip=clip, type="png", timeout=timeout)
        async with self._screenshot_lock:
            await page.bring_to_front()
            return await page.screenshot(full_page=True, clip=clip, type="png", timeout=timeout)


async def _close(page: Page) -> None:
    try:
        if not page.is_closed():
            await asyncio.wait_for(page.close(), PAGE_CLOSE_TIMEOUT)
    except (TimeoutError, PlaywrightError) as exc:
        # The browser is gone (crash: scrapy-playwright relaunches it) or not answering.
        logger.debug("Page not closed cleanly: %s", short_message(exc))
