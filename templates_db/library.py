"""The per-site template library at work: learning batches, matching, drift, persistence.

One :class:`TemplateLibrary` per process serves the crawl's middleware (which learns from
every HTML response) and its denoising pipeline, the offline ``scrapy templates build`` and
``scrapy extract``. The algorithm pieces are in :mod:`extraction.templates`; the store is
:mod:`templates_db.store`. No Scrapy import here, so commands and benchmarks use it as is.

Sites. A page belongs to the site-list entry with the longest allowed prefix matching its URL
(key: the entry's name); a URL outside the list belongs to its scheme + host (key
``https://example.com``); offline commands can name the site (``--site``).

Batches across processes and runs. Each process keeps its own cache S per site. At the end of a
crawl an unfinished batch is parked in the store; the next process that learns on the site
claims it (atomically) and continues it, so scheduled crawls of a few pages each still complete
batches of N1 pages. Two processes promoting the same template add their counts.

Failures. A store that cannot be opened (corrupt, newer schema) disables the library: the crawl
goes on without templates. A store error during the crawl is counted
(``templates/store_error``) and the operation is skipped; nothing else is lost.
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import ClassVar
from urllib.parse import urlsplit

from lxml import html

from crawler.sites import SiteList
from extraction import templates as algo
from extraction.config import ComponentConfig
from extraction.paths import TEMPLATES_DIR
from extraction.templates import BatchCache, DenoiseResult, DriftMonitor, GuardRule, Leaf, Template, TemplateSet
from templates_db.store import Candidate, ParkedBatch, TemplateStore, TemplateStoreError, open_store

logger = logging.getLogger(__name__)

Count = Callable[[str], None]  # stats callback: increments a stats key by one


@dataclass(frozen=True)
class TemplatesConfig(ComponentConfig):
    """The TEMPLATES_* settings (defaults: paper 004 and extraction.templates)."""

    prefix: ClassVar[str] = "TEMPLATES"
    enabled: bool = True  # off: no learning, no template cleaning
    store: str = str(TEMPLATES_DIR)  # folder (SQLite file inside), .sqlite3 path, or URL; default: the checkout's
    learn: bool = True  # off: apply the stored templates only
    batch_pages: int = algo.BATCH_PAGES  # N1 of paper 004: pages per learning batch
    min_frequency: int = algo.MIN_FREQUENCY  # N2 of paper 004: pages of a batch a leaf tag is on to become a template
    guard_min_chars: int = algo.GUARD_MIN_CHARS  # guard: a leaf this long stays unless its template is site-wide
    guard_min_share: float = algo.GUARD_MIN_SHARE  # guard: share of a batch's pages that makes a template site-wide
    drift_window: int = algo.DRIFT_WINDOW  # layout drift: the last pages whose match rate is watched
    drift_ratio: float = algo.DRIFT_RATIO  # layout drift: retire the templates under this share of the promised rate
    refresh_interval: float = 5.0  # s between checks for templates written by other processes

    def validate(self) -> None:
        """Raise ValueError naming the setting when a value cannot work."""
        if not self.store:
            raise ValueError("TEMPLATES_STORE must name a folder, a .sqlite3 file or a URL")
        if self.batch_pages < 1:
            raise ValueError(f"TEMPLATES_BATCH_PAGES must be >= 1, got {self.batch_pages}")
        if not 1 <= self.min_frequency <= self.batch_pages:
            raise ValueError(f"TEMPLATES_MIN_FREQUENCY must be in 1..TEMPLATES_BATCH_PAGES, got {self.min_frequency}")
        if not 0 < self.drift_ratio < 1:
            raise ValueError(f"TEMPLATES_DRIFT_RATIO must be in (0, 1), got {self.drift_ratio}")
        if self.guard_min_chars < 0:
            raise ValueError(f"TEMPLATES_GUARD_MIN_CHARS must be 0 or more, got {self.guard_min_chars}")
        if not 0 <= self.guard_min_share <= 1:
            raise ValueError(f"TEMPLATES_GUARD_MIN_SHARE must be in [0, 1], got {self.guard_min_share}")
        if self.drift_window < 1:
            raise ValueError(f"TEMPLATES_DRIFT_WINDOW must be at least 1, got {self.drift_window}")
        if self.refresh_interval < 0:
            raise ValueError(f"TEMPLATES_REFRESH_INTERVAL must be 0 or more seconds, got {self.refresh_interval}")


def site_key(url: str | None, sites: SiteList | None = None) -> str | None:
    """Return the template-library key of a URL: its site-list entry's name, else scheme://host."""
    if not url:
        return None
    if sites is not None:
        site = sites.site_for(url)
        if site is not None:
            return site.name
    parts = urlsplit(url)
    if not parts.scheme or not parts.hostname:
        return None
    return f"{parts.scheme.lower()}://{parts.hostname.lower()}" + (f":{parts.port}" if parts.port else "")


