"""The replay proxy, its sitemaps and site lists (evaluation/replay.py): no browser, no crawl."""

from __future__ import annotations

import gzip
import http.client
import json
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
from scrapy.utils.sitemap import Sitemap

from crawler.sites import load_site_list
from evaluation.datasets import datasets_dir
from evaluation.replay import (
    SITEMAP_PATH,
    ReplayPage,
    ReplayServer,
    archived_url,
    group_by_host,
    group_by_site,
    mojibake,
    replay_pages,
    replay_url,
    site_name,
    write_site_list,
)

UTF8_UNDECLARED = "<html><head><title>Café</title></head><body><p>Zoë’s naïve café — 新闻</p></body></html>"
GBK_PAGE = "<html><head><title>新闻</title></head><body><p>江城日报：今天的新闻很多。</p></body></html>"


def _page(url: str, body: bytes, key: str = "k") -> ReplayPage:
    return ReplayPage(url=url, body=body, dataset="tmp", key=key, gold=None, metric=None)


PAGES = [
    _page("http://news.example/a.html", UTF8_UNDECLARED.encode("utf-8"), "a"),
    _page("http://news.example/b?id=2&x=1", GBK_PAGE.encode("gbk"), "b"),
    _page("http://other.example:8080/c&d.html", b"<html><body>c</body></html>", "c"),
]


def _get(server: ReplayServer, url: str, method: str = "GET") -> tuple[int, dict[str, str], bytes]:
    """Request ``url`` through the proxy as an HTTP client configured with a proxy does (absolute URI)."""
    host, port = server.proxy_url.removeprefix("http://").split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=10)
    try:
        connection.request(method, url)
        response = connection.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        connection.close()


@pytest.fixture
def server() -> Iterator[ReplayServer]:
    with ReplayServer(PAGES) as running:
        yield running


def test_serves_the_stored_bytes_unchanged_as_html_without_charset(server: ReplayServer) -> None:
    for page in PAGES:
        status, headers, body = _get(server, page.url)
        assert status == 200
        assert body == page.body
        assert headers["content-type"] == "text/html"  # no charset: the crawl must detect it
    assert server.proxy_url.startswith("http://127.0.0.1:")


def test_the_canonical_form_of_a_url_finds_its_page(server: ReplayServer) -> None:
    status, _, body = _get(server, "http://NEWS.example:80/b?x=1&id=2#frag")
    assert (status, body) == (200, PAGES[1].body)


def test_unknown_urls_robots_and_https_tunnels_get_404(server: ReplayServer) -> None:
    for url in ("http://news.example/robots.txt", "http://news.example/missing", "http://nowhere.example/a.html",
                "http://other.example:8080" + SITEMAP_PATH + "?x=1"):
        status, _, _ = _get(server, url)
        assert status == 404, url
    assert _get(server, "http://news.example/robots.txt", "HEAD")[0] == 404
    host, port = server.proxy_url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(b"CONNECT news.example:443 HTTP/1.1\r\nHost: news.example:443\r\n\r\n")
        assert sock.recv(100).startswith(b"HTTP/1.1 404")
    counts = server.outcome_counts()
    assert counts["not_found"] == 6
    assert server.requests["not_found", "http://news.example/robots.txt"] == 2


def test_each_host_has_a_sitemap_of_its_pages(server: ReplayServer) -> None:
    status, headers, body = _get(server, "http://news.example" + SITEMAP_PATH)
    assert status == 200 and "xml" in headers["content-type"]
    from scrapy.utils.sitemap import Sitemap

    locs = [entry["loc"] for entry in Sitemap(body)]
    assert locs == ["http://news.example/a.html", "http://news.example/b?id=2&x=1"]  # & escaped in the XML
    assert b"&amp;" in body
    other = [entry["loc"] for entry in Sitemap(_get(server, "http://other.example:8080" + SITEMAP_PATH)[2])]
    assert other == ["http://other.example:8080/c&d.html"]
    assert server.outcome_counts()["sitemap"] == 2
    _get(server, PAGES[0].url)
    _get(server, PAGES[0].url)
    assert server.pages_served() == 1
    assert server.requests["page", PAGES[0].url] == 2


