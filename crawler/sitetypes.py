"""The site evidence for page types in a crawl (:mod:`extraction.pagetype.site`), kept in the template store.

The spider asks :meth:`SiteTypeEvidence.hint` for each fetched page (the hint travels with the page
to the extraction worker, which overrides the page-level model with it: ``page_type_source``
"site"); ``pipelines/sitetypes.py`` gives each processed record to :meth:`SiteTypeEvidence.observe`.
A page the crawl state knew (a list page revisited, an article refetched) does not vote again. A
site's stored votes are read when the crawl first meets the site; new votes are written to the
template store (the ``page_types`` table of ``templates_db/store.py``) every ``flush_votes`` votes
and when the crawl closes, so the next run starts with what this one learned. A store that cannot be
opened or written is reported once and counted (``pagetype/site/error``); the evidence then lives in
memory for the run.

Settings (``PAGETYPE_SITE_*``): ``PAGETYPE_SITE_ENABLED`` (default True), ``PAGETYPE_SITE_FLUSH_VOTES``
(default 200); with ``TEMPLATES_LEARN`` off the stored votes are applied and none are added (the template
library is frozen as a whole). ``scrapy extract --site S --url U`` applies the stored votes too
(:func:`stored_hint`), so a page extracts to the record the crawl wrote.

Stats: ``pagetype/site/hint/<type>`` (pages sent with a sure hint), ``pagetype/site/votes``,
``pagetype/site/error``; the worker counts ``pagetype/site/override`` and ``pagetype/site/agree``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

from extraction.config import ComponentConfig
from extraction.pagetype.site import SiteHint, SiteTypes
from extraction.paths import TEMPLATES_DIR
from extraction.record import Record
from templates_db.sqlite import DatabaseError
from templates_db.store import TemplateStore, open_store, store_exists

logger = logging.getLogger(__name__)

Count = Callable[[str, int], Any]


@dataclass(frozen=True)
class SiteTypesConfig(ComponentConfig):
    """The PAGETYPE_SITE_* settings."""

    prefix: ClassVar[str] = "PAGETYPE_SITE"
    enabled: bool = True  # off: every page is typed by the page-level model alone
    flush_votes: int = 200  # votes between writes to the template store

    def validate(self) -> None:
        """Raise ValueError naming the setting when a value cannot work."""
        if self.flush_votes < 1:
            raise ValueError(f"PAGETYPE_SITE_FLUSH_VOTES must be >= 1, got {self.flush_votes}")


class SiteTypeEvidence:
    """The crawl's :class:`SiteTypes`, loaded from and saved to the template store (see the module docstring)."""

    def __init__(self, config: SiteTypesConfig, store_location: str | None, count: Count, learn: bool = True) -> None:
        self.config = config
        self.learn = learn  # off (TEMPLATES_LEARN off): the stored votes are applied, none are added
        self.types = SiteTypes()
        self.count = count
        self._location = store_location or None
        self._store: TemplateStore | None = None
        self._failed = False
        self._unsaved = 0

    @classmethod
    def from_settings(cls, settings: Any, count: Count) -> SiteTypeEvidence:
        """Build it from the crawl's settings: the template store when templates are on, else memory only."""
        location = settings.get("TEMPLATES_STORE", str(TEMPLATES_DIR)) if settings.getbool("TEMPLATES_ENABLED", True) \
            else None
        return cls(SiteTypesConfig.from_settings(settings), location, count, settings.getbool("TEMPLATES_LEARN", True))

    @property
    def enabled(self) -> bool:
        return self.config.enabled

    def _error(self, what: str, exc: Exception) -> None:
        self.count("pagetype/site/error", 1)
        if not self._failed:
            logger.warning("Page-type site evidence: cannot %s the template store (%s); it is kept in memory for "
                           "this crawl", what, exc)
        self._failed = True
        self._store = None

    def _open(self) -> TemplateStore | None:
        if self._store is None and self._location and not self._failed:
            try:
                self._store = open_store(self._location)
            except (DatabaseError, OSError) as exc:
                self._error("open", exc)
        return self._store

    def _load(self, site: str) -> None:
        if self.types.loaded(site):
            return
        store = self._open()
        stored: dict[str, tuple[float, float, float]] = {}
        if store is not None:
            try:
                stored = store.page_type_votes(site)
            except DatabaseError as exc:
                self._error("read", exc)
        self.types.load(site, stored)

    def hint(self, site: str, url: str) -> SiteHint | None:
        """Return the site's sure type for ``url``, or None (see :meth:`SiteTypes.hint`)."""
        if not self.enabled:
            return None
        self._load(site)
        hint = self.types.hint(site, url)
        if hint is not None:
            self.count(f"pagetype/site/hint/{hint.page_type}", 1)
        return hint

    def observe(self, record: Record) -> None:
        """Add the votes of a processed record: its page-level type, whether a feed or news sitemap listed it, and
        its list entries."""
        if not self.enabled or not self.learn or record.site is None or "known_text_hash" in record.crawl:
            return  # a page the crawl state had (a hub revisited, a page refetched) voted when it was new
        url = str(record.crawl.get("url") or record.canonical_url or record.url)
        page_level = record.crawl.get("page_type_page")
        page_type, confidence = page_level if page_level else (None, None)
        entries = [str(entry["url"]) for entry in record.entries or () if entry.get("url")]
        self._load(record.site)
        cast = self.types.observe(record.site, url, page_type, confidence, bool(record.crawl.get("listed")), entries)
        if cast:
            self.count("pagetype/site/votes", cast)
            self._unsaved += cast
            if self._unsaved >= self.config.flush_votes:
                self.flush()

    def flush(self) -> None:
        """Write the votes added since the last flush to the store."""
        pending = self.types.take_pending()
        self._unsaved = 0
        if not pending:
            return
        store = self._open()
        if store is None:
            return
        try:
            store.add_page_type_votes(pending)
        except DatabaseError as exc:
            self._error("write", exc)

    def release(self, site: str) -> None:
        """Write the votes added so far and forget ``site``'s (its lease goes to another worker, crawler/leases.py:
        whoever crawls it next reads them all from the store)."""
        self.flush()
        self.types.votes.pop(site, None)

    def close(self, *_: Any) -> None:
        """Flush and close the store (connected to spider_closed)."""
        self.flush()
        if self._store is not None:
            self._store.close()
            self._store = None


