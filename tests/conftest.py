from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from scrapy.utils.reactor import install_reactor

# The project runs on Twisted's asyncio reactor (scrapy-playwright needs it); components
# built in unit tests check for it.
install_reactor("twisted.internet.asyncioreactor.AsyncioSelectorReactor")


# The tests write under their temporary folders only: the user's output/, template store and site lists, and every
# file git tracks, are as they were when the session ends, or the session fails (and says what changed).
REPO = Path(__file__).resolve().parent.parent
WATCHED = ("output", "templates_db", "sites", "bench/results", "models")


def user_files() -> dict[str, tuple[int, int]]:
    """Return {path: (size, mtime_ns)} of the watched folders' files, and git's list of changed files."""
    files = {}
    for folder in WATCHED:
        for path in sorted((REPO / folder).rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                stat = path.stat()
                files[str(path.relative_to(REPO))] = (stat.st_size, stat.st_mtime_ns)
    try:
        changed = subprocess.run(["git", "status", "--porcelain"], cwd=REPO, capture_output=True, text=True,
                                 timeout=60, check=True).stdout
    except (OSError, subprocess.SubprocessError):  # not a git checkout: the folders alone
        changed = ""
    files.update({f"git status: {line}": (0, 0) for line in changed.splitlines()})
    return files


def pytest_sessionstart(session: pytest.Session) -> None:
    session.config.stash[_BEFORE] = user_files()


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    before = session.config.stash.get(_BEFORE, None)
    if before is None or hasattr(session.config, "workerinput"):
        return
    after = user_files()
    changed = sorted(name for name in before.keys() | after.keys() if before.get(name) != after.get(name))
    if changed:
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        message = ("The tests changed files outside their temporary folders (tests must write under tmp_path): "
                   + ", ".join(changed[:20]) + (f" and {len(changed) - 20} more" if len(changed) > 20 else ""))
        if reporter is not None:
            reporter.write_line(f"ERROR: {message}", red=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


_BEFORE = pytest.StashKey[dict[str, tuple[int, int]]]()


# --- PostgreSQL: a throwaway server for the tests of the stores' second backend and of site leases ---------------

from templates_db.pgcluster import Cluster, server_programs  # noqa: E402

PG_DATABASE = "tests"


@pytest.fixture(scope="session")
def postgres() -> Iterator[Cluster]:
    """A PostgreSQL server of the test session's own on a free loopback port, stopped by its PID at the end."""
    if server_programs() is None:
        reason = "PostgreSQL is not installed: `make test` installs Debian's postgresql"
        if os.environ.get("CI"):
            pytest.fail(reason)  # CI installs it: a missing server must not pass as skipped tests
        pytest.skip(reason)
    with Cluster() as cluster:
        cluster.create_database(PG_DATABASE)
        yield cluster


@pytest.fixture
def pg_uri(postgres: Cluster) -> str:
    """Return the URI of an empty test database: the stores' schemas dropped, every other session ended."""
    import psycopg

    postgres.terminate(PG_DATABASE)
    with psycopg.connect(postgres.uri(PG_DATABASE), autocommit=True) as conn:
        conn.execute("DROP SCHEMA IF EXISTS crawl_state, templates CASCADE")
    return postgres.uri(PG_DATABASE)
