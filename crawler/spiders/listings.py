"""Reading the feeds and sitemaps that list a site's pages, for the ``news_sites`` spider: entry dates of RSS
and Atom feeds, a sitemap's entries with their Google News publication dates, and a feed response's text."""

from __future__ import annotations

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


def xml_text(response: Response) -> str:
    if isinstance(response, TextResponse):
        return response.text
    return response.body.decode("utf-8", "replace")
