"""Runs every fetched page through the library's one flow, :func:`extraction.process.process`.

The page (``item.page``, built by the spider from the response) is archived as fetched
(``pipelines.archive``), then typed, its site's templates learned and removed, its text extracted,
exactly as ``scrapy extract`` does offline; the record the spider started (``item``: URL, fetch
fields) is filled. The export filter runs after this. The page is dropped from the item once
processed, so it does not stay in memory while the feed is written.

Both run in ``EXTRACT_WORKERS`` worker processes (:mod:`extraction.workers`; default one per CPU),
so the reactor thread only fetches, renders and follows links, and every page is bounded by
``EXTRACT_TIMEOUT``. Each worker loads the models, opens the template library and the archive
itself (:class:`PageHandler`); the crawl waits until every worker has (``PagePool.start``), so that a
missing or mismatched model stops the crawl with the reason before anything is fetched
(PAGETYPE_ENABLED / BLOCKS_ENABLED off crawl without them). The crawl's own process reads the models'
versions only, for the warcinfo. ``EXTRACT_WORKERS=0`` runs the handler in the reactor thread.

Stats: see ``extraction.process`` (``page/refused/<reason>``, ``pagetype/...``, ``templates/...``,
``blocks/...``, ``extract/<method>``, ``extract/empty``), ``archive/...`` and
``extract/error/<timeout|crashed|failed>``.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from collections.abc import Callable, Coroutine, Mapping
from typing import Any

from scrapy import signals
from scrapy.crawler import Crawler
from scrapy.settings import SETTINGS_PRIORITIES, BaseSettings
from scrapy.statscollectors import StatsCollector

from crawler.leases import site_released
from extraction.config import ComponentConfig
from extraction.dedup import DedupConfig, text_fingerprint
from extraction.page import Page
from extraction.process import (
    BlocksConfig,
    Context,
    PageTypeConfig,
    SourceConfig,
    TitleConfig,
    Web2TextConfig,
    process,
)
from extraction.record import Record
from extraction.workers import Outcome, PagePool, WorkersConfig, failure_outcome
from pipelines.archive import ArchiveConfig, PageArchive
from templates_db.library import TemplateLibrary, TemplatesConfig

logger = logging.getLogger(__name__)

Count = Callable[[str, int], Any]

# The components whose settings a worker needs to build its handler.
WORKER_CONFIGS: tuple[type[ComponentConfig], ...] = (PageTypeConfig, BlocksConfig, TitleConfig, Web2TextConfig,
                                                     SourceConfig, TemplatesConfig, ArchiveConfig, DedupConfig)


class PageHandler:
    """What is done with each fetched page, in a worker or in the reactor thread: archive it, process it, and
    fingerprint its text for the duplicate index (``record.crawl["fingerprint"]``, read by pipelines/state.py:
    out of the reactor thread)."""

    def __init__(self, context: Context, archive: PageArchive | None, dedup: DedupConfig | None = None) -> None:
        self.context = context
        self.archive = archive
        self.dedup = dedup if dedup is not None and dedup.enabled else None

    @classmethod
    def from_settings(cls, settings: BaseSettings | Mapping[str, Any], count: Count) -> PageHandler:
        """Load the models, open the template library (TEMPLATES_ENABLED) and the archive (ARCHIVE_ENABLED; the
        WARC files' warcinfo from the settings' :data:`WARCINFO` entry, see :func:`warcinfo`)."""
        config = TemplatesConfig.from_settings(settings)
        library = TemplateLibrary.open(config, count=lambda key: count(key, 1)) if config.enabled else None
        return cls(Context.from_settings(settings, templates=library, count=count),
                   PageArchive.from_settings(settings, count, settings.get(WARCINFO)),
                   DedupConfig.from_settings(settings))

    def __call__(self, page: Page, record: Record) -> Record:
        if self.archive is not None:
            self.archive.keep(page, record)  # before processing: a page whose processing fails is kept too
        record = process(page, self.context, record)
        if self.dedup is not None and record.error is None:
            fp = text_fingerprint(record, self.dedup)
            record.crawl["fingerprint"] = (fp.text_hash, fp.signature)
        return record

    def release(self, site: str) -> None:
        """Park the site's unfinished template batch and forget the site (its lease goes, crawler/leases.py)."""
        library = self.context.templates
        if isinstance(library, TemplateLibrary):
            library.release(site)

    def close(self) -> None:
        """Close the template library (it parks the unfinished learning batches) and the WARC file."""
        library = self.context.templates
        if isinstance(library, TemplateLibrary):
            library.close()
        if self.archive is not None:
            self.archive.close()


