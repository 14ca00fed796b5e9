"""Reading the feeds and sitemaps that list a site's pages, for the ``news_sites`` spider: entry dates of RSS
and Atom feeds, a sitemap's entries with their Google News publication dates, and a feed response's text."""

from __future__ import annotations

import re
import zlib
from email.utils import parsedate_to_datetime
from typing import Any

from lxml import etree
from scrapy.http import Response, TextResponse
from scrapy.utils.sitemap import Sitemap


def feed_date(value: str | None) -> str | None:
    """Return an RSS ``pubDate`` (RFC 822) or Atom date as ISO 8601, None when unreadable."""
    if not value or not value.strip():
        return None
    value = value.strip()
    try:
        return parsedate_to_datetime(value).isoformat()
    except (TypeError, ValueError, IndexError, OverflowError):  # a year of 20 digits overflows
        return value  # ISO 8601 already (Atom, dc:date), or left to the metadata step's parser


class NewsSitemap(Sitemap):
    """Scrapy's sitemap reader whose entries also carry a Google News sitemap's ``publication_date``: Scrapy's
    reader keeps an entry's direct children only, and the date sits in ``<news:news><news:publication>``. The
    entry's ``loc`` and date come from the one XML parse, so a ``<loc>`` written with ``&#38;`` or CDATA keeps its
    date (an own search of the raw bytes matched those by their raw text and lost it). It extends a method of Scrapy
    2.19's reader that is not public API: ``tests/crawler/test_listings.py`` checks it on an upgrade."""

    __slots__ = ()

    def _process_sitemap_element(self, elem: etree._Element) -> dict[str, Any] | None:
        published = next((el.text.strip() for el in elem.iter() if self._get_tag_name(el) == "publication_date"
                          and el.text and el.text.strip()), None)
        entry = super()._process_sitemap_element(elem)  # clears the element
        if entry is not None and published is not None:
            entry["publication_date"] = published
        return entry


# The root of a feed (RSS 0.9x/2.0, RSS 1.0's rdf:RDF, Atom) or a sitemap, after the XML declaration, comments,
# processing instructions (a stylesheet) and a doctype.
_LISTING_ROOT = re.compile(
    rb"^(?:\s|<\?[^>]*\?>|<!--.*?-->|<!DOCTYPE[^>]*>)*<(?:[\w.-]+:)?(rss|RDF|feed|urlset|sitemapindex)[\s>/]",
    re.DOTALL | re.IGNORECASE)
LISTING_SNIFF_BYTES = 4096


def listing_kind(body: bytes) -> str | None:
    """Return "feed" or "sitemap" when a response is one (by its root element; a gzipped sitemap too), else None."""
    head = body[:LISTING_SNIFF_BYTES]
    if head[:2] == b"\x1f\x8b":
        try:
            head = zlib.decompressobj(wbits=31).decompress(body[:65536], LISTING_SNIFF_BYTES)
        except zlib.error:
            return None
    match = _LISTING_ROOT.match(head.lstrip(b"\xef\xbb\xbf"))
    if match is None:
        return None
    return "sitemap" if match.group(1).lower() in (b"urlset", b"sitemapindex") else "feed"


def xml_text(response: Response) -> str:
    if isinstance(response, TextResponse):
        return response.text
    return response.body.decode("utf-8", "replace")
