"""Bad input never crashes the crawl: each case becomes an item with ``error`` (or a good
item where the page is usable after all) and is counted in stats, rendered and plain."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from demo import BAD_CASES
from demo.server import DemoServer
from tests.crawl_helpers import CrawlResult, needs_chromium, run_crawl, screenshot

pytestmark = [needs_chromium, pytest.mark.browser]

MAXSIZE = 1024 * 1024  # /bad/huge is 12 MiB
# Chromium needs ~10 s to parse the 12 MiB page before its size can be checked, so the
# navigation timeout is above that and the slow page waits longer than either timeout.
SLOW_SECONDS = 45
BAD_SETTINGS = {
    "DOWNLOAD_TIMEOUT": "4",
    "PLAYWRIGHT_DEFAULT_NAVIGATION_TIMEOUT": "30000",
    "RENDER_LOAD_TIMEOUT": "2",
    "DOWNLOAD_MAXSIZE": str(MAXSIZE),
    "DOWNLOAD_WARNSIZE": "0",
}
# Cases whose page is readable: the item has no error and the known text is in it.
READABLE = ["never-loads", "gbk-undeclared", "gb18030-undeclared", "big5-undeclared", "malformed",
            "deep-nesting"]
# Cases that fail, with the reason expected in ``error`` (same in both modes).
FAILING = {
    "404": "http_404",
    "500": "http_500",
    "redirect-loop": "redirect_loop",
    "slow": "timeout",
    "binary": "not_html",
    "doc.pdf": "not_html",
    "image.png": "not_html",
    "huge": "too_large",
}


def _path(name: str) -> str:
    return BAD_CASES[name].path + (f"?seconds={SLOW_SECONDS}" if name == "slow" else "")


@pytest.fixture(scope="module")
def server() -> Iterator[DemoServer]:
    with DemoServer() as running:
        yield running


def _crawl(server: DemoServer, tmp_path_factory: pytest.TempPathFactory, render: bool) -> CrawlResult:
    names = [*READABLE, *FAILING, "empty"]
    sites = [{"name": "bad", "render": render, "allowed_prefixes": [f"{server.url}/bad/"],
              "start_urls": [server.url + _path(name) for name in names]}]
    result = run_crawl(tmp_path_factory.mktemp("bad"), sites, BAD_SETTINGS)
    assert result.returncode == 0, result.log[-3000:]
    assert "Traceback" not in result.log, result.log
    return result


@pytest.fixture(scope="module")
def rendered(server: DemoServer, tmp_path_factory: pytest.TempPathFactory) -> CrawlResult:
    return _crawl(server, tmp_path_factory, render=True)


@pytest.fixture(scope="module")
def plain(server: DemoServer, tmp_path_factory: pytest.TempPathFactory) -> CrawlResult:
    return _crawl(server, tmp_path_factory, render=False)


def _item(result: CrawlResult, name: str) -> dict[str, Any]:
    path = BAD_CASES[name].path
    matches = [item for item in result.items if item["canonical_url"].split("?")[0].endswith(path)]
    assert len(matches) == 1, f"{name}: {len(matches)} items"
    return matches[0]


MODES = ["rendered", "plain"]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", sorted(FAILING))
def test_failing_case_is_an_error_item_and_counted(mode: str, name: str, request: pytest.FixtureRequest) -> None:
    result: CrawlResult = request.getfixturevalue(mode)
    item = _item(result, name)
    assert item["error"] == FAILING[name], item
    assert item["text"] == ""
    assert result.stats.get(f"crawl/error/{FAILING[name]}", 0) >= 1
    if name in ("404", "500"):
        assert item["status"] == BAD_CASES[name].status


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", READABLE)
def test_readable_case_keeps_its_text(mode: str, name: str, request: pytest.FixtureRequest) -> None:
    result: CrawlResult = request.getfixturevalue(mode)
    item = _item(result, name)
    assert item["error"] is None
    assert BAD_CASES[name].expected_text in item["text"]


@pytest.mark.parametrize("mode", MODES)
def test_undeclared_chinese_charsets(mode: str, request: pytest.FixtureRequest) -> None:
    result: CrawlResult = request.getfixturevalue(mode)
    for name in ("gbk-undeclared", "gb18030-undeclared", "big5-undeclared"):
        item = _item(result, name)
        assert item["lang"] in ("zh-Hans", "zh-Hant")  # identified from the text
        # Rendered too: the text comes from the fetched bytes, decoded by the project's detection (and
        # Chromium was served the page with that charset).
        assert item["encoding_source"] == "detected" and item["text_source"] == "raw"
        assert item["encoding"] in ({"gb18030"} if "gb" in name else {"big5hkscs", "big5"})
    assert result.stats["page/encoding/detected"] == 3


def test_page_that_never_loads_is_captured_with_a_flag(rendered: CrawlResult) -> None:
    item = _item(rendered, "never-loads")
    assert "load_timeout" in item["flags"]
    assert screenshot(item) is not None
    assert rendered.stats["render/load_timeout"] == 1


@pytest.mark.parametrize("mode", MODES)
def test_empty_page(mode: str, request: pytest.FixtureRequest) -> None:
    result: CrawlResult = request.getfixturevalue(mode)
    item = _item(result, "empty")
    # An empty body is refused at the door, rendered or not: the page is fetched over HTTP first and an
    # empty response is never rendered (Chromium would serialise <html><head></head><body></body></html>).
    assert item["text"] == "" and item["error"] == "empty" and not item["rendered"]
    assert result.stats["page/refused/empty"] == 1


@pytest.mark.parametrize("mode", MODES)
def test_every_request_accounted_for(mode: str, request: pytest.FixtureRequest) -> None:
    result: CrawlResult = request.getfixturevalue(mode)
    cases = len(READABLE) + len(FAILING) + 1
    assert len(result.items) == cases == result.stats["crawl/scheduled"]
    errors = sum(v for k, v in result.stats.items() if k.startswith("crawl/error/"))
    assert errors == len(FAILING) + 1  # + the empty page, refused at the door
    assert result.stats["finish_reason"] == "finished"
