"""Persistent store of the per-site template library (paper 004, web-page cleaning).

For each news site, short leaf tags that recur across pages (navigation links, copyright lines)
are learned as templates by the learning code; this module only persists them. The default
backend is one SQLite file in WAL mode that several crawl processes can write at once: every
write is a ``BEGIN IMMEDIATE`` transaction made of additive updates (``hits = hits + ?``), so
nothing is lost to read-modify-write races. ``TEMPLATES_STORE=postgresql://...`` puts the same tables
(same migrations, same queries: :class:`TemplateStoreSQL`) in the ``templates`` schema of a PostgreSQL
database, for workers on many machines (:class:`PostgresTemplateStore`); the updates are as additive
there, and a parked batch is taken by one claimer only (``DELETE ... RETURNING``). It does not import
Scrapy.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from templates_db.postgres import PostgresDatabase, is_postgres
from templates_db.sqlite import DatabaseError, SQLiteDatabase, database_exists, database_path

logger = logging.getLogger(__name__)

SCHEMA_VERSION = 2
STORE_FILENAME = "templates.sqlite3"

# Index i brings the schema from version i to i + 1; version 0 is an empty file. Each entry is a
# list of single statements (not a script: executescript would commit the migration half-way).
_MIGRATIONS: list[list[str]] = [
    [
        "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
        """CREATE TABLE sites (
            site TEXT PRIMARY KEY, generation INTEGER NOT NULL DEFAULT 0, pages INTEGER NOT NULL DEFAULT 0,
            batches INTEGER NOT NULL DEFAULT 0, drift_events INTEGER NOT NULL DEFAULT 0,
            created_at {real} NOT NULL, updated_at {real} NOT NULL)""",
        """CREATE TABLE templates (
            id {id}, site TEXT NOT NULL, generation INTEGER NOT NULL, tag TEXT NOT NULL,
            text TEXT NOT NULL, frequency INTEGER NOT NULL, batches INTEGER NOT NULL, share {real} NOT NULL,
            hits INTEGER NOT NULL DEFAULT 0, first_seen {real} NOT NULL, last_seen {real} NOT NULL, retired_at {real},
            UNIQUE (site, generation, tag, text))""",
        "CREATE INDEX templates_site_retired ON templates (site, retired_at)",
        """CREATE TABLE events (
            id {id}, site TEXT NOT NULL, at {real} NOT NULL, kind TEXT NOT NULL, detail TEXT NOT NULL)""",
        "CREATE INDEX events_site ON events (site, id)",
        "CREATE TABLE parked (id {id}, site TEXT NOT NULL, pages INTEGER NOT NULL, tags TEXT NOT NULL)",
        "CREATE INDEX parked_site ON parked (site, id)",
    ],
    [  # 2: the site's page-type votes per URL shape (extraction.pagetype.site)
        """CREATE TABLE page_types (
            site TEXT NOT NULL, shape TEXT NOT NULL, article {real} NOT NULL DEFAULT 0, list {real} NOT NULL DEFAULT 0,
            other {real} NOT NULL DEFAULT 0, updated_at {real} NOT NULL, PRIMARY KEY (site, shape))""",
    ],
]
# Tables the current schema must have; a file that claims our version without them is refused.
_TABLES = frozenset({"meta", "sites", "templates", "events", "parked", "page_types"})
_TEMPLATE_COLUMNS = (
    "id, site, generation, tag, text, frequency, batches, share, hits, first_seen, last_seen, retired_at"
)
_SITE_COLUMNS = "site, generation, pages, batches, drift_events, created_at, updated_at"


class TemplateStoreError(DatabaseError):
    """The store cannot be used (corrupt file, newer/unknown schema, unsupported URL); message says which file and
    what to do."""


@dataclass(frozen=True)
class StoredTemplate:
    """One learned template (a recurring leaf tag) of a site."""

    id: int
    site: str
    generation: int  # layout generation of the site it belongs to
    tag: str  # lower-case tag name
    text: str  # normalised text
    frequency: int  # sum over promoting batches of the pages that contained it
    batches: int  # number of batches that promoted it
    share: float  # highest (frequency in a batch / pages in that batch) seen
    hits: int  # pages it matched after it was promoted (record_hits)
    first_seen: float  # unix time
    last_seen: float
    retired_at: float | None  # set when its generation was retired (layout drift); kept as history


@dataclass(frozen=True)
class Candidate:
    """A leaf tag that a batch of pages promotes to a template."""

    tag: str
    text: str
    frequency: int  # pages of this batch that contained it
    template_id: int | None = None  # an existing template (same site) it matched; None = new


@dataclass(frozen=True)
class SiteState:
    """Learning state of one site."""

    site: str
    generation: int  # starts at 0
    pages: int  # pages counted in promoted batches (sum of batch_pages)
    batches: int  # batches promoted
    drift_events: int
    created_at: float
    updated_at: float


@dataclass(frozen=True)
class SiteSummary:
    """One line of the list of sites."""

    site: str
    generation: int
    active: int  # templates of the current generation, not retired
    retired: int
    pages: int
    batches: int
    drift_events: int
    updated_at: float


@dataclass(frozen=True)
class ParkedBatch:
    """An unfinished batch saved at the end of a crawl, to be continued by the next one."""

    pages: int
    tags: list[tuple[str, str, int]]  # (tag, text, frequency) of an unfinished batch


class TemplateStore(Protocol):
    """What the template library needs from a store (SQLite or PostgreSQL)."""

    location: str  # human-readable (file path, or URI without its password)

    def templates(self, site: str, include_retired: bool = False) -> list[StoredTemplate]: ...
    def site_state(self, site: str) -> SiteState | None: ...
    def promote(self, site: str, batch_pages: int, candidates: Sequence[Candidate]) -> None: ...
    def record_hits(self, site: str, hits: Mapping[int, int]) -> None: ...
    def retire(self, site: str, reason: str) -> int: ...
    def events(self, site: str) -> list[tuple[float, str, str]]: ...
    def park(self, site: str, batch: ParkedBatch) -> None: ...
    def claim(self, site: str) -> list[ParkedBatch]: ...
    def sites(self) -> list[SiteSummary]: ...
    def clear(self, site: str) -> int: ...
    def export(self, site: str) -> dict[str, Any]: ...
    def changed(self) -> bool: ...
    def page_type_votes(self, site: str) -> dict[str, tuple[float, float, float]]: ...
    def add_page_type_votes(self, votes: Mapping[str, Mapping[str, Sequence[float]]]) -> None: ...
    def close(self) -> None: ...


class TemplateStoreSQL:
    """The template store's queries, the same on both backends (written with SQLite's ``?`` placeholders); a
    backend gives ``_transaction`` and ``GREATEST`` (see :class:`templates_db.state.CrawlStateSQL`)."""

    KIND: ClassVar[str] = "template store"
    ERROR: ClassVar[type[DatabaseError]] = TemplateStoreError
    SCHEMA_VERSION: ClassVar[int] = SCHEMA_VERSION
    MIGRATIONS: ClassVar[list[list[str]]] = _MIGRATIONS
    TABLES: ClassVar[frozenset[str]] = _TABLES
    GREATEST: ClassVar[str]
    location: str

    if TYPE_CHECKING:
        @contextmanager
        def _transaction(self, write: bool = True, connection: Any = None) -> Iterator[Any]: ...

    def _own_change(self) -> None:
        """Count a promotion or retirement of this connection's (``changed`` must not report it)."""

    def templates(self, site: str, include_retired: bool = False) -> list[StoredTemplate]:
        """Return the active templates of the site's current generation (all rows with include_retired), by id."""
        where = "site = ?" if include_retired else "site = ? AND retired_at IS NULL"
        with self._transaction(write=False) as conn:
            rows = conn.execute(f"SELECT {_TEMPLATE_COLUMNS} FROM templates WHERE {where} ORDER BY id", (site,))
            return [StoredTemplate(*row) for row in rows]

    def site_state(self, site: str) -> SiteState | None:
        """Return the learning state of the site, or None when it has none."""
        with self._transaction(write=False) as conn:
            return _site_state(conn, site)

    def promote(self, site: str, batch_pages: int, candidates: Sequence[Candidate]) -> None:
        """Count a finished batch of `batch_pages` pages and add its candidates to the site's templates."""
        if batch_pages < 1:
            raise ValueError(f"a promoted batch has at least one page, not {batch_pages}")
        now = time.time()
        with self._transaction() as conn:
            conn.execute(
                f"INSERT INTO sites ({_SITE_COLUMNS}) VALUES (?, 0, ?, 1, 0, ?, ?) ON CONFLICT (site) DO UPDATE "
                "SET pages = sites.pages + excluded.pages, batches = sites.batches + 1, "
                "updated_at = excluded.updated_at",
                (site, batch_pages, now, now),
            )
            self._own_change()
            (generation,) = conn.execute("SELECT generation FROM sites WHERE site = ?", (site,)).fetchone()
            for candidate in candidates:
                share = candidate.frequency / batch_pages
                if candidate.template_id is not None:
                    matched = conn.execute(
                        "UPDATE templates SET frequency = frequency + ?, batches = batches + 1, "
                        f"share = {self.GREATEST}(share, ?), "
                        "last_seen = ? WHERE id = ? AND site = ? AND retired_at IS NULL",
                        (candidate.frequency, share, now, candidate.template_id, site),
                    ).rowcount
                    if matched:
                        continue
                # New, or its template was retired or belongs to another site: insert, or add to the row another
                # process inserted for the same text.
                conn.execute(
                    "INSERT INTO templates (site, generation, tag, text, frequency, batches, share, hits, first_seen, "
                    "last_seen) VALUES (?, ?, ?, ?, ?, 1, ?, 0, ?, ?) "
                    "ON CONFLICT (site, generation, tag, text) DO UPDATE SET frequency = templates.frequency + "
                    f"excluded.frequency, batches = templates.batches + 1, share = {self.GREATEST}(templates.share, "
                    "excluded.share), last_seen = excluded.last_seen",
                    (site, generation, candidate.tag, candidate.text, candidate.frequency, share, now, now),
                )

    def record_hits(self, site: str, hits: Mapping[int, int]) -> None:
        """Add `hits[template_id]` matched pages to each template of the site; unknown ids are ignored."""
        now = time.time()
        with self._transaction() as conn:
            conn.executemany(
                "UPDATE templates SET hits = hits + ?, last_seen = ? WHERE id = ? AND site = ?",
                [(count, now, template_id, site) for template_id, count in hits.items() if count],
            )

    def retire(self, site: str, reason: str) -> int:
        """Retire the site's active templates (layout drift), keeping them as history; return the new generation."""
        now = time.time()
        with self._transaction() as conn:
            conn.execute("UPDATE templates SET retired_at = ? WHERE site = ? AND retired_at IS NULL", (now, site))
            conn.execute(
                f"INSERT INTO sites ({_SITE_COLUMNS}) VALUES (?, 1, 0, 0, 1, ?, ?) ON CONFLICT (site) DO UPDATE "
                "SET generation = sites.generation + 1, drift_events = sites.drift_events + 1, "
                "updated_at = excluded.updated_at",
                (site, now, now),
            )
            self._own_change()
            conn.execute("INSERT INTO events (site, at, kind, detail) VALUES (?, ?, 'drift', ?)", (site, now, reason))
            (generation,) = conn.execute("SELECT generation FROM sites WHERE site = ?", (site,)).fetchone()
        return int(generation)

    def events(self, site: str) -> list[tuple[float, str, str]]:
        """Return the site's events as (at, kind, detail), oldest first."""
        with self._transaction(write=False) as conn:
            rows = conn.execute("SELECT at, kind, detail FROM events WHERE site = ? ORDER BY id", (site,))
            return [(at, kind, detail) for at, kind, detail in rows]

    def park(self, site: str, batch: ParkedBatch) -> None:
        """Save an unfinished batch for a later crawl; a batch without pages is not stored."""
        if batch.pages <= 0:
            return
        tags = json.dumps([[tag, text, frequency] for tag, text, frequency in batch.tags], ensure_ascii=False)
        with self._transaction() as conn:
            conn.execute("INSERT INTO parked (site, pages, tags) VALUES (?, ?, ?)", (site, batch.pages, tags))

    def claim(self, site: str) -> list[ParkedBatch]:
        """Take (read and delete, atomically) the site's parked batches, oldest first. A batch whose counts cannot be
        read (damage, another tool's row) is deleted with a warning; the others are taken."""
        with self._transaction() as conn:
            # One statement: two claimers at once (PostgreSQL's read committed included) each take what the other
            # did not delete, never the same batch.
            rows = conn.execute("DELETE FROM parked WHERE site = ? RETURNING id, pages, tags", (site,)).fetchall()
        batches = []
        for batch_id, pages, tags in sorted(rows):
            try:
                batches.append(ParkedBatch(int(pages), [(str(tag), str(text), int(freq))
                                                        for tag, text, freq in json.loads(tags)]))
            except (ValueError, TypeError) as exc:  # it raised after the delete: the good batches went with it
                logger.warning("Template store %s: parked batch %d of %s unreadable, dropped: %s", self.location,
                               batch_id, site, exc)
        return batches

    def sites(self) -> list[SiteSummary]:
        """Return a summary of every site with a learning state or a parked batch, sorted by site."""
        with self._transaction(write=False) as conn:
            rows = conn.execute(
                "SELECT s.site, s.generation, "
                "(SELECT COUNT(*) FROM templates t WHERE t.site = s.site AND t.generation = s.generation "
                "AND t.retired_at IS NULL), "
                "(SELECT COUNT(*) FROM templates t WHERE t.site = s.site AND t.retired_at IS NOT NULL), "
                "s.pages, s.batches, s.drift_events, s.updated_at FROM sites s "
                "UNION ALL SELECT p.site, 0, 0, 0, 0, 0, 0, MAX(p.id) * 0.0 FROM parked p "
                "WHERE p.site NOT IN (SELECT site FROM sites) GROUP BY p.site ORDER BY 1"
            )
            return [SiteSummary(*row) for row in rows]

    def clear(self, site: str) -> int:
        """Delete everything of the site (templates, state, events, parked batches); return templates deleted."""
        with self._transaction() as conn:
            deleted = conn.execute("DELETE FROM templates WHERE site = ?", (site,)).rowcount
            for table in ("sites", "events", "parked", "page_types"):
                conn.execute(f"DELETE FROM {table} WHERE site = ?", (site,))
        return int(deleted)

    def export(self, site: str) -> dict[str, Any]:
        """Return everything stored for the site as a JSON-serialisable dict (templates of all generations)."""
        with self._transaction(write=False) as conn:  # one snapshot for all parts
            state = _site_state(conn, site)
            rows = conn.execute(f"SELECT {_TEMPLATE_COLUMNS} FROM templates WHERE site = ? ORDER BY id", (site,))
            templates = [asdict(StoredTemplate(*row)) for row in rows]
            events = conn.execute("SELECT at, kind, detail FROM events WHERE site = ? ORDER BY id", (site,))
            event_dicts = [{"at": at, "kind": kind, "detail": detail} for at, kind, detail in events]
            (parked,) = conn.execute("SELECT COUNT(*) FROM parked WHERE site = ?", (site,)).fetchone()
            types = conn.execute("SELECT shape, article, list, other FROM page_types WHERE site = ? ORDER BY shape",
                                 (site,))
            page_types = {shape: [article, listing, other] for shape, article, listing, other in types}
        return {
            "site": site,
            "schema_version": SCHEMA_VERSION,
            "state": asdict(state) if state else None,
            "templates": templates,
            "events": event_dicts,
            "parked_batches": int(parked),
            "page_types": page_types,
        }

    def page_type_votes(self, site: str) -> dict[str, tuple[float, float, float]]:
        """Return the site's page-type votes: shape -> (article, list, other) (``extraction.pagetype.site``)."""
        with self._transaction(write=False) as conn:
            rows = conn.execute("SELECT shape, article, list, other FROM page_types WHERE site = ?", (site,))
            return {shape: (article, listing, other) for shape, article, listing, other in rows}

    def add_page_type_votes(self, votes: Mapping[str, Mapping[str, Sequence[float]]]) -> None:
        """Add votes (site -> shape -> (article, list, other)) to the stored ones, in one transaction."""
        now = time.time()
        rows = [(site, shape, float(v[0]), float(v[1]), float(v[2]), now)
                for site, shapes in votes.items() for shape, v in shapes.items()]
        if not rows:
            return
        with self._transaction() as conn:
            conn.executemany(
                "INSERT INTO page_types (site, shape, article, list, other, updated_at) VALUES (?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (site, shape) DO UPDATE SET article = page_types.article + excluded.article, "
                "list = page_types.list + excluded.list, other = page_types.other + excluded.other, "
                "updated_at = excluded.updated_at",
                rows)


