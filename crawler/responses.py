"""Small helpers over Scrapy responses shared by the spider and the middlewares."""

from __future__ import annotations

from scrapy.http import Response

from extraction.page import not_html_type


def content_type(response: Response) -> str:
    """Return the response's Content-Type header, lower-cased ("" when absent)."""
    value = response.headers.get(b"Content-Type") or b""
    return value.decode("latin-1").strip().lower()


def is_html_type(value: str) -> bool:
    """Return True for HTML media types, and for a missing type (servers often omit it)."""
    return not not_html_type(value)
