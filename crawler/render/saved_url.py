"""The URL a saved page is opened at: the one given, the one it declares, or one on the site its links name.

Pages check their host: opened at ``http://saved.invalid/<key>`` some replace themselves, so the
offline renderer (:mod:`crawler.render.offline`) opens each saved page at a URL of its own site.
This module does not import Scrapy.
"""

from __future__ import annotations

import re
from html import unescape as html_unescape
from urllib.parse import quote, urlsplit

from crawler.urls import linked_site

URL_SCAN_CHARS = 300_000  # characters of the page searched for its own URL
_HEAD_TAG_RE = re.compile(r"<(?:link|meta)\b[^>]*>", re.I)
_ATTR_RE = re.compile(r"""([a-zA-Z:-]+)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>]+))""")


def declared_url(html: str) -> str | None:
    """Return the page's own absolute http(s) URL from ``<link rel=canonical>`` or ``og:url``, or None."""
    found: dict[str, str] = {}
    for tag in _HEAD_TAG_RE.finditer(html[:URL_SCAN_CHARS]):
        attrs = {name.lower(): a or b or c for name, a, b, c in _ATTR_RE.findall(tag.group(0))}
        if "canonical" in attrs.get("rel", "").lower().split() and attrs.get("href"):
            found.setdefault("canonical", attrs["href"])
        elif attrs.get("property", "").lower() == "og:url" and attrs.get("content"):
            found.setdefault("og:url", attrs["content"])
    for candidate in (found.get("canonical"), found.get("og:url")):
        if candidate and urlsplit(candidate.strip()).scheme in ("http", "https") and urlsplit(candidate).netloc:
            return html_unescape(candidate.strip())
    return None


def page_url(key: str, html: str, url: str | None = None) -> str | None:
    """Return the URL to open a saved page at: ``url``, else the one it declares, else one on the site its links name.

    Pages check their host: a 163.com article opened elsewhere replaces itself with the host name
    100 ms after loading. None leaves the choice to the renderer (``http://saved.invalid/<key>``).
    """
    if url:
        return url
    declared = declared_url(html)
    if declared:
        return declared
    domain = linked_site(html[:URL_SCAN_CHARS].encode("utf-8", "replace"))
    return f"http://www.{domain}/{quote(key)}" if domain else None
