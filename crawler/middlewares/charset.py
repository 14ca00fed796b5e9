"""Decodes plain-HTTP HTML responses with a charset we can trust.

Scrapy falls back to windows-1252 when a page declares no charset, which turns GBK,
GB18030 and Big5 pages into mojibake; and it believes a declaration the body contradicts.
This middleware decides the encoding with :func:`extraction.dom.encoding.decode_html` and
re-labels the response, so that the spider, link extraction and every later stage read
the right text. Rendered responses are skipped: the browser already decoded them.
"""

from __future__ import annotations

import logging

from scrapy import Request
from scrapy.crawler import Crawler
from scrapy.http import HtmlResponse, Response, TextResponse
from scrapy.statscollectors import StatsCollector

from crawler.responses import content_type
from extraction.dom.encoding import decode_html

logger = logging.getLogger(__name__)


class CharsetMiddleware:
    """Downloader middleware: sets each HTML response's encoding from the evidence."""

    def __init__(self, stats: StatsCollector) -> None:
        self.stats = stats

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> CharsetMiddleware:
        assert crawler.stats is not None
        return cls(crawler.stats)

    def process_response(self, request: Request, response: Response) -> Response:
        if "playwright" in response.flags or not isinstance(response, TextResponse):
            return response
        media_type = content_type(response)
        if not isinstance(response, HtmlResponse) and "html" not in media_type:
            return response
        decoded = decode_html(response.body, media_type)
        request.meta["charset_source"] = decoded.source
        self.stats.inc_value(f"charset/{decoded.source}")
        if decoded.source in ("detected", "fallback"):
            logger.debug("Charset of %s %s as %s", response.url, decoded.source, decoded.encoding)
        return response.replace(cls=HtmlResponse, encoding=decoded.encoding)
