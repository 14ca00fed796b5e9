"""The links of a parsed page, as Scrapy's default ``LinkExtractor`` finds them, without parsing again.

The spider follows links from the page's one tree (:attr:`extraction.page.Page.tree`): ``href`` of
``<a>`` and ``<area>``, HTML5 whitespace stripped, resolved against ``<base href>`` and the page's
URL, made safe in the page's encoding (w3lib), http(s)/file only, files with the extensions
Scrapy ignores (images, archives, media, office documents) left out, each URL once, in page order.
"""

from __future__ import annotations

import functools
from urllib.parse import urljoin, urlparse

from lxml import html
from scrapy.linkextractors import IGNORED_EXTENSIONS
from w3lib.html import strip_html5_whitespace
from w3lib.url import safe_url_string

_SCHEMES = frozenset({"http", "https", "file"})
_DENY_EXTENSIONS = tuple(f".{extension}" for extension in IGNORED_EXTENSIONS)
# A site's pages repeat their navigation links: each distinct (link, encoding) is made safe once.
SAFE_URL_CACHE = 16_384
# Longer links are left out, before the cache: Scrapy's URLLENGTH_LIMIT default, which would drop their requests
# anyway (pages of links of 100 KB each kept gigabytes in the cache).
MAX_LINK_CHARS = 2083


def page_links(root: html.HtmlElement, url: str, encoding: str = "utf-8") -> list[str]:
    """Return the URLs the page links to (see the module docstring)."""
    bases = root.xpath("//base/@href")
    base_url = urljoin(url, strip_html5_whitespace(bases[0])) if bases else url
    found: dict[str, None] = {}
    for element in root.iter("a", "area"):
        href = element.get("href")
        if href is None:
            continue
        if len(href) > MAX_LINK_CHARS:
            continue
        try:
            link = _safe_url(urljoin(base_url, strip_html5_whitespace(href)), encoding)
        except ValueError:  # bogus links (bad ports, broken IPv6 hosts)
            continue
        if link is not None:
            found.setdefault(link, None)
    return list(found)


@functools.lru_cache(maxsize=SAFE_URL_CACHE)
def _safe_url(url: str, encoding: str) -> str | None:
    """Return ``url`` made safe (w3lib), or None when its scheme or extension is not followed.

    The extension test is Scrapy's ``url_has_any_extension`` (the path's extension, lower-cased).
    """
    link = safe_url_string(url, encoding=encoding)
    parsed = urlparse(link)
    if parsed.scheme not in _SCHEMES or parsed.path.lower().endswith(_DENY_EXTENSIONS):
        return None
    return link
