"""The crawl state: what scheduled crawls of a site list know from earlier runs (issue 16).

Per canonical URL: its status (``queued``: scheduled, not completed; ``done``; ``failed``: a transient
failure, tried again next run), first and last seen, the last fetch (time, HTTP status, ETag,
Last-Modified, body hash), the text hash, page type, declared canonical URL, the record it produced
(without its text) and whether it was exported. Per site: the crawl *round* (below), and the feeds and
sitemaps with their last visit. Aliases (a page's declared canonical URL, its AMP version) point at the
URL that was fetched, so one article is fetched once. The near-duplicate index (MinHash band keys,
:mod:`extraction.dedup`) lives here too, so duplicates are found across runs.

Rounds. A round is one complete pass over a site: it starts when a crawl starts and the site's
previous round was complete, and it is complete when a crawl of the site finishes cleanly
(``finish_reason`` ``finished``). A crawl that starts while the site's round is incomplete (the last
one was killed, stopped with Ctrl-C or by a CLOSESPIDER limit) *resumes* it: it fetches the queued
pages and the hubs (start pages, list pages, feeds, sitemaps) not yet visited in the round, and
nothing that was completed. A new round revisits every hub whose revisit interval has passed and
fetches only URLs never seen before.

Writes. Each completed page is one transaction (``complete``), written after the page's record
reached the feed (crawler/state.py), and every scheduled URL is written (``enqueue``) before its
request leaves the spider: a crawl killed at any moment loses nothing, and the next run fetches again
only the pages that were in flight. The round's budget (a site's ``max_pages``) is counted in the state
too (``pages.found_round``, :meth:`CrawlStateSQL.completed_in_round`), so a run that resumes a round, on this
machine or another, goes on from the count the killed one reached.

Backends. The queries below (:class:`CrawlStateSQL`) run on both: one SQLite file in WAL mode, opened
by every crawl process of one machine (:class:`SQLiteCrawlState`, the default), or a PostgreSQL schema
that workers on many machines share, with the site leases that give each site one owner at a time
(``templates_db/pgstate.py``, ``CRAWL_STATE_STORE=postgresql://...``). One schema and one list of
migrations for both. No Scrapy import here.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from templates_db.postgres import is_postgres
from templates_db.sqlite import DatabaseError, SQLiteDatabase, database_path

if TYPE_CHECKING:
    from extraction.dedup import Fingerprint

SCHEMA_VERSION = 3
STATE_FILENAME = "crawl_state.sqlite3"

_MIGRATIONS: list[list[str]] = [
    [
        "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
        "CREATE TABLE sites (site TEXT PRIMARY KEY, round INTEGER NOT NULL, completed INTEGER NOT NULL)",
        """CREATE TABLE pages (
            url TEXT PRIMARY KEY, site TEXT NOT NULL, status TEXT NOT NULL, depth INTEGER NOT NULL,
            found_url TEXT, listed_date TEXT, first_seen {real} NOT NULL, last_seen {real} NOT NULL,
            fetched_at {real}, round INTEGER NOT NULL DEFAULT 0, attempts INTEGER NOT NULL DEFAULT 0,
            http_status INTEGER, etag TEXT, last_modified TEXT, content_hash TEXT, text_hash TEXT,
            page_type TEXT, canonical TEXT, duplicate_of TEXT, exported INTEGER NOT NULL DEFAULT 0,
            error TEXT, record TEXT)""",
        "CREATE INDEX pages_site_status ON pages (site, status)",
        "CREATE INDEX pages_site_type ON pages (site, page_type)",
        "CREATE TABLE hubs (url TEXT PRIMARY KEY, site TEXT NOT NULL, kind TEXT NOT NULL, visited_at {real} NOT NULL,"
        " round INTEGER NOT NULL)",
        "CREATE TABLE aliases (url TEXT PRIMARY KEY, target TEXT NOT NULL, kind TEXT NOT NULL)",
        "CREATE TABLE fingerprints (url TEXT PRIMARY KEY, text_hash TEXT NOT NULL, signature {blob})",
        "CREATE INDEX fingerprints_hash ON fingerprints (text_hash)",
        "CREATE TABLE bands (key {blob} NOT NULL, url TEXT NOT NULL)",
        "CREATE INDEX bands_key ON bands (key)",
    ],
    [  # 2: a URL's band keys are replaced when its text is fingerprinted again
        "CREATE INDEX bands_url ON bands (url)",
    ],
    [  # 3: the round a URL was found in (a resumed round's budget), when rounds began and ended, site leases
        "ALTER TABLE pages ADD COLUMN found_round INTEGER NOT NULL DEFAULT 0",
        "CREATE INDEX pages_site_found ON pages (site, found_round)",
        "ALTER TABLE sites ADD COLUMN started_at {real}",
        "ALTER TABLE sites ADD COLUMN finished_at {real}",
        # One row per site ever leased (templates_db/pgstate.py; a SQLite state, crawled by one worker, has none):
        # its owner (NULL: free), the epoch every write of the owner is checked against, the database's times.
        """CREATE TABLE leases (
            site TEXT PRIMARY KEY, owner TEXT, epoch INTEGER NOT NULL DEFAULT 0, claimed_at {real},
            renewed_at {real}, released_at {real}, backend INTEGER, claims INTEGER NOT NULL DEFAULT 0,
            takeovers INTEGER NOT NULL DEFAULT 0)""",
    ],
]
_TABLES = frozenset({"meta", "sites", "pages", "hubs", "aliases", "fingerprints", "bands", "leases"})
_KNOWN_COLUMNS = "url, site, status, depth, found_url, listed_date, fetched_at, round, attempts, http_status, " \
                 "etag, last_modified, text_hash, page_type"


class CrawlStateError(DatabaseError):
    """The crawl state cannot be used (corrupt, locked, newer schema); the crawl goes on as a full crawl."""


class LeaseLost(CrawlStateError):
    """A write for a site whose lease this worker no longer holds (another worker took it over): refused."""

    def __init__(self, sites: Iterable[str], message: str = "") -> None:
        self.sites = tuple(sorted(set(sites)))
        super().__init__(message or f"the lease of {', '.join(self.sites)} is no longer this worker's: write refused")


@dataclass(frozen=True)
class Round:
    """A site's crawl round as a run begins."""

    number: int
    resumed: bool  # the previous run of the site did not finish: this run completes its round


