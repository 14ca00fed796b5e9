"""One SQLite file that several crawl processes share: the base of the template store and the crawl state.

:class:`SQLiteDatabase` opens the file, refuses a corrupt one (``PRAGMA quick_check``, read-only,
before anything is written), puts it in WAL mode, migrates its schema in one transaction, and runs
blocks of statements as ``BEGIN IMMEDIATE`` transactions (the write lock taken up front, so two
processes never deadlock upgrading a read lock). Subclasses name their schema (``MIGRATIONS``,
``TABLES``), what they are (``KIND``), the exception they raise (``ERROR``) and the setting that
points elsewhere (``WHAT_TO_DO``). No Scrapy import here.
"""

from __future__ import annotations

import re
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, ClassVar

# Column types the two dialects spell differently, in the stores' migrations (PostgreSQL's: templates_db/postgres.py).
SQLITE_TYPES = {"id": "INTEGER PRIMARY KEY", "real": "REAL", "blob": "BLOB"}
# Suffixes that make a location the database file itself rather than a folder.
FILE_SUFFIXES = (".sqlite3", ".sqlite", ".db")
# "scheme://" at the start of a location marks a URL (a Windows drive "C:\" does not match).
URL_RE = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*://")


class DatabaseError(Exception):
    """The database cannot be used (corrupt file, newer/unknown schema, locked); the message says which file and
    what to do."""


