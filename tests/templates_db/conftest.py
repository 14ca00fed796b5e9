"""The stores' tests run on both backends: ``location`` is an SQLite file or a PostgreSQL database."""

from __future__ import annotations

from pathlib import Path

import pytest

BACKENDS = ("sqlite", "postgresql")


@pytest.fixture(params=BACKENDS)
def location(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """Return where a store lives: a new SQLite file, or the URI of an empty PostgreSQL database."""
    if request.param == "sqlite":
        return str(tmp_path / "store.sqlite3")
    return str(request.getfixturevalue("pg_uri"))
