"""The real engine and real Chromium crawl the demo sites, rendered and over plain HTTP."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from crawler.middlewares.render_config import RenderConfig
from crawler.render.screenshots import is_blank, png_size, repeated_top_offset
from demo import DemoPage
from demo.server import DemoServer
from extraction.pagetype.models import load_gray
from templates_db.store import open_store
from tests.crawl_helpers import REPO, WARCIO, CrawlResult, capture, needs_chromium, run_crawl, screenshot

pytestmark = [needs_chromium, pytest.mark.browser]



def demo_sites(base: str, render: bool) -> list[dict[str, Any]]:
    """The demo site list, as sites/demo.yaml has it, pointing at ``base``."""
    return [
        {"name": "en-gazette", "start_urls": [f"{base}/en/"], "allowed_prefixes": [f"{base}/en/"],
         "feeds": [f"{base}/en/feed.xml"], "sitemaps": [f"{base}/en/sitemap.xml"], "render": render},
        {"name": "zh-jiangcheng", "start_urls": [f"{base}/zh/"], "allowed_prefixes": [f"{base}/zh/"],
         "feeds": [f"{base}/zh/atom.xml"], "sitemaps": [f"{base}/zh/sitemap.xml"], "render": render},
    ]


def _pages(server: DemoServer) -> dict[str, DemoPage]:
    return {server.url + path: page for site in server.sites for path, page in site.pages.items()}


def _lines(text: str) -> list[str]:
    return [" ".join(line.split()) for line in text.split("\n")]


@pytest.fixture(scope="module")
def server() -> Iterator[DemoServer]:
    with DemoServer() as running:
        yield running


def _crawl_demo(server: DemoServer, work: Path, render: bool) -> tuple[CrawlResult, dict[str, int]]:
    """Crawl both demo sites; returns the result and the server's hits during the crawl."""
    server.reset_hits()
    result = run_crawl(work, demo_sites(server.url, render=render))
    assert result.returncode == 0, result.log[-3000:]
    return result, dict(server.hits)


@pytest.fixture(scope="module")
def rendered(server: DemoServer, tmp_path_factory: pytest.TempPathFactory) -> tuple[CrawlResult, dict[str, int]]:
    return _crawl_demo(server, tmp_path_factory.mktemp("rendered"), render=True)


@pytest.fixture(scope="module")
def plain(server: DemoServer, tmp_path_factory: pytest.TempPathFactory) -> tuple[CrawlResult, dict[str, int]]:
    return _crawl_demo(server, tmp_path_factory.mktemp("plain"), render=False)


@pytest.mark.parametrize("mode", ["rendered", "plain"])
def test_every_page_fetched_once_and_itemised(mode: str, request: pytest.FixtureRequest,
                                              server: DemoServer) -> None:
    result, hits = request.getfixturevalue(mode)
    expected = _pages(server)
    urls = [item["canonical_url"] for item in result.items]
    assert len(urls) == len(set(urls)), "a page was itemised twice"
    assert set(urls) == set(expected)
    for url in expected:
        assert hits.get(url[len(server.url):], 0) == 1, f"{url} fetched {hits.get(url[len(server.url):])} times"
    assert all(item["error"] is None and item["status"] == 200 for item in result.items)


@pytest.mark.parametrize("mode", ["rendered", "plain"])
def test_robots_txt_is_obeyed(mode: str, request: pytest.FixtureRequest, server: DemoServer) -> None:
    result, hits = request.getfixturevalue(mode)
    for site in server.sites:
        for path in site.private_pages:
            assert hits.get(path, 0) == 0
    assert result.stats["crawl/dropped/robots_forbidden"] == sum(len(s.private_pages) for s in server.sites)


