"""Dates read from the feeds and sitemaps that list a site's pages (``crawler.spiders.listings``)."""

from __future__ import annotations

import asyncio
import gzip
import time
from pathlib import Path
from typing import Any

from scrapy import Request
from scrapy.http import Response, TextResponse
from scrapy.utils.test import get_crawler

from crawler.spiders.listings import NewsSitemap, feed_date, xml_text
from crawler.spiders.news_sites import SITEMAP_INDEX_DEPTH, SITEMAP_MAX_BYTES, NewsSitesSpider
from crawler.urls import canonical_url
from tests.crawl_helpers import sites_yaml


def test_feed_date_reads_rss_dates_as_iso() -> None:
    assert feed_date("Tue, 05 Mar 2024 10:21:00 +0800") == "2024-03-05T10:21:00+08:00"
    assert feed_date("  Tue, 05 Mar 2024 10:21:00 GMT ") == "2024-03-05T10:21:00+00:00"


def test_feed_date_passes_iso_and_unreadable_dates_on() -> None:
    assert feed_date("2024-03-05T10:21:00Z") == "2024-03-05T10:21:00Z"  # Atom: left to the metadata step's parser
    assert feed_date("yesterday") == "yesterday"
    assert feed_date(None) is None and feed_date("") is None and feed_date("  ") is None


def _dates(body: bytes) -> dict[str, str | None]:
    return {entry["loc"]: entry.get("publication_date") for entry in NewsSitemap(body) if entry.get("loc")}


def test_news_sitemap_entries_carry_their_publication_date() -> None:
    body = b"""<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:news="http://www.google.com/schemas/sitemap-news/0.9">
  <url><loc>https://a.example/news/1?x=1&amp;y=2</loc>
    <news:news><news:publication><news:name>A</news:name></news:publication>
      <news:publication_date>2024-03-05T10:21:00+08:00</news:publication_date></news:news></url>
  <url><loc>https://a.example/news/2</loc><lastmod>2024-03-01</lastmod></url>
  <url><loc> https://a.example/news/3 </loc><news:news>
      <news:publication_date> 2024-03-06 </news:publication_date></news:news></url>
</urlset>"""
    assert _dates(body) == {"https://a.example/news/1?x=1&y=2": "2024-03-05T10:21:00+08:00",
                            "https://a.example/news/2": None, "https://a.example/news/3": "2024-03-06"}
    assert [entry.get("lastmod") for entry in NewsSitemap(body)] == [None, "2024-03-01", None]  # Scrapy's fields


def test_news_sitemap_dates_of_locs_written_with_references_cdata_or_another_charset() -> None:
    """The loc and its date come from one XML parse: a character reference, a CDATA section, a declared charset (the
    raw bytes' search matched "&amp;" only, and lost these dates)."""
    body = b"""<urlset xmlns:news="http://www.google.com/schemas/sitemap-news/0.9">
  <url><loc>https://a.example/n?x=1&#38;y=2</loc><news:news>
    <news:publication_date>2024-03-05</news:publication_date></news:news></url>
  <url><loc><![CDATA[https://a.example/n?x=3&y=4]]></loc><news:news>
    <news:publication_date><![CDATA[2024-03-06]]></news:publication_date></news:news></url>
</urlset>"""
    assert _dates(body) == {"https://a.example/n?x=1&y=2": "2024-03-05", "https://a.example/n?x=3&y=4": "2024-03-06"}
    gbk = ('<?xml version="1.0" encoding="GBK"?><urlset><url><loc>https://a.example/新闻/1</loc><news:news '
           'xmlns:news="http://www.google.com/schemas/sitemap-news/0.9"><news:publication_date>2024-03-07'
           '</news:publication_date></news:news></url></urlset>').encode("gbk")
    assert _dates(gbk) == {"https://a.example/新闻/1": "2024-03-07"}


def test_a_plain_sitemap_has_no_publication_dates() -> None:
    entries = list(NewsSitemap(b"<urlset><url><loc>https://a.example/1</loc><lastmod>2024-03-05</lastmod></url>"
                               b"</urlset>"))
    assert entries == [{"loc": "https://a.example/1", "lastmod": "2024-03-05"}]


def test_xml_text_of_binary_and_text_responses() -> None:
    body = "<rss><title>新闻</title></rss>".encode()
    assert xml_text(Response("https://a.example/feed", body=body)) == "<rss><title>新闻</title></rss>"
    assert xml_text(TextResponse("https://a.example/feed", body=body, encoding="utf-8")) == \
        "<rss><title>新闻</title></rss>"
    assert xml_text(Response("https://a.example/feed", body=b"<rss>\xff</rss>")) == "<rss>\ufffd</rss>"


def test_feed_date_of_numbers_too_large_for_a_date_is_passed_on() -> None:
    assert feed_date("Mon, 01 Jan 99999999999999999999 00:00:00 GMT").startswith("Mon, 01 Jan 9999")  # no OverflowError


def test_news_sitemap_of_an_unclosed_loc_takes_no_time() -> None:
    """A pattern spanning <loc> and the date backtracked with the cube of an unclosed <loc>'s spaces (2 KB: 2 s)."""
    body = b"<urlset><url><loc>" + b" " * 20_000 + b"<news:publication_date>2024-03-05</news:publication_date>"
    start = time.process_time()
    assert _dates(body) == {}
    assert len(_dates(b"<urlset>" + b"<url><loc>https://a.example/1</loc></url>" * 4000)) == 1
    assert time.process_time() - start < 1.0