class SQLiteTemplateStore(TemplateStoreSQL, SQLiteDatabase):
    """The template store in one SQLite file (WAL journal), safe for several processes at once."""

    WHAT_TO_DO = "set TEMPLATES_STORE to another folder"

    def __init__(self, path: str | Path, timeout: float = 30.0) -> None:
        self._data_version: int | None = None
        super().__init__(path, timeout)

    def changed(self) -> bool:
        """Return True when another connection wrote since the last call; the first call returns False."""
        with self._lock:
            try:
                (version,) = self._conn.execute("PRAGMA data_version").fetchone()
            except sqlite3.Error as exc:
                raise self._error(exc) from exc
            previous, self._data_version = self._data_version, int(version)
        return previous is not None and previous != version


class PostgresTemplateStore(TemplateStoreSQL, PostgresDatabase):
    """The template store in the ``templates`` schema of a PostgreSQL database, for workers on many machines."""

    SCHEMA = "templates"
    WHAT_TO_DO = "set TEMPLATES_STORE to another database"

    def __init__(self, uri: str, timeout: float = 30.0) -> None:
        self._total: int | None = None  # promotions and retirements of every site, at the last ``changed``
        self._own = 0  # this connection's since then
        super().__init__(uri, timeout)

    def _own_change(self) -> None:
        self._own += 1

    def changed(self) -> bool:
        """Return True when another connection promoted a batch or retired a layout since the last call (the sum of
        every site's batches and drift events moved by more than this connection's own); the first call returns
        False."""
        with self._transaction(write=False) as conn:
            (total,) = conn.execute("SELECT COALESCE(SUM(batches + drift_events), 0) FROM sites").fetchone()
        with self._lock:
            previous, own, self._total, self._own = self._total, self._own, int(total), 0
        return previous is not None and int(total) != previous + own