def test_rendered_stats_match_items(rendered: tuple[CrawlResult, dict[str, int]], server: DemoServer) -> None:
    result, _ = rendered
    stats, pages = result.stats, len(_pages(server))
    assert stats["crawl/page"] == pages == stats["item_scraped_count"]
    assert stats["crawl/scheduled"] == pages + stats["crawl/dropped/robots_forbidden"]
    assert stats["render/page"] == pages == stats["render/screenshot"]
    assert stats["archive/warc/captures"] == pages
    assert stats["playwright/browser_count"] == 1
    assert not [key for key in stats if key.startswith(("crawl/error", "render/screenshot_glitch"))]
    for site in server.sites:
        assert stats[f"crawl/site/{site.name}"] == len(site.pages)


def test_screenshots_are_real_pngs_of_the_top_region(rendered: tuple[CrawlResult, dict[str, int]]) -> None:
    result, _ = rendered
    config = RenderConfig()
    top = config.top_height  # what the page-type model reads: CROP_RATIO x the viewport width
    scale = config.screenshot_scale  # image pixels per CSS pixel
    for item in result.items:
        png = screenshot(item)
        assert png is not None, item["canonical_url"]
        width, height = png_size(png)
        assert width == round(1280 * scale)
        assert item["page_height"] > 0
        assert item["screenshot_height"] == min(item["page_height"], top)
        assert abs(height - item["screenshot_height"] * scale) <= 1
        gray = load_gray(png)
        assert not is_blank(gray), item["canonical_url"]
        assert repeated_top_offset(gray, round(800 * scale)) is None, item["canonical_url"]
    heights = sorted(item["page_height"] for item in result.items)
    assert heights[0] < 1500 < 3000 < heights[-1], "demo pages vary in height"


FOOTER_LINES = {
    "en-gazette": ["© 2026 Harbor Gazette. All rights reserved.",
                   "Harbor Gazette, 14 Ropewalk Lane, Port Marlow. Newsroom: 555-0142."],
    "zh-jiangcheng": ["版权所有 © 2026 江城日报 未经书面授权禁止转载"],
}