# The entry of a worker's settings that carries the warcinfo fields (made once, in the crawl's process).
WARCINFO = "_WARCINFO"
# Names of settings, and of keys inside dict settings, whose values are left out of the warcinfo record: they may
# hold credentials (proxies, tokens, Authorization headers); a URL's user:password is left out wherever it is.
SECRET_WORDS = ("PASSWORD", "SECRET", "TOKEN", "PROXY", "CREDENTIAL", "KEY", "AUTH", "COOKIE")
REDACTED = "<left out>"
_URL_CREDENTIALS = re.compile(r"(?<=://)[^/@\s]+@")


def _secret(name: Any) -> bool:
    upper = str(name).upper()
    return any(word in upper for word in SECRET_WORDS)


def plain_setting(value: Any) -> Any:
    """Return a setting's value as plain JSON values: dict settings as dicts, secrets and URL credentials left out."""
    if isinstance(value, BaseSettings):
        value = value.copy_to_dict()
    if isinstance(value, Mapping):
        return {_URL_CREDENTIALS.sub("", str(key)): REDACTED if _secret(key) else plain_setting(item)
                for key, item in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [plain_setting(item) for item in value]
    if isinstance(value, str):
        return _URL_CREDENTIALS.sub("", value)
    if value is None or isinstance(value, bool | int | float):
        return value
    return _URL_CREDENTIALS.sub("", str(value))  # a class, a function: its name


def warcinfo(settings: BaseSettings, versions: Mapping[str, str]) -> dict[str, Any]:
    """Return the warcinfo fields of the crawl's WARC files: software, user agent, robots policy, the models'
    versions and every setting the project, the command line or the spider set (:func:`plain_setting`)."""
    import scrapy

    chosen = {name: REDACTED if _secret(name) else plain_setting(value) for name, value in settings.items()
              if (settings.getpriority(name) or 0) >= SETTINGS_PRIORITIES["project"]}
    return {"software": f"newscorpus (Scrapy {scrapy.__version__}; extraction/warc.py)",
            "http-header-user-agent": settings.get("USER_AGENT") or "",
            "robots": "obey" if settings.getbool("ROBOTSTXT_OBEY") else "ignore",
            "models": dict(versions),
            "settings": {name: chosen[name] for name in sorted(chosen)}}


def worker_settings(settings: BaseSettings | Mapping[str, Any],
                    info: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Return the settings a worker's handler is built from (plain values, picklable), with the warcinfo
    fields ``info``."""
    names = [name for config in WORKER_CONFIGS for name in config.setting_names().values()]
    values = {name: settings.get(name) for name in names if settings.get(name) is not None}
    if info is not None:
        values[WARCINFO] = json.loads(json.dumps(info, default=str))  # plain values only
    return values


def worker_handler(count: Count, settings: dict[str, Any]) -> PageHandler:
    """Build a worker's handler (:data:`extraction.workers.HandlerFactory`)."""
    return PageHandler.from_settings(settings, count)


def _log_models(context: Context) -> None:
    models = context.page_models
    if models is not None:
        image = models.image.name if models.image else "none"
        logger.info("Page-type models: DOM/URL + %s screenshot model (fusion weight %.2f)", image, models.fusion_weight)
    if context.block_models is not None:
        logger.info("Block models: %s", context.block_models.meta.get("summary", "loaded"))


class ProcessPipeline:
    """Archives and processes each item's page, in worker processes (or in the reactor thread)."""

    def __init__(self, handler: PageHandler, stats: StatsCollector, pool: PagePool | None = None) -> None:
        # In-thread: the handler does the work. With a pool: its context holds no models (the workers load
        # them), and its archive keeps the pages whose worker failed.
        self.handler = handler
        self.context = handler.context
        self.stats = stats
        self.pool = pool

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> ProcessPipeline:
        stats = crawler.stats
        assert stats is not None
        settings = crawler.settings
        workers = WorkersConfig.from_settings(settings)
        pool = None
        versions = Context.pipeline_versions(settings)  # the models' meta.json files only: nothing loaded here
        info = warcinfo(settings, versions)
        if workers.processes:
            # The workers load the models (one that cannot stops the crawl in pool.start(), before anything is
            # fetched); this process's archive keeps the pages whose worker failed (in WARC files of its own,
            # opened then).
            handler = PageHandler(Context(count=stats.inc_value),
                                  PageArchive.from_settings(settings, stats.inc_value, info))
            level = logging.getLevelName(str(settings.get("LOG_LEVEL", "INFO")).upper())
            pool = PagePool(workers, worker_handler, (worker_settings(settings, info),),
                            level if isinstance(level, int) else logging.INFO)
            pool.start()  # ready before the first page comes; a worker that cannot start stops the crawl here
            logger.info("Extraction in %d worker process(es), at most %g s per page; models %s", pool.processes,
                        workers.timeout, ", ".join(f"{name} {version}" for name, version in versions.items()))
        else:
            # The models load here: a ModelError stops the crawl before anything is fetched.
            handler = PageHandler.from_settings(worker_settings(settings, info), stats.inc_value)
            logger.info("Extraction in the crawl's own thread (EXTRACT_WORKERS=0)")
            _log_models(handler.context)
        crawler.signals.connect(handler.close, signal=signals.spider_closed, weak=False)
        pipeline = cls(handler, stats, pool)
        crawler.signals.connect(pipeline.release_site, signal=site_released, weak=False)
        if pool is not None:
            crawler.signals.connect(pipeline.close_pool, signal=signals.spider_closed, weak=False)
        return pipeline

    def process_item(self, item: Record) -> Record | Coroutine[Any, Any, Record]:
        """Return the filled item (in the reactor thread), or a coroutine that waits for a worker's."""
        page, item.page = item.page, None
        if page is None or item.error is not None:
            return item
        if self.pool is None:
            return self.handler(page, item)
        return self._in_worker(page, item)

    async def _in_worker(self, page: Page, item: Record) -> Record:
        assert self.pool is not None
        try:
            outcome = await asyncio.wrap_future(self.pool.submit(page, item))
        except Exception as exc:  # timeout, a dead worker, an unpicklable page: the record says so
            outcome = failure_outcome(item, exc, self.pool.config.timeout)
            if self.handler.archive is not None and item.html_file is None and item.warc_file is None:
                # The worker may have died before archiving the page, or after (its record never came back): the page
                # is archived here again; a WARC capture carries the page's id, so a reader keeps one of the two.
                self.handler.archive.keep(page, item)
        return self._apply(outcome)

    def _apply(self, outcome: Outcome) -> Record:
        for key, n in outcome.counts:
            self.stats.inc_value(key, n)
        for name, level, message in outcome.logs:
            logging.getLogger(name).log(level, "%s", message)
        return outcome.record

    async def release_site(self, site: str) -> None:
        """A site's lease is going (crawler/leases.py): its template batch is parked first, in the worker that
        learns it (after the site's pages queued there), so that the next owner continues it."""
        if self.pool is None:
            self.handler.release(site)
            return
        future = self.pool.release(site)
        if future is not None:
            try:
                await asyncio.wrap_future(future)
            except Exception as exc:  # a dead or stuck worker: its batch is lost, the pages are not
                logger.warning("Templates %s: the batch could not be parked (%s)", site, exc)

    def close_pool(self) -> None:
        """Stop the workers once the crawl is over (they park their unfinished template batches)."""
        if self.pool is not None:
            self.pool.close()
