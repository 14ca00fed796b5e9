"""The crawl state store: rounds, the queue, completed pages, aliases, the duplicate index, bad files."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

import pytest

from templates_db.state import CrawlStateError, PageOutcome, QueuedPage, SQLiteCrawlState, open_state, state_path
from templates_db.store import TemplateStoreError, open_store


def _done(url: str, round_number: int = 1, **fields: object) -> PageOutcome:
    values: dict[str, object] = {"site": "s", "status": "done", "depth": 1, "round": round_number,
                                 "fetched_at": time.time(), **fields}
    return PageOutcome(url=url, **values)  # type: ignore[arg-type]


def test_rounds_resume_until_a_run_finishes(location: str) -> None:
    state = open_state(location)
    first = state.begin_run(["a", "b"])
    assert first["a"].number == 1 and not first["a"].resumed
    state.end_run(first, finished=False)  # killed, Ctrl-C, CLOSESPIDER
    again = state.begin_run(["a", "b"])
    assert again["a"].number == 1 and again["a"].resumed
    state.end_run(again, finished=True)
    third = state.begin_run(["a"])
    assert third["a"].number == 2 and not third["a"].resumed


def test_queue_and_completion(location: str) -> None:
    state = open_state(location)
    state.begin_run(["s"])
    state.enqueue([QueuedPage("http://x/1", "s", 1, "http://x/1?utm_source=a", "2026-01-02"),
                   QueuedPage("http://x/2", "s", 2)])
    assert [q.url for q in state.queued("s", 3)] == ["http://x/1", "http://x/2"]
    assert state.queued("s", 3)[0].listed_date == "2026-01-02"
    state.complete(_done("http://x/1", text_hash="h1", page_type="article", etag='"e1"',
                         aliases=(("http://x/amp/1", "amp"),)))
    assert [q.url for q in state.queued("s", 3)] == ["http://x/2"]
    known = state.known(["http://x/1", "http://x/amp/1", "http://x/3"])
    assert known["http://x/1"].status == "done" and known["http://x/1"].etag == '"e1"'
    assert known["http://x/amp/1"].url == "http://x/1"  # an alias resolves to the page fetched
    assert "http://x/3" not in known


def test_transient_failures_are_retried_a_bounded_number_of_times(location: str) -> None:
    state = open_state(location)
    state.enqueue([QueuedPage("http://x/1", "s", 1)])
    for attempt in range(1, 4):
        state.complete(_done("http://x/1", status="failed", error="timeout"))
        assert state.known(["http://x/1"])["http://x/1"].attempts == attempt
        assert bool(state.queued("s", 3)) == (attempt < 3)


def test_a_done_hub_that_fails_stays_a_hub(location: str) -> None:
    state = open_state(location)
    state.complete(_done("http://x/", round_number=1, page_type="list"))
    state.complete(_done("http://x/", round_number=2, status="failed", error="timeout"))
    page = state.known(["http://x/"])["http://x/"]
    assert page.status == "done" and page.round == 1 and page.page_type == "list"


def test_due_hubs_by_round_and_interval(location: str) -> None:
    state = open_state(location)
    state.complete(_done("http://x/", round_number=1, page_type="other"))  # a start page, whatever its type
    state.complete(_done("http://x/list/2", round_number=1, page_type="list"))
    state.complete(_done("http://x/article", round_number=1, page_type="article"))
    state.complete(_done("http://x/list/3", round_number=2, page_type="list"))  # visited in this round
    due = state.due_hubs("s", 2, time.time() + 1, ["http://x/"])
    assert [hub.url for hub in due] == ["http://x/", "http://x/list/2"]
    assert state.due_hubs("s", 2, time.time() - 3600, ["http://x/"]) == []  # revisit interval not over


def test_feeds_and_sitemaps_visited_once_per_round(location: str) -> None:
    state = open_state(location)
    assert state.aux_due("http://x/feed", 1, time.time())
    state.visit_aux("http://x/feed", "s", "feed", 1)
    assert not state.aux_due("http://x/feed", 1, time.time() + 1)
    assert state.aux_due("http://x/feed", 2, time.time() + 1)
    assert not state.aux_due("http://x/feed", 2, time.time() - 60)


def test_duplicate_index_storage(location: str) -> None:
    from extraction.dedup import Fingerprint

    state = open_state(location)
    fp = Fingerprint("abc", b"\x01" * 16)
    state.add("http://x/1", fp, [b"k1", b"k2"])
    assert state.by_hash("abc") == "http://x/1"
    assert state.candidates([b"k2", b"zz"]) == [("http://x/1", b"\x01" * 16)]
    state.add("http://x/1", Fingerprint("def", b"\x02" * 16), [b"k3"])  # replaced, not added
    assert state.candidates([b"k1"]) == [] and state.by_hash("abc") is None


def test_state_survives_reopening_and_sits_beside_templates(tmp_path: Path) -> None:
    assert state_path(tmp_path) == tmp_path / "crawl_state.sqlite3"
    state = open_state(tmp_path)
    state.complete(_done("http://x/1"))
    state.close()
    templates = open_store(tmp_path)  # the template store in the same folder is another file
    templates.close()
    assert open_state(tmp_path).known(["http://x/1"])["http://x/1"].status == "done"


def test_corrupt_state_is_refused_and_left_untouched(tmp_path: Path) -> None:
    path = tmp_path / "crawl_state.sqlite3"
    path.write_bytes(b"SQLite format 3\x00" + b"\xff" * 4000)
    with pytest.raises(CrawlStateError, match="corrupt"):
        open_state(tmp_path)
    assert path.read_bytes()[16:20] == b"\xff" * 4


def test_a_template_store_is_not_a_crawl_state(tmp_path: Path) -> None:
    open_store(tmp_path / "t.sqlite3").close()
    with pytest.raises(CrawlStateError, match="not a crawl state"):
        open_state(tmp_path / "t.sqlite3")
    open_state(tmp_path / "c.sqlite3").close()
    with pytest.raises(TemplateStoreError, match="not a template store"):
        open_store(tmp_path / "c.sqlite3")


def test_locked_state_fails_within_its_timeout(tmp_path: Path) -> None:
    state = open_state(tmp_path, timeout=0.2)
    holder = sqlite3.connect(tmp_path / "crawl_state.sqlite3")
    holder.execute("BEGIN EXCLUSIVE")
    try:
        started = time.monotonic()
        with pytest.raises(CrawlStateError, match="locked"):
            state.begin_run(["s"])
        assert time.monotonic() - started < 5
    finally:
        holder.rollback()
        holder.close()


def test_a_killed_runs_exported_lines_after_its_last_completed_page_are_recovered(tmp_path: Path,
                                                                                 location: str) -> None:
    from crawler.state import CrawlStateConfig, CrawlStateManager

    feed = tmp_path / "run1.jsonl"
    stats: list[str] = []
    first = CrawlStateManager(CrawlStateConfig(), location, stats.append)
    first.begin(["s"])
    assert first.state is not None
    line = b'{"url": "http://x/1", "site": "s", "depth": 1, "status": 200, "page_type": "article"}\n'
    feed.write_bytes(line)
    first.complete(_done("http://x/1", exported=True, feed=(str(feed), len(line))))
    # Killed after these lines were written and before their pages were completed; the last line is cut.
    cut = b'{"url": "http://x/4", "si'
    feed.write_bytes(line + b'{"url": "http://x/2", "site": "s", "depth": 2, "status": 200}\n'
                     + b'{"url": "http://x/3", "site": "s", "depth": 2, "status": 200}\n' + cut)
    first.state.close()  # no end(): the kill

    stats.clear()
    second = CrawlStateManager(CrawlStateConfig(), location, stats.append)
    second.begin(["s"])
    known = second.known(["http://x/1", "http://x/2", "http://x/3", "http://x/4"])
    assert {url: page.status for url, page in known.items()} == {
        "http://x/1": "done", "http://x/2": "done", "http://x/3": "done"}
    assert stats.count("state/recovered_exports") == 2
    assert second.state is not None and second.state.feed_mark() == (str(feed), feed.stat().st_size - len(cut))
    second.end("finished")
    # Recovered once: a third run finds nothing after the mark but the cut line.
    stats.clear()
    third = CrawlStateManager(CrawlStateConfig(), location, stats.append)
    third.begin(["s"])
    assert "state/recovered_exports" not in stats
    third.end("finished")


def test_a_stored_record_that_is_no_json_is_shown_as_stored(tmp_path: Path) -> None:
    """``scrapy state show`` read a damaged row's record with json.loads, and a traceback was all it showed."""
    path = tmp_path / "s.sqlite3"
    state = SQLiteCrawlState(path)
    state.begin_run(["s"])
    state.complete(_done("http://x/1", text_hash="h1", page_type="article"))
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE pages SET record = '{bad json' WHERE url = 'http://x/1'")
    conn.close()
    page = state.page("http://x/1")
    assert page is not None and page["record_unreadable"] and page["record"] == "{bad json"