def test_site_list_one_site_per_host_loads_and_allows_exactly_the_host(tmp_path: Path) -> None:
    path = write_site_list(PAGES, tmp_path / "sites.yaml", render=False, max_pages=1)
    sites = load_site_list(path).sites
    assert [site.name for site in sites] == ["news.example", "other.example_8080"]
    first, second = sites
    assert first.sitemaps == ("http://news.example" + SITEMAP_PATH,)
    assert first.start_urls == ()
    assert first.allowed_prefixes == ("http://news.example/",)
    assert (first.max_depth, first.render) == (1, False)
    assert first.max_pages == 2  # at least the host's page count
    assert second.max_pages == 1
    assert first.allows(first.canonical(PAGES[1].url)) and not first.allows(PAGES[2].url)
    rendered = load_site_list(write_site_list(PAGES, tmp_path / "r.yaml", render=True, max_pages=50)).sites
    assert all(site.render and site.max_pages == 50 for site in rendered)


def test_group_by_host_keeps_order_and_site_names_are_valid_and_unique() -> None:
    assert [(host, [p.key for p in pages]) for host, pages in group_by_host(PAGES).items()] == [
        ("news.example", ["a", "b"]), ("other.example:8080", ["c"])]
    taken: set[str] = set()
    names = [site_name(host, taken) for host in ("a.example", "a.example", "[::1]:80", "-x")]
    assert names == ["a.example", "a.example-2", "1_80", "x"]


ARCHIVED = [
    _page("http://web.archive.test/web/20090301020158/http://arstechnica.com/a.ars", b"<p>a</p>", "a09"),
    _page("http://web.archive.test/web/20131208120000/http://arstechnica.com/b", b"<p>b</p>", "b13"),
    _page("http://web.archive.test/web/20090314220047/http://arstechnica.com/c.ars", b"<p>c</p>", "c09"),
    _page("http://web.archive.test/web/20131208im_/http://www.cnn.com/d", b"<p>d</p>", "d13"),
    _page("http://web.archive.test/about", b"<p>e</p>", "e"),
]


def test_web_archive_copies_are_grouped_by_original_site_and_year(tmp_path: Path) -> None:
    groups = group_by_site(ARCHIVED)
    assert [(key, [p.key for p in pages]) for key, pages in groups.items()] == [
        ("arstechnica.com 2009", ["a09", "c09"]), ("arstechnica.com 2013", ["b13"]),
        ("www.cnn.com 2013", ["d13"]), ("web.archive.test", ["e"])]
    sites = load_site_list(write_site_list(ARCHIVED, tmp_path / "sites.yaml", render=False)).sites
    assert [site.name for site in sites] == ["arstechnica.com_2009", "arstechnica.com_2013", "www.cnn.com_2013",
                                             "web.archive.test"]
    for site, pages in zip(sites, groups.values(), strict=True):  # each site allows its own pages only
        assert [p.key for p in ARCHIVED if site.allows(site.canonical(p.url))] == [p.key for p in pages]
    with ReplayServer(ARCHIVED) as running:
        for site, pages in zip(sites, groups.values(), strict=True):
            (sitemap,) = site.sitemaps
            status, _, body = _get(running, sitemap)
            assert status == 200 and [entry["loc"] for entry in Sitemap(body)] == [p.url for p in pages]


