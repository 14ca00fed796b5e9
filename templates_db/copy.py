"""Copy a store from SQLite into PostgreSQL: a one-machine crawl's state and templates, for many workers.

``scrapy state copy --to postgresql://...`` (crawler/commands/state.py) calls :func:`copy_store` for the
crawl state and the template store. Both sides are opened at the current schema (the SQLite file is
migrated first if it is older), so their tables are the same; every row of every table goes over
with PostgreSQL's ``COPY`` in one transaction on the target, so a copy that fails leaves the target
as it was. A target that already holds rows is refused: the copy never merges two crawls.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from templates_db.postgres import PostgresDatabase
from templates_db.sqlite import SQLiteDatabase

CHUNK_ROWS = 5_000  # rows read from SQLite at once
# meta rows that each side writes itself
_OWN_META = ("schema_version", "kind")


class CopyError(Exception):
    """The copy cannot be made (a target with rows, another kind of store); the message says what to do."""


def copy_store(source: SQLiteDatabase, target: PostgresDatabase, on_rows: Callable[[int], Any] = lambda n: None
               ) -> dict[str, int]:
    """Copy every row of ``source`` into the empty ``target`` (same kind of store); return rows per table."""
    if source.KIND != target.KIND or source.SCHEMA_VERSION != target.SCHEMA_VERSION:
        raise CopyError(f"cannot copy a {source.KIND} (schema {source.SCHEMA_VERSION}) into a {target.KIND} "
                        f"(schema {target.SCHEMA_VERSION})")
    tables = sorted(target.TABLES)
    copied: dict[str, int] = {}
    with target._transaction() as tx:
        for table in tables:
            (rows,) = tx.execute(f"SELECT COUNT(*) FROM {table}" + (
                f" WHERE key NOT IN ({', '.join('?' * len(_OWN_META))})" if table == "meta" else ""),
                _OWN_META if table == "meta" else ()).fetchone()
            if rows:
                raise CopyError(f"the {target.KIND} at {target.location} already holds rows ({table}: {rows}): copy "
                                "into an empty database, or empty it first")
        conn = target._conn
        for table in tables:
            with source._transaction(write=False) as read:
                columns = [row[1] for row in read.execute(f"PRAGMA table_info({table})").fetchall()]
                cursor = read.execute(f"SELECT {', '.join(columns)} FROM {table}" + (
                    f" WHERE key NOT IN ({', '.join('?' * len(_OWN_META))})" if table == "meta" else ""),
                    _OWN_META if table == "meta" else ())
                count = 0
                with conn.cursor().copy(f"COPY {table} ({', '.join(columns)}) FROM STDIN") as copy:
                    while chunk := cursor.fetchmany(CHUNK_ROWS):
                        for row in chunk:
                            copy.write_row(row)
                        count += len(chunk)
                        on_rows(len(chunk))
                target.round_trips += 1
            copied[table] = count
            if "id" in columns:  # the identity goes on after the copied ids
                tx.execute(f"SELECT setval(pg_get_serial_sequence('{target.SCHEMA}.{table}', 'id'), "
                           f"COALESCE((SELECT MAX(id) FROM {table}), 0) + 1, false)")
    return copied


def rows_to_copy(source: SQLiteDatabase) -> int:
    """Return how many rows :func:`copy_store` will copy from ``source`` (for a progress bar)."""
    total = 0
    with source._transaction(write=False) as read:
        for table in source.TABLES:
            (rows,) = read.execute(f"SELECT COUNT(*) FROM {table}").fetchone()
            total += int(rows)
    return total
