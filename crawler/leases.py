"""Site leases in a crawl: which sites this worker crawls now, and when each is done.

With the crawl state in PostgreSQL (``CRAWL_STATE_STORE=postgresql://...``) any number of
``scrapy crawl news_sites`` workers, on any machines, share the crawl of one site list: each site has one
owner at a time (:mod:`templates_db.pgstate` explains the leases, their fencing and their times). This
module is the worker's side. :class:`SiteLeases`:

- claims up to ``CRAWL_LEASE_SITES`` due sites and gives them to the spider's ``start()`` one by one
  (:meth:`SiteLeases.claims`), which yields each one's requests as it would on one machine (a resumed
  round's queue included); the budget a resumed round already used comes from the state;
- looks every ``CRAWL_LEASE_CHECK`` seconds at each site it holds: when nothing of the site is waiting in
  the scheduler (:class:`crawler.scheduler.SiteScheduler` counts them) or in progress in the engine
  (downloading, in its callback, in the item pipelines), the site's round is done: the pipelines are told
  (:data:`site_released`: the extraction workers park the site's template batch, the page-type votes are
  written), then the round is completed and the lease released in one transaction, and the next due site
  is claimed;
- renews its leases every ``CRAWL_LEASE_KEEPALIVE`` / 4 seconds. A lease found lost (another worker took
  it over) stops the site here: its requests still waiting are left out (``lease/dropped_requests``), and
  the state refuses every write of it (``state/error/lease_lost``);
- on close releases what it holds without completing the rounds (Ctrl-C, a CLOSESPIDER limit): whoever
  claims them next resumes them.

When no site is due, the worker ends (``finished``), or with ``CRAWL_LEASE_WAIT`` waits for one, looking
every ``CRAWL_LEASE_POLL`` seconds. The crawl state database going away stops the worker (reason
``crawl_state_lost``, exit status 1): it can record nothing, and its leases went with its session, so
every page it fetched on would be fetched again by the next owner; what it completed is committed, and
its sites are free for any worker once the database is back.

Stats: ``lease/claimed``, ``lease/released``, ``lease/taken_over`` (claims of a site whose owner never
released it), ``lease/lost``, ``lease/stale_ended`` (sessions of workers that stopped renewing, ended so
their sites could be claimed), ``lease/dropped_requests``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import time
from collections import Counter
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from scrapy import Request
from twisted.internet import task

from crawler.sites import duration
from extraction.config import ComponentConfig
from templates_db.pgstate import Claim

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

    from crawler.state import CrawlStateManager

logger = logging.getLogger(__name__)

# Sent (and awaited) before a site's lease is released: handlers(site=...) write what they keep of the site in this
# process (the extraction workers' template batch, the page-type votes), so the next owner starts from it.
site_released = object()
# Finish reasons that end the crawl command with exit status 1 (set by the spider, read by crawler/commands/crawl.py).
FATAL_REASONS = frozenset({"crawl_state_lost"})
fatal_closes: list[str] = []


@dataclass(frozen=True)
class LeaseConfig(ComponentConfig):
    """The CRAWL_LEASE_* settings (used with a PostgreSQL crawl state only)."""

    prefix: ClassVar[str] = "CRAWL_LEASE"
    # This worker's name: unique among the running workers (a second one of the same name is refused), shown as
    # the owner of its sites, and %(worker)s in a feed URI. Empty: the host's name (one worker per machine).
    worker: str = ""
    # Sites crawled at once. Each keeps its own politeness (CONCURRENT_REQUESTS_PER_DOMAIN, AutoThrottle), so a
    # worker's throughput is about this many sites' polite rates: 16 kept the 2-core dev machine's extraction
    # busy on the demo sites (bench/results/distributed.md).
    sites: int = 16
    # Seconds a lease lives without renewal: a worker whose machine vanished, or that hangs, loses its sites after
    # about this long (a killed one at once). Renewed every keepalive / 4 s.
    keepalive: float = 60.0
    # A site's next round begins this long after its last one began (seconds, or 30m, 6h, 1d): workers started
    # by cron at different moments do not crawl a site twice in one period. Set it a little under the period.
    interval: str = "1h"
    wait: bool = False  # when no site is due: wait for one (a long-running worker) instead of ending
    poll: float = 30.0  # s between looks for due sites while waiting (a site this worker finishes: at once)
    check: float = 0.5  # s between looks at whether a held site is done

    def validate(self) -> None:
        """Raise ValueError naming the setting when a value cannot work."""
        if self.sites < 1:
            raise ValueError(f"CRAWL_LEASE_SITES must be >= 1, got {self.sites}")
        if self.keepalive < 2:
            raise ValueError(f"CRAWL_LEASE_KEEPALIVE must be at least 2 seconds, got {self.keepalive}")
        if duration(self.interval) is None:
            raise ValueError(f"CRAWL_LEASE_INTERVAL must be seconds or a duration such as 30m, 6h, 1d, "
                             f"got {self.interval!r}")
        if self.poll <= 0 or self.check <= 0:
            raise ValueError("CRAWL_LEASE_POLL and CRAWL_LEASE_CHECK must be positive numbers of seconds")
        if any(ch.isspace() for ch in self.worker) or len(self.worker.encode()) > 48:
            raise ValueError(f"CRAWL_LEASE_WORKER must be a name without spaces, at most 48 bytes, got "
                             f"{self.worker!r}")

    @property
    def worker_name(self) -> str:
        """Return the worker's name: CRAWL_LEASE_WORKER, else the host's name."""
        return self.worker or socket.gethostname().split(".")[0] or "worker"

    @property
    def interval_seconds(self) -> float:
        """Return CRAWL_LEASE_INTERVAL in seconds."""
        return duration(self.interval) or 0.0


class SiteLeases:
    """This worker's site leases (module docstring)."""

    def __init__(self, config: LeaseConfig, manager: CrawlStateManager, sites: Sequence[str], crawler: Crawler,
                 stat: Callable[[str, int], Any]) -> None:
        self.config = config
        self.manager = manager
        self.sites = list(sites)
        self.crawler = crawler
        self.stat = stat
        self.held: dict[str, Claim] = {}
        self.starting: set[str] = set()  # claimed, its start requests not all yielded yet
        self.finishing: set[str] = set()
        self.done_here: set[str] = set()  # completed (or lost) in this run: not claimed again by it
        self._wake = asyncio.Event()
        self._loop: task.LoopingCall | None = None
        self._next_renew = 0.0
        self._closing = False
        self._stale_seen = 0
        self._tasks: set[asyncio.Future[None]] = set()

    # -- claiming --

    async def claims(self) -> AsyncIterator[Claim]:
        """Yield each site claimed, as capacity frees; end when no site is due (unless CRAWL_LEASE_WAIT)."""
        self._start_checks()
        while not self._closing:
            free = self.config.sites - len(self.held)
            claimed = self._claim(free) if free > 0 else []
            self.starting.update(claim.site for claim in claimed)  # not done before their requests are out
            for claim in claimed:
                try:
                    yield claim
                finally:
                    self.starting.discard(claim.site)
            if claimed:
                continue  # capacity may be left: look again at once
            if not self.held and not self.finishing and not self.config.wait:
                logger.info("No site due: this worker is done")
                return
            self._wake.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), timeout=self.config.poll)

    def _claim(self, limit: int) -> list[Claim]:
        claims = self.manager.claim(limit, self.config.interval_seconds, self.config.keepalive,
                                    exclude=self.done_here | self.finishing)
        ended = self.manager.stale_ended()
        if ended > self._stale_seen:
            self.stat("lease/stale_ended", ended - self._stale_seen)
            self._stale_seen = ended
        for claim in claims:
            self.held[claim.site] = claim
            self.stat("lease/claimed", 1)
            if claim.previous_owner is not None:
                self.stat("lease/taken_over", 1)
            logger.info("Site %s: claimed (lease epoch %d%s), %s round %d", claim.site, claim.epoch,
                        f", taken over from {claim.previous_owner}" if claim.previous_owner else "",
                        "resuming" if claim.round.resumed else "starting", claim.round.number)
        return claims

    # -- watching the held sites --

    def _start_checks(self) -> None:
        slot = getattr(self.crawler.engine, "_slot", None)
        scheduler = getattr(slot, "scheduler", None)
        if scheduler is not None and hasattr(scheduler, "admit"):
            scheduler.admit = self.admit  # the requests of a site lost are left out
        if self._loop is None:
            self._loop = task.LoopingCall(self._check)
            self._loop.start(self.config.check, now=False).addErrback(
                lambda failure: logger.error("Site lease check failed: %s", failure.getTraceback()))

    def admit(self, request: Request) -> bool:
        """Return False for a request of a site this worker no longer holds (the scheduler leaves it out)."""
        site = request.meta.get("site")
        if site is None or site in self.held:
            return True
        self.stat("lease/dropped_requests", 1)
        return False

    def _check(self) -> None:
        if self._closing or not self.manager.active:
            return
        if time.monotonic() >= self._next_renew:
            self._next_renew = time.monotonic() + self.config.keepalive / 4
            for site in self.manager.renew():
                self.lost(site)
        if not self.manager.active:
            return
        busy = self._busy()
        for site in list(self.held):
            if site not in self.starting and site not in self.finishing and not busy[site]:
                self.finishing.add(site)
                finish = asyncio.ensure_future(self._finish(site))
                self._tasks.add(finish)
                finish.add_done_callback(self._tasks.discard)

    def _busy(self) -> Counter[str]:
        """Return per site the requests this worker has of it: waiting in the scheduler, or in the engine (being
        downloaded, in a callback, its items in the pipelines: Scrapy's own idle test, per site)."""
        engine = self.crawler.engine
        slot = getattr(engine, "_slot", None)
        counts: Counter[str] = Counter()
        if slot is None:
            return counts
        pending = getattr(slot.scheduler, "pending", None)
        if pending is None:
            raise RuntimeError("site leases need SCHEDULER = 'crawler.scheduler.SiteScheduler'")
        counts.update(pending)
        counts.update(request.meta.get("site") for request in slot.inprogress)
        return counts

    async def _finish(self, site: str) -> None:
        """The site's round is done here: let the pipelines write what they keep of it, complete the round and
        release the lease, and wake ``claims`` for the next site."""
        try:
            await self.crawler.signals.send_catch_log_async(signal=site_released, site=site)
            claim = self.held.get(site)
            if claim is not None and self.manager.release(site, finished=True):
                self.stat("lease/released", 1)
                logger.info("Site %s: round %d complete, lease released", site, claim.round.number)
        finally:
            self.held.pop(site, None)
            self.finishing.discard(site)
            self.done_here.add(site)
            self._wake.set()

    def lost(self, site: str) -> None:
        """The lease of ``site`` went to another worker: stop crawling it here."""
        if self.held.pop(site, None) is not None:
            self.stat("lease/lost", 1)
            logger.warning("Site %s: lease lost (another worker took it over); its waiting requests are left out",
                           site)
        self.done_here.add(site)
        self._wake.set()

    def lost_all(self) -> None:
        """The lease session is gone (the database went away): every site is lost."""
        for site in list(self.held):
            self.lost(site)

    # -- closing --

    async def close(self, reason: str = "") -> None:
        """Release every site still held, its round left to resume (connected to spider_closed)."""
        self._closing = True
        self._wake.set()
        if self._loop is not None and self._loop.running:
            self._loop.stop()
        for site in list(self.held):
            if self.manager.active:
                await self.crawler.signals.send_catch_log_async(signal=site_released, site=site)
                if self.manager.release(site, finished=False):
                    self.stat("lease/released", 1)
                    logger.info("Site %s: lease released, its round left to resume (%s)", site, reason or "closed")
            self.held.pop(site, None)