@pytest.mark.parametrize("mode", ["rendered", "plain"])
def test_templates_learned_after_first_batch_and_removed(mode: str, request: pytest.FixtureRequest,
                                                         server: DemoServer) -> None:
    """Nav/footer/copyright become templates after each site's first batch of 10 pages and are
    removed from later pages; article bodies stay whole (test_article_text_and_chinese_read_back)."""
    result, _ = request.getfixturevalue(mode)
    pages = _pages(server)
    assert result.stats["templates/pages"] == len(pages)
    assert result.stats["templates/batch"] >= 2 * (len(pages) // 2 // 10)  # a batch per 10 pages per site
    for site, lines in FOOTER_LINES.items():
        items = [item for item in result.items if item["site"] == site]
        before = [item for item in items if item["template_cleaning"] is None]
        # An item reaches the pipeline after its response fed the middleware, so only the items
        # of the first 9 responses of a site can miss the first batch's templates.
        assert len(before) < 10, site
        for item in items:
            if item["template_cleaning"] is None:
                continue
            assert item["template_cleaning"]["removed_nodes"] > 0
            text = _lines(item["text"])
            for line in lines:
                assert line not in text, (item["canonical_url"], line)
            page = pages[item["canonical_url"]]
            if page.page_type == "article" and not (mode == "plain" and page.layout == "js-rendered"):
                assert all(" ".join(p.split()) in text for p in page.body), item["canonical_url"]


@pytest.mark.parametrize("mode", ["rendered", "plain"])
def test_article_text_and_chinese_read_back(mode: str, request: pytest.FixtureRequest,
                                             server: DemoServer) -> None:
    result, _ = request.getfixturevalue(mode)
    pages = _pages(server)
    checked = 0
    for item in result.items:
        page = pages[item["canonical_url"]]
        if page.page_type == "article":
            assert item["title"] == " ".join(page.title.split())
        else:  # a list page's title is its <title> without the site's name
            assert item["title"] and item["title"] in " ".join(page.title.split())
        assert item["lang"] == ("zh-Hans" if page.site.startswith("zh") else "en")
        if page.page_type != "article" or (mode == "plain" and page.layout == "js-rendered"):
            continue
        lines = _lines(item["text"])
        for paragraph in page.body:
            assert " ".join(paragraph.split()) in lines, (item["canonical_url"], paragraph[:40])
        checked += 1
    assert checked >= 72


def test_gbk_pages_decoded(plain: tuple[CrawlResult, dict[str, int]], rendered: tuple[CrawlResult, dict[str, int]],
                           server: DemoServer) -> None:
    pages = _pages(server)
    gbk = {url for url, page in pages.items() if page.encoding == "gbk"}
    assert len(gbk) >= 10
    for result, rendered_mode in ((plain, False), (rendered, True)):
        for item in result[0].items:
            if item["canonical_url"] in gbk:
                page = pages[item["canonical_url"]]
                assert item["encoding"].lower() in ("gb18030", "gbk")
                assert page.title.split()[0] in item["title"] or item["title"] in page.title  # decoded right
                if page.page_type == "article" and (rendered_mode or page.layout != "js-rendered"):
                    assert page.body[0][:15] in item["text"], item["canonical_url"]


def test_rendering_off_means_plain_http(plain: tuple[CrawlResult, dict[str, int]], server: DemoServer) -> None:
    result, _ = plain
    assert all(not item["rendered"] and item["render_ms"] is None and screenshot(item) is None
               for item in result.items)
    assert not any(key.startswith("playwright/page_count") for key in result.stats)
    assert result.stats["gc/frozen_objects"] > 10_000  # GarbageCollectorExtension: what start-up made is frozen
    js_pages = [p for p in _pages(server).values() if p.layout == "js-rendered"]
    assert len(js_pages) == 8
    by_url = {item["canonical_url"]: item for item in result.items}
    for page in js_pages:
        assert page.body[0][:30] not in by_url[server.url + page.path]["text"]


def test_text_from_the_fetched_html_unless_scripts_built_the_content(
        rendered: tuple[CrawlResult, dict[str, int]], server: DemoServer) -> None:
    """Rendered pages are read from their fetched bytes; the js-rendered layout's article body exists only in
    the DOM, so those pages (and only those) are read from it (extraction/process.py, step 0)."""
    result, _ = rendered
    pages = _pages(server)
    sources = {}
    for item in result.items:
        page = pages[item["canonical_url"]]
        sources[item["canonical_url"]] = item["text_source"]
        archived = capture(item)
        assert item["rendered"] and archived.rendered is not None and item["render_ms"] > 0
        if page.layout == "js-rendered":
            assert item["text_source"] == "rendered" and page.body[0][:30] in item["text"]
            assert page.body[0][:30] in archived.rendered and archived.rendered != archived.body.decode()
    assert list(sources.values()).count("rendered") == 8 == result.stats["extract/source/rendered"]
    assert result.stats["extract/source/raw"] == len(result.items) - 8


@pytest.mark.parametrize("mode", ["rendered", "plain"])
def test_every_record_points_at_its_capture_in_warc_files_warcio_accepts(
        mode: str, request: pytest.FixtureRequest, server: DemoServer) -> None:
    """The WARC archive (issue 18): warcio's own check and index accept every file; each record's warc_offset is
    its page's response record in the index, and the capture holds the bytes the server sent."""
    result, _ = request.getfixturevalue(mode)
    files = sorted((result.archive / "warc").glob("*.warc.gz"))
    assert files and {item["warc_file"] for item in result.items} <= {str(path) for path in files}
    responses: dict[tuple[str, int], tuple[int, str]] = {}
    for path in files:
        assert subprocess.run([WARCIO, "check", str(path)], capture_output=True, timeout=120).returncode == 0
        index = subprocess.run([WARCIO, "index", "-f", "offset,length,warc-type,warc-target-uri", str(path)],
                               capture_output=True, text=True, timeout=120, check=True).stdout
        for entry in map(json.loads, index.splitlines()):
            if entry["warc-type"] == "response":
                responses[(str(path), int(entry["offset"]))] = (int(entry["length"]), entry["warc-target-uri"])
    assert len(responses) == len(result.items) == result.stats["archive/warc/captures"]
    pages = {server.url + path: page for site in server.sites for path, page in site.pages.items()}
    for item in result.items:
        assert responses[(item["warc_file"], item["warc_offset"])] == (item["warc_length"], item["final_url"])
        assert item["html_file"] is None and item["fetch_ms"] is not None
    for item in result.items[:10]:
        archived = capture(item)
        assert archived.body == pages[item["canonical_url"]].body_bytes and archived.http.status == 200
        assert (archived.screenshot is not None) == (mode == "rendered")


def test_jsonl_is_utf8_with_chinese_unescaped(rendered: tuple[CrawlResult, dict[str, int]]) -> None:
    result, _ = rendered
    raw = (result.archive.parent / "items.jsonl").read_bytes().decode("utf-8")
    assert "江城日报" in raw and "\\u6c5f" not in raw


@pytest.mark.parametrize("mode", ["rendered", "plain"])
def test_page_types_route_list_and_article_pages(mode: str, request: pytest.FixtureRequest,
                                                 server: DemoServer) -> None:
    """Pages are typed by the DOM/URL model (the screenshot CNN joins only with PAGETYPE_FUSION on); list
    pages get the list extractor's entries (the page's links, in order,
    taken before template cleaning), the text of every page comes from the block classifier
    (ROUTE_LISTS off). Once a URL shape of a site has enough agreeing votes, the site evidence types
    its pages ("site"). The demo sites are among the models' training pages, so this is routing,
    not accuracy (held-out accuracy: tests/test_pagetype_heldout.py)."""
    result, _ = request.getfixturevalue(mode)
    pages = _pages(server)
    wrong = []
    for item in result.items:
        page = pages[item["canonical_url"]]
        assert item["page_type_source"] in ("dom", "site")
        assert 0.34 < item["page_type_confidence"] <= 1.0
        if page.page_type in ("article", "list") and item["page_type"] != page.page_type:
            wrong.append((item["canonical_url"], page.page_type, item["page_type"]))
        assert item["extraction_method"] == "stack" and item["block_stats"] is not None
        if item["page_type"] == "list":
            if page.page_type == "list":
                got = [entry["url"] for entry in item["entries"]]
                expected = [server.url + link for link in page.links]
                assert [url for url in got if url in expected] == expected, item["canonical_url"]
        else:
            assert item["entries"] is None
    assert not wrong
    for kind in ("article", "list"):
        assert result.stats.get(f"pagetype/{kind}", 0) == sum(item["page_type"] == kind for item in result.items)
    assert result.stats.get("pagetype/site/override", 0) == sum(item["page_type_source"] == "site"
                                                                for item in result.items)
    assert result.stats.get("pagetype/site/votes", 0) >= len(result.items)


@pytest.mark.parametrize("mode", ["plain"])
def test_site_evidence_is_stored_with_the_templates_and_types_the_next_run(
        mode: str, request: pytest.FixtureRequest, server: DemoServer, tmp_path: Path) -> None:
    """The page-type votes of a crawl are in its template store, per site and URL shape; a second crawl
    with that store (frozen: TEMPLATES_LEARN off) sends most pages with the site's type for their shape
    (the worker counts whether it agreed with the page-level model or overrode it), and every page it
    typed by the site is typed right."""
    first, _ = request.getfixturevalue(mode)
    store = open_store(first.archive.parent / "templates_db")
    try:
        votes = store.page_type_votes("en-gazette")
    finally:
        store.close()
    article_shapes = {shape for shape, (article, listing, other) in votes.items() if article >= 9 and not listing}
    assert article_shapes, votes
    second = run_crawl(tmp_path, demo_sites(server.url, render=False),
                       settings={"TEMPLATES_STORE": str(first.archive.parent / "templates_db"),
                                 "TEMPLATES_LEARN": "False", "CRAWL_STATE_ENABLED": "False"})
    assert second.returncode == 0, second.log[-3000:]
    pages = _pages(server)
    hinted = second.stats.get("pagetype/site/agree", 0) + second.stats.get("pagetype/site/override", 0)
    assert hinted == sum(value for key, value in second.stats.items() if key.startswith("pagetype/site/hint/"))
    assert hinted >= 0.5 * sum(pages[item["canonical_url"]].page_type == "article" for item in second.items)
    by_site = [item for item in second.items if item["page_type_source"] == "site"]
    assert all(item["page_type"] == pages[item["canonical_url"]].page_type for item in by_site)
    assert "pagetype/site/votes" not in second.stats  # frozen: applied, not learned


CONTENT_FIELDS = ("title", "lang", "page_type", "page_type_confidence", "page_type_source", "extraction_method",
                  "text", "entries", "template_cleaning", "block_stats", "models", "error")


@pytest.mark.parametrize("mode", ["rendered", "plain"])
def test_extract_of_an_archived_page_gives_the_crawl_record(mode: str, request: pytest.FixtureRequest,
                                                            server: DemoServer, tmp_path: Path) -> None:
    """The crawl and `scrapy extract` run one flow: the archived page (with its screenshot, URL and site)
    extracts to the crawl's record; the archived HTML is the one the text came from (``text_source``: the
    fetched bytes, or the rendered DOM of a page whose content scripts built). The templates are frozen
    first: a second crawl applies the first crawl's store without learning, so both sides see the same
    templates."""
    first, _ = request.getfixturevalue(mode)
    store = first.archive.parent / "templates_db"
    # A full crawl (no crawl state): the first crawl's state, beside its templates, knows every page.
    second = run_crawl(tmp_path, demo_sites(server.url, render=mode == "rendered"),
                       settings={"TEMPLATES_STORE": str(store), "TEMPLATES_LEARN": "False",
                                 "CRAWL_STATE_ENABLED": "False", "ARCHIVE_FORMAT": "files"})
    assert second.returncode == 0, second.log[-3000:]
    chosen = []
    for site in ("en-gazette", "zh-jiangcheng"):  # a list, an article and a cleaned page of each site
        items = [item for item in second.items if item["site"] == site and item["error"] is None]
        chosen += [next(i for i in items if i["page_type"] == "list"),
                   next(i for i in items if i["page_type"] == "article"),
                   next(i for i in items if (i["template_cleaning"] or {}).get("removed_nodes"))]
        if mode == "rendered":
            chosen.append(next(i for i in items if i["text_source"] == "rendered"))
    for item in chosen:
        source = item["rendered_file"] if item["text_source"] == "rendered" else item["html_file"]
        command = [sys.executable, "-m", "scrapy", "extract", source, "--url", item["final_url"],
                   "--site", item["site"], "-s", f"TEMPLATES_STORE={store}", "--nolog"]
        if item["screenshot_file"]:
            command += ["--screenshot", item["screenshot_file"]]
        done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=120, check=True)
        record = json.loads(done.stdout)
        for field in CONTENT_FIELDS:
            assert record[field] == item[field], (field, item["final_url"])


