"""The links of a parsed page, as Scrapy's default ``LinkExtractor`` finds them, without parsing again.

The spider follows links from the page's one tree (:attr:`extraction.page.Page.tree`): ``href`` of
``<a>`` and ``<area>``, HTML5 whitespace stripped, resolved against ``<base href>`` and the page's
URL, made safe in the page's encoding (w3lib), http(s)/file only, files with the extensions
Scrapy ignores (images, archives, media, office documents) left out, each URL once, in page order.
"""

from __future__ import annotations

from urllib.parse import urljoin, urlparse

from lxml import html
from scrapy.linkextractors import IGNORED_EXTENSIONS
from scrapy.utils.url import url_has_any_extension
from w3lib.html import strip_html5_whitespace
from w3lib.url import safe_url_string

_SCHEMES = frozenset({"http", "https", "file"})
_DENY_EXTENSIONS = {f".{extension}" for extension in IGNORED_EXTENSIONS}


def page_links(root: html.HtmlElement, url: str, encoding: str = "utf-8") -> list[str]:
    """Return the URLs the page links to (see the module docstring)."""
    bases = root.xpath("//base/@href")
    base_url = urljoin(url, strip_html5_whitespace(bases[0])) if bases else url
    found: dict[str, None] = {}
    for element in root.iter("a", "area"):
        href = element.get("href")
        if href is None:
            continue
        try:
            link = safe_url_string(urljoin(base_url, strip_html5_whitespace(href)), encoding=encoding)
        except ValueError:  # bogus links (bad ports, broken IPv6 hosts)
            continue
        parsed = urlparse(link)
        if parsed.scheme not in _SCHEMES or url_has_any_extension(parsed, _DENY_EXTENSIONS):
            continue
        found.setdefault(link, None)
    return list(found)