@dataclass(frozen=True)
class KnownPage:
    """What the state knows of a URL (through an alias: of the URL it names)."""

    url: str
    site: str
    status: str  # queued | done | failed
    depth: int
    found_url: str | None
    listed_date: str | None
    fetched_at: float | None
    round: int  # the round of its last completion (0: never completed)
    attempts: int  # transient failures so far
    http_status: int | None
    etag: str | None
    last_modified: str | None
    text_hash: str | None
    page_type: str | None


@dataclass(frozen=True)
class QueuedPage:
    """A URL scheduled for fetching."""

    url: str
    site: str
    depth: int
    found_url: str | None = None
    listed_date: str | None = None
    round: int = 0  # the site's round that found it (its budget: ``scheduled``)


@dataclass(frozen=True)
class PageOutcome:
    """What a completed page writes to the state (one transaction)."""

    url: str
    site: str
    status: str  # done | failed
    depth: int
    round: int
    fetched_at: float
    http_status: int | None = None
    etag: str | None = None
    last_modified: str | None = None
    content_hash: str | None = None
    text_hash: str | None = None
    page_type: str | None = None
    canonical: str | None = None
    duplicate_of: str | None = None
    exported: bool = False
    error: str | None = None
    record: Mapping[str, Any] | None = None  # the record without its text
    aliases: tuple[tuple[str, str], ...] = ()  # (other URL, kind): canonical / amp, naming this page
    # The feed file the record's line went to and the file's size after it: written with the page, so that a
    # crawl killed between the line and this transaction finds the line again (CrawlStateManager.begin).
    feed: tuple[str, int] | None = None
    # Completed from a killed run's feed (CrawlStateManager._recover_feed): written whoever holds the site's lease
    # now (the record is in this worker's feed), in the site's current round.
    recovered: bool = False


