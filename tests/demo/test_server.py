"""Tests of the bundled demo sites (demo/): generator ground truth, server, bad cases."""

from __future__ import annotations

import http.client
import json
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections import deque
from collections.abc import Iterator
from email.message import Message
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import lxml.html
import pytest
from lxml import etree

from demo import BAD_CASES, DemoPage, DemoSite, build_sites
from demo.server import DemoServer

REPO = Path(__file__).resolve().parents[2]
TIMEOUT = 5.0


# -- helpers -------------------------------------------------------------------------

def canonical(base_path: str, href: str) -> str:
    """Return the site-relative path ``href`` points to, without query and fragment."""
    parts = urlsplit(urljoin("http://demo.test" + base_path, href))
    return parts.path if parts.netloc == "demo.test" else ""


def hrefs(page: DemoPage) -> list[str]:
    """Return every <a href> of a page, in document order."""
    return [str(a.get("href")) for a in lxml.html.fromstring(page.html).iter("a") if a.get("href")]


def normalized_text(html: str, drop_scripts: bool = False) -> str:
    """Return the document's text content with whitespace collapsed."""
    root = lxml.html.fromstring(html)
    if drop_scripts:
        for element in list(root.iter("script", "style")):
            element.drop_tree()
    return " ".join(root.text_content().split())


def fetch(url: str, method: str = "GET", timeout: float = TIMEOUT) -> tuple[int, Message, bytes]:
    """Return (status, headers, body) of a request; HTTP errors are returned, not raised."""
    request = urllib.request.Request(url, method=method)
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, response.headers, response.read()
    except urllib.error.HTTPError as error:
        with error:
            return error.code, error.headers, error.read()


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: object, **kwargs: object) -> None:
        """Return None so that urllib raises the 3xx response instead of following it."""
        return None


@pytest.fixture(scope="module")
def sites() -> tuple[DemoSite, ...]:
    """Return the demo sites built once for the module."""
    return build_sites()


@pytest.fixture(scope="module")
def server() -> Iterator[DemoServer]:
    """Yield a running demo server shared by the module's server tests."""
    with DemoServer() as running:
        yield running


def articles(site: DemoSite) -> list[DemoPage]:
    """Return the article pages of ``site``."""
    return [p for p in site.pages.values() if p.page_type == "article"]


# -- the generated sites ---------------------------------------------------------------

def test_build_is_deterministic(sites: tuple[DemoSite, ...]) -> None:
    again = build_sites()
    assert [list(s.pages) for s in sites] == [list(s.pages) for s in again]
    for first, second in zip(sites, again, strict=True):
        for path, page in first.pages.items():
            assert page.html == second.pages[path].html
    other = build_sites(seed=7)
    assert [p.html for p in other[0].pages.values()] != [p.html for p in sites[0].pages.values()]


def test_page_counts_and_types(sites: tuple[DemoSite, ...]) -> None:
    assert [s.name for s in sites] == ["en-gazette", "zh-jiangcheng"]
    for site in sites:
        kinds = [p.page_type for p in site.pages.values()]
        assert kinds.count("article") == 40
        assert kinds.count("list") == 9  # home + 8 section pages
        assert kinds.count("other") == 1
        assert site.pages[site.prefix].page_type == "list"
        assert all(path.startswith(site.prefix) for path in site.pages)
        layouts = [p.layout for p in articles(site)]
        assert layouts.count("js-rendered") == 4
        for name in ("classic", "sidebar", "legacy-table", "div-soup"):
            assert layouts.count(name) >= 4
        assert set(site.disallowed) == set(site.private_pages)
        assert not set(site.disallowed) & set(site.pages)


