"""One scrapy-playwright download handler (so one browser) for both http and https.

Scrapy builds one download handler per URL scheme; with scrapy-playwright's handler set
for both ``http`` and ``https`` that means two Playwright instances and two Chromiums.
This subclass returns the same instance for every scheme of a crawler.
"""

from __future__ import annotations

from typing import Any

from scrapy.crawler import Crawler
from scrapy_playwright.handler import ScrapyPlaywrightDownloadHandler

_ATTRIBUTE = "_news_shared_playwright_handler"


class SharedPlaywrightDownloadHandler(ScrapyPlaywrightDownloadHandler):
    """scrapy-playwright's handler, shared by all schemes of one crawler."""

    _closed = False

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