def test_archived_url_reads_the_toolbars_url_and_timestamp() -> None:
    toolbar = ('<input type="text" name="url" id="wmtbURL" value="http://www.forbes.com/2005/04/08/amd.html" />'
               '<a href="/web/20050409130612/http://www.forbes.com/">x</a>'
               '<a href="/web/20050409130612/http://www.forbes.com/a">y</a><a href="/web/20040101000000/z">z</a>')
    assert archived_url(toolbar) == "http://web.archive.org/web/20050409130612/http://www.forbes.com/2005/04/08/amd.html"
    assert archived_url(toolbar.replace("http://www.forbes.com/2005", "javascript:x")) is None
    assert archived_url('<input id="wmtbURL" value="http://x.com/a">') is None  # no timestamp
    assert archived_url("<html><body>no toolbar /web/20050409130612/</body></html>") is None


def test_replay_url_is_http_and_canonical() -> None:
    assert replay_url("https://News.Example/a?utm_source=x&b=2&a=1#top") == "http://news.example/a?a=1&b=2"
    assert replay_url("ftp://news.example/a") is None
    assert replay_url("http://news.example:notaport/") is None
    assert replay_url("/relative") is None


def test_mojibake_finds_utf8_read_as_windows_1252() -> None:
    assert mojibake("Zoë’s café 新闻") == []
    broken = "Zoë’s café 新闻".encode().decode("cp1252", "replace")
    assert mojibake(broken)
    assert mojibake("a\ufffdb") == ["\ufffd"]
    assert mojibake("„Das muß“, sagte er. Stra\u00adße, Fußball") == []  # German: ß before quotes, soft hyphens


# --- real dataset pages --------------------------------------------------------------------


def _skip_without(name: str) -> None:
    root = datasets_dir()
    if not (root / name).is_dir():
        pytest.skip(f"dataset folder {root / name} is absent (set DATASETS_DIR)")


def test_dataset_pages_keep_their_stored_bytes_and_urls() -> None:
    _skip_without("l3s-gn1")
    _skip_without("msv-big5")
    pages = replay_pages(["l3s-gn1", "msv-big5"], limit_per_dataset=5)
    assert [page.dataset for page in pages] == ["l3s-gn1"] * 5 + ["msv-big5"] * 5
    assert pages == replay_pages(["l3s-gn1", "msv-big5"], limit_per_dataset=5)  # deterministic
    assert all(page.url.startswith("http://") for page in pages)
    assert len({page.url for page in pages}) == len(pages)
    first = pages[0]
    assert first.metric == "shingle" and first.gold
    assert pages[-1].metric is None  # msv-big5 has gold but no harness metric
    assert first.source is not None
    assert first.body == gzip.decompress(first.source.html_path.read_bytes())  # raw, not re-encoded
    with ReplayServer(pages) as server:
        for page in pages:
            status, _, body = _get(server, page.url)
            assert (status, body) == (200, page.body)
        status, _, sitemap = _get(server, f"http://{first.host}{SITEMAP_PATH}")
        assert status == 200 and first.url.replace("&", "&amp;").encode() in sitemap


def test_pages_without_a_url_are_skipped_unless_guessed() -> None:
    _skip_without("chinese-wced-dev")
    declared = replay_pages(["chinese-wced-dev"])
    guessed = replay_pages(["chinese-wced-dev"], guess_urls=True)
    assert 0 < len(declared) < len(guessed) <= 35
    assert {page.key for page in declared} <= {page.key for page in guessed}
    assert json.dumps([page.url for page in guessed])  # plain strings


def test_dataset_site_list_parses(tmp_path: Path) -> None:
    _skip_without("wcxb-dev")
    pages = replay_pages(["wcxb-dev"], limit_per_dataset=200)
    sites = load_site_list(write_site_list(pages, tmp_path / "sites.yaml", render=True)).sites
    hosts = group_by_host(pages)
    assert len(sites) == len(hosts)
    assert sum(site.max_pages for site in sites) == len(pages)
    for site, (host, host_pages) in zip(sites, hosts.items(), strict=True):
        assert site.allowed_prefixes == (f"http://{host}/",)
        assert all(site.allows(site.canonical(page.url)) for page in host_pages)
