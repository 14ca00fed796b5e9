"""The crawl state in a crawl: which URLs to fetch on this run, and what each completed page writes.

:class:`CrawlStateConfig` holds the CRAWL_STATE_* settings; :class:`CrawlStateManager` is what the
spider and the state pipeline (``pipelines/state.py``) call. It wraps the store
(:mod:`templates_db.state`, which explains rounds, resumes and writes) so that a store that cannot be
opened (corrupt, locked, newer schema) is reported once and the crawl goes on as a full crawl, and an
error during the crawl is counted (``state/error``) and the operation skipped.

With a PostgreSQL state (``CRAWL_STATE_STORE=postgresql://...``) it is shared by every worker, and the sites are
leased (:mod:`crawler.leases`): rounds begin as sites are claimed and end as they are released, every write is
checked against the lease, and a state that cannot be opened or that goes away mid-crawl stops the worker
(``fatal``, ``on_lost``) instead of a full crawl, which would fetch again what the other workers do.

Stats: ``state/resumed`` and ``state/new_round`` (sites), ``state/error/<open|locked|corrupt|write|read|lease_lost|
connection>``, ``state/calls`` and ``state/ms`` (operations on the state and their time), ``state/db/round_trips``
and ``state/db/ms`` (a PostgreSQL state: statements sent and the time spent waiting for the server),
``state/completed``, ``state/recovered_exports``; the spider's ``crawl/skipped/known``, ``crawl/skipped/visited``,
``crawl/skipped/lastmod``, ``crawl/skipped/before_since``, ``crawl/revisit``, ``crawl/recrawl``,
``crawl/queued_from_state``, ``crawl/unchanged/not_modified``; the pipeline's ``export/skipped/...``.
"""

from __future__ import annotations

import contextlib
import json
import logging
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, ClassVar, TypeVar

from crawler.outputs import state_location
from crawler.sites import RECRAWL_MODES, duration
from extraction.config import ComponentConfig
from extraction.dedup import Fingerprint
from templates_db.postgres import ConnectionLost, is_postgres
from templates_db.state import (
    CrawlState,
    CrawlStateError,
    KnownPage,
    LeaseLost,
    PageOutcome,
    QueuedPage,
    Round,
    open_state,
)

logger = logging.getLogger(__name__)

T = TypeVar("T")
# A killed run's feed is read from the last completed page's line on: one record's line, or a few.
MAX_FEED_TAIL_BYTES = 16 * 1024 * 1024
Count = Callable[[str], Any]

# Failure reasons worth another try on the next run; other failures (404, not HTML, too large) are final.
TRANSIENT_ERRORS = frozenset({
    "timeout", "connection_refused", "connection_lost", "dns", "cancelled", "browser_error", "render_stuck",
    "http_408", "http_429", "http_500", "http_502", "http_503", "http_504", "extract_timeout", "extract_crashed",
    "robots_unavailable",
})


@dataclass(frozen=True)
class CrawlStateConfig(ComponentConfig):
    """The CRAWL_STATE_* settings."""

    prefix: ClassVar[str] = "CRAWL_STATE"
    enabled: bool = True  # off: every run is a full crawl (the spider's in-memory seen set only)
    # folder, .sqlite3 path, sqlite:/// URL or postgresql:// URI (workers on many machines: docs/distributed.md); empty:
    # the site list's own (crawler/outputs.py), or TEMPLATES_STORE's database when that is a postgresql:// URI
    store: str = ""
    recrawl: str = "new"  # new: known articles are never refetched; changed: refetched, exported when changed
    revisit: str = "0"  # seconds (or 30m, 6h, 1d) before a new round fetches a hub (start/list page, feed) again
    max_attempts: int = 3  # runs that retry a page whose fetch failed transiently
    timeout: float = 10.0  # seconds a write waits for another process's lock before the state is given up

    def validate(self) -> None:
        """Raise ValueError naming the setting when a value cannot work."""
        if self.recrawl not in RECRAWL_MODES:
            raise ValueError(f"CRAWL_STATE_RECRAWL must be one of {', '.join(RECRAWL_MODES)}, got {self.recrawl!r}")
        if duration(self.revisit) is None:
            raise ValueError(f"CRAWL_STATE_REVISIT must be seconds or a duration such as 30m, 6h, 1d, "
                             f"got {self.revisit!r}")
        if self.max_attempts < 1:
            raise ValueError(f"CRAWL_STATE_MAX_ATTEMPTS must be >= 1, got {self.max_attempts}")
        if self.timeout <= 0:
            raise ValueError(f"CRAWL_STATE_TIMEOUT must be a positive number of seconds, got {self.timeout}")

    @property
    def revisit_seconds(self) -> float:
        """Return CRAWL_STATE_REVISIT in seconds."""
        return duration(self.revisit) or 0.0

    def location(self, sites_file: str, templates_store: str = "") -> str:
        """Return where the state lives: CRAWL_STATE_STORE, else TEMPLATES_STORE's database when that is a
        PostgreSQL URI (one database holds both), else the site list's own state
        (:func:`crawler.outputs.state_location`: ``my-sites.state`` beside ``my-sites.yaml``)."""
        if self.store:
            return self.store
        if is_postgres(templates_store):  # schemas crawl_state and templates
            return templates_store
        return state_location(sites_file)


