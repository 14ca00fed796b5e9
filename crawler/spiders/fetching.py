"""Request and response helpers of the ``news_sites`` spider: the request meta of a site with a download slot
of its own, what the crawl state keeps of a response (validators, body hash), and a page's AMP links."""

from __future__ import annotations

import hashlib
from typing import Any

from scrapy.http import Response

from crawler.sites import SiteConfig
from extraction.page import Page


def fetch_info(response: Response) -> dict[str, Any]:
    """Return what the crawl state keeps of a response: the canonical URL requested, validators, body hash."""
    meta = response.meta
    info: dict[str, Any] = {
        "etag": _header(response, b"ETag"),
        "last_modified": _header(response, b"Last-Modified"),
        "content_hash": hashlib.blake2b(response.body, digest_size=16).hexdigest(),
    }
    known = meta.get("known")
    if known is not None:
        info["known_text_hash"] = known["text_hash"]
        info["revisit"] = known["revisit"]
        info["export_changed"] = known["export_changed"]
    return info


def amp_links(page: Page, response: Response) -> list[str]:
    """Return the page's ``<link rel=amphtml>`` URLs, absolute; none from a page that cannot be read."""
    try:
        return [response.urljoin(href) for href in page.tree.xpath("//link[@rel='amphtml']/@href")]
    except Exception:  # an unparsable page, a malformed URL
        return []


def _header(response: Response, name: bytes) -> str | None:
    value = response.headers.get(name)
    return value.decode("latin-1") if value else None


def politeness(site: SiteConfig) -> dict[str, Any]:
    """Request meta for a site with its own slot; a fixed ``delay`` is not adapted by AutoThrottle."""
    if site.download_slot is None:
        return {}
    meta: dict[str, Any] = {"download_slot": site.download_slot}
    if site.delay is not None:
        meta["autothrottle_dont_adjust_delay"] = True
    return meta
