"""scrapy-playwright's download handler with two fixes the crawl needs.

1. **One browser for http and https.** Scrapy builds one download handler per URL scheme;
   with scrapy-playwright's handler set for both, that means two Playwright instances and
   two Chromiums. ``from_crawler`` returns the same instance for every scheme of a crawler.
2. **Page slots survive a browser crash.** scrapy-playwright bounds the pages of a context
   with a semaphore, released by a page's ``close`` (and ``crash``) event through the
   context *name*. After the browser dies and is relaunched, a new context takes that name:
   releases from the dead context's pages then go to the new semaphore (more pages than
   configured), while requests already waiting on the dead context's semaphore wait forever
   (a hung crawl, seen in tests). Here each page releases, once, the semaphore of the
   context it was opened in, and on disconnect the dead contexts' waiters are woken: their
   ``new_page`` fails with TargetClosedError, which scrapy-playwright retries in a new context.
3. **No download waits forever.** Playwright's own timeouts bound navigation, but a request
   can also wait for a page slot or on a driver that stopped answering; RENDER_DEADLINE
   (seconds, for the whole browser download) turns such a wait into a ``render_stuck`` error.
4. **No per-request debug logging unless asked for** (``LOG_LEVEL=DEBUG``): see ``__init__``.
5. **The renderer reads the page once.** For a request with ``meta["render_capture"]`` (the render
   middleware's), the page is opened as scrapy-playwright opens it, then that coroutine reads it
   (load wait, DOM, screenshot) in place of scrapy-playwright's own ``page.content()``, headers and
   server-address round trips; the response is empty, the capture is in the middleware's result.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import Any

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Page
from scrapy import Request, Spider
from scrapy.crawler import Crawler
from scrapy.http import Response
from scrapy_playwright.handler import ScrapyPlaywrightDownloadHandler

from crawler.errors import RenderStuck
from crawler.middlewares.render_config import RenderConfig

logger = logging.getLogger(__name__)

_ATTRIBUTE = "_news_shared_playwright_handler"


class SharedPlaywrightDownloadHandler(ScrapyPlaywrightDownloadHandler):
    """scrapy-playwright's handler, shared by all schemes of one crawler, crash-safe."""

    _closed = False

    def __init__(self, crawler: Crawler) -> None:
        super().__init__(crawler)
        self.deadline = RenderConfig.from_settings(crawler.settings).deadline
        # scrapy-playwright attaches a request and a response logger to every page when its logger is
        # enabled for DEBUG, and each reads the message's headers over the driver: two round trips per
        # subresource (a third of the crawl process's time on real pages). Scrapy's LOG_LEVEL filters at
        # the handler, so the logger itself follows LOG_LEVEL here.
        level = logging.getLevelName(str(crawler.settings.get("LOG_LEVEL", "DEBUG")).upper())
        if isinstance(level, int) and level > logging.DEBUG:
            logging.getLogger("scrapy-playwright").setLevel(level)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Any:
        handler = getattr(crawler, _ATTRIBUTE, None)
        if handler is None:
            handler = cls(crawler)
            setattr(crawler, _ATTRIBUTE, handler)
        return handler

    async def close(self) -> None:
        # Scrapy closes each scheme's handler; the shared instance must close once.
        if self._closed:
            return
        self._closed = True
        await super().close()

    async def _download_request(self, request: Request, spider: Spider | None = None) -> Response:
        try:
            return await asyncio.wait_for(super()._download_request(request, spider), self.deadline)
        except TimeoutError:
            self.stats.inc_value("render/stuck")
            logger.warning("Browser download of %s took over %.0f s: given up", request.url, self.deadline)
            raise RenderStuck(f"no answer from the browser in {self.deadline:.0f} s") from None

    async def _download_request_with_page(self, request: Request, page: Page, spider: Spider) -> Response:
        capture = request.meta.get("render_capture")
        if capture is None:
            return await super()._download_request_with_page(request, page, spider)
        request.meta["playwright_page"] = page  # early: the caller closes it on every path
        started = time.monotonic()
        response, download = await self._get_response_and_download(request, page, spider)
        if download is not None:
            raise PlaywrightError(f"{request.url} was downloaded by the browser, not shown")
        await capture(page)
        request.meta["download_latency"] = time.monotonic() - started
        return Response(page.url, status=response.status if response is not None else 200, request=request,
                        flags=["playwright"])

    def _make_close_page_callback(self, context_name: str) -> Callable[[], None]:
        # Called right after the page was opened, so this is the page's own context.
        wrapper = self.context_wrappers.get(context_name)
        released = False

        def close_page_callback() -> None:
            nonlocal released
            if wrapper is not None and not released:
                released = True  # "crash" and "close" both fire for a crashed page
                wrapper.semaphore.release()

        return close_page_callback

    async def _browser_disconnected_callback(self) -> None:
        dead = list(self.context_wrappers.values())
        await super()._browser_disconnected_callback()
        for wrapper in dead:
            for _ in range(self.config.max_pages_per_context):
                wrapper.semaphore.release()