def _spider(tmp_path: Path) -> NewsSitesSpider:
    sites = tmp_path / "sites.yaml"
    sites.write_text(sites_yaml([{"name": "s", "start_urls": ["http://s.test/"], "allowed_prefixes": ["http://s.test/"],
                                  "sitemaps": ["http://s.test/sitemap.xml"]}]), encoding="utf-8")
    crawler = get_crawler(NewsSitesSpider, {"TEMPLATES_STORE": str(tmp_path / "db"), "CRAWL_STATE_ENABLED": False})
    crawler.stats.open_spider()  # type: ignore[union-attr]
    crawler.settings.frozen = False
    spider = NewsSitesSpider.from_crawler(crawler, sites=str(sites))
    crawler.spider = spider
    spider.crawl_state.begin(["s"])
    return spider


def _fetched(spider: NewsSitesSpider, url: str, body: bytes, callback: str = "parse_sitemap",
             **meta: Any) -> list[Request]:
    request = Request(url, meta={"site": "s", "kind": "sitemap", "aux_url": url, **meta})
    return list(getattr(spider, callback)(Response(url, body=body, request=request)))


def _index(*locs: str) -> bytes:
    return ('<?xml version="1.0"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
            + "".join(f"<sitemap><loc>{loc}</loc></sitemap>" for loc in locs) + "</sitemapindex>").encode()


def test_a_sitemap_index_is_followed_on_its_host_once_and_a_few_levels_deep(tmp_path: Path) -> None:
    """A child is an HTTP(S) address in the index's domain or inside the site, read against the index (a
    relative one raised); file:, data:, other hosts and cloud metadata addresses are not fetched; an index that
    lists itself or a cycle is fetched once a run (it was forever), and a chain stops SITEMAP_INDEX_DEPTH deep."""
    spider = _spider(tmp_path)

    async def starts() -> list[Request]:
        return [request async for request in spider.start()]

    assert "http://s.test/sitemap.xml" in [request.url for request in asyncio.run(starts())]
    requests = _fetched(spider, "http://s.test/sitemap.xml", _index(
        "http://s.test/a.xml", "/b.xml", "javascript:alert(1)", "file:///etc/passwd", "data:text/xml,<x/>",
        "http://169.254.169.254/latest/meta-data/", "http://other.test/c.xml", "http://[::1/d.xml",
        "http://s.test:99999/e.xml", "http://s.test/sitemap.xml", "https://cdn.s.test/f.xml"))
    assert [r.url for r in requests] == ["http://s.test/a.xml", "http://s.test/b.xml", "https://cdn.s.test/f.xml"]
    assert _fetched(spider, "http://s.test/a.xml", _index("http://s.test/sitemap.xml", "http://s.test/a.xml")) == []
    url, depth = "http://s.test/chain/0.xml", 0
    while True:
        requests = _fetched(spider, url, _index(f"http://s.test/chain/{depth + 1}.xml"), sitemap_depth=depth)
        if not requests:
            break
        url, depth = requests[0].url, requests[0].meta["sitemap_depth"]
    assert depth == SITEMAP_INDEX_DEPTH


def test_broken_sitemaps_and_links_lose_nothing_else(tmp_path: Path) -> None:
    """A truncated or corrupt gzip stream, or one inflating past SITEMAP_MAX_BYTES, is an unreadable sitemap (each
    raised out of the callback); a link to a bad port or a broken IPv6 host is skipped and counted, its
    neighbours and a valid IPv6 address stay (each had lost the whole feed or sitemap)."""
    spider = _spider(tmp_path)
    stats = spider.crawler.stats
    assert stats is not None
    urlset = b'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>http://s.test/a</loc></url></urlset>'
    bomb = gzip.compress(b" " * (SITEMAP_MAX_BYTES + 1))
    for body in (b"\x1f\x8b", gzip.compress(urlset)[:30], bomb):
        assert _fetched(spider, "http://s.test/sitemap.xml.gz", body) == []
    assert stats.get_value("crawl/error/sitemap_unreadable") == 3
    locs = ["http://s.test/a", "http://s.test:99999/b", "http://[::1/c", "http://s.test/d"]
    urlset = ('<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
              + "".join(f"<url><loc>{loc}</loc></url>" for loc in locs) + "</urlset>").encode()
    assert [r.url for r in _fetched(spider, "http://s.test/sitemap.xml", urlset)] == ["http://s.test/a",
                                                                                      "http://s.test/d"]
    feed = ("<rss><channel>" + "".join(f"<item><link>{loc.replace('/a', '/e').replace('/d', '/f')}</link></item>"
                                       for loc in locs) + "</channel></rss>").encode()
    assert [r.url for r in _fetched(spider, "http://s.test/feed.xml", feed, "parse_feed")] == ["http://s.test/e",
                                                                                               "http://s.test/f"]
    assert stats.get_value("crawl/skipped/malformed_url") == 3  # the broken IPv6 feed link fails to join
    assert canonical_url("http://[2001:db8::1]:8080/news/1") == "http://[2001:db8::1]:8080/news/1"


def test_a_sitemap_past_the_sites_budget_is_not_read_further(tmp_path: Path) -> None:
    """Entries over max_pages cannot be requested: they are counted, not canonicalised (a sitemap of a million URLs
    took 20 s of the crawl's thread)."""
    spider = _spider(tmp_path)
    urlset = ('<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
              + "".join(f"<url><loc>http://s.test/news/{i}</loc></url>" for i in range(1500)) + "</urlset>").encode()
    requests = _fetched(spider, "http://s.test/sitemap.xml", urlset)
    assert len(requests) == 1000 and requests[-1].url == "http://s.test/news/999"
    assert spider.crawler.stats.get_value("crawl/skipped/max_pages/s") == 500  # type: ignore[union-attr]
    assert _fetched(spider, "http://s.test/sitemap2.xml", urlset) == []
    assert spider.crawler.stats.get_value("crawl/skipped/max_pages/s") == 2000  # type: ignore[union-attr]
