"""crawler.domains: registered domains from the Public Suffix List bundled with publicsuffixlist."""

from __future__ import annotations

import pytest

from crawler.domains import registered_domain


@pytest.mark.parametrize(("host", "domain"), [
    ("news.bbc.co.uk", "bbc.co.uk"), ("www.nytimes.com", "nytimes.com"), ("finance.sina.com.cn", "sina.com.cn"),
    ("abc.net.au", "abc.net.au"), ("Example.ORG.", "example.org"), ("www.example.com", "example.com"),
    # The list's private section: hosts under a shared suffix are sites of their own (the old heuristic took
    # github.io, blogspot.com and s3.amazonaws.com for one site each).
    ("a.github.io", "a.github.io"), ("b.github.io", "b.github.io"), ("x.blog.b.blogspot.com", "b.blogspot.com"),
    ("bucket.s3.amazonaws.com", "bucket.s3.amazonaws.com"), ("dpi.qld.gov.au", "dpi.qld.gov.au"),
    # Addresses, suffixes themselves and single labels stay as they are.
    ("10.0.0.1", "10.0.0.1"), ("127.0.0.1", "127.0.0.1"), ("::1", "::1"), ("github.io", "github.io"),
    ("bbc", "bbc"), ("localhost", "localhost"),
])
def test_registered_domain(host: str, domain: str) -> None:
    assert registered_domain(host) == domain


def test_two_blogs_on_one_suffix_are_two_sites() -> None:
    assert registered_domain("a.blogspot.com") != registered_domain("b.blogspot.com")
    assert registered_domain("www.a.blogspot.com") == registered_domain("a.blogspot.com")
