from __future__ import annotations

import pytest

from crawler.urls import canonical_url, is_tracking_param, url_has_prefix


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("http://a.test/x.html#comments", "http://a.test/x.html"),
        ("HTTP://A.Test/x", "http://a.test/x"),
        ("http://a.test:80/x", "http://a.test/x"),
        ("https://a.test:443/x", "https://a.test/x"),
        ("http://a.test:8080/x", "http://a.test:8080/x"),
        ("https://a.test:80/x", "https://a.test:80/x"),
        ("http://a.test", "http://a.test/"),
        ("http://a.test/x?utm_source=rss&utm_medium=web&id=3", "http://a.test/x?id=3"),
        ("http://a.test/x?fbclid=abc&gclid=1&spm=a.b", "http://a.test/x"),
        ("http://a.test/x?b=2&a=1", "http://a.test/x?a=1&b=2"),
        ("http://a.test/新闻/x?q=中文", "http://a.test/%E6%96%B0%E9%97%BB/x?q=%E4%B8%AD%E6%96%87"),
        # A GBK query as the page wrote it (decoded as UTF-8 it became U+FFFD: a URL the page never linked, and
        # distinct pages one), and an IPv6 host in its brackets (without them the port could not be read).
        ("http://a.test/list.php?kw=%C4%E3%BA%C3&utm_source=x", "http://a.test/list.php?kw=%C4%E3%BA%C3"),
        ("http://[2001:DB8::1]:8080/news/1", "http://[2001:db8::1]:8080/news/1"),
        ("http://[::1]/x", "http://[::1]/x"),
        # Parameters separated by ";" alone stay separate (w3lib's split on "&" encoded them into one value),
        # sorted and without tracking ones like those split by "&"; any other ";" in a query is part of a value.
        ("http://a.test/cgi?page=2;id=3;utm_source=x", "http://a.test/cgi?id=3;page=2"),
        ("http://a.test/p;jsessionid=AB?x=1", "http://a.test/p;jsessionid=AB?x=1"),
        ("http://a.test/s?q=a;b&lang=en", "http://a.test/s?lang=en&q=a%3Bb"),
        ("http://a.test/s?q=a;b", "http://a.test/s?q=a%3Bb"),
        ("http://a.test/cgi?id=3;;page=2;", "http://a.test/cgi?id=3;page=2"),
    ],
)
def test_canonical_url(url: str, expected: str) -> None:
    assert canonical_url(url) == expected


def test_same_page_variants_collapse_to_one_url() -> None:
    variants = [
        "http://a.test/news/1.html",
        "http://a.test:80/news/1.html#top",
        "HTTP://A.TEST/news/1.html?utm_campaign=x",
    ]
    assert len({canonical_url(v) for v in variants}) == 1


@pytest.mark.parametrize(
    ("url", "mode", "expected"),
    [
        ("http://a.test/news/", "keep", "http://a.test/news/"),
        ("http://a.test/news", "keep", "http://a.test/news"),
        ("http://a.test/news/", "strip", "http://a.test/news"),
        ("http://a.test/", "strip", "http://a.test/"),
        ("http://a.test/news", "add", "http://a.test/news/"),
        ("http://a.test/news/story.html", "add", "http://a.test/news/story.html"),
    ],
)
def test_trailing_slash_modes(url: str, mode: str, expected: str) -> None:
    assert canonical_url(url, mode) == expected  # type: ignore[arg-type]


def test_tracking_params() -> None:
    assert is_tracking_param("utm_source") and is_tracking_param("UTM_Term")
    assert not is_tracking_param("page") and not is_tracking_param("id")


def test_url_has_prefix_longest() -> None:
    assert url_has_prefix("http://a.test/en/x", ("http://a.test/", "http://a.test/en/")) == "http://a.test/en/"
    assert url_has_prefix("http://b.test/", ("http://a.test/",)) is None


@pytest.mark.parametrize("url", ["http://a.test:99999/x", "http://a.test:abc/x", "http://[::1/x"])
def test_a_url_no_request_can_have_raises(url: str) -> None:
    with pytest.raises(ValueError):
        canonical_url(url)
