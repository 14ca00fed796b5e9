"""Scrapy's ``MetaRefreshMiddleware``, reading a page's ``<meta http-equiv=refresh>`` from the top of its body.

Scrapy's looks at the first 4,096 characters of ``response.text``, but ``response.text`` decodes the whole
body first (and, when no charset is declared, infers it from the whole body): on the replay benchmark's real
pages (178 KiB of HTML on average) that was 5% of the crawl process's reactor thread, for a page the crawl
decodes again where it is processed (``extraction.page.Page``). This one hands Scrapy's the same response cut
to its first ``HEAD_BYTES`` (4,096 characters are at most 16,384 bytes in UTF-8), so the same 4,096
characters are read; a redirect it finds is Scrapy's, with the original response otherwise passed on. A redirect
outside the site's scope is not followed (:func:`crawler.middlewares.fetch_policy.offsite_redirect`).
"""

from __future__ import annotations

from scrapy import Request
from scrapy.downloadermiddlewares.redirect import MetaRefreshMiddleware as ScrapyMetaRefreshMiddleware
from scrapy.http import HtmlResponse, Response

from crawler.middlewares.fetch_policy import offsite_redirect

HEAD_BYTES = 4 * 4096  # Scrapy's get_meta_refresh reads response.text[0:4096]


class MetaRefreshMiddleware(ScrapyMetaRefreshMiddleware):
    """Scrapy's meta refresh redirect, decoding only the top of the body (module docstring)."""

    # Without the "spider" argument, which Scrapy 2.19 deprecates (its signature still has it).
    def process_response(self, request: Request, response: Response) -> Request | Response:  # type: ignore[override]
        if not isinstance(response, HtmlResponse) or len(response.body) <= HEAD_BYTES:
            return offsite_redirect(self.crawler, request, response, super().process_response(request, response))
        head = response.replace(body=response.body[:HEAD_BYTES])
        result = super().process_response(request, head)
        return response if result is head else offsite_redirect(self.crawler, request, response, result)