def test_paragraph_sizes_and_charsets(sites: tuple[DemoSite, ...]) -> None:
    en, zh = sites
    for page in articles(en):
        assert 4 <= len(page.body) <= 12
        assert all(30 <= len(p.split()) <= 90 for p in page.body), page.path
    for page in articles(zh):
        assert 4 <= len(page.body) <= 12
        assert all(60 <= len(p) <= 220 for p in page.body), page.path
        assert all(p.endswith(("。", "”", "？")) for p in page.body)
    zh_text = "".join(p for page in articles(zh) for p in page.body)
    for mark in "，。、“”：；？":
        assert mark in zh_text
    for page in zh.pages.values():
        page.html.encode("gbk")  # every zh page could be served in GBK
    gbk = [p for p in zh.pages.values() if p.encoding == "gbk"]
    assert 12 <= len(gbk) <= 20 and any(p.page_type == "article" for p in gbk)
    assert all(p.encoding == "utf-8" for p in en.pages.values())
    for page in [*en.pages.values(), *zh.pages.values()]:
        assert f'<meta charset="{page.encoding}">' in page.html


def test_every_article_reachable_from_home(sites: tuple[DemoSite, ...]) -> None:
    for site in sites:
        seen, queue = {site.prefix}, deque([site.prefix])
        while queue:
            page = site.pages[queue.popleft()]
            for href in hrefs(page):
                target = canonical(page.path, href)
                if target in site.pages and target not in seen:
                    seen.add(target)
                    queue.append(target)
        assert {p.path for p in articles(site)} <= seen
        assert seen == set(site.pages)
        listed = {link for p in site.pages.values() if p.layout == "section-list" for link in p.links}
        assert listed == {p.path for p in articles(site)}


def test_links_include_tracking_fragments_external_and_private(sites: tuple[DemoSite, ...]) -> None:
    for site in sites:
        all_hrefs = [h for page in site.pages.values() for h in hrefs(page)]
        assert any("utm_source=" in h for h in all_hrefs)
        assert any(h.endswith("#comments") for h in all_hrefs)
        assert any(h.startswith("https://example.com/ad") for h in all_hrefs)
        assert site.disallowed[0] in hrefs(site.pages[site.prefix])
        article_paths = {p.path for p in articles(site)}
        tracked = [h for h in all_hrefs if "utm_source=" in h or h.endswith("#comments")]
        assert all(canonical("/", h) in article_paths for h in tracked)


def test_list_pages_link_their_entries_in_order(sites: tuple[DemoSite, ...]) -> None:
    for site in sites:
        for page in site.pages.values():
            if page.page_type != "list":
                continue
            assert len(page.body) == len(page.links) > 0
            root = lxml.html.fromstring(page.html)
            entry_links = root.cssselect(".entries .entry h3 a")
            found = [(" ".join(a.text_content().split()), canonical(page.path, str(a.get("href"))))
                     for a in entry_links]
            assert found == list(zip(page.body, page.links, strict=True))[-len(found):]
            if page.layout == "section-list":
                assert len(found) == len(page.body) and 'class="pagination"' in page.html


def test_gold_body_in_static_layouts_and_hidden_in_js_layout(sites: tuple[DemoSite, ...]) -> None:
    for site in sites:
        for page in articles(site):
            visible = normalized_text(page.html, drop_scripts=True)
            assert page.title in visible
            if page.layout == "js-rendered":
                assert not any(p in visible for p in page.body), page.path
                data = lxml.html.fromstring(page.html).get_element_by_id("story-data").text
                assert tuple(json.loads(data)["paragraphs"]) == page.body
            else:
                for paragraph in page.body:
                    assert " ".join(paragraph.split()) in visible, (page.path, paragraph)


def test_noise_blocks_present(sites: tuple[DemoSite, ...]) -> None:
    en, zh = sites
    for site, copyright_line, source in ((en, "© 2026 Harbor Gazette. All rights reserved.", "Source:"),
                                         (zh, "版权所有 © 2026 江城日报", "来源：江城日报")):
        for page in site.pages.values():
            text = normalized_text(page.html)
            assert copyright_line in text
            if page.page_type == "article":
                assert source in text and "<script>" in page.html
        pages = articles(site)
        assert any('style="display:none"' in p.html for p in pages)
        assert any("<noscript>" in p.html for p in pages if p.layout != "js-rendered")
        assert all("<noscript>" in p.html for p in pages if p.layout == "js-rendered")
    assert "鄂ICP备" in zh.pages[zh.prefix].html