@dataclass
class Observation:
    """What learning from one page did."""

    site: str
    leaves: int
    matched: int  # templates of the site found on the page
    templates: int  # templates the site had when the page came
    match_rate: float = 0.0  # share of the site's core templates found (what the drift monitor reads)
    promoted: int = 0  # templates promoted by the batch this page completed
    drift: bool = False


@dataclass
class _Site:
    """A site's runtime state in this process."""

    templates: TemplateSet = field(default_factory=TemplateSet)
    generation: int = 0
    loaded: bool = False
    claimed: bool = False
    cache: BatchCache = field(default_factory=BatchCache)
    hits: Counter[int] = field(default_factory=Counter)
    monitor: DriftMonitor = field(default_factory=DriftMonitor)


class TemplateLibrary:
    """Per-site templates of one store, learned from and applied to parsed pages."""

    def __init__(self, store: TemplateStore | None, config: TemplatesConfig | None = None,
                 count: Count | None = None) -> None:
        self.store = store
        self.config = config or TemplatesConfig()
        self.guard = GuardRule(self.config.guard_min_chars, self.config.guard_min_share)
        self._count = count or (lambda key: None)
        self._sites: dict[str, _Site] = {}
        self._next_refresh = 0.0

    @classmethod
    def open(cls, config: TemplatesConfig, count: Count | None = None) -> TemplateLibrary:
        """Open the configured store; a store that cannot be used gives a library without one."""
        counter = count or (lambda key: None)
        try:
            store = open_store(config.store)
        except TemplateStoreError as exc:
            logger.warning("Template store unusable, going on without templates: %s", exc)
            counter("templates/store_unusable")
            return cls(None, config, count)
        logger.info("Template store: %s", store.location)
        return cls(store, config, count)

    @property
    def available(self) -> bool:
        """Return True when a store is open (templates can be learned and applied)."""
        return self.store is not None

    # -- reading ------------------------------------------------------------------------------

    @property
    def learns(self) -> bool:
        """Return True when pages observed teach the library (TEMPLATES_LEARN)."""
        return self.config.learn and self.store is not None

    def templates(self, site: str) -> TemplateSet:
        """Return the site's current templates (loaded once, refreshed when the store changed)."""
        self._maybe_refresh()
        state = self._site(site)
        if not state.loaded:
            self._load(site, state)
        return state.templates

    def _site(self, site: str) -> _Site:
        state = self._sites.get(site)
        if state is None:
            state = self._sites[site] = _Site(monitor=DriftMonitor(self.config.drift_window, self.config.drift_ratio))
        return state

    def _load(self, site: str, state: _Site) -> None:
        state.loaded = True
        if self.store is None:
            return
        try:
            rows = self.store.templates(site)
            site_state = self.store.site_state(site)
        except TemplateStoreError as exc:
            self._store_error(exc)
            return
        generation = site_state.generation if site_state else 0
        if generation != state.generation:
            state.monitor.reset()  # another process retired the old layout
        state.generation = generation
        state.templates = TemplateSet([Template(r.id, r.tag, r.text, r.share) for r in rows])

    def _maybe_refresh(self) -> None:
        if self.store is None or time.monotonic() < self._next_refresh:
            return
        self._next_refresh = time.monotonic() + self.config.refresh_interval
        try:
            changed = self.store.changed()
        except TemplateStoreError as exc:
            self._store_error(exc)
            return
        if changed:
            for site, state in self._sites.items():
                if state.loaded:
                    self._load(site, state)

    def _store_error(self, exc: TemplateStoreError) -> None:
        logger.warning("Template store error (operation skipped): %s", exc)
        self._count("templates/store_error")

    # -- applying -----------------------------------------------------------------------------

    def denoise(self, site: str, root: html.HtmlElement, leaves: list[Leaf] | None = None) -> DenoiseResult:
        """Remove the site's template leaves from ``root`` in place (with the guard).

        ``leaves``: ``leaf_tags(root)`` when already computed (and ``root`` unchanged since).
        """
        return algo.denoise(root, self.templates(site), self.guard, leaves)

    # -- learning -----------------------------------------------------------------------------

    def observe(self, site: str, root: html.HtmlElement | None = None, leaves: list[Leaf] | None = None) -> Observation:
        """Learn from one page of ``site`` (parsed ``root`` or its ``leaves``): match, count, promote."""
        if leaves is None:
            assert root is not None, "observe() needs root or leaves"
            leaves = algo.leaf_tags(root)
        templates = self.templates(site)
        state = self._site(site)
        matched = {template.id for _, template in templates.matches(leaves)}
        state.hits.update(matched)
        observation = Observation(site, len(leaves), len(matched), len(templates), templates.match_rate(matched))
        if self.store is None or not self.config.learn:
            return observation
        if state.monitor.observe(matched, templates):
            self._retire(site, state)
            observation.drift = True  # this page's batch (the new layout's pages) is kept
        if not state.claimed:
            self._claim(site, state)
        state.cache.add_page((leaf.tag, leaf.text) for leaf in leaves)
        if state.cache.pages >= self.config.batch_pages:
            observation.promoted = self._promote(site, state)
        return observation

    def finish(self, site: str) -> int:
        """Promote the site's unfinished batch now (offline builds); return templates promoted."""
        state = self._site(site)
        if self.store is None or state.cache.pages < self.config.min_frequency:
            return 0
        return self._promote(site, state)

    def _claim(self, site: str, state: _Site) -> None:
        assert self.store is not None
        state.claimed = True
        try:
            parked = self.store.claim(site)
        except TemplateStoreError as exc:
            self._store_error(exc)
            return
        for batch in parked:
            state.cache.add_counts(batch.pages, batch.tags)
        if parked:
            logger.info("Templates %s: continuing %d parked batch(es), %d pages", site, len(parked), state.cache.pages)

    def _promote(self, site: str, state: _Site) -> int:
        assert self.store is not None
        batch_pages = state.cache.pages
        candidates = []
        for tag, text, frequency in state.cache.candidates(self.config.min_frequency):
            existing = state.templates.match(tag, text)
            candidates.append(Candidate(tag, text, frequency, existing.id if existing else None))
        state.cache.clear()
        try:
            self._flush_hits(site, state)
            self.store.promote(site, batch_pages, candidates)
        except TemplateStoreError as exc:
            self._store_error(exc)
            return 0
        new = sum(c.template_id is None for c in candidates)
        logger.info("Templates %s: batch of %d pages -> %d templates (%d new)", site, batch_pages, len(candidates), new)
        self._count("templates/batch")
        self._load(site, state)
        return len(candidates)

    def _retire(self, site: str, state: _Site) -> None:
        assert self.store is not None
        reason = (f"match rate {state.monitor.recent_rate:.3f} over the last {len(state.monitor.recent)} pages"
                  f" < {self.config.drift_ratio} x {state.templates.expected_rate:.3f} (core templates promise)")
        try:
            self._flush_hits(site, state)
            current = self.store.site_state(site)
            if current is not None and current.generation != state.generation:
                self._load(site, state)  # another process already retired this layout
                return
            generation = self.store.retire(site, reason)
        except TemplateStoreError as exc:
            self._store_error(exc)
            return
        logger.warning("Templates %s: layout drift, %s; %d templates retired, generation %d starts",
                       site, reason, len(state.templates), generation)
        self._count("templates/drift")
        state.monitor.reset()
        self._load(site, state)

    def _flush_hits(self, site: str, state: _Site) -> None:
        if state.hits and self.store is not None:
            hits, state.hits = dict(state.hits), Counter()
            self.store.record_hits(site, hits)

    # -- lifecycle ----------------------------------------------------------------------------

    def summary(self) -> Mapping[str, Mapping[str, int]]:
        """Return per site: templates in use, pages in the unfinished batch."""
        return {site: {"templates": len(s.templates), "batch_pages": s.cache.pages} for site, s in self._sites.items()}

    def release(self, site: str) -> None:
        """Write the site's pending hits, park its unfinished batch and forget it: another process crawls it now
        (site leases, crawler/leases.py), and claims the batch at its first page."""
        state = self._sites.pop(site, None)
        if state is None or self.store is None:
            return
        try:
            self._flush_hits(site, state)
            if state.cache.pages and self.config.learn:
                self.store.park(site, ParkedBatch(state.cache.pages, state.cache.counts()))
                logger.info("Templates %s: batch of %d pages parked for the site's next owner", site, state.cache.pages)
        except TemplateStoreError as exc:
            self._store_error(exc)

    def close(self) -> None:
        """Write pending hits, park unfinished batches, close the store."""
        if self.store is None:
            return
        for site, state in self._sites.items():
            try:
                self._flush_hits(site, state)
                if state.cache.pages and self.config.learn:
                    self.store.park(site, ParkedBatch(state.cache.pages, state.cache.counts()))
                    logger.info("Templates %s: unfinished batch of %d pages parked for the next crawl",
                                site, state.cache.pages)
            except TemplateStoreError as exc:
                self._store_error(exc)
        self.store.close()
        self.store = None
