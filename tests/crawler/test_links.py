"""The links the spider follows from a page's tree (crawler/links.py)."""

from __future__ import annotations

from crawler.links import MAX_LINK_CHARS, _safe_url, page_links
from extraction.dom.html import parse_html


def test_links_are_absolute_safe_and_once_in_page_order() -> None:
    root = parse_html("<base href='/news/'><a href=' b.html '>B</a><a href='/a.html#top'>A</a><a href='b.html'>B</a>"
                      "<a href='mailto:x@a.test'>m</a><a href='/photo.jpg'>p</a><area href='c d.html'>"
                      "<a href='http://[::1/x'>broken</a><a href='http://a.test:99999/'>port</a>")
    assert page_links(root, "http://a.test/index.html") == [
        "http://a.test/news/b.html", "http://a.test/a.html#top", "http://a.test/news/c%20d.html"]


def test_links_longer_than_scrapys_url_limit_are_left_out_before_the_cache() -> None:
    """Pages of 100 KB links kept gigabytes in ``_safe_url``'s cache; Scrapy's URLLENGTH_LIMIT drops them anyway."""
    _safe_url.cache_clear()
    long_link = "/" + "x" * MAX_LINK_CHARS
    root = parse_html(f"<a href='{long_link}'>long</a><a href='/ok.html'>ok</a>")
    assert page_links(root, "http://a.test/") == ["http://a.test/ok.html"]
    assert _safe_url.cache_info().currsize == 1
