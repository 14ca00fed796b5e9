from __future__ import annotations

from scrapy.utils.reactor import install_reactor

# The project runs on Twisted's asyncio reactor (scrapy-playwright needs it); components
# built in unit tests check for it.
install_reactor("twisted.internet.asyncioreactor.AsyncioSelectorReactor")


# --- PostgreSQL: a throwaway server for the tests of the stores' second backend and of site leases ---------------

import os  # noqa: E402
from collections.abc import Iterator  # noqa: E402

import pytest  # noqa: E402

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
