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
    except (TypeError, ValueError, IndexError):
        return value  # ISO 8601 already (Atom, dc:date), or left to the metadata step's parser


_NEWS_ENTRY_RE = re.compile(rb"<(?:\w+:)?loc>\s*([^<]+?)\s*</(?:\w+:)?loc>.*?"
                            rb"<(?:\w+:)?publication_date>\s*([^<]+?)\s*</", re.S)


def news_publication_dates(body: bytes) -> dict[str, str]:
    """Return ``news:publication_date`` by ``loc`` of a Google News sitemap (Scrapy's parser drops nested tags)."""
    if b"publication_date" not in body:
        return {}
    dates = {}
    for chunk in re.split(rb"</(?:\w+:)?url>", body):
        match = _NEWS_ENTRY_RE.search(chunk)
        if match:
            dates[match.group(1).decode("utf-8", "replace").replace("&amp;", "&")] = match.group(2).decode(
                "utf-8", "replace")
    return dates


def xml_text(response: Response) -> str:
    if isinstance(response, TextResponse):
        return response.text
    return response.body.decode("utf-8", "replace")
