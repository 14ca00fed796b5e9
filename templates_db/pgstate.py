"""The crawl state in PostgreSQL, and the site leases that let any number of workers share one crawl.

``CRAWL_STATE_STORE=postgresql://...`` opens :class:`PostgresCrawlState`: the crawl state's tables and
queries (:mod:`templates_db.state`) in the ``crawl_state`` schema of a PostgreSQL database, shared by every
worker (a ``scrapy crawl news_sites`` process, on any machine).

Site leases. Work is shared by site, never URL by URL: a worker :meth:`claims <PostgresCrawlState.claim>`
up to N due sites, crawls each with its own Scrapy scheduler (politeness, AutoThrottle and download slots
as on one machine) and :meth:`releases <PostgresCrawlState.release>` a site when its round is done. A
lease is two things:

- a session advisory lock on the site, held by the worker's lease connection. Only one session can hold
  it, and the server drops it the moment that session ends: a worker killed with ``kill -9`` (its
  sockets closed by the kernel) frees its sites at once. A worker whose machine vanished (no socket
  closed) is noticed by TCP keep-alives the lease session asks the server for, within about
  ``keepalive`` seconds; a worker that stops renewing (hung, stopped with SIGSTOP) has its sessions
  ended by the next claimer once its lease is ``keepalive`` seconds old.
- a ``leases`` row: the owner, an **epoch** raised by every claim, and the database's clock (never a
  worker's) for when it was claimed and last renewed. Every write a worker makes for a site checks,
  inside the write's transaction, that the row still names it with its epoch (``FOR SHARE``, so a
  takeover's update waits for the write to commit): a worker that lost its lease writes nothing more
  for the site (:class:`~templates_db.state.LeaseLost`), even if it does not know yet.

A site is **due** when its round is unfinished (a killed or stopped worker's, resumed by whoever claims
it, with the resume logic of one machine), when it was never crawled, or when its last round began
``interval`` seconds ago or more; unfinished rounds are claimed first. The claimer's budget for the round
(``max_pages``) goes on from what the state counted for it (``completed_in_round``), whoever crawled it.

Each worker has a name (``CRAWL_WORKER_NAME``, default the host's name), unique among the running workers
(a session lock on the name): its feed mark (the last exported line its state knows,
``CrawlStateManager._recover_feed``) is its own, and ``scrapy state list`` shows it as the sites' owner.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from templates_db.postgres import PostgresDatabase, lock_key
from templates_db.state import CrawlStateError, CrawlStateSQL, LeaseLost, Round, Transaction

logger = logging.getLogger(__name__)

# The first key of the sites' advisory locks (the second is hashtext(site)): two-key locks are a key space of
# their own, apart from the one-key locks of worker names, migrations and text hashes.
SITE_LOCKS = 59
APPLICATION = "newscorpus"  # sessions are named "newscorpus <worker>": how a stale worker's sessions are found
NOW = "CAST(EXTRACT(EPOCH FROM clock_timestamp()) AS DOUBLE PRECISION)"


@dataclass(frozen=True)
class Claim:
    """A site this worker now holds."""

    site: str
    round: Round
    epoch: int
    previous_owner: str | None  # the owner that never released it (killed, stopped, gone), None if it was free


def application_name(worker: str) -> str:
    """Return the session name of ``worker``'s connections (63 bytes at most, PostgreSQL's limit)."""
    return f"{APPLICATION} {worker}".encode()[:63].decode(errors="ignore")


class PostgresCrawlState(CrawlStateSQL, PostgresDatabase):
    """The crawl state in a PostgreSQL schema, with site leases (module docstring)."""

    SCHEMA = "crawl_state"
    WHAT_TO_DO = "set CRAWL_STATE_STORE to another database, or CRAWL_STATE_ENABLED=False for a full crawl"
    NOW = NOW

    def __init__(self, uri: str, timeout: float = 30.0, worker: str | None = None) -> None:
        self.worker = worker
        self.fencing: dict[str, int] | None = None  # site -> epoch of the leases held, from start_leasing() on
        self.stale_ended = 0  # sessions of stale workers this one ended (claim)
        self._lease: Any = None  # the lease connection
        super().__init__(uri, timeout)

    def _connect(self, application: str = APPLICATION) -> Any:
        return super()._connect(application_name(self.worker) if self.worker else application)

    # -- fencing --

    def _fence(self, conn: Transaction, sites: Iterable[str]) -> None:
        held = self.fencing
        if held is None:
            return
        wanted = sorted(set(sites))
        if not wanted:
            return
        rows = conn.execute("SELECT site, epoch FROM leases WHERE site = ANY(?) AND owner = ? FOR SHARE",
                            (wanted, self.worker)).fetchall()
        current = {site: int(epoch) for site, epoch in rows}
        lost = [site for site in wanted if site not in held or current.get(site) != held[site]]
        if lost:
            raise LeaseLost(lost)

    def _serialize(self, conn: Transaction, key: str) -> None:
        conn.execute("SELECT pg_advisory_xact_lock(?)", (lock_key(f"text:{key}"),))

    # -- leases --

    def start_leasing(self, worker: str, keepalive: float) -> None:
        """Open the lease session as ``worker``; CrawlStateError when a worker of that name already runs."""
        self.worker = worker
        self.feed_key = f"feed:{worker}"
        idle = max(1, int(keepalive / 2))
        interval = max(1, int(keepalive / 6))
        import psycopg

        try:
            # The server probes a silent worker's socket (keep-alives) and ends its session within about
            # ``keepalive`` seconds when its machine is gone: the advisory locks go with the session.
            self._lease = psycopg.connect(
                self.uri, autocommit=True, application_name=application_name(worker),
                options=f"-c search_path={self.SCHEMA} -c tcp_keepalives_idle={idle} "
                        f"-c tcp_keepalives_interval={interval} -c tcp_keepalives_count=3 "
                        f"-c tcp_user_timeout={int(keepalive * 1000)} -c lock_timeout={int(self.timeout * 1000)} "
                        "-c synchronous_commit=off",
                connect_timeout=10)
        except psycopg.Error as exc:
            raise self._error(exc) from exc
        with self._transaction(write=False, connection=self._lease) as tx:
            (free,) = tx.execute("SELECT pg_try_advisory_lock(?)", (lock_key(f"worker:{worker}"),)).fetchone()
        if not free:
            self.close_leasing()
            raise CrawlStateError(f"another worker named {worker!r} is running on the crawl state at {self.location}: "
                                  "give each worker its own CRAWL_WORKER_NAME")
        self.fencing = {}

    def claim(self, sites: Sequence[str], limit: int, interval: float, keepalive: float,
              exclude: Iterable[str] = ()) -> list[Claim]:
        """Claim up to ``limit`` due sites of ``sites`` (not ``exclude``), unfinished rounds first; start or resume
        their rounds. Stale owners' sessions (leases not renewed for ``keepalive`` seconds) are ended on the way,
        so that a later claim finds their sites free."""
        if self.fencing is None or limit <= 0:
            return []
        skipped = sorted(set(exclude) | set(self.fencing))
        with self._transaction(write=False, connection=self._lease) as tx:
            due = [row[0] for row in tx.execute(
                "SELECT c.site FROM unnest(CAST(? AS TEXT[])) WITH ORDINALITY AS c(site, position) "
                "LEFT JOIN sites s ON s.site = c.site WHERE NOT (c.site = ANY(CAST(? AS TEXT[]))) AND (s.site IS NULL "
                f"OR s.completed < s.round OR s.started_at IS NULL OR s.started_at <= {NOW} - ?) "
                "ORDER BY CASE WHEN s.site IS NULL THEN 1 WHEN s.completed < s.round THEN 0 ELSE 2 END, "
                "s.started_at NULLS FIRST, c.position", (list(sites), skipped, interval)).fetchall()]
            if not due:
                return []
            # The function scan reads the array in order and stops at the limit: locks are tried in order, and only
            # as many are taken as wanted.
            locked = [row[0] for row in tx.execute(
                "SELECT c.site FROM unnest(CAST(? AS TEXT[])) AS c(site) "
                "WHERE pg_try_advisory_lock(?, hashtext(c.site)) LIMIT ?", (due, SITE_LOCKS, limit)).fetchall()]
        claims = []
        for site in locked:
            try:
                claim = self._take(site, interval)
            except CrawlStateError:
                self._unlock(site)
                raise
            if claim is None:
                self._unlock(site)  # completed by another worker between the look and the lock
            else:
                claims.append(claim)
        if len(claims) < limit:
            self._end_stale([site for site in due if site not in locked], keepalive)
        return claims

    def _take(self, site: str, interval: float) -> Claim | None:
        assert self.fencing is not None
        with self._transaction(connection=self._lease) as tx:
            row = tx.execute(f"SELECT round, completed, started_at <= {NOW} - ? FROM sites WHERE site = ? FOR UPDATE",
                             (interval, site)).fetchone()
            if row is not None and row[1] >= row[0] and row[2] is False:
                return None
            lease = tx.execute("SELECT owner FROM leases WHERE site = ? FOR UPDATE", (site,)).fetchone()
            previous = lease[0] if lease else None
            (epoch,) = tx.execute(
                f"INSERT INTO leases (site, owner, epoch, claimed_at, renewed_at, backend, claims, takeovers) "
                f"VALUES (?, ?, 1, {NOW}, {NOW}, pg_backend_pid(), 1, 0) ON CONFLICT (site) DO UPDATE SET "
                "owner = excluded.owner, epoch = leases.epoch + 1, claimed_at = excluded.claimed_at, "
                "renewed_at = excluded.renewed_at, released_at = NULL, backend = excluded.backend, "
                "claims = leases.claims + 1, takeovers = leases.takeovers + ? RETURNING epoch",
                (site, self.worker, int(previous is not None))).fetchone()
            round_ = self._begin(tx, [site])[site]
        self.fencing[site] = int(epoch)
        return Claim(site, round_, int(epoch), previous)

    def _end_stale(self, sites: list[str], keepalive: float) -> None:
        """End the sessions of the workers holding ``sites`` whose leases were not renewed for ``keepalive`` s."""
        if not sites:
            return
        with self._transaction(write=False, connection=self._lease) as tx:
            owners = [row[0] for row in tx.execute(
                f"SELECT DISTINCT owner FROM leases WHERE site = ANY(?) AND owner IS NOT NULL AND owner <> ? "
                f"AND renewed_at < {NOW} - ?", (sites, self.worker, keepalive)).fetchall()]
            for owner in owners:
                ended = tx.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = ? "
                                   "AND pid <> pg_backend_pid()", (application_name(owner),)).fetchall()
                if ended:
                    self.stale_ended += len(ended)
                    logger.warning("Worker %s has not renewed its leases for %g s: its %d session(s) ended, its "
                                   "sites are free", owner, keepalive, len(ended))

    def renew(self) -> list[str]:
        """Renew every lease this worker holds (the database's clock); return the sites it no longer holds."""
        if not self.fencing:
            return []
        held = dict(self.fencing)
        with self._transaction(write=False, connection=self._lease) as tx:
            rows = tx.execute(f"UPDATE leases SET renewed_at = {NOW} WHERE owner = ? AND site = ANY(?) "
                              "RETURNING site, epoch", (self.worker, sorted(held))).fetchall()
        kept = {site for site, epoch in rows if held.get(site) == int(epoch)}
        lost = sorted(set(held) - kept)
        for site in lost:
            self.fencing.pop(site, None)
            self._unlock(site)
        return lost

    def release(self, site: str, round_: Round | None, finished: bool) -> None:
        """Give up the lease of ``site``; when ``finished``, its round is complete. LeaseLost when it was no longer
        this worker's (nothing written then)."""
        assert self.fencing is not None
        try:
            with self._transaction(connection=self._lease) as tx:
                self._fence(tx, [site])
                if finished and round_ is not None:
                    self._end(tx, {site: round_})
                tx.execute(f"UPDATE leases SET owner = NULL, released_at = {NOW}, renewed_at = {NOW} WHERE site = ?",
                           (site,))
        finally:
            self.fencing.pop(site, None)
            self._unlock(site)

    def held(self) -> Mapping[str, int]:
        """Return the sites this worker holds, with their epochs."""
        return dict(self.fencing or {})

    def _unlock(self, site: str) -> None:
        lease = self._lease
        if lease is None or lease.closed:
            return
        try:
            with self._transaction(write=False, connection=lease) as tx:
                tx.execute("SELECT pg_advisory_unlock(?, hashtext(?))", (SITE_LOCKS, site))
        except CrawlStateError:
            pass  # the session is gone, and its locks with it

    def close_leasing(self) -> None:
        """Close the lease session: every lock it holds is dropped (the rows stay, for ``scrapy state``)."""
        lease, self._lease = self._lease, None
        self.fencing = None
        if lease is not None:
            lease.close()

    def close(self) -> None:
        """Close the lease session and the connection (idempotent)."""
        self.close_leasing()
        super().close()
