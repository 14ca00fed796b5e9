"""Dates read from the feeds and sitemaps that list a site's pages (``crawler.spiders.listings``)."""

from __future__ import annotations

from scrapy.http import Response, TextResponse

from crawler.spiders.listings import feed_date, news_publication_dates, xml_text


def test_feed_date_reads_rss_dates_as_iso() -> None:
    assert feed_date("Tue, 05 Mar 2024 10:21:00 +0800") == "2024-03-05T10:21:00+08:00"
    assert feed_date("  Tue, 05 Mar 2024 10:21:00 GMT ") == "2024-03-05T10:21:00+00:00"


def test_feed_date_passes_iso_and_unreadable_dates_on() -> None:
    assert feed_date("2024-03-05T10:21:00Z") == "2024-03-05T10:21:00Z"  # Atom: left to the metadata step's parser
    assert feed_date("yesterday") == "yesterday"
    assert feed_date(None) is None and feed_date("") is None and feed_date("  ") is None


def test_news_publication_dates_by_loc() -> None:
    body = b"""<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:news="http://www.google.com/schemas/sitemap-news/0.9">
  <url><loc>https://a.example/news/1?x=1&amp;y=2</loc>
    <news:news><news:publication><news:name>A</news:name></news:publication>
      <news:publication_date>2024-03-05T10:21:00+08:00</news:publication_date></news:news></url>
  <url><loc>https://a.example/news/2</loc></url>
  <url><loc> https://a.example/news/3 </loc><news:news>
      <news:publication_date>2024-03-06</news:publication_date></news:news></url>
</urlset>"""
    assert news_publication_dates(body) == {"https://a.example/news/1?x=1&y=2": "2024-03-05T10:21:00+08:00",
                                            "https://a.example/news/3": "2024-03-06"}


def test_news_publication_dates_of_a_plain_sitemap_is_empty() -> None:
    assert news_publication_dates(b"<urlset><url><loc>https://a.example/1</loc><lastmod>2024-03-05</lastmod>"
                                  b"</url></urlset>") == {}


def test_xml_text_of_binary_and_text_responses() -> None:
    body = "<rss><title>新闻</title></rss>".encode()
    assert xml_text(Response("https://a.example/feed", body=body)) == "<rss><title>新闻</title></rss>"
    assert xml_text(TextResponse("https://a.example/feed", body=body, encoding="utf-8")) == \
        "<rss><title>新闻</title></rss>"
    assert xml_text(Response("https://a.example/feed", body=b"<rss>\xff</rss>")) == "<rss>\ufffd</rss>"
