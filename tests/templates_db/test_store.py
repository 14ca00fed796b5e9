"""Tests of the template library's persistent store (templates_db/store.py)."""

from __future__ import annotations

import json
import multiprocessing
import re
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from templates_db.postgres import is_postgres
from templates_db.store import (
    _MIGRATIONS,
    SCHEMA_VERSION,
    STORE_FILENAME,
    Candidate,
    ParkedBatch,
    SQLiteTemplateStore,
    TemplateStore,
    TemplateStoreError,
    open_store,
    store_exists,
    store_path,
)

SITE = "example.com"
# Concurrency tests: worker processes and the operations each does once they all start together.
WORKERS = 3
ROUNDS = 50
OPENERS, OPEN_ATTEMPTS = 6, 5  # processes opening one new store at once; stores
BATCH_PAGES = 10
# Generous bound on waiting for spawned workers; a hang fails the test instead of blocking the suite.
JOIN_TIMEOUT_S = 120


@pytest.fixture
def store(location: str) -> Iterator[TemplateStore]:
    opened = open_store(location)
    yield opened
    opened.close()


def _by_text(store: TemplateStore, site: str = SITE) -> dict[str, Any]:
    return {t.text: t for t in store.templates(site)}


def test_promote_new_and_existing(store: TemplateStore) -> None:
    assert store.site_state(SITE) is None
    store.promote(SITE, 10, [Candidate("a", "Home", 8), Candidate("p", "© Example", 5)])
    home, footer = store.templates(SITE)
    assert (home.tag, home.text, home.frequency, home.batches, home.share, home.hits) == ("a", "Home", 8, 1, 0.8, 0)
    assert (footer.text, footer.share, footer.generation, footer.retired_at) == ("© Example", 0.5, 0, None)
    assert home.id < footer.id

    store.promote(SITE, 20, [Candidate("a", "Home", 10, template_id=home.id), Candidate("li", "Sport", 20)])
    store.record_hits(SITE, {home.id: 3, footer.id: 1, 999_999: 7})
    store.record_hits(SITE, {home.id: 2})
    templates = _by_text(store)
    assert [t.text for t in store.templates(SITE)] == ["Home", "© Example", "Sport"]
    assert (templates["Home"].frequency, templates["Home"].batches, templates["Home"].share) == (18, 2, 0.8)
    assert templates["Home"].hits == 5
    assert templates["Home"].last_seen >= templates["Home"].first_seen
    assert (templates["© Example"].frequency, templates["© Example"].hits) == (5, 1)
    assert templates["Sport"].share == 1.0

    state = store.site_state(SITE)
    assert state is not None
    assert (state.site, state.generation, state.pages, state.batches, state.drift_events) == (SITE, 0, 30, 2, 0)
    assert state.updated_at >= state.created_at


def test_promote_same_new_text_twice_adds_up(store: TemplateStore) -> None:
    # Two processes that both saw "Home" as new promote it: one row, counts added.
    store.promote(SITE, 10, [Candidate("a", "Home", 4)])
    store.promote(SITE, 10, [Candidate("a", "Home", 6)])
    (home,) = store.templates(SITE)
    assert (home.frequency, home.batches, home.share) == (10, 2, 0.6)


def test_promote_ignores_foreign_or_retired_template_id(store: TemplateStore) -> None:
    store.promote("other.org", 5, [Candidate("a", "Home", 5)])
    (foreign,) = store.templates("other.org")
    store.promote(SITE, 10, [Candidate("a", "Home", 2, template_id=foreign.id)])
    assert store.templates("other.org")[0].frequency == 5
    (mine,) = store.templates(SITE)
    assert (mine.frequency, mine.site) == (2, SITE)

    store.retire(SITE, "layout changed")
    store.promote(SITE, 10, [Candidate("a", "Home", 3, template_id=mine.id)])
    (new,) = store.templates(SITE)
    assert (new.id != mine.id, new.generation, new.frequency) == (True, 1, 3)


def test_promote_rejects_empty_batch(store: TemplateStore) -> None:
    with pytest.raises(ValueError):
        store.promote(SITE, 0, [])