class SQLiteDatabase:
    """A schema-versioned SQLite file in WAL mode, safe for several processes and threads at once."""

    KIND: ClassVar[str] = "database"  # what the file is, in messages ("template store", "crawl state")
    ERROR: ClassVar[type[DatabaseError]] = DatabaseError
    WHAT_TO_DO: ClassVar[str] = "use another file"
    SCHEMA_VERSION: ClassVar[int] = 1
    # Index i brings the schema from version i to i + 1; version 0 is an empty file. Each entry is a list of
    # single statements (not a script: executescript would commit a migration half-way).
    # Column types are written {id}, {real} and {blob}: the same migrations make the PostgreSQL schema
    # (templates_db/postgres.py).
    MIGRATIONS: ClassVar[list[list[str]]] = []
    TABLES: ClassVar[frozenset[str]] = frozenset()  # tables the current schema must have
    GREATEST: ClassVar[str] = "MAX"  # the two-argument maximum (PostgreSQL: GREATEST)
    TYPES: ClassVar[dict[str, str]] = SQLITE_TYPES

    def __init__(self, path: str | Path, timeout: float = 30.0) -> None:
        self.path = Path(path)
        self.location = str(self.path)
        self._lock = threading.RLock()  # one connection shared by the threads of a process
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            # timeout is SQLite's busy timeout: how long a writer waits for another process's lock.
            self._conn = sqlite3.connect(self.path, timeout=timeout, isolation_level=None, check_same_thread=False)
        except (OSError, sqlite3.Error) as exc:
            raise self.ERROR(f"cannot open the {self.KIND} {self.location}: {exc}") from exc
        try:
            self._check_integrity()
            self._version()  # read-only: a file of another kind is refused before WAL mode rewrites its header
            self._set_wal(timeout)
            self._conn.execute("PRAGMA synchronous=NORMAL")
            self._check_schema()
        except sqlite3.Error as exc:
            self._conn.close()
            raise self._error(exc) from exc
        except BaseException:
            self._conn.close()
            raise

    @classmethod
    def migrations(cls) -> list[list[str]]:
        """Return the store's migrations with this dialect's column types."""
        return [[statement.format(**cls.TYPES) for statement in step] for step in cls.MIGRATIONS]

    def _set_wal(self, timeout: float) -> None:
        """Put the file in WAL mode (once: the mode is kept in the file). Switching needs the file to itself,
        and SQLite does not wait for that: when another process opens the new file at the same moment (the
        crawl's extraction workers do), retry until ``timeout``."""
        deadline = time.monotonic() + timeout
        delay = 0.01
        while True:
            try:
                mode = self._conn.execute("PRAGMA journal_mode").fetchone()[0]
                if str(mode).lower() != "wal":
                    self._conn.execute("PRAGMA journal_mode=WAL")
                return
            except sqlite3.OperationalError as exc:
                if ("locked" not in str(exc) and "busy" not in str(exc)) or time.monotonic() > deadline:
                    raise
            time.sleep(delay)
            delay = min(delay * 2, 0.5)

    def _corrupt(self, detail: object) -> DatabaseError:
        return self.ERROR(
            f"the {self.KIND} {self.location} is corrupt ({detail}); it was left untouched: "
            f"move it aside or restore a backup, or {self.WHAT_TO_DO}"
        )

    def _check_integrity(self) -> None:
        # Read-only, before any pragma that could write to the file.
        try:
            rows = self._conn.execute("PRAGMA quick_check").fetchall()
        except sqlite3.DatabaseError as exc:
            raise self._error(exc) from exc  # corrupt, or locked by another process (which is no damage)
        if rows != [("ok",)]:
            raise self._corrupt("; ".join(str(row[0]) for row in rows[:3]))

    def _version(self) -> int:
        tables = {row[0] for row in self._conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if not tables:
            return 0
        row = kind = None
        if "meta" in tables:
            row = self._conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
            kind = self._conn.execute("SELECT value FROM meta WHERE key = 'kind'").fetchone()
        if row is None or not str(row[0]).isdigit() or (kind is not None and kind[0] != self.KIND):
            raise self.ERROR(
                f"{self.location} is an SQLite database but not a {self.KIND} "
                f"(tables: {', '.join(sorted(tables))}); {self.WHAT_TO_DO}"
            )
        version = int(row[0])
        if version > self.SCHEMA_VERSION:
            raise self.ERROR(
                f"the {self.KIND} {self.location} was written by a newer version (schema {version}, this code "
                f"reads up to {self.SCHEMA_VERSION}); upgrade, or {self.WHAT_TO_DO}"
            )
        if version == self.SCHEMA_VERSION and not tables >= self.TABLES:
            raise self._corrupt(f"schema {version} without table(s) {', '.join(sorted(self.TABLES - tables))}")
        return version

    def _check_schema(self) -> None:
        try:
            if self._version() == self.SCHEMA_VERSION:
                return
            with self._transaction():
                # Read again under the write lock: another process may have migrated meanwhile.
                version = self._version()
                for statements in self.migrations()[version:]:
                    for statement in statements:
                        self._conn.execute(statement)
                for key, value in (("schema_version", str(self.SCHEMA_VERSION)), ("kind", self.KIND)):
                    self._conn.execute(
                        "INSERT INTO meta (key, value) VALUES (?, ?) "
                        "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                        (key, value),
                    )
        except sqlite3.Error as exc:
            raise self._error(exc) from exc

    def _error(self, exc: sqlite3.Error) -> DatabaseError:
        if "malformed" in str(exc) or "not a database" in str(exc):
            return self._corrupt(exc)
        if "locked" in str(exc) or "busy" in str(exc):
            return self.ERROR(f"the {self.KIND} {self.location} is locked by another process ({exc}): wait for it "
                              f"to finish, or {self.WHAT_TO_DO}")
        return self.ERROR(f"{self.KIND} {self.location}: {exc}")

    @contextmanager
    def _transaction(self, write: bool = True, connection: Any = None) -> Iterator[Any]:
        """Run a block in one transaction: IMMEDIATE (write lock taken up front) or a read snapshot (on the one
        connection: ``connection`` is the server backend's)."""
        with self._lock:
            try:
                self._conn.execute("BEGIN IMMEDIATE" if write else "BEGIN")
                try:
                    yield self._conn
                    self._conn.execute("COMMIT")
                except BaseException:
                    if self._conn.in_transaction:
                        self._conn.execute("ROLLBACK")
                    raise
            except sqlite3.Error as exc:
                raise self._error(exc) from exc

    def close(self) -> None:
        """Close the connection (idempotent)."""
        with self._lock:
            self._conn.close()


def database_path(location: str | Path, filename: str, kind: str,
                  error: type[DatabaseError] = DatabaseError) -> Path | None:
    """Return the SQLite file that ``location`` names, or None for a URL of another backend (postgresql://).

    ``location`` is a folder (``filename`` inside it), a path ending in .sqlite3/.sqlite/.db (or an existing
    file), or ``sqlite:///path``; any other URL raises ``error``.
    """
    text = str(location)
    if URL_RE.match(text):
        scheme = text.split("://", 1)[0].lower()
        if scheme in ("postgresql", "postgres"):
            return None
        if scheme != "sqlite":
            raise error(f"unsupported {kind} URL {text!r}: use a folder, sqlite:///path or postgresql://...")
        text = text[len("sqlite://") :]
    path = Path(text).expanduser()
    if path.suffix.lower() not in FILE_SUFFIXES and not path.is_file():
        path = path / filename
    return path


def database_exists(path: Path) -> bool:
    """Return whether ``path`` holds a database for a reader to open: a file with something in it. A zero-length
    file is none yet (SQLite would take it as an empty database, and opening it writes the schema into it)."""
    try:
        return path.is_file() and path.stat().st_size > 0
    except OSError:
        return False