@dataclass(frozen=True)
class LeaseInfo:
    """Who crawls a site now (``scrapy state list``), in the database's clock."""

    owner: str | None  # the worker holding it, None when free
    epoch: int  # claims so far: every write of the owner is checked against it
    claimed_age: float | None  # seconds since it was claimed
    renewed_age: float | None  # seconds since its owner last renewed it
    claims: int
    takeovers: int  # claims of it from an owner that never released it (killed, stopped, gone)


class CrawlState(Protocol):
    """What the crawl needs from a state backend (SQLite or PostgreSQL)."""

    location: str
    feed_key: str  # the ``meta`` key of this worker's feed mark

    def begin_run(self, sites: Sequence[str]) -> dict[str, Round]: ...
    def end_run(self, rounds: Mapping[str, Round], finished: bool) -> None: ...
    def known(self, urls: Iterable[str]) -> dict[str, KnownPage]: ...
    def enqueue(self, pages: Sequence[QueuedPage]) -> None: ...
    def queued(self, site: str, max_attempts: int) -> list[QueuedPage]: ...
    def completed_in_round(self, site: str, round_number: int, max_attempts: int) -> int: ...
    def due_hubs(self, site: str, round_number: int, visited_before: float, start_urls: Sequence[str]) -> list[
        KnownPage]: ...
    def aux_due(self, url: str, round_number: int, visited_before: float) -> bool: ...
    def visit_aux(self, url: str, site: str, kind: str, round_number: int) -> None: ...
    def complete(self, outcome: PageOutcome) -> None: ...
    def feed_mark(self) -> tuple[str, int] | None: ...
    def unchanged(self, url: str, round_number: int, site: str | None = None) -> None: ...
    def by_hash(self, text_hash: str) -> str | None: ...
    def candidates(self, keys: Sequence[bytes]) -> list[tuple[str, bytes]]: ...
    def add(self, key: str, fp: Fingerprint, keys: Sequence[bytes]) -> str | None: ...
    def summary(self) -> dict[str, dict[str, int]]: ...
    def leases(self) -> dict[str, LeaseInfo]: ...
    def page(self, url: str) -> dict[str, Any] | None: ...
    def forget(self, site: str) -> int: ...
    def close(self) -> None: ...


class Transaction(Protocol):
    """What the queries run on inside a transaction: sqlite3's connection, or the PostgreSQL backend's."""

    def execute(self, sql: str, params: Sequence[Any] = ...) -> Any: ...
    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> Any: ...