# -- the server ----------------------------------------------------------------------

def test_server_serves_pages_with_their_charset(server: DemoServer) -> None:
    assert server.url.startswith("http://127.0.0.1:") and not server.url.endswith("/")
    for site in server.sites:
        for page in list(site.pages.values())[::7]:
            status, headers, body = fetch(server.url + page.path)
            assert status == 200
            assert headers["Content-Type"] == f"text/html; charset={page.encoding}"
            assert int(headers["Content-Length"]) == len(body)
            assert body == page.body_bytes


def test_gbk_pages_are_gbk_bytes(server: DemoServer) -> None:
    zh = server.sites[1]
    page = next(p for p in articles(zh) if p.encoding == "gbk")
    _, headers, body = fetch(server.url + page.path)
    assert headers.get_content_charset() == "gbk"
    with pytest.raises(UnicodeDecodeError):
        body.decode("utf-8")
    assert body.decode("gbk") == page.html


def test_query_is_ignored_and_hits_are_counted(server: DemoServer) -> None:
    page = articles(server.sites[0])[3]
    before = server.hits[page.path]
    status, _, body = fetch(f"{server.url}{page.path}?utm_source=x&utm_medium=web")
    assert status == 200 and body == page.body_bytes
    fetch(server.url + page.path)
    assert server.hits[page.path] == before + 2
    assert not any("?" in path for path in server.hits)


def test_head_404_private_and_static(server: DemoServer) -> None:
    status, headers, body = fetch(server.url + "/en/", method="HEAD")
    assert status == 200 and body == b"" and int(headers["Content-Length"]) > 1000
    status, headers, body = fetch(server.url + "/en/no-such-page.html")
    assert status == 404 and b"404" in body and int(headers["Content-Length"]) == len(body)
    status, _, body = fetch(server.url + "/en/private/secret.html")
    assert status == 200 and b"robots.txt" in body
    status, headers, body = fetch(server.url + "/static/photo.png")
    assert status == 200 and headers["Content-Type"] == "image/png" and body.startswith(b"\x89PNG")


def test_robots_sitemaps_and_feeds_use_the_server_url(server: DemoServer) -> None:
    _, _, robots = fetch(server.url + "/robots.txt")
    text = robots.decode()
    assert "Disallow: /en/private/" in text and "Disallow: /zh/private/" in text
    for site in server.sites:
        assert f"Sitemap: {server.url}{site.sitemap_path}" in text
        _, _, body = fetch(server.url + site.sitemap_path)
        ns = {"s": "http://www.sitemaps.org/schemas/sitemap/0.9"}
        root = etree.fromstring(body)
        locs = root.xpath("//s:url/s:loc/text()", namespaces=ns)
        assert {loc.removeprefix(server.url) for loc in locs} == {p.path for p in articles(site)}
        assert len(root.xpath("//s:url/s:lastmod", namespaces=ns)) == 40
    _, headers, rss = fetch(server.url + "/en/feed.xml")
    assert headers["Content-Type"].startswith("application/rss+xml")
    links = etree.fromstring(rss).xpath("/rss/channel/item/link/text()")
    assert len(links) == 20 and all(link.startswith(server.url + "/en/articles/") for link in links)
    newest = [server.url + p.path for p in server.sites[0].articles[:20]]
    assert links == newest
    _, headers, atom = fetch(server.url + "/zh/atom.xml")
    assert headers["Content-Type"].startswith("application/atom+xml")
    entries = etree.fromstring(atom).findall("{http://www.w3.org/2005/Atom}entry")
    assert len(entries) == 20
    hrefs_ = [e.find("{http://www.w3.org/2005/Atom}link").get("href") for e in entries]
    assert all(href.startswith(server.url + "/zh/news/") for href in hrefs_)


