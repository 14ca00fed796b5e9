"""``scrapy state``: list, show and forget what the crawl state holds."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from templates_db.state import PageOutcome, QueuedPage, open_state
from tests.crawl_helpers import REPO


def _state(args: list[str], store: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "scrapy", "state", *args, "--store", str(store)], cwd=REPO,
                          capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=120)


def test_list_show_forget(tmp_path: Path) -> None:
    assert "No crawl state" in _state(["list"], tmp_path).stdout
    state = open_state(tmp_path)
    rounds = state.begin_run(["news"])
    state.enqueue([QueuedPage("http://n.test/b", "news", 1)])
    state.complete(PageOutcome(url="http://n.test/a", site="news", status="done", depth=1, round=1,
                               fetched_at=time.time(), page_type="article", exported=True,
                               record={"title": "A"}, aliases=(("http://n.test/amp/a", "amp"),)))
    state.end_run(rounds, finished=False)
    state.close()
    listed = _state(["list"], tmp_path)
    assert listed.returncode == 0
    assert listed.stdout.split("\n")[1].split() == ["news", "1", "(unfinished)", "1", "1", "0", "1", "0"]
    shown = _state(["show", "http://n.test/amp/a"], tmp_path)
    page = json.loads(shown.stdout)
    assert page["url"] == "http://n.test/a" and page["record"] == {"title": "A"}
    assert page["aliases"] == [["http://n.test/amp/a", "amp"]] and page["fetched_at"].endswith("+00:00")
    assert _state(["show", "http://n.test/zzz"], tmp_path).returncode == 1
    assert _state(["forget", "other"], tmp_path).returncode == 1
    forgot = _state(["forget", "news"], tmp_path)
    assert forgot.returncode == 0 and "Forgot 2 page(s)" in forgot.stdout
    assert "No sites" in _state(["list"], tmp_path).stdout


def test_a_zero_length_file_is_no_state_and_reading_leaves_it_so(tmp_path: Path) -> None:
    empty = tmp_path / "crawl_state.sqlite3"
    empty.touch()
    assert "No crawl state" in _state(["list"], tmp_path).stdout
    assert _state(["show", "http://n.test/a"], tmp_path).returncode == 1
    assert empty.stat().st_size == 0


def test_unusable_state_exits_2(tmp_path: Path) -> None:
    (tmp_path / "crawl_state.sqlite3").write_bytes(b"not a database at all" * 100)
    result = _state(["list"], tmp_path)
    assert result.returncode == 2 and "corrupt" in result.stderr


def test_list_shows_each_sites_owner_and_lease_on_a_shared_state(pg_uri: str) -> None:
    from templates_db.pgstate import PostgresCrawlState

    worker = PostgresCrawlState(pg_uri, worker="alpha")
    worker.start_leasing("alpha", 60)
    (claim,) = worker.claim(["news", "sport"], 1, 0.0, 60)
    worker.enqueue([QueuedPage("http://n.test/b", "news", 1, round=1)])
    try:
        listed = subprocess.run([sys.executable, "-m", "scrapy", "state", "list", "--store", pg_uri], cwd=REPO,
                                capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=120)
    finally:
        worker.close()
    assert listed.returncode == 0, listed.stderr
    header, row = listed.stdout.split("\n")[:2]
    assert header.split()[-3:] == ["owner", "lease", "renewed"]
    assert claim.site == "news" and row.split()[:2] == ["news", "1"] and row.split()[-3] == "alpha"
    assert row.split()[-2].endswith("s") and row.split()[-1].endswith("s")  # seconds ago, the database's clock


def test_copy_moves_a_one_machine_state_and_templates_into_postgresql(tmp_path: Path, pg_uri: str) -> None:
    from templates_db.store import Candidate, ParkedBatch, open_store

    state = open_state(tmp_path)
    rounds = state.begin_run(["news"])
    state.enqueue([QueuedPage("http://n.test/b", "news", 1, round=1)])
    state.complete(PageOutcome(url="http://n.test/a", site="news", status="done", depth=1, round=1,
                               fetched_at=time.time(), page_type="article", exported=True, text_hash="h",
                               record={"title": "A"}, aliases=(("http://n.test/amp/a", "amp"),)))
    state.end_run(rounds, finished=True)
    state.close()
    store = open_store(tmp_path)
    store.promote("news", 10, [Candidate("a", "Home", 9), Candidate("p", "© News", 8)])
    store.park("news", ParkedBatch(3, [("a", "Home", 3)]))
    store.close()

    copied = subprocess.run([sys.executable, "-m", "scrapy", "state", "copy", "--to", pg_uri, "--store",
                             str(tmp_path), "--templates", str(tmp_path)], cwd=REPO, capture_output=True, text=True,
                            stdin=subprocess.DEVNULL, timeout=120)
    assert copied.returncode == 0, copied.stderr
    assert "Copied the crawl state" in copied.stdout and "Copied the template store" in copied.stdout
    shared = open_state(pg_uri)
    try:
        assert shared.known(["http://n.test/amp/a"])["http://n.test/amp/a"].url == "http://n.test/a"
        assert [q.url for q in shared.queued("news", 3)] == ["http://n.test/b"]
        assert shared.summary()["news"]["completed_round"] == 1
    finally:
        shared.close()
    templates = open_store(pg_uri)
    try:
        assert [t.text for t in templates.templates("news")] == ["Home", "© News"]
        templates.promote("news", 10, [Candidate("li", "Sport", 10)])  # ids go on after the copied ones
        assert [t.id for t in templates.templates("news")] == [1, 2, 3]
        assert templates.claim("news") == [ParkedBatch(3, [("a", "Home", 3)])]
    finally:
        templates.close()
    again = subprocess.run([sys.executable, "-m", "scrapy", "state", "copy", "--to", pg_uri, "--store",
                            str(tmp_path)], cwd=REPO, capture_output=True, text=True, stdin=subprocess.DEVNULL,
                           timeout=120)
    assert again.returncode == 2 and "already holds rows" in again.stderr  # never merged into a used database
