"""What a processed page is to the corpus, and the crawl state written once its record is out.

Before the export (``process_item``): a page the crawl state already had (a list page revisited in a new
round, a known article refetched with ``recrawl: changed``) is exported only when its text changed
(``change: changed``), a new one gets ``change: new``; its text is fingerprinted (exact hash and MinHash,
:mod:`extraction.dedup`) and looked up among the records of this run and, with a crawl state, of every
earlier run: a match sets ``duplicate_of`` (DEDUP_DROP drops it instead); a record dated before
``-a since=`` is left out. After the export (the ``item_scraped`` / ``item_dropped`` signals, which Scrapy
sends once the feed exporter has written the line): the page is written to the crawl state in one
transaction, so a crawl killed between the two fetches the page again rather than losing it.

Stats: ``export/skipped/<revisit|unchanged|duplicate|before_since|state_lost>``, ``dedup/<exact|near|canonical>``,
``state/completed``.
"""

from __future__ import annotations

import logging
import os
import time
from typing import Any

from scrapy import signals
from scrapy.crawler import Crawler
from scrapy.exceptions import DropItem
from scrapy.exporters import JsonLinesItemExporter
from scrapy.extensions.feedexport import FeedExporter
from scrapy.statscollectors import StatsCollector

from crawler.feeds import LineFileFeedStorage, durable
from crawler.state import TRANSIENT_ERRORS, CrawlStateManager, date_timestamp
from extraction.dedup import (
    DedupConfig,
    DuplicateIndex,
    Fingerprint,
    MemoryStorage,
    deduplicable,
    deduplicate,
    record_fingerprint,
)
from extraction.record import Record
from templates_db.state import PageOutcome

logger = logging.getLogger(__name__)


