"""The crawl's own extensions: the final stats as JSON (STATS_FILE), the crawl report (REPORT_*), the periodic
progress line (pages per second, each site's budget left) and the garbage collector's tuning."""

from __future__ import annotations

import gc
import json
import logging
import time
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, ClassVar

from scrapy import signals
from scrapy.crawler import Crawler
from scrapy.exceptions import NotConfigured
from scrapy.statscollectors import StatsCollector

from crawler.logs import notice
from crawler.outputs import OUTPUT_DIR, CrawlOutputs, feed_time
from crawler.progress import duration
from extraction.config import ComponentConfig
from extraction.record import Record
from extraction.workers import settle_gc
from pipelines.archive import ArchiveConfig

logger = logging.getLogger(__name__)


class GarbageCollectorExtension:
    """Once the spider is open (the site list, settings and components made), tunes the crawl process's garbage
    collector as the extraction workers' (:func:`extraction.workers.settle_gc`): the reactor thread spent a fifth
    of its CPU in collections before."""

    def __init__(self, stats: StatsCollector) -> None:
        self.stats = stats

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> GarbageCollectorExtension:
        assert crawler.stats is not None
        extension = cls(crawler.stats)
        crawler.signals.connect(extension.spider_opened, signal=signals.spider_opened)
        return extension

    def spider_opened(self) -> None:
        settle_gc()
        self.stats.set_value("gc/frozen_objects", gc.get_freeze_count())


class StatsFileExtension:
    """On spider close, dumps every stats key to STATS_FILE as one JSON object."""

    def __init__(self, path: Path, stats: StatsCollector) -> None:
        self.path = path
        self.stats = stats

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> StatsFileExtension:
        path = crawler.settings.get("STATS_FILE")
        if not path:
            raise NotConfigured  # the default: no message (Scrapy would log it as a warning)
        assert crawler.stats is not None
        extension = cls(Path(path), crawler.stats)
        # Connected after the engine's own handlers, so finish_reason is already there.
        crawler.signals.connect(extension.spider_closed, signal=signals.spider_closed)
        return extension

    def spider_closed(self, reason: str) -> None:
        stats = dict(self.stats.get_stats())
        stats.setdefault("finish_reason", reason)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.write_text(json.dumps(stats, default=str, indent=1, sort_keys=True), encoding="utf-8")
        logger.info("Stats written to %s", self.path)


@dataclass(frozen=True)
class ReportConfig(ComponentConfig):
    """REPORT_* settings."""

    prefix: ClassVar[str] = "REPORT"
    enabled: bool = True  # off: no report at the end of the crawl (``scrapy report`` makes one later)
    # Where the report goes; %(name)s is the spider's name and %(time)s the crawl's start time, as in feed URIs.
    # Empty: beside the crawl's feed, named like it (crawler/outputs.py: output/news_sites-<time>.report.html).
    file: str = ""


class CrawlReportExtension:
    """Adds every exported record to a :class:`~crawler.report.CrawlSummary` and writes the crawl report (one
    HTML page: ``crawler.report``) when the crawl ends, from the records, the stats and the template store."""

    def __init__(self, crawler: Crawler, config: ReportConfig) -> None:
        from crawler.report import CrawlSummary

        assert crawler.stats is not None
        self.crawler = crawler
        self.stats: StatsCollector = crawler.stats
        self.config = config
        self.summary = CrawlSummary()

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> CrawlReportExtension:
        config = ReportConfig.from_settings(crawler.settings)
        if not config.enabled:
            logger.info("REPORT_ENABLED is off: no crawl report")  # Scrapy logs a NotConfigured's message as a warning
            raise NotConfigured
        extension = cls(crawler, config)
        crawler.signals.connect(extension.item_scraped, signal=signals.item_scraped)
        # After StatsFileExtension (EXTENSIONS order): the report shows the stats the stats file holds.
        crawler.signals.connect(extension.spider_closed, signal=signals.spider_closed)
        return extension

    def item_scraped(self, item: Any) -> None:
        """Count an exported record (a Record's attributes are read in place, not copied)."""
        if isinstance(item, Record):
            self.summary.add(vars(item))
        elif isinstance(item, Mapping):
            self.summary.add(item)

    def path(self) -> Path:
        """Return the report's path: REPORT_FILE with %(name)s and %(time)s filled in, else beside the feed."""
        spider = self.crawler.spider
        outputs: CrawlOutputs | None = getattr(spider, "outputs", None)
        if outputs is not None and not self.config.file:
            return outputs.report
        started = self.stats.get_value("start_time")
        stamp = outputs.time if outputs is not None else feed_time(started if isinstance(started, datetime) else None)
        pattern = self.config.file or str(OUTPUT_DIR / "%(name)s-%(time)s.report.html")
        return Path(pattern % {"name": getattr(spider, "name", "crawl"), "time": stamp})

    def spider_closed(self, reason: str) -> None:
        from crawler.report import write_report

        stats = dict(self.stats.get_stats())
        stats.setdefault("finish_reason", reason)
        name = getattr(self.crawler.spider, "name", "crawl")
        started = stats.get("start_time")
        title = f"Crawl report: {name}" + (f", started {started:%Y-%m-%d %H:%M} UTC"
                                           if isinstance(started, datetime) else "")
        try:
            path = write_report(self.path(), self.summary, stats, self.crawler.settings.get("TEMPLATES_STORE"),
                                title)
        except Exception as exc:  # the crawl's outputs are written; a report that fails must not hide them
            logger.error("The crawl report could not be written: %s", exc, exc_info=True)
            return
        self.stats.set_value("report/file", str(path))
        logger.info("Crawl report written to %s (%d records)", path, self.summary.records)