def test_reopen_keeps_templates(tmp_path: Path) -> None:
    first = SQLiteTemplateStore(tmp_path / STORE_FILENAME)
    first.promote(SITE, 4, [Candidate("a", "Home", 4)])
    first.close()
    second = SQLiteTemplateStore(tmp_path / STORE_FILENAME)
    try:
        assert [(t.text, t.frequency) for t in second.templates(SITE)] == [("Home", 4)]
        assert second.site_state(SITE) is not None
    finally:
        second.close()


def test_retire_keeps_history(store: TemplateStore) -> None:
    store.promote(SITE, 10, [Candidate("a", "Home", 9), Candidate("p", "Old footer", 9)])
    assert store.retire(SITE, "match rate fell to 0.1") == 1
    store.promote(SITE, 10, [Candidate("a", "Home", 7)])

    (active,) = store.templates(SITE)
    assert (active.generation, active.frequency, active.retired_at) == (1, 7, None)
    history = store.templates(SITE, include_retired=True)
    assert [(t.text, t.generation) for t in history] == [("Home", 0), ("Old footer", 0), ("Home", 1)]
    assert all(t.retired_at is not None for t in history[:2])

    state = store.site_state(SITE)
    assert state is not None
    assert (state.generation, state.drift_events, state.batches, state.pages) == (1, 1, 2, 20)
    ((at, kind, detail),) = store.events(SITE)
    assert (kind, detail) == ("drift", "match rate fell to 0.1")
    assert at == history[0].retired_at

    assert store.retire(SITE, "again") == 2
    assert [e[2] for e in store.events(SITE)] == ["match rate fell to 0.1", "again"]
    assert store.templates(SITE) == []


def test_retire_unknown_site_creates_state(store: TemplateStore) -> None:
    assert store.retire(SITE, "first") == 1
    state = store.site_state(SITE)
    assert state is not None
    assert (state.generation, state.drift_events, state.pages) == (1, 1, 0)


def test_park_and_claim(store: TemplateStore) -> None:
    store.park(SITE, ParkedBatch(3, [("a", "Home", 3), ("p", "Über uns", 1)]))
    store.park(SITE, ParkedBatch(0, []))  # empty: not stored
    store.park(SITE, ParkedBatch(2, []))
    store.park("other.org", ParkedBatch(1, [("a", "x", 1)]))
    claimed = store.claim(SITE)
    assert claimed == [ParkedBatch(3, [("a", "Home", 3), ("p", "Über uns", 1)]), ParkedBatch(2, [])]
    assert store.claim(SITE) == []
    assert store.claim("other.org") == [ParkedBatch(1, [("a", "x", 1)])]


def test_a_parked_batch_that_cannot_be_read_costs_itself_only(store: TemplateStore,
                                                               caplog: pytest.LogCaptureFixture) -> None:
    """claim() deletes the site's batches and then reads them: one whose counts are not JSON raised there, and the
    good ones were gone with it."""
    store.park(SITE, ParkedBatch(3, [("a", "Home", 3)]))
    with store._transaction() as conn:  # type: ignore[attr-defined]  # damage, on either backend
        conn.execute("INSERT INTO parked (site, pages, tags) VALUES (?, 2, 'not json')", (SITE,))
    store.park(SITE, ParkedBatch(1, [("p", "x", 1)]))
    assert store.claim(SITE) == [ParkedBatch(3, [("a", "Home", 3)]), ParkedBatch(1, [("p", "x", 1)])]
    assert "unreadable, dropped" in caplog.text and store.claim(SITE) == []


def test_sites_summary(store: TemplateStore) -> None:
    store.promote("b.org", 5, [Candidate("a", "Home", 5), Candidate("a", "News", 5)])
    store.retire("b.org", "drift")
    store.promote("b.org", 5, [Candidate("a", "Start", 5)])
    store.promote("a.org", 2, [Candidate("p", "©", 2)])
    summaries = store.sites()
    assert [s.site for s in summaries] == ["a.org", "b.org"]
    b = summaries[1]
    assert (b.generation, b.active, b.retired, b.pages, b.batches, b.drift_events) == (1, 1, 2, 10, 2, 1)
    store.park("c.org", ParkedBatch(2, [("a", "Home", 2)]))  # only a parked batch: listed (and clearable)
    assert [(s.site, s.active, s.pages) for s in store.sites()][2] == ("c.org", 0, 0)