def _site_state(conn: Any, site: str) -> SiteState | None:
    """Return the site's state read through `conn` (inside a caller's transaction), or None."""
    row = conn.execute(f"SELECT {_SITE_COLUMNS} FROM sites WHERE site = ?", (site,)).fetchone()
    return SiteState(*row) if row else None


def store_path(location: str | Path) -> Path | None:
    """Return the SQLite file that `location` names (see open_store), or None for a PostgreSQL URI.

    Raises TemplateStoreError for an unsupported URL.
    """
    return database_path(location, STORE_FILENAME, "template store", TemplateStoreError)


def store_exists(location: str | Path) -> bool:
    """Return True when the store at `location` exists (readers check first: opening creates it, and writes the
    schema into a zero-length file, which counts as no store).

    PostgreSQL URIs count as existing (open_store decides about them).
    """
    try:
        path = store_path(location)
    except TemplateStoreError:
        return True
    return path is None or database_exists(path)


def open_store(location: str | Path) -> TemplateStore:
    """Open the template store at `location` and return it.

    `location` is a folder (file STORE_FILENAME inside it), a path ending in .sqlite3/.db, or a URL:
    "sqlite:///abs/path", or "postgresql://..." (the ``templates`` schema of that database).
    """
    if is_postgres(location):
        return PostgresTemplateStore(str(location))
    path = store_path(location)
    assert path is not None
    return SQLiteTemplateStore(path)