class CrawlStateSQL:
    """The crawl state's queries, the same on both backends (written with SQLite's ``?`` placeholders).

    A backend gives ``_transaction`` (a write transaction, or a read), ``GREATEST`` (the two-argument maximum),
    ``NOW`` (the database's clock in Unix seconds) and ``_fence`` (the lease check of a write: nothing on
    SQLite, where one worker crawls; the site leases on PostgreSQL).
    """

    KIND: ClassVar[str] = "crawl state"
    ERROR: ClassVar[type[DatabaseError]] = CrawlStateError
    SCHEMA_VERSION: ClassVar[int] = SCHEMA_VERSION
    MIGRATIONS: ClassVar[list[list[str]]] = _MIGRATIONS
    TABLES: ClassVar[frozenset[str]] = _TABLES
    GREATEST: ClassVar[str]
    NOW: ClassVar[str]
    feed_key: str = "feed"  # the meta key of the feed mark: one per worker on a shared state (``feed:<worker>``)

    if TYPE_CHECKING:
        @contextmanager
        def _transaction(self, write: bool = True, connection: Any = None) -> Iterator[Any]: ...

    def _fence(self, conn: Transaction, sites: Iterable[str]) -> None:
        """Raise LeaseLost when this worker may not write for ``sites`` (inside the write's transaction)."""

    def _serialize(self, conn: Transaction, key: str) -> None:
        """Make the writers of ``key`` (a text hash) wait for each other until the transaction ends."""

    # -- rounds --

    def begin_run(self, sites: Sequence[str]) -> dict[str, Round]:
        """Start (or resume) each site's round; return them by site."""
        with self._transaction() as conn:
            self._fence(conn, sites)
            return self._begin(conn, sites)

    def _begin(self, conn: Transaction, sites: Iterable[str]) -> dict[str, Round]:
        rounds = {}
        for site in sites:
            row = conn.execute("SELECT round, completed FROM sites WHERE site = ?", (site,)).fetchone()
            number, completed = row if row else (0, 0)
            if number == 0 or completed >= number:
                number += 1
                rounds[site] = Round(number, resumed=False)
                conn.execute(f"INSERT INTO sites (site, round, completed, started_at) VALUES (?, ?, ?, {self.NOW}) "
                             "ON CONFLICT (site) DO UPDATE SET round = excluded.round, started_at = excluded.started_at"
                             ", finished_at = NULL", (site, number, completed))
            else:
                rounds[site] = Round(number, resumed=True)
        return rounds

    def end_run(self, rounds: Mapping[str, Round], finished: bool) -> None:
        """Mark the rounds complete when the crawl finished cleanly; otherwise the next run resumes them."""
        if not finished or not rounds:
            return
        with self._transaction() as conn:
            self._fence(conn, rounds)
            self._end(conn, rounds)

    def _end(self, conn: Transaction, rounds: Mapping[str, Round]) -> None:
        conn.executemany(f"UPDATE sites SET completed = ?, finished_at = {self.NOW} WHERE site = ? AND round = ?",
                         [(r.number, site, r.number) for site, r in rounds.items()])

    def completed_in_round(self, site: str, round_number: int, max_attempts: int) -> int:
        """Return how many of the URLs the site's round ``round_number`` found are completed (done, or failed for
        good): with its queued URLs, which a resumed run schedules again, what its ``max_pages`` budget used."""
        with self._transaction(write=False) as conn:
            row = conn.execute("SELECT COUNT(*) FROM pages WHERE site = ? AND found_round = ? AND NOT "
                               "(status = 'queued' OR (status = 'failed' AND attempts < ?))",
                               (site, round_number, max_attempts)).fetchone()
        return int(row[0]) if row else 0

    # -- what is known --

    def known(self, urls: Iterable[str]) -> dict[str, KnownPage]:
        """Return what is known of each URL (aliases resolved), for the URLs the state has."""
        wanted = list(dict.fromkeys(urls))
        result: dict[str, KnownPage] = {}
        with self._transaction(write=False) as conn:
            for chunk in _chunks(wanted, 500):
                marks = ",".join("?" * len(chunk))
                targets = dict(conn.execute(f"SELECT url, target FROM aliases WHERE url IN ({marks})", chunk))
                lookup = [targets.get(url, url) for url in chunk]
                rows = {row[0]: row for row in conn.execute(
                    f"SELECT {_KNOWN_COLUMNS} FROM pages WHERE url IN ({','.join('?' * len(lookup))})", lookup)}
                for url, target in zip(chunk, lookup, strict=True):
                    if target in rows:
                        result[url] = KnownPage(*rows[target])
        return result

    def enqueue(self, pages: Sequence[QueuedPage]) -> None:
        """Record scheduled URLs (one transaction); URLs the state has already keep their row."""
        if not pages:
            return
        now = time.time()
        with self._transaction() as conn:
            self._fence(conn, {p.site for p in pages})
            conn.executemany(
                "INSERT INTO pages (url, site, status, depth, found_url, listed_date, first_seen, last_seen, "
                "found_round) VALUES (?, ?, 'queued', ?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (url) DO UPDATE SET last_seen = excluded.last_seen",
                [(p.url, p.site, p.depth, p.found_url, p.listed_date, now, now, p.round) for p in pages])

    def queued(self, site: str, max_attempts: int) -> list[QueuedPage]:
        """Return the site's URLs scheduled and never completed, and its transient failures still to retry."""
        with self._transaction(write=False) as conn:
            rows = conn.execute(
                "SELECT url, site, depth, found_url, listed_date FROM pages WHERE site = ? AND "
                "(status = 'queued' OR (status = 'failed' AND attempts < ?)) ORDER BY depth, first_seen",
                (site, max_attempts)).fetchall()
        return [QueuedPage(*row) for row in rows]

    def due_hubs(self, site: str, round_number: int, visited_before: float,
                 start_urls: Sequence[str]) -> list[KnownPage]:
        """Return the site's list pages and start pages completed before this round, last fetched before
        ``visited_before`` (the revisit interval), shallowest first."""
        starts = list(start_urls)
        marks = ",".join("?" * len(starts)) or "NULL"
        with self._transaction(write=False) as conn:
            rows = conn.execute(
                f"SELECT {_KNOWN_COLUMNS} FROM pages WHERE site = ? AND status = 'done' AND round < ? "
                f"AND fetched_at <= ? AND (page_type = 'list' OR url IN ({marks})) ORDER BY depth, url",
                (site, round_number, visited_before, *starts)).fetchall()
        return [KnownPage(*row) for row in rows]

    def aux_due(self, url: str, round_number: int, visited_before: float) -> bool:
        """Return True when the feed or sitemap at ``url`` is to be fetched in this round."""
        with self._transaction(write=False) as conn:
            row = conn.execute("SELECT round, visited_at FROM hubs WHERE url = ?", (url,)).fetchone()
        return row is None or (row[0] < round_number and row[1] <= visited_before)

    def visit_aux(self, url: str, site: str, kind: str, round_number: int) -> None:
        """Record a feed or sitemap visit."""
        with self._transaction() as conn:
            self._fence(conn, [site])
            conn.execute("INSERT INTO hubs (url, site, kind, visited_at, round) VALUES (?, ?, ?, ?, ?) "
                         "ON CONFLICT (url) DO UPDATE SET visited_at = excluded.visited_at, round = excluded.round",
                         (url, site, kind, time.time(), round_number))

    # -- completed pages --

    def complete(self, outcome: PageOutcome) -> None:
        """Record a completed page, its aliases and its attempt count, in one transaction."""
        o = outcome
        record = json.dumps(o.record, ensure_ascii=False, default=str) if o.record is not None else None
        now = time.time()
        with self._transaction() as conn:
            if o.recovered:  # in the site's round now, whoever crawls it (PageOutcome.recovered)
                current = conn.execute("SELECT round FROM sites WHERE site = ?", (o.site,)).fetchone()
                o = replace(o, round=int(current[0]) if current else o.round)
            else:
                self._fence(conn, [o.site])
            row = conn.execute("SELECT status FROM pages WHERE url = ?", (o.url,)).fetchone()
            if row is not None and row[0] == "done" and o.status == "failed":
                # A known page that failed this time stays done (a list page stays a hub); its round is not
                # advanced, so a resumed run tries it again.
                conn.execute("UPDATE pages SET last_seen = ?, error = ?, attempts = attempts + 1 WHERE url = ?",
                             (now, o.error, o.url))
                return
            conn.execute(
                f"""INSERT INTO pages (url, site, status, depth, first_seen, last_seen, fetched_at, round, attempts,
                       http_status, etag, last_modified, content_hash, text_hash, page_type, canonical, duplicate_of,
                       exported, error, record)
                   VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                   ON CONFLICT (url) DO UPDATE SET status = excluded.status, last_seen = excluded.last_seen,
                       fetched_at = excluded.fetched_at, round = excluded.round,
                       attempts = CASE WHEN excluded.status = 'failed' THEN pages.attempts + 1 ELSE 0 END,
                       http_status = excluded.http_status, etag = excluded.etag,
                       last_modified = excluded.last_modified, content_hash = excluded.content_hash,
                       text_hash = COALESCE(excluded.text_hash, pages.text_hash),
                       page_type = COALESCE(excluded.page_type, pages.page_type),
                       canonical = excluded.canonical, duplicate_of = excluded.duplicate_of,
                       exported = {self.GREATEST}(pages.exported, excluded.exported), error = excluded.error,
                       record = COALESCE(excluded.record, pages.record)""",
                (o.url, o.site, o.status, o.depth, now, now, o.fetched_at, o.round, int(o.status == "failed"),
                 o.http_status, o.etag, o.last_modified, o.content_hash, o.text_hash, o.page_type, o.canonical,
                 o.duplicate_of, int(o.exported), o.error, record))
            conn.executemany("INSERT INTO aliases (url, target, kind) VALUES (?, ?, ?) ON CONFLICT (url) DO NOTHING",
                             [(url, o.url, kind) for url, kind in o.aliases if url != o.url])
            if o.feed is not None:
                conn.execute("INSERT INTO meta (key, value) VALUES (?, ?) "
                             "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                             (self.feed_key, json.dumps(list(o.feed))))

    def feed_mark(self) -> tuple[str, int] | None:
        """Return this worker's feed file and its size after the last record the state knows it exported, or
        None."""
        with self._transaction(write=False) as conn:
            row = conn.execute("SELECT value FROM meta WHERE key = ?", (self.feed_key,)).fetchone()
        try:
            path, size = json.loads(row[0]) if row else (None, None)
        except (ValueError, TypeError):
            return None
        return (path, size) if isinstance(path, str) and isinstance(size, int) else None

    def unchanged(self, url: str, round_number: int, site: str | None = None) -> None:
        """Record a conditional refetch answered 304 Not Modified (a page of ``site``)."""
        with self._transaction() as conn:
            if site is not None:
                self._fence(conn, [site])
            conn.execute("UPDATE pages SET last_seen = ?, round = ? WHERE url = ?", (time.time(), round_number, url))

    # -- the near-duplicate index (extraction.dedup.IndexStorage) --

    def by_hash(self, text_hash: str) -> str | None:
        """Return the URL of a stored text with this exact hash, None when there is none."""
        with self._transaction(write=False) as conn:
            row = conn.execute("SELECT url FROM fingerprints WHERE text_hash = ? LIMIT 1", (text_hash,)).fetchone()
        return row[0] if row else None

    def candidates(self, keys: Sequence[bytes]) -> list[tuple[str, bytes]]:
        """Return (URL, signature) of the stored texts sharing a band key."""
        if not keys:
            return []
        with self._transaction(write=False) as conn:
            rows = conn.execute(
                "SELECT DISTINCT f.url, f.signature FROM bands b JOIN fingerprints f ON f.url = b.url "
                f"WHERE b.key IN ({','.join('?' * len(keys))}) AND f.signature IS NOT NULL", list(keys)).fetchall()
        return [(url, bytes(signature)) for url, signature in rows]

    def add(self, key: str, fp: Fingerprint, keys: Sequence[bytes]) -> str | None:
        """Store a text's fingerprint and band keys under its URL (replacing an older one of the URL); return None,
        or the URL of the same text that another writer stored first (nothing is stored then: the first writer
        wins, atomically, whichever worker it was)."""
        with self._transaction() as conn:
            self._serialize(conn, fp.text_hash)
            first = conn.execute("SELECT url FROM fingerprints WHERE text_hash = ? AND url <> ? LIMIT 1",
                                 (fp.text_hash, key)).fetchone()
            if first is not None:
                return str(first[0])
            conn.execute("DELETE FROM bands WHERE url = ?", (key,))
            conn.execute("INSERT INTO fingerprints (url, text_hash, signature) VALUES (?, ?, ?) ON CONFLICT (url) "
                         "DO UPDATE SET text_hash = excluded.text_hash, signature = excluded.signature",
                         (key, fp.text_hash, fp.signature))
            conn.executemany("INSERT INTO bands (key, url) VALUES (?, ?)", [(band, key) for band in keys])
        return None

    # -- inspection --

    def summary(self) -> dict[str, dict[str, int]]:
        """Return per site: pages by status, exported, duplicates, and the round."""
        result: dict[str, dict[str, int]] = {}
        with self._transaction(write=False) as conn:
            for site, status, n in conn.execute("SELECT site, status, COUNT(*) FROM pages GROUP BY site, status"):
                result.setdefault(site, {})[status] = n
            for site, exported, duplicates in conn.execute(
                    "SELECT site, SUM(exported), SUM(CASE WHEN duplicate_of IS NULL THEN 0 ELSE 1 END) FROM pages "
                    "GROUP BY site"):
                result.setdefault(site, {}).update(exported=int(exported or 0), duplicates=int(duplicates or 0))
            for site, number, completed in conn.execute("SELECT site, round, completed FROM sites"):
                result.setdefault(site, {}).update(round=number, completed_round=completed)
        return result

    def leases(self) -> dict[str, LeaseInfo]:
        """Return each leased site's owner and lease ages (an SQLite state, crawled by one worker, has none)."""
        with self._transaction(write=False) as conn:
            rows = conn.execute(f"SELECT site, owner, epoch, {self.NOW} - claimed_at, {self.NOW} - renewed_at, claims, "
                                "takeovers FROM leases ORDER BY site").fetchall()
        return {site: LeaseInfo(owner, int(epoch), claimed, renewed, int(claims), int(takeovers))
                for site, owner, epoch, claimed, renewed, claims, takeovers in rows}

    def page(self, url: str) -> dict[str, Any] | None:
        """Return everything stored of a URL (through an alias: of the page it names), None when unknown."""
        with self._transaction(write=False) as conn:
            alias = conn.execute("SELECT target, kind FROM aliases WHERE url = ?", (url,)).fetchone()
            cursor = conn.execute("SELECT * FROM pages WHERE url = ?", (alias[0] if alias else url,))
            row = cursor.fetchone()
            if row is None:
                return None
            result = dict(zip([column[0] for column in cursor.description], row, strict=True))
            result["aliases"] = [list(pair) for pair in conn.execute(
                "SELECT url, kind FROM aliases WHERE target = ? ORDER BY url", (result["url"],))]
        if alias:
            result["alias_of_this_url"] = alias[1]
        if result.get("record"):
            try:
                result["record"] = json.loads(result["record"])
            except (ValueError, RecursionError):  # shown as stored: the rest of the page's row is still worth seeing
                result["record_unreadable"] = True
        return result

    def forget(self, site: str) -> int:
        """Delete everything of a site (its next crawl is a first one); return the pages deleted."""
        with self._transaction() as conn:
            urls = "SELECT url FROM pages WHERE site = ?"
            conn.execute(f"DELETE FROM bands WHERE url IN ({urls})", (site,))
            conn.execute(f"DELETE FROM fingerprints WHERE url IN ({urls})", (site,))
            conn.execute(f"DELETE FROM aliases WHERE target IN ({urls})", (site,))
            conn.execute("DELETE FROM hubs WHERE site = ?", (site,))
            conn.execute("DELETE FROM sites WHERE site = ?", (site,))
            conn.execute("DELETE FROM leases WHERE site = ? AND owner IS NULL", (site,))
            return int(conn.execute("DELETE FROM pages WHERE site = ?", (site,)).rowcount)


class SQLiteCrawlState(CrawlStateSQL, SQLiteDatabase):
    """The crawl state in one SQLite file (WAL journal)."""

    WHAT_TO_DO = "set CRAWL_STATE_STORE to another file, or CRAWL_STATE_ENABLED=False for a full crawl"
    # The file's clock is the machine's, in Unix seconds (julianday counts days from 4714 BC).
    NOW = "((julianday('now') - 2440587.5) * 86400.0)"


def state_path(location: str | Path) -> Path | None:
    """Return the SQLite file of the crawl state at ``location`` (a folder, a .sqlite3 path or sqlite:/// URL), None
    for a PostgreSQL URI."""
    return database_path(location, STATE_FILENAME, "crawl state", CrawlStateError)


def open_state(location: str | Path, timeout: float = 30.0) -> CrawlState:
    """Open the crawl state at ``location`` (SQLite: a folder, a .sqlite3 path or sqlite:/// URL; PostgreSQL: a
    postgresql:// URI); CrawlStateError when it cannot be used."""
    if is_postgres(location):
        from templates_db.pgstate import PostgresCrawlState

        return PostgresCrawlState(str(location), timeout)
    path = state_path(location)
    assert path is not None
    return SQLiteCrawlState(path, timeout)


def _chunks(items: list[str], size: int) -> Iterable[list[str]]:
    for start in range(0, len(items), size):
        yield items[start:start + size]