def test_clear_and_export(store: TemplateStore) -> None:
    store.promote(SITE, 10, [Candidate("a", "Home", 9), Candidate("p", "Footer", 9)])
    store.retire(SITE, "drift")
    store.promote(SITE, 10, [Candidate("a", "Home", 8)])
    store.park(SITE, ParkedBatch(2, [("a", "Home", 2)]))
    store.promote("other.org", 1, [Candidate("a", "Home", 1)])

    exported = store.export(SITE)
    assert json.loads(json.dumps(exported)) == exported
    assert (exported["site"], exported["schema_version"], exported["parked_batches"]) == (SITE, SCHEMA_VERSION, 1)
    assert exported["state"]["generation"] == 1
    assert [(t["text"], t["generation"]) for t in exported["templates"]] == [("Home", 0), ("Footer", 0), ("Home", 1)]
    assert [(e["kind"], e["detail"]) for e in exported["events"]] == [("drift", "drift")]

    assert store.clear(SITE) == 3
    assert store.templates(SITE, include_retired=True) == []
    assert (store.site_state(SITE), store.events(SITE), store.claim(SITE)) == (None, [], [])
    assert store.export(SITE) == {
        "site": SITE,
        "schema_version": SCHEMA_VERSION,
        "state": None,
        "templates": [],
        "events": [],
        "parked_batches": 0,
        "page_types": {},
    }
    assert len(store.templates("other.org")) == 1
    assert store.clear(SITE) == 0


def test_changed_sees_other_connections_only(location: str) -> None:
    mine, other = open_store(location), open_store(location)
    try:
        assert mine.changed() is False
        assert mine.changed() is False
        other.promote(SITE, 1, [Candidate("a", "Home", 1)])
        assert mine.changed() is True
        assert mine.changed() is False
        mine.promote(SITE, 1, [Candidate("a", "Home", 1)])
        assert mine.changed() is False
    finally:
        mine.close()
        other.close()


def _promote_worker(path: str, worker: int, shared_ids: tuple[int, int], barrier: Any) -> None:
    home_id, footer_id = shared_ids
    store = open_store(path)
    barrier.wait(JOIN_TIMEOUT_S)
    for i in range(ROUNDS):
        store.promote(
            SITE,
            BATCH_PAGES,
            [
                Candidate("a", f"w{worker}-{i}", 3),  # distinct
                Candidate("p", "shared new", 2),  # new to every worker: the upsert path
                Candidate("a", "Home", 4, template_id=home_id),  # existing
            ],
        )
        store.record_hits(SITE, {home_id: 1, footer_id: 2})
    store.close()


def _run_workers(target: Any, args: list[tuple[Any, ...]]) -> None:
    ctx = multiprocessing.get_context("spawn")
    processes = [ctx.Process(target=target, args=a) for a in args]
    for process in processes:
        process.start()
    for process in processes:
        process.join(JOIN_TIMEOUT_S)
    assert [p.exitcode for p in processes] == [0] * len(processes)


def test_concurrent_processes_lose_nothing(location: str) -> None:
    path = location
    store = open_store(path)
    try:
        store.promote(SITE, BATCH_PAGES, [Candidate("a", "Home", 10), Candidate("p", "Footer", 10)])
        home, footer = store.templates(SITE)
        barrier = multiprocessing.get_context("spawn").Barrier(WORKERS)
        _run_workers(_promote_worker, [(path, w, (home.id, footer.id), barrier) for w in range(WORKERS)])

        promotions = WORKERS * ROUNDS
        state = store.site_state(SITE)
        assert state is not None
        assert (state.pages, state.batches) == (BATCH_PAGES * (promotions + 1), promotions + 1)
        templates = _by_text(store)
        assert len(templates) == 3 + promotions
        assert (templates["Home"].frequency, templates["Home"].batches) == (10 + 4 * promotions, 1 + promotions)
        assert (templates["Home"].hits, templates["Footer"].hits) == (promotions, 2 * promotions)
        assert (templates["shared new"].frequency, templates["shared new"].batches) == (2 * promotions, promotions)
        assert all(templates[f"w{w}-{i}"].frequency == 3 for w in range(WORKERS) for i in range(ROUNDS))
    finally:
        store.close()


