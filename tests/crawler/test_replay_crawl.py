"""Real dataset pages crawled at their original URLs (evaluation/replay.py), rendered and over plain HTTP.

About 20 pages chosen by their bytes: undeclared UTF-8 (English and Chinese), GBK/GB18030 with and
without a ``<meta>`` charset, Big5, and declared UTF-8 and Western pages. The replay proxy answers
them with ``Content-Type: text/html`` and no charset, as a server that declares nothing does. Each
page's record must have non-empty text, that text must be what ``process()`` gives offline for the
same bytes and URL (``scrapy extract``'s path, templates off in both), and it must carry no
mojibake (UTF-8 read as windows-1252, or U+FFFD).
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest
from scrapy.utils.project import get_project_settings

from evaluation.datasets import datasets_dir
from evaluation.replay import ReplayPage, ReplayServer, charset_kind, mojibake, replay_pages, site_entries
from extraction.page import Page
from extraction.process import Context, process
from tests.crawl_helpers import needs_chromium, run_crawl

pytestmark = [pytest.mark.browser, pytest.mark.datasets, needs_chromium]

# Where the pages come from: the Chinese sets first (their pages without a URL get one on the site
# their links name), then English sets with URLs.
ZH_DATASETS = ("chinese-wced-dev", "gne-chinese")
EN_DATASETS = ("l3s-gn1", "trafilatura-eval", "cleaneval", "wcxb-dev")
# Pages wanted per (charset kind, language group); the datasets hold fewer of some (see quota_report).
QUOTAS: dict[tuple[str, str], int] = {
    ("undeclared-utf-8", "zh"): 3,
    ("undeclared-utf-8", "en"): 3,
    ("undeclared-gbk", "zh"): 4,
    ("declared-gbk", "zh"): 2,
    ("declared-gbk", "en"): 2,
    ("undeclared-big5", "zh"): 1,
    ("undeclared-big5", "en"): 1,
    ("declared-big5", "zh"): 1,
    ("declared-utf-8", "zh"): 1,
    ("declared-utf-8", "en"): 1,
    ("declared-other", "en"): 1,
    ("undeclared-other", "en"): 1,
}
MAX_BODY_BYTES = 400_000  # keeps the crawl short; the 700 kB WeChat pages add nothing here
SETTINGS = {"TEMPLATES_ENABLED": "False"}  # template learning depends on page order: off in both


def offline_context() -> Context:
    """Return the context ``scrapy extract --no-templates`` builds from the project settings."""
    settings = get_project_settings()
    settings.setdict(SETTINGS, priority="cmdline")
    return Context.from_settings(settings, templates=None)


def offline_text(context: Context, body: bytes, url: str) -> str:
    """Return the text ``process()`` gives for the page as the replay serves it."""
    return process(Page(body, url, "text/html"), context).text


@cache
def chosen_pages() -> tuple[tuple[ReplayPage, str, str], ...]:
    """Return ``(page, charset kind, offline text)`` of the chosen pages, in a fixed order.

    Pages are taken in dataset and reader order while their (kind, language) quota lasts, and only
    when their offline text is non-empty and clean: the test compares the crawl with it.
    """
    root = datasets_dir()
    names = [name for name in (*ZH_DATASETS, *EN_DATASETS) if (root / name).is_dir()]
    if not names:
        pytest.skip(f"no dataset folder under {root} (set DATASETS_DIR)")
    context = offline_context()
    left = dict(QUOTAS)
    chosen: list[tuple[ReplayPage, str, str]] = []
    hosts: set[str] = set()
    for page in replay_pages(names, guess_urls=True):
        if len(page.body) > MAX_BODY_BYTES or page.host in hosts:  # one page per host: sites stay independent
            continue
        key = (charset_kind(page.body), "zh" if page.dataset in ZH_DATASETS else "en")
        if left.get(key, 0) <= 0:
            continue
        text = offline_text(context, page.body, page.url)
        if not text.strip() or mojibake(text):
            continue
        left[key] -= 1
        hosts.add(page.host)
        chosen.append((page, key[0], text))
    return tuple(chosen)


def test_the_chosen_pages_cover_the_charsets() -> None:
    kinds = {kind for _, kind, _ in chosen_pages()}
    assert {"undeclared-utf-8", "undeclared-gbk", "declared-gbk"} <= kinds, kinds
    assert len(chosen_pages()) >= 15


def replay_crawl(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, render: bool) -> list[str]:
    """Crawl the chosen pages through the replay proxy; return one line per page that went wrong."""
    chosen = chosen_pages()
    pages = [page for page, _, _ in chosen]
    for name in ("no_proxy", "NO_PROXY", "https_proxy", "HTTPS_PROXY", "HTTP_PROXY"):
        monkeypatch.delenv(name, raising=False)
    with ReplayServer(pages) as server:
        monkeypatch.setenv("http_proxy", server.proxy_url)  # the crawl subprocess inherits it
        result = run_crawl(tmp_path, site_entries(pages, render=render), SETTINGS, timeout=900)
    assert result.returncode == 0, result.log[-3000:]
    # A crawl whose sites are not rendered starts no Playwright driver: Scrapy's own handler downloads.
    assert ("[scrapy-playwright] INFO: Starting download handler" in result.log) == render
    records = {item["url"]: item for item in result.items}
    problems = []
    for page, kind, expected in chosen:
        record = records.get(page.url)
        label = f"{page.dataset}/{page.key} ({kind}) {page.url}"
        if record is None:
            problems.append(f"{label}: no record")
            continue
        if record.get("error") or record.get("status") != 200:
            problems.append(f"{label}: status {record.get('status')} error {record.get('error')}")
            continue
        text = record["text"] or ""
        encoding = f"encoding {record['encoding']}/{record['encoding_source']}"
        if record["rendered"] != render:
            problems.append(f"{label}: rendered {record['rendered']}")
        found = mojibake(text)
        if not text.strip():
            problems.append(f"{label}: empty text")
        elif found:
            problems.append(f"{label}: mojibake {found[:5]} ({encoding})")
        elif text != expected:
            problems.append(f"{label}: text differs from offline ({len(text)} vs {len(expected)} chars; {encoding})")
    return problems


def test_rendered_replay_gives_the_offline_text(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    problems = replay_crawl(tmp_path, monkeypatch, render=True)
    assert not problems, f"{len(problems)} of {len(chosen_pages())} pages:\n" + "\n".join(problems)


def test_plain_replay_gives_the_offline_text(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    problems = replay_crawl(tmp_path, monkeypatch, render=False)
    assert not problems, f"{len(problems)} of {len(chosen_pages())} pages:\n" + "\n".join(problems)
