"""Small helpers over Scrapy responses shared by the spider and the middlewares."""

from __future__ import annotations

from typing import Any

from scrapy.http import Response

from extraction.page import HttpExchange, not_html_type


def content_type(response: Response) -> str:
    """Return the response's Content-Type header, lower-cased ("" when absent)."""
    value = response.headers.get(b"Content-Type") or b""
    return value.decode("latin-1").strip().lower()


def is_html_type(value: str) -> bool:
    """Return True for HTML media types, and for a missing type (servers often omit it)."""
    return not not_html_type(value)


def http_exchange(response: Response) -> HttpExchange:
    """Return the response's status line and headers and its request's, for the WARC archive."""
    def pairs(headers: Any) -> tuple[tuple[str, str], ...]:
        return tuple((name.decode("latin-1"), value.decode("latin-1"))
                     for name, values in headers.items() for value in values)

    request = response.request
    ip = getattr(response, "ip_address", None)
    return HttpExchange(status=response.status, headers=pairs(response.headers),
                        protocol=getattr(response, "protocol", None) or "HTTP/1.1",
                        method=request.method if request is not None else "GET",
                        request_headers=pairs(request.headers) if request is not None else (),
                        ip_address=str(ip) if ip is not None else None)