def _open_worker(path: str, barrier: Any) -> None:
    barrier.wait(JOIN_TIMEOUT_S)
    store = open_store(path)
    store.promote(SITE, BATCH_PAGES, [Candidate("a", "Home", 3)])
    store.close()


def test_processes_opening_a_new_store_at_once_all_get_it(tmp_path: Path, location: str) -> None:
    """Switching a new file to WAL needs it alone, and a new PostgreSQL schema is made once: the crawl's workers
    open the store at the same moment."""
    # A new SQLite file's switch to WAL fails now and then (retried until it works); PostgreSQL's migration is behind
    # a lock: one attempt there.
    for attempt in range(OPEN_ATTEMPTS if not is_postgres(location) else 1):
        if is_postgres(location):
            _drop_schema(location)
            path = location
        else:
            path = str(tmp_path / str(attempt) / STORE_FILENAME)
        barrier = multiprocessing.get_context("spawn").Barrier(OPENERS)
        _run_workers(_open_worker, [(path, barrier) for _ in range(OPENERS)])
        store = open_store(path)
        try:
            assert _by_text(store)["Home"].frequency == 3 * OPENERS
        finally:
            store.close()


def _claim_worker(path: str, worker: int, barrier: Any, results: Any) -> None:
    store = open_store(path)
    barrier.wait(JOIN_TIMEOUT_S)
    claimed: list[int] = []
    for i in range(ROUNDS):
        store.park(SITE, ParkedBatch(1000 * (worker + 1) + i, [("a", "Home", 1)]))
        claimed += [batch.pages for batch in store.claim(SITE)]
    store.close()
    results.put(claimed)


def test_concurrent_claims_take_each_batch_once(location: str) -> None:
    path = location
    store = open_store(path)
    try:
        for pages in range(1, 41):
            store.park(SITE, ParkedBatch(pages, [("a", "Home", pages)]))
        ctx = multiprocessing.get_context("spawn")
        barrier, results = ctx.Barrier(WORKERS), ctx.Queue()
        processes = [ctx.Process(target=_claim_worker, args=(path, w, barrier, results)) for w in range(WORKERS)]
        for process in processes:
            process.start()
        # Drain the queue before joining: a child does not exit while its queued data is unread.
        claimed = [pages for _ in processes for pages in results.get(timeout=JOIN_TIMEOUT_S)]
        for process in processes:
            process.join(JOIN_TIMEOUT_S)
        assert [p.exitcode for p in processes] == [0] * WORKERS
        claimed += [batch.pages for batch in store.claim(SITE)]
        parked = list(range(1, 41)) + [1000 * (w + 1) + i for w in range(WORKERS) for i in range(ROUNDS)]
        assert sorted(claimed) == sorted(parked)
    finally:
        store.close()


def test_garbage_file_is_refused_and_kept(tmp_path: Path) -> None:
    path = tmp_path / STORE_FILENAME
    garbage = b"this is not a database\n" * 100
    path.write_bytes(garbage)
    with pytest.raises(TemplateStoreError, match="corrupt") as error:
        SQLiteTemplateStore(path)
    assert str(path) in str(error.value)
    assert path.read_bytes() == garbage


