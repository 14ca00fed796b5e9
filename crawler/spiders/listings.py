"""Reading the feeds and sitemaps that list a site's pages, for the ``news_sites`` spider: entry dates of RSS
and Atom feeds, Google News publication dates of a sitemap, and a feed response's text."""

from __future__ import annotations

import re
from email.utils import parsedate_to_datetime

from scrapy.http import Response, TextResponse


def feed_date(value: str | None) -> str | None:
    """Return an RSS ``pubDate`` (RFC 822) or Atom date as ISO 8601, None when unreadable."""
    if not value or not value.strip():
        return None
    value = value.strip()
    try:
        return parsedate_to_datetime(value).isoformat()
    except (TypeError, ValueError, IndexError, OverflowError):  # a year of 20 digits overflows
        return value  # ISO 8601 already (Atom, dc:date), or left to the metadata step's parser


# One pattern per tag, each without quantifiers that overlap (a pattern spanning both, "\s*([^<]+?)\s*</" then
# ".*?", took seconds on a sitemap with an unclosed <loc> of 2,000 spaces: its backtracking grew with the cube).
_LOC_RE = re.compile(rb"<(?:\w+:)?loc>([^<]*)</(?:\w+:)?loc>")
_PUBLICATION_DATE_RE = re.compile(rb"<(?:\w+:)?publication_date>([^<]*)</")
_URL_END_RE = re.compile(rb"</(?:\w+:)?url>")


def news_publication_dates(body: bytes) -> dict[str, str]:
    """Return ``news:publication_date`` by ``loc`` of a Google News sitemap (Scrapy's parser drops nested tags)."""
    if b"publication_date" not in body:
        return {}
    dates = {}
    for chunk in _URL_END_RE.split(body):
        loc = _LOC_RE.search(chunk)
        published = _PUBLICATION_DATE_RE.search(chunk, loc.end()) if loc else None
        if loc and published and loc.group(1).strip() and published.group(1).strip():
            dates[loc.group(1).strip().decode("utf-8", "replace").replace("&amp;", "&")] = \
                published.group(1).strip().decode("utf-8", "replace")
    return dates


def xml_text(response: Response) -> str:
    if isinstance(response, TextResponse):
        return response.text
    return response.body.decode("utf-8", "replace")