@pytest.mark.parametrize("mode", ["rendered", "plain"])
def test_every_demo_article_carries_its_author_and_date(mode: str, request: pytest.FixtureRequest,
                                                        server: DemoServer) -> None:
    """The generator's byline: the author exactly, the publication time to the minute the page prints."""
    result, _ = request.getfixturevalue(mode)
    expected = _pages(server)
    articles = [item for item in result.items if expected[item["canonical_url"]].page_type == "article"]
    assert len(articles) == sum(page.page_type == "article" for page in expected.values())
    for item in articles:
        page = expected[item["canonical_url"]]
        assert item["authors"] == [page.author], item["canonical_url"]
        assert (item["date_published"] or "")[:16] == page.published[:16], item["canonical_url"]
        assert item["title"] == page.title and item["lang"] in ("en", "zh-Hans"), item["canonical_url"]


@pytest.mark.parametrize("mode", ["rendered", "plain"])
def test_no_demo_page_is_marked_a_duplicate(mode: str, request: pytest.FixtureRequest) -> None:
    """The demo has no copies; its generated articles share template sentences but are different articles."""
    result, _ = request.getfixturevalue(mode)
    assert [(item["url"], item["duplicate_of"]) for item in result.items if item["duplicate_of"]] == []
    assert {item["change"] for item in result.items} == {"new"}