def test_truncated_database_is_refused(tmp_path: Path) -> None:
    path = tmp_path / STORE_FILENAME
    store = SQLiteTemplateStore(path)
    store.promote(SITE, 10, [Candidate("p", f"line {i} " + "x" * 200, 5) for i in range(200)])
    store.close()
    data = path.read_bytes()
    assert len(data) > 8 * 4096  # several pages, so the cut loses table pages
    path.write_bytes(data[: len(data) // 2])
    truncated = path.read_bytes()
    with pytest.raises(TemplateStoreError) as error:
        SQLiteTemplateStore(path).templates(SITE)
    assert str(path) in str(error.value)
    assert path.read_bytes() == truncated


def test_newer_schema_is_refused(tmp_path: Path) -> None:
    path = tmp_path / STORE_FILENAME
    SQLiteTemplateStore(path).close()
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE meta SET value = '99' WHERE key = 'schema_version'")
    conn.close()
    with pytest.raises(TemplateStoreError, match="newer") as error:
        SQLiteTemplateStore(path)
    assert "schema 99" in str(error.value) and str(path) in str(error.value)


def test_foreign_database_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "other.db"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE cookies (name TEXT, value TEXT)")
    conn.close()
    before = path.read_bytes()
    with pytest.raises(TemplateStoreError, match="not a template store") as error:
        open_store(path)
    assert "cookies" in str(error.value)
    assert path.read_bytes() == before  # left untouched: WAL mode rewrote its header before it was refused


def test_fresh_file_is_at_current_schema(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "folder" / STORE_FILENAME
    SQLiteTemplateStore(path).close()
    assert len(_MIGRATIONS) == SCHEMA_VERSION == len(SQLiteTemplateStore.migrations())
    with sqlite3.connect(path) as conn:
        (version,) = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        (journal,) = conn.execute("PRAGMA journal_mode").fetchone()
    conn.close()
    assert (int(version), journal) == (SCHEMA_VERSION, "wal")
    SQLiteTemplateStore(path).close()  # reopening an up-to-date file migrates nothing


def test_open_store_locations(tmp_path: Path) -> None:
    folder = tmp_path / "templates_db"
    cases: list[tuple[str | Path, Path]] = [
        (folder, folder / STORE_FILENAME),
        (str(tmp_path / "lib.sqlite3"), tmp_path / "lib.sqlite3"),
        (f"sqlite://{tmp_path / 'url.db'}", tmp_path / "url.db"),
    ]
    for location, expected in cases:
        assert store_path(location) == expected and not store_exists(location)
        opened = open_store(location)
        try:
            assert opened.location == str(expected)
            assert expected.is_file() and store_exists(location)
        finally:
            opened.close()
    assert store_path("postgresql://crawl@db.example/crawl") is None  # the server backend: no file
    with pytest.raises(TemplateStoreError, match="unsupported"):
        open_store("ftp://example.com/templates")


def test_errors_after_close_name_the_file(store: TemplateStore) -> None:
    store.close()
    with pytest.raises(TemplateStoreError, match=re.escape(store.location)):
        store.templates(SITE)


def test_page_type_votes_add_up_per_site_and_shape(location: str) -> None:
    store = open_store(location)
    store.add_page_type_votes({SITE: {"f:news/S": [3, 0, 0], "c:W/S": [3, 0, 1]}, "other.org": {"f:S": [0, 1, 0]}})
    store.add_page_type_votes({SITE: {"f:news/S": [1, 0.25, 0]}})
    store.add_page_type_votes({})
    assert store.page_type_votes(SITE) == {"f:news/S": (4.0, 0.25, 0.0), "c:W/S": (3.0, 0.0, 1.0)}
    assert store.export(SITE)["page_types"] == {"c:W/S": [3.0, 0.0, 1.0], "f:news/S": [4.0, 0.25, 0.0]}
    store.clear(SITE)
    assert store.page_type_votes(SITE) == {}
    assert store.page_type_votes("other.org") == {"f:S": (0.0, 1.0, 0.0)}
    store.close()


def test_a_schema_1_store_is_migrated_with_its_templates(tmp_path: Path) -> None:
    path = tmp_path / STORE_FILENAME
    with sqlite3.connect(path) as conn:  # what a store written before the page-type votes holds
        for statement in SQLiteTemplateStore.migrations()[0]:
            conn.execute(statement)
        conn.executemany("INSERT INTO meta VALUES (?, ?)", [("schema_version", "1"), ("kind", "template store")])
    conn.close()
    store = SQLiteTemplateStore(path)
    store.promote(SITE, 10, [Candidate("a", "Home", 8)])
    store.add_page_type_votes({SITE: {"f:S": [1, 0, 0]}})
    assert [t.text for t in store.templates(SITE)] == ["Home"]
    assert store.page_type_votes(SITE) == {"f:S": (1.0, 0.0, 0.0)}
    store.close()


def _drop_schema(uri: str) -> None:
    import psycopg

    with psycopg.connect(uri, autocommit=True) as conn:
        conn.execute("DROP SCHEMA IF EXISTS templates CASCADE")