def parse_since(value: str | None) -> float | None:
    """Return ``-a since=`` (an ISO 8601 date or time; naive = UTC) as a Unix time; ValueError when unreadable."""
    if not value:
        return None
    try:
        moment = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(f"since must be an ISO 8601 date or time such as 2026-11-24 or 2026-11-24T06:00, "
                         f"got {value!r}") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()


def date_timestamp(value: str | None) -> float | None:
    """Return an ISO 8601 date (a record's or a feed's) as a Unix time, None when absent or unreadable."""
    if not value:
        return None
    try:
        return parse_since(value)
    except ValueError:
        return None


class CrawlStateManager:
    """The crawl's handle on its state: rounds, what is known, the queue, completed pages."""

    def __init__(self, config: CrawlStateConfig, location: str, count: Count,
                 record: Callable[[str, Any], Any] | None = None) -> None:
        self.config = config
        self.location = location
        self.state: CrawlState | None = None  # open from begin() on, unless disabled or unusable
        self.count = count
        self.record = record or (lambda key, value: None)  # sets a stats value (the database's cost)
        self._sites: list[str] = []
        self.rounds: dict[str, Round] = {}
        self.leased = False  # the sites are leased (a PostgreSQL state): rounds follow the claims
        self.fatal: CrawlStateError | None = None  # a shared state that cannot be used: the worker must stop
        self.gone = False  # the shared state went away mid-crawl: nothing more is exported (pipelines/state.py)
        self.on_lost: Callable[[Exception], Any] = lambda exc: None  # the state went away mid-crawl
        self._warned = False
        self._lease_lost = False
        self.calls = 0  # operations on the state, and the time they took (state/calls, state/ms)
        self.seconds = 0.0

    @classmethod
    def from_settings(cls, config: CrawlStateConfig, sites_file: str, count: Count,
                      record: Callable[[str, Any], Any] | None = None, templates_store: str = "") -> CrawlStateManager:
        """Return the manager of the state that CRAWL_STATE_STORE names, else of TEMPLATES_STORE's PostgreSQL
        database, else of the site list's own state."""
        return cls(config, config.location(sites_file, templates_store), count, record)

    def _open(self) -> CrawlState | None:
        """Open the state; one that cannot be used is reported and counted, and the crawl is a full crawl."""
        if not self.config.enabled:
            logger.info("Crawl state off (CRAWL_STATE_ENABLED=False): a full crawl")
            return None
        try:
            state = open_state(self.location, self.config.timeout)
        except CrawlStateError as exc:
            self.count(f"state/error/{_kind(exc)}")
            if is_postgres(self.location):  # shared: a full crawl would fetch again what every other worker does
                logger.error("Crawl state unusable, this worker stops: %s", exc)
                self.fatal = exc
                return None
            logger.error("Crawl state unusable, crawling everything as a full crawl: %s", exc)
            return None
        logger.info("Crawl state: %s", state.location)
        return state

    @property
    def active(self) -> bool:
        """Return True while the state is in use."""
        return self.state is not None

    def _safe(self, operation: Callable[[CrawlState], T], default: T, what: str) -> T:
        state = self.state
        if state is None:
            return default
        started = time.perf_counter()
        try:
            return operation(state)
        except LeaseLost as exc:  # another worker holds the site now: its own fetch of the page counts
            self.count("state/error/lease_lost")
            if not self._lease_lost:
                logger.warning("Crawl state: %s (counted as state/error/lease_lost from now on)", exc)
                self._lease_lost = True
            return default
        except ConnectionLost as exc:
            self._lost(exc)
            return default
        except CrawlStateError as exc:
            self.count(f"state/error/{what}")
            if not self._warned:
                logger.warning("Crawl state error (%s), going on without that step: %s", what, exc)
                self._warned = True
            return default
        finally:
            self.calls += 1
            self.seconds += time.perf_counter() - started

    def _lost(self, exc: Exception) -> None:
        """The database went away: counted and reported once, the worker told to stop (``on_lost``)."""
        if self.state is None:
            return
        self.count("state/error/connection")
        self.gone = True
        logger.error("Crawl state lost, this worker stops: %s", exc)
        self._report_cost()
        state, self.state = self.state, None
        with contextlib.suppress(CrawlStateError):
            state.close()
        self.on_lost(exc)

    # -- the run --

    def begin(self, sites: Sequence[str], worker: str | None = None, keepalive: float = 60.0) -> None:
        """Open the state and start or resume each site's round; a state that cannot is given up (a full crawl).

        A PostgreSQL state is shared: the sites are leased (``worker``: this worker's name, ``keepalive``: its
        leases' life without renewal) and their rounds begin as they are claimed (:meth:`claim`)."""
        self._sites = list(sites)
        state = self.state = self._open()
        if state is None:
            return
        if is_postgres(self.location):
            try:
                state.start_leasing(worker or "worker", keepalive)  # type: ignore[attr-defined]
            except CrawlStateError as exc:
                self.count(f"state/error/{_kind(exc)}")
                logger.error("Crawl state unusable, this worker stops: %s", exc)
                self.fatal, self.state = exc, None
                state.close()
                return
            self.leased = True
            self._safe(self._recover_feed, None, "write")
            return
        try:
            self.rounds = state.begin_run(sites)
        except CrawlStateError as exc:
            self.count(f"state/error/{_kind(exc)}")
            logger.error("Crawl state unusable, crawling everything as a full crawl: %s", exc)
            self.state = None
            state.close()
            return
        for site, round_ in self.rounds.items():
            self.count("state/resumed" if round_.resumed else "state/new_round")
            logger.info("Site %s: %s round %d", site, "resuming" if round_.resumed else "starting", round_.number)
        self._safe(self._recover_feed, None, "write")

    def _recover_feed(self, state: CrawlState) -> None:
        """Complete the pages whose lines a killed run wrote to its feed after the last page it completed.

        A record's line is written, then its page completed in the state: a kill between the two leaves a line
        the state does not know. The state holds the feed file and its size after the last completed page
        (``PageOutcome.feed``); every whole line after that is such a record, so its page is completed now
        (done, exported), not fetched and exported a second time. Stat: ``state/recovered_exports``.
        """
        mark = state.feed_mark()
        if mark is None:
            return
        path, size = mark
        try:
            with open(path, "rb") as feed:
                feed.seek(size)
                tail = feed.read(MAX_FEED_TAIL_BYTES)
        except OSError:
            return  # the feed is gone or elsewhere: nothing to recover
        offset = size
        for line in tail.split(b"\n")[:-1]:  # whole lines only: a cut last line was never exported
            offset += len(line) + 1
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if not isinstance(record, dict):
                continue
            url, site, depth, status = record.get("url"), record.get("site"), record.get("depth"), record.get("status")
            if not isinstance(url, str) or not isinstance(site, str):
                continue
            state.complete(PageOutcome(
                url=url, site=site, status="done", depth=depth if isinstance(depth, int) else 0, round=self.round(site),
                fetched_at=time.time(), http_status=status if isinstance(status, int) else None,
                page_type=record.get("page_type"),
                canonical=record.get("canonical_url"), duplicate_of=record.get("duplicate_of"), exported=True,
                error=record.get("error"), feed=(path, offset), recovered=self.leased))
            self.count("state/recovered_exports")
            logger.info("Recovered %s: exported to %s by the killed run, not in its state", url, path)

    def end(self, reason: str) -> None:
        """Close the state; the rounds are complete when the crawl finished cleanly (leased sites: as each was
        released, crawler/leases.py)."""
        if self.state is None:
            return
        if not self.leased:
            self._safe(lambda state: state.end_run(self.rounds, reason == "finished"), None, "write")
        self._report_cost()
        if self.state is not None:
            self.state.close()
            self.state = None

    def _report_cost(self) -> None:
        """Record what the state cost this crawl: operations and their time (both backends), and a PostgreSQL
        state's round trips to the server and the time spent waiting for them."""
        self.record("state/calls", self.calls)
        self.record("state/ms", round(self.seconds * 1000))
        state = self.state
        trips, seconds = getattr(state, "round_trips", None), getattr(state, "seconds", None)
        if trips is not None and seconds is not None:
            self.record("state/db/round_trips", trips)
            self.record("state/db/ms", round(seconds * 1000))

    # -- site leases (a PostgreSQL state) --

    def claim(self, limit: int, interval: float, keepalive: float, exclude: Iterable[str] = ()) -> list[Any]:
        """Claim up to ``limit`` due sites (templates_db/pgstate.py); their rounds begin or resume."""
        claims = self._safe(lambda state: state.claim(self._sites, limit, interval, keepalive,  # type: ignore
                                                      exclude), [], "write")
        for claim in claims:
            self.rounds[claim.site] = claim.round
            self.count("state/resumed" if claim.round.resumed else "state/new_round")
        return claims

    def renew(self) -> list[str]:
        """Renew the leases held; return the sites lost."""
        return self._safe(lambda state: state.renew(), [], "write")  # type: ignore[attr-defined]

    def release(self, site: str, finished: bool) -> bool:
        """Give up the lease of ``site`` (its round complete when ``finished``); return False when it was lost."""
        round_ = self.rounds.pop(site, None)
        return bool(self._safe(lambda state: state.release(site, round_, finished) or True,  # type: ignore
                               False, "write"))

    def stale_ended(self) -> int:
        """Return how many sessions of stale workers this worker ended so far."""
        return int(getattr(self.state, "stale_ended", 0))

    def budget_used(self, site: str) -> int:
        """Return how many of the site's URLs its round has completed (done, or failed for good), by any worker:
        what a resumed round's budget has used before its queued URLs are scheduled again."""
        round_number = self.round(site)
        return self._safe(lambda state: state.completed_in_round(site, round_number, self.config.max_attempts), 0,
                          "read")

    def round(self, site: str) -> int:
        """Return the site's round number (0 without a state)."""
        round_ = self.rounds.get(site)
        return round_.number if round_ else 0

    # -- scheduling --

    def known(self, urls: Iterable[str]) -> dict[str, KnownPage]:
        """Return what the state knows of these URLs."""
        return self._safe(lambda state: state.known(urls), {}, "read")

    def enqueue(self, pages: Sequence[QueuedPage]) -> None:
        """Record scheduled URLs before their requests leave the spider."""
        if pages:
            self._safe(lambda state: state.enqueue(pages), None, "write")

    def queued(self, site: str) -> list[QueuedPage]:
        """Return the site's URLs left from earlier runs (queued, or failed transiently)."""
        return self._safe(lambda state: state.queued(site, self.config.max_attempts), [], "read")

    def due_hubs(self, site: str, start_urls: Sequence[str], revisit: float) -> list[KnownPage]:
        """Return the site's start and list pages to revisit in this round."""
        before = time.time() - revisit
        return self._safe(lambda state: state.due_hubs(site, self.round(site), before, start_urls), [], "read")

    def aux_due(self, url: str, site: str, revisit: float) -> bool:
        """Return True when a feed or sitemap is to be fetched in this round."""
        before = time.time() - revisit
        return self._safe(lambda state: state.aux_due(url, self.round(site), before), True, "read")

    def visit_aux(self, url: str, site: str, kind: str) -> None:
        """Record a feed or sitemap visit (after its entries were enqueued)."""
        self._safe(lambda state: state.visit_aux(url, site, kind, self.round(site)), None, "write")

    # -- completed pages --

    def complete(self, outcome: PageOutcome) -> None:
        """Record a completed page (one transaction)."""
        self._safe(lambda state: state.complete(outcome), None, "write")
        self.count("state/completed")

    def forbidden(self, url: str, site: str, depth: int, reason: str = "robots_forbidden") -> None:
        """Record a page robots.txt forbids, or the address policy refuses (``reason``; no item): done, not asked
        for again."""
        self.complete(PageOutcome(url=url, site=site, status="done", depth=depth, round=self.round(site),
                                  fetched_at=time.time(), error=reason))

    def listing(self, url: str, site: str, depth: int) -> None:
        """Record a link that was a feed or a sitemap (no item; its entries are queued): done as a page."""
        self.complete(PageOutcome(url=url, site=site, status="done", depth=depth, round=self.round(site),
                                  fetched_at=time.time(), error="feed_or_sitemap"))

    def unchanged(self, url: str, site: str) -> None:
        """Record a 304 Not Modified answer."""
        self._safe(lambda state: state.unchanged(url, self.round(site), site), None, "write")

    def summary(self) -> Mapping[str, Mapping[str, int]]:
        """Return the store's per-site summary."""
        return self._safe(lambda state: state.summary(), {}, "read")

    # -- the duplicate index's storage (extraction.dedup.IndexStorage), errors counted and skipped --

    def by_hash(self, text_hash: str) -> str | None:
        """Return the URL of a stored text with this exact hash."""
        return self._safe(lambda state: state.by_hash(text_hash), None, "read")

    def candidates(self, keys: Sequence[bytes]) -> list[tuple[str, bytes]]:
        """Return (URL, signature) of the stored texts sharing a band key."""
        return self._safe(lambda state: state.candidates(keys), [], "read")

    def add(self, key: str, fp: Fingerprint, keys: Sequence[bytes]) -> str | None:
        """Store a text's fingerprint under its URL; return the URL of the same text another worker stored first."""
        return self._safe(lambda state: state.add(key, fp, keys), None, "write")


def _kind(exc: CrawlStateError) -> str:
    if isinstance(exc, ConnectionLost):
        return "connection"
    message = str(exc)
    if "locked" in message or "busy" in message:
        return "locked"
    if "corrupt" in message:
        return "corrupt"
    return "open"