class CrawlProgressExtension:
    """What a crawl prints by default (crawler/logs.py, NOTICE): every LOGSTATS_INTERVAL seconds (Scrapy's, 60 by
    default; 0: none) the pages fetched and records exported with their rate (over the last interval and the whole
    crawl) and each site's page budget left (``max_pages`` less the pages scheduled; the sites with the most pages
    first, the rest counted); at the end a summary: the records exported by kind, and where the run's feed, WARC
    folder, report and crawl state are."""

    SITES_SHOWN = 5

    def __init__(self, crawler: Crawler, interval: float) -> None:
        assert crawler.stats is not None
        self.crawler = crawler
        self.stats: StatsCollector = crawler.stats
        self.interval = interval
        self.task: Any = None
        self.started = 0.0
        self.last = (0.0, 0)  # (time, pages) at the last line
        self.exported: Counter[str] = Counter()  # records by kind (summary())

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> CrawlProgressExtension:
        extension = cls(crawler, crawler.settings.getfloat("LOGSTATS_INTERVAL"))
        crawler.signals.connect(extension.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(extension.item_scraped, signal=signals.item_scraped)
        crawler.signals.connect(extension.spider_closed, signal=signals.spider_closed)
        return extension

    def spider_opened(self) -> None:
        from twisted.internet import task

        self.started = time.monotonic()
        self.last = (self.started, 0)
        if self.interval > 0:
            self.task = task.LoopingCall(self.log)
            self.task.start(self.interval, now=False)

    def item_scraped(self, item: Any) -> None:
        """Count an exported record by what the corpus sees in it."""
        values = vars(item) if isinstance(item, Record) else item if isinstance(item, Mapping) else {}
        if values.get("error"):
            kind = "errors"
        elif values.get("duplicate_of"):
            kind = "duplicates"
        else:
            kind = {"article": "articles", "list": "lists"}.get(str(values.get("page_type")), "other pages")
        self.exported[kind] += 1

    def spider_closed(self, reason: str) -> None:
        if self.task is not None and self.task.running:
            self.task.stop()
        for line in self.summary(reason):
            notice(logger, "%s", line)

    def line(self) -> str:
        """Return the progress line."""
        now = time.monotonic()
        pages = int(self.stats.get_value("crawl/page", 0) or 0)
        records = int(self.stats.get_value("item_scraped_count", 0) or 0)
        since, before = self.last
        self.last = (now, pages)
        recent = (pages - before) / (now - since) if now > since else 0.0
        overall = pages / (now - self.started) if now > self.started else 0.0
        text = (f"Progress: {pages} pages fetched ({recent:.1f} pages/s in the last {now - since:.0f} s, "
                f"{overall:.1f} overall), {records} records exported")
        budget = getattr(self.crawler.spider, "budget", None)
        if callable(budget):
            sites = sorted(budget().items(), key=lambda item: (-item[1][0], item[0]))
            full = sum(1 for _, (scheduled, limit) in sites if scheduled >= limit)
            shown = ", ".join(f"{name} {max(0, limit - scheduled)}/{limit}"
                              for name, (scheduled, limit) in sites[:self.SITES_SHOWN])
            more = f" (+{len(sites) - self.SITES_SHOWN} more)" if len(sites) > self.SITES_SHOWN else ""
            text += f"; page budget left per site: {shown}{more}; {full} of {len(sites)} sites at max_pages"
        return text

    def log(self) -> None:
        notice(logger, "%s", self.line())

    def summary(self, reason: str) -> list[str]:
        """Return the lines the crawl ends with: what it did, and where its files are."""
        seconds = time.monotonic() - self.started if self.started else 0.0
        pages = int(self.stats.get_value("crawl/page", 0) or 0)
        records = sum(self.exported.values())
        kinds = ", ".join(f"{self.exported[kind]} {kind}" for kind in
                          ("articles", "lists", "other pages", "duplicates", "errors") if self.exported[kind])
        ended = "" if reason == "finished" else f" (stopped: {reason})"
        lines = [f"Crawled {pages} pages in {duration(seconds)}{ended}: {records} records exported"
                 + (f" ({kinds})" if kinds else "")]
        known = int(self.stats.get_value("crawl/skipped/known", 0) or 0)
        if known:
            lines.append(f"{known} known pages were not fetched again: the crawl state has them from earlier runs")
        settings = self.crawler.settings
        feeds = [str(uri) for uri in settings.getdict("FEEDS")]
        places = [f"feed {', '.join(feeds)}"] if feeds else []
        archive = ArchiveConfig.from_settings(settings)
        if archive.enabled and archive.dir:
            places.append(f"WARC {Path(archive.dir) / 'warc'}" if archive.format == "warc"
                          else f"pages {archive.dir}")
        report = self.crawler.stats.get_value("report/file") if self.crawler.stats else None
        if report:
            places.append(f"report {report}")
        state = getattr(self.crawler.spider, "crawl_state", None)
        if state is not None and state.config.enabled:
            places.append(f"crawl state {state.location}")
        if places:
            lines.append("Written: " + "; ".join(places))
        return lines
