"""The crawl report of a demo crawl, written at its end and by `scrapy report`, opened in headless Chromium."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from crawler.render import chromium_path
from demo.server import DemoServer
from tests.crawl_helpers import REPO, CrawlResult, needs_chromium, run_crawl
from tests.crawler.test_crawl_demo import demo_sites

pytestmark = [needs_chromium, pytest.mark.browser]

SECTIONS = ("overview", "sites", "page-types", "errors", "changes", "templates", "text", "languages", "timings",
            "sample", "all-stats")


@pytest.fixture(scope="module")
def crawl(tmp_path_factory: pytest.TempPathFactory) -> Iterator[CrawlResult]:
    with DemoServer() as server:
        result = run_crawl(tmp_path_factory.mktemp("report"), demo_sites(server.url, render=True))
    assert result.returncode == 0, result.log[-3000:]
    yield result


def _open(path: Path) -> dict[str, Any]:
    """Open the report in headless Chromium; return what a reader sees of it."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium_path(), args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            errors: list[str] = []
            page.on("pageerror", lambda error: errors.append(str(error)))
            page.on("requestfailed", lambda request: errors.append(request.url))
            page.goto(path.as_uri(), wait_until="load")
            seen = page.evaluate("""() => ({
                sections: [...document.querySelectorAll('section')].map(s => s.id),
                visible: [...document.querySelectorAll('section')].every(s => s.getBoundingClientRect().height > 0),
                images: [...document.images].map(i => [i.className, i.complete && i.naturalWidth > 0]),
                stats: [...document.querySelectorAll('[data-stat]')].map(e => [e.dataset.stat, e.textContent]),
                height: document.body.scrollHeight,
            })""")
            seen["errors"] = errors
            return dict(seen)
        finally:
            browser.close()


def _check(seen: dict[str, Any], stats: dict[str, Any]) -> None:
    assert seen["sections"] == list(SECTIONS) and seen["visible"] and not seen["errors"]
    assert seen["images"] and all(loaded for _, loaded in seen["images"])
    assert sum(kind == "plot" for kind, _ in seen["images"]) == 3  # sites, text and languages, timings
    assert sum(kind == "shot" for kind, _ in seen["images"]) >= 6  # the sample's screenshots, from the WARC files
    assert len(seen["stats"]) > 20
    for key, text in seen["stats"]:
        value = stats[key]
        if isinstance(value, int | float) and not isinstance(value, bool):
            assert float(text.replace(",", "")) == pytest.approx(value, abs=0.006), key
        else:
            assert text == str(value), key


def test_the_crawl_writes_its_report_and_its_numbers_are_the_stats(crawl: CrawlResult) -> None:
    reports = list(crawl.archive.parent.glob("*.report.html"))
    assert [report.name for report in reports] == ["items.report.html"]  # beside its feed, items.jsonl
    seen = _open(reports[0])
    _check(seen, crawl.stats)
    shown = dict(seen["stats"])
    assert shown["item_scraped_count"] == "100" and shown["pagetype/article"] == str(crawl.stats["pagetype/article"])
    for site in ("en-gazette", "zh-jiangcheng"):
        assert shown[f"crawl/site/{site}"] == str(crawl.stats[f"crawl/site/{site}"])


def test_scrapy_report_makes_the_same_report_from_the_outputs(crawl: CrawlResult, tmp_path: Path) -> None:
    feed, stats = crawl.archive.parent / "items.jsonl", crawl.archive.parent / "stats.json"
    out = tmp_path / "again.html"
    done = subprocess.run([sys.executable, "-m", "scrapy", "report", str(feed), "--stats", str(stats), "-o",
                           str(out), "--templates", str(crawl.archive.parent / "templates_db")],
                          cwd=REPO, capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    assert "Report of 100 records" in done.stdout
    _check(_open(out), json.loads(stats.read_text(encoding="utf-8")))
    empty = tmp_path / "empty.jsonl"
    empty.write_text("", encoding="utf-8")
    assert subprocess.run([sys.executable, "-m", "scrapy", "report", str(empty)], cwd=REPO, capture_output=True,
                          timeout=120).returncode == 1
    assert subprocess.run([sys.executable, "-m", "scrapy", "report", str(tmp_path / "missing.jsonl")], cwd=REPO,
                          capture_output=True, timeout=120).returncode == 2


def test_a_stats_file_or_output_of_another_shape_is_an_error_naming_it(tmp_path: Path) -> None:
    feed = tmp_path / "feed.jsonl"
    feed.write_text(json.dumps({"url": "http://a.test/1", "site": "a", "page_type": "article", "text": "x" * 300})
                    + "\n", encoding="utf-8")

    def report(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "scrapy", "report", *args, "--nolog"], cwd=REPO,
                              capture_output=True, text=True, timeout=120, check=False)

    listed = tmp_path / "list.json"
    listed.write_text("[1, 2]", encoding="utf-8")
    done = report(str(feed), "--stats", str(listed), "-o", str(tmp_path / "r.html"))
    assert done.returncode == 2 and "list.json is not a stats file" in done.stderr
    for output in (tmp_path, tmp_path / "feed.jsonl" / "r.html"):
        done = report(str(feed), "-o", str(output))
        assert done.returncode == 2 and "cannot write the report" in done.stderr and "Traceback" not in done.stderr
    assert report(str(tmp_path)).returncode == 2  # a folder given as a feed
    mixed = tmp_path / "mixed.jsonl"
    mixed.write_text(feed.read_text(encoding="utf-8") + "[1, 2]\n7\n", encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "scrapy", "report", str(mixed), "-o", str(tmp_path / "m.html")],
                          cwd=REPO, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0 and "2 lines of" in done.stderr  # JSON, but no records: counted, not silent
    odd = tmp_path / "odd.json"
    odd.write_text(json.dumps({"item_scraped_count": "5", "elapsed_time_seconds": 2, "start_time": "today",
                               "log_count/INFO": 10**400}), encoding="utf-8")
    done = report(str(feed), "--stats", str(odd), "-o", str(tmp_path / "r.html"))
    assert done.returncode == 0, done.stderr