class CrawlStatePipeline:
    """Marks new, changed and duplicate records, drops what is not to be exported, and writes the crawl state."""

    def __init__(self, crawler: Crawler, config: DedupConfig) -> None:
        assert crawler.stats is not None
        self.crawler = crawler
        self.stats: StatsCollector = crawler.stats
        self.config = config
        self.index: DuplicateIndex | None = None
        self._starts: set[str] | None = None  # the site list's start URLs (never aliases), made once
        self._feed_exporters: list[FeedExporter] | None = None  # Scrapy's feed exporter (_feed_mark), found once

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> CrawlStatePipeline:
        pipeline = cls(crawler, DedupConfig.from_settings(crawler.settings))
        # Connected after the feed exporter (an extension, built before the pipelines): these run once the
        # record's line is written.
        crawler.signals.connect(pipeline.item_scraped, signal=signals.item_scraped)
        crawler.signals.connect(pipeline.item_dropped, signal=signals.item_dropped)
        crawler.signals.connect(pipeline.item_error, signal=signals.item_error)
        return pipeline

    @property
    def manager(self) -> CrawlStateManager | None:
        """Return the spider's crawl state (None for a spider without one)."""
        return getattr(self.crawler.spider, "crawl_state", None)

    def _index(self) -> DuplicateIndex | None:
        """Return the duplicate index (made on the first page, once the spider opened its crawl state): in the
        crawl state across runs, else for this run only."""
        if self.index is None and self.config.enabled:
            manager = self.manager
            # Through the manager: a state error is counted and the step skipped, as for every state call.
            storage = manager if manager is not None and manager.active else MemoryStorage()
            self.index = DuplicateIndex(self.config, storage)
        return self.index

    def process_item(self, item: Any) -> Any:
        """Decide what the record is (new, changed, duplicate) and drop what is not to be exported."""
        manager = self.manager
        if manager is not None and manager.gone:
            # The shared state went away (the worker is stopping): a record exported now could be neither completed
            # nor have its links queued, and the next run would take its line for a page whose links are queued.
            self.stats.inc_value("export/skipped/state_lost")
            raise DropItem("the crawl state went away: not exported, fetched again on resume", log_level="DEBUG")
        if not isinstance(item, Record) or item.error is not None:
            return item
        crawl = item.crawl
        key = crawl.get("url") or item.url or ""
        fp = record_fingerprint(item, self.config)  # made in the extraction worker (pipelines/process.py)
        crawl["text_hash"] = fp.text_hash
        if "known_text_hash" in crawl:  # a page the state had, fetched again
            # A hub (start or list page) is revisited for its links: its record went out when it was new.
            # A known article refetched with recrawl=changed goes out again when its text changed.
            reason = "revisit" if crawl.get("revisit") else "unchanged"
            if reason == "revisit" or not crawl.get("export_changed") or fp.text_hash == crawl["known_text_hash"]:
                self.stats.inc_value(f"export/skipped/{reason}")
                raise DropItem(f"known page, not exported ({reason}): {key}", log_level="DEBUG")
            item.change = "changed"
        else:
            item.change = "new"
        since = getattr(self.crawler.spider, "since", None)
        published = date_timestamp(item.date_published)
        if since is not None and published is not None and published < since:
            self.stats.inc_value("export/skipped/before_since")
            raise DropItem(f"published before since=: {key}", log_level="DEBUG")
        self._deduplicate(item, key, fp)
        if item.duplicate_of is not None and self.config.drop:
            self.stats.inc_value("export/skipped/duplicate")
            raise DropItem(f"duplicate of {item.duplicate_of}: {key}", log_level="DEBUG")
        return item

    def _deduplicate(self, item: Record, key: str, fp: Fingerprint) -> None:
        index = self._index()
        if index is None or not deduplicable(item, fp):
            return
        manager = self.manager
        canonical = self._site_url(item.site, item.canonical_url)
        if canonical and canonical != key and manager is not None and manager.active:
            declared = manager.known([canonical]).get(canonical)
            item.crawl["canonical_known"] = declared is not None  # read again by _aliases once it is exported
            # Only an article: a site-wide canonical or og:url naming the home page makes nothing a duplicate.
            if declared is not None and declared.status == "done" and declared.page_type == "article" \
                    and declared.url != key:
                item.duplicate_of = declared.url
                self.stats.inc_value("dedup/canonical")
                return
        match = deduplicate(item, key, fp, index)
        if match is not None:
            self.stats.inc_value("dedup/exact" if match.exact else "dedup/near")

    # -- after the export --

    def item_scraped(self, item: Any) -> None:
        """The record is in the feed: write the page to the crawl state."""
        self._complete(item, exported=True)

    def item_dropped(self, item: Any) -> None:
        """The record was not exported (a revisit, a duplicate, a failed page): write the page all the same."""
        self._complete(item, exported=False)

    def item_error(self, item: Any) -> None:
        """A pipeline raised: the page is written as failed, to be tried again on the next run."""
        if isinstance(item, Record) and item.error is None:
            item.error = "pipeline_error"
        self._complete(item, exported=False, failed=True)

    def _site_url(self, site: str | None, url: str | None) -> str | None:
        """Return ``url`` in the site's canonical form when it is inside the site (None for a bad URL)."""
        canonical = getattr(self.crawler.spider, "canonical", None)
        if not url or not site or canonical is None:
            return None
        try:
            result: str | None = canonical(site, url)
        except ValueError:  # a malformed URL (a bad port, a bad IPv6 host)
            return None
        return result

    def _aliases(self, item: Record, key: str, manager: CrawlStateManager) -> list[tuple[str, str]]:
        """Return the URLs that name this article: its AMP version, and its declared canonical URL when the state
        does not know that URL (a known page is no alias: a canonical naming a list or the home page is common)
        and it is not a start page. Neither is fetched again."""
        amp = [(url, "amp") for url in (self._site_url(item.site, href) for href in item.crawl.get("amp", ())) if url]
        canonical = self._site_url(item.site, item.canonical_url)
        declared = []
        if self._starts is None:
            site_list = getattr(self.crawler.spider, "site_list", None)
            self._starts = {url for site in site_list.sites for url in site.start_urls} if site_list else set()
        known = item.crawl.get("canonical_known")
        if known is None and canonical and canonical != key:
            known = bool(manager.known([canonical]))
        if canonical and canonical != key and canonical not in self._starts and not known:
            declared = [(canonical, "canonical")]
        return [(url, kind) for url, kind in [*amp, *declared] if url != key]

    def _complete(self, item: Any, exported: bool, failed: bool = False) -> None:
        manager = self.manager
        if manager is None or not manager.active or not isinstance(item, Record) or not item.site:
            return
        crawl = item.crawl
        key = crawl.get("url") or item.url
        if not key:
            return
        aliases: list[tuple[str, str]] = []
        if item.page_type == "article" and item.duplicate_of is None:
            aliases = self._aliases(item, key, manager)
            getattr(self.crawler.spider, "mark_seen", lambda urls: None)(url for url, _ in aliases)
        record = item.as_dict()
        record.pop("text", None)
        transient = failed or item.error in TRANSIENT_ERRORS
        manager.complete(PageOutcome(
            url=key, site=item.site, status="failed" if transient else "done", depth=item.depth or 0,
            round=manager.round(item.site), fetched_at=time.time(), http_status=item.status,
            etag=crawl.get("etag"), last_modified=crawl.get("last_modified"), content_hash=crawl.get("content_hash"),
            text_hash=crawl.get("text_hash"), page_type=item.page_type, canonical=item.canonical_url,
            duplicate_of=item.duplicate_of, exported=exported, error=item.error, record=record,
            aliases=tuple(aliases), feed=self._feed_mark() if exported else None))

    def _feed_mark(self) -> tuple[str, int] | None:
        """Return the JSON lines feed file the record just went to and its size now (``PageOutcome.feed``), or
        None when the crawl has no such feed (a JSON array, CSV, a remote or post-processed feed)."""
        if self._feed_exporters is None:
            self._feed_exporters = [extension for extension in getattr(self.crawler.extensions, "middlewares", ())
                                    if isinstance(extension, FeedExporter)]
        for slot in (slot for exporter in self._feed_exporters for slot in exporter.slots):  # batches add slots
            exporter_class = slot.exporters.get(slot.format)
            lines = isinstance(exporter_class, type) and issubclass(exporter_class, JsonLinesItemExporter)
            # durable: a local file, not post-processed; this storage writes each line unbuffered
            unbuffered = isinstance(slot.storage, LineFileFeedStorage) and durable(slot.uri, slot.feed_options)
            if not lines or not unbuffered:
                continue
            file = slot.file
            if file is not None and not file.closed:  # the first such feed: a crawl writes one
                try:
                    return os.path.abspath(file.name), file.tell()
                except (OSError, ValueError, AttributeError):
                    return None
        return None