def test_start_stop_idempotent_and_port_zero() -> None:
    first, second = DemoServer(), DemoServer()
    try:
        url1, url2 = first.start(), second.start()
        assert url1 != url2 and first.start() == url1
    finally:
        first.stop()
        second.stop()
    first.stop()
    with pytest.raises(OSError):
        urllib.request.urlopen(url1 + "/en/", timeout=1)


# -- the bad cases -----------------------------------------------------------------------

def test_bad_index_lists_every_case(server: DemoServer) -> None:
    status, _, body = fetch(server.url + "/bad/")
    assert status == 200
    for case in BAD_CASES.values():
        assert f'href="{case.path}"' in body.decode()


def test_bad_http_errors_and_redirect_loop(server: DemoServer) -> None:
    for name in ("404", "500"):
        status, _, body = fetch(server.url + BAD_CASES[name].path)
        assert status == BAD_CASES[name].status and body.startswith(b"<!DOCTYPE html>")
    opener = urllib.request.build_opener(_NoRedirect)
    with pytest.raises(urllib.error.HTTPError) as info:
        opener.open(server.url + "/bad/redirect-loop", timeout=TIMEOUT)
    assert info.value.code == 302 and info.value.headers["Location"] == "/bad/redirect-loop"
    info.value.close()
    status, _, _ = fetch(server.url + "/bad/redirect-loop")  # urllib gives up on the loop
    assert status == 302


def test_bad_non_html_empty_and_huge(server: DemoServer) -> None:
    signatures = {"binary": b"", "doc.pdf": b"%PDF-1.4", "image.png": b"\x89PNG\r\n\x1a\n"}
    for name, signature in signatures.items():
        status, headers, body = fetch(server.url + BAD_CASES[name].path)
        assert status == 200 and headers["Content-Type"] == BAD_CASES[name].content_type
        assert body.startswith(signature) and len(body) > 60
    assert fetch(server.url + "/bad/binary")[2] == fetch(server.url + "/bad/binary")[2]
    assert fetch(server.url + "/bad/doc.pdf")[2].rstrip().endswith(b"%%EOF")
    status, headers, body = fetch(server.url + "/bad/empty")
    assert status == 200 and body == b"" and headers["Content-Length"] == "0"
    _, headers, _ = fetch(server.url + "/bad/huge", method="HEAD")
    size = int(headers["Content-Length"])
    assert size > 10 * 1024 * 1024
    _, _, body = fetch(server.url + "/bad/huge")
    assert len(body) == size and body.endswith(b"</body></html>\n")


@pytest.mark.parametrize("name", ["gbk-undeclared", "gb18030-undeclared", "big5-undeclared"])
def test_bad_undeclared_charsets(server: DemoServer, name: str) -> None:
    case = BAD_CASES[name]
    status, headers, body = fetch(server.url + case.path)
    assert status == 200 and headers["Content-Type"] == "text/html"
    assert b"charset" not in body.lower()
    with pytest.raises(UnicodeDecodeError):
        body.decode("utf-8")
    text = body.decode(case.encoding)
    assert case.expected_text in text
    assert sum(1 for ch in text if "\u4e00" <= ch <= "\u9fff") >= 600
    if name == "gb18030-undeclared":
        assert case.expected_text not in body.decode("gbk", errors="replace")
    charset_normalizer = pytest.importorskip("charset_normalizer")
    best = charset_normalizer.from_bytes(body).best()
    assert best is not None and case.expected_text in str(best)


def test_bad_malformed_deep_and_never_loads(server: DemoServer) -> None:
    _, _, body = fetch(server.url + "/bad/malformed")
    assert BAD_CASES["malformed"].expected_text in normalized_text(body.decode())
    assert body.rstrip().endswith(b"</p>") and b"<!--" in body.rsplit(b"</body>", 1)[1]
    _, _, body = fetch(server.url + "/bad/deep-nesting")
    assert body.count(b"<div>") == 5000 and BAD_CASES["deep-nesting"].expected_text.encode() in body
    status, _, body = fetch(server.url + "/bad/never-loads")
    assert status == 200 and b"This page never finishes loading." in body and b'src="/bad/hang.png"' in body
    status, _, body = fetch(server.url + "/bad/slow?seconds=0")
    assert status == 200 and BAD_CASES["slow"].expected_text.encode() in body