class StoredHints:
    """The template store's page-type votes, read once per site (read only: a missing store is not created): the
    sure types ``scrapy extract --url`` and ``scrapy reextract`` apply, as the crawl would have."""

    def __init__(self, settings: Any) -> None:
        self.enabled = settings.getbool("TEMPLATES_ENABLED", True) and SiteTypesConfig.from_settings(settings).enabled
        self.location = settings.get("TEMPLATES_STORE", str(TEMPLATES_DIR))
        self.types = SiteTypes()
        self._read: set[str] = set()

    def hint(self, site: str | None, url: str | None) -> SiteHint | None:
        """Return the sure type the stored votes give ``url`` of ``site``, or None."""
        if not self.enabled or not site or not url:
            return None
        if site not in self._read:
            self._read.add(site)
            self.types.load(site, self._votes(site))
        return self.types.hint(site, url)

    def _votes(self, site: str) -> dict[str, Any]:
        if not store_exists(self.location):
            return {}
        try:
            store = open_store(self.location)
            try:
                return dict(store.page_type_votes(site))
            finally:
                store.close()
        except (DatabaseError, OSError) as exc:
            if self.enabled:
                logger.warning("Page-type site evidence not used: %s", exc)
            self.enabled = False  # reported once
            return {}


def stored_hint(settings: Any, site: str | None, url: str | None) -> SiteHint | None:
    """Return the sure type the template store's votes give ``url`` of ``site`` (one page: ``scrapy extract``)."""
    return StoredHints(settings).hint(site, url)
