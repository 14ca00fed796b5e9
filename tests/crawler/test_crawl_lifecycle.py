"""Crawl lifecycle: the embedded demo default, resuming with JOBDIR, a browser crash,
per-site limits, and a bad site list stopping the command."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from demo.server import DemoServer
from tests.crawl_helpers import REPO, needs_chromium, run_crawl, screenshot
from tests.crawler.test_crawl_demo import demo_sites

pytestmark = [needs_chromium, pytest.mark.browser]


@pytest.fixture(scope="module")
def server() -> Iterator[DemoServer]:
    with DemoServer() as running:
        yield running


def _en_pages(server: DemoServer) -> set[str]:
    return {server.url + path for path in server.sites[0].pages}


def test_default_site_list_serves_the_embedded_demo(tmp_path: Path) -> None:
    result = run_crawl(tmp_path, None, {"RENDER_ENABLED": "False", "CLOSESPIDER_ITEMCOUNT": "10"})
    assert result.returncode == 0, result.log[-3000:]
    assert "Serving the bundled demo sites at http://127.0.0.1:" in result.log
    assert len(result.items) >= 10
    assert {item["site"] for item in result.items} <= {"en-gazette", "zh-jiangcheng"}
    assert all(item["error"] is None for item in result.items)


def test_jobdir_resume_fetches_each_page_once(server: DemoServer, tmp_path: Path) -> None:
    sites = demo_sites(server.url, render=False)[:1]
    settings = {"JOBDIR": str(tmp_path / "job"), "CONCURRENT_REQUESTS": "2"}
    server.reset_hits()
    # Stopped by pages fetched: items are processed in workers after their pages are fetched, so an item
    # count would be reached only after more pages had been fetched.
    first = run_crawl(tmp_path, sites, {**settings, "CLOSESPIDER_PAGECOUNT": "15"}, name="first")
    assert first.returncode == 0 and first.stats["finish_reason"] == "closespider_pagecount", first.log[-3000:]
    second = run_crawl(tmp_path, sites, settings, name="second")
    assert second.returncode == 0 and second.stats["finish_reason"] == "finished", second.log[-3000:]
    urls = [item["canonical_url"] for item in first.items + second.items]
    assert 10 <= len(first.items) < len(urls)  # stopped part way (robots.txt, feed and sitemap are pages too)
    assert len(urls) == len(set(urls)), "a page was crawled in both runs"
    assert set(urls) == _en_pages(server)
    for url in _en_pages(server):
        assert server.hits[url[len(server.url):]] == 1


def test_per_site_page_and_depth_limits(server: DemoServer, tmp_path: Path) -> None:
    sites = demo_sites(server.url, render=False)
    for site in sites:
        site.pop("feeds"), site.pop("sitemaps")
    sites[0]["max_pages"] = 7
    sites[1]["max_depth"] = 1
    result = run_crawl(tmp_path, sites)
    by_site = {name: [i for i in result.items if i["site"] == name] for name in ("en-gazette", "zh-jiangcheng")}
    assert len(by_site["en-gazette"]) == 7
    assert result.stats["crawl/skipped/max_pages/en-gazette"] > 0
    assert max(item["depth"] for item in by_site["zh-jiangcheng"]) == 1
    assert result.stats["crawl/skipped/max_depth"] > 0
    assert len(by_site["zh-jiangcheng"]) < len(server.sites[1].pages)


def test_crawl_survives_a_browser_crash(server: DemoServer, tmp_path: Path) -> None:
    sites = demo_sites(server.url, render=True)[:1]
    settings = {
        "EXTENSIONS": '{"crawler.extensions.StatsFileExtension": 500, '
                      '"tests.crawl_helpers.KillBrowserAfterItems": 600}',
        "KILL_BROWSER_AFTER_ITEMS": "8",
        "RENDER_DEADLINE": "45",
    }
    result = run_crawl(tmp_path, sites, settings)
    assert result.returncode == 0, result.log[-3000:]
    assert result.stats["finish_reason"] == "finished"
    assert result.stats["playwright/browser_count"] >= 2, "the browser was not relaunched"
    urls = [item["canonical_url"] for item in result.items]
    assert len(urls) == len(set(urls)) == result.stats["crawl/scheduled"] - 1  # one robots-forbidden page
    assert set(urls) == _en_pages(server)
    failed = [item for item in result.items if item["error"]]
    for item in failed:
        assert item["error"] in ("browser_crash", "render_stuck")
    good = [item for item in result.items if not item["error"]]
    assert len(good) >= len(urls) - 4  # at most the pages in flight were lost
    # Pages in flight are rendered again; one whose retry failed too keeps its HTML and says what it lacks.
    for item in good:
        assert screenshot(item) or {"screenshot_failed", "capture_failed"} & set(item["flags"])
    assert sum(1 for item in good if screenshot(item)) >= len(good) - 4


def test_bad_site_list_stops_with_the_field_named(tmp_path: Path) -> None:
    bad = tmp_path / "sites.yaml"
    bad.write_text('sites:\n  - name: x\n    start_urls: ["http://127.0.0.1:9/"]\n'
                   '    allowed_prefixes: ["http://127.0.0.1:9/"]\n    max_depth: 0\n', encoding="utf-8")
    process = subprocess.run([sys.executable, "-m", "scrapy", "crawl", "news_sites", "-a", f"sites={bad}"],
                             cwd=REPO, capture_output=True, text=True, timeout=120, check=False)
    assert process.returncode == 2
    assert f"error: {bad}: site #1 'x': field 'max_depth': must be a positive integer, got 0" in process.stderr
    assert "Traceback" not in process.stderr