def test_stop_releases_slow_and_hanging_requests() -> None:
    demo = DemoServer()
    url = demo.start()
    outcomes: dict[str, object] = {}

    def client(path: str) -> None:
        try:
            outcomes[path] = fetch(url + path, timeout=20)[0]
        except (OSError, http.client.HTTPException) as exc:
            outcomes[path] = exc

    threads = [threading.Thread(target=client, args=(p,), daemon=True)
               for p in ("/bad/slow?seconds=30", "/bad/hang.png")]
    for thread in threads:
        thread.start()
    assert demo.wait_for_hit("/bad/slow") and demo.wait_for_hit("/bad/hang.png")
    started = time.monotonic()
    demo.stop()
    assert time.monotonic() - started < 2
    for thread in threads:
        thread.join(timeout=2)
        assert not thread.is_alive()
    slow = outcomes["/bad/slow?seconds=30"]
    assert slow == 503 or isinstance(slow, Exception)  # "server stopping" page, or a closed connection
    assert isinstance(outcomes["/bad/hang.png"], Exception)  # the PNG body never completes


def test_command_line_writes_port_file(tmp_path: Path) -> None:
    port_file = tmp_path / "url.txt"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    process = subprocess.Popen([sys.executable, "-m", "demo.server", "--port-file", str(port_file)],
                               cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        line = process.stdout.readline().strip()
        url = port_file.read_text().strip()
        assert line == f"Demo sites at {url}"
        assert fetch(url + "/robots.txt")[0] == 200
    finally:
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=10) == 0
    assert process.stderr is not None and process.stderr.read() == ""


def test_publish_adds_articles_to_lists_feeds_and_sitemap_only() -> None:
    with DemoServer() as server:
        before = {path: server.page_for(path).body_bytes for site in server.sites for path in site.pages}  # type: ignore[union-attr]
        request = urllib.request.Request(server.url + "/_demo/publish?count=3&site=zh-jiangcheng", method="POST")
        with urllib.request.urlopen(request, timeout=TIMEOUT) as response:
            added = response.read().decode().split()
        assert len(added) == 3 and all(path.startswith("/zh/news/") for path in added)
        zh = next(site for site in server.sites if site.name == "zh-jiangcheng")
        assert [page.path for page in zh.articles[:3]] == sorted(added, key=lambda p: zh.pages[p].published,
                                                                 reverse=True)
        changed = {path for path, body in before.items() if server.page_for(path).body_bytes != body}  # type: ignore[union-attr]
        lists = {path for path, page in zh.pages.items() if page.page_type == "list"}
        assert changed <= lists and "/zh/" in changed  # no article changed; no list page was added
        assert set(zh.pages) == {*before, *added} - {p for p in before if not p.startswith("/zh/")}
        with urllib.request.urlopen(server.url + zh.feed_path, timeout=TIMEOUT) as response:
            feed = response.read().decode()
        assert all(path in feed for path in added)
        # Publishing 3 more later gives the same first 3 (a test's articles do not depend on how they came).
        assert build_sites(published={"zh-jiangcheng": 3})[1].pages.keys() == zh.pages.keys()


def test_pages_carry_an_etag_and_answer_conditional_gets_with_304() -> None:
    with DemoServer() as server:
        with urllib.request.urlopen(server.url + "/en/", timeout=TIMEOUT) as response:
            etag = response.headers["ETag"]
        request = urllib.request.Request(server.url + "/en/", headers={"If-None-Match": etag})
        with pytest.raises(urllib.error.HTTPError) as answer:
            urllib.request.urlopen(request, timeout=TIMEOUT)
        assert answer.value.code == 304
        assert server.hits["304:/en/"] == 1
