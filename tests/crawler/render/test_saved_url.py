"""The URL a saved page is opened at (crawler.render.saved_url): given, declared, or its links' site."""

from __future__ import annotations

from crawler.render.saved_url import URL_SCAN_CHARS, declared_url, page_url


def test_page_url_prefers_given_then_declared_then_linked_site() -> None:
    """Saved pages are opened at a URL of their own site: some replace themselves elsewhere."""
    canonical = "<html><head><link rel='canonical' href='https://news.example.com/a/1.html'></head></html>"
    og = '<html><head><meta property="og:url" content="http://www.example.cn/n/2.html"></head></html>'
    anchors = "".join(f"<a href='http://news.163.com/x/{i}.html'>x</a>" for i in range(5))
    linked = f"<html><body>{anchors}</body></html>"
    assert page_url("k", canonical, "http://given.test/p") == "http://given.test/p"
    assert page_url("k", canonical) == "https://news.example.com/a/1.html"
    assert page_url("k", og) == "http://www.example.cn/n/2.html"
    assert page_url("tests/163/1", linked) == "http://www.163.com/tests/163/1"
    assert page_url("k", "<html><body>no links</body></html>") is None


def test_declared_url_takes_canonical_first_and_absolute_http_only() -> None:
    both = ("<meta property='og:url' content='http://og.example.com/1'>"
            "<link rel='canonical' href='https://canon.example.com/1?a=1&amp;b=2'>")
    assert declared_url(both) == "https://canon.example.com/1?a=1&b=2"
    assert declared_url("<link rel='canonical' href='/relative/1.html'>") is None
    assert declared_url("<link rel='canonical' href='ftp://files.example.com/1'>") is None
    assert declared_url("<link rel='alternate' href='https://m.example.com/1'>") is None


def test_declared_url_reads_only_the_head_of_a_long_page() -> None:
    tag = "<link rel='canonical' href='https://late.example.com/1'>"
    assert declared_url(" " * (URL_SCAN_CHARS - len(tag)) + tag) == "https://late.example.com/1"
    assert declared_url(" " * URL_SCAN_CHARS + tag) is None
