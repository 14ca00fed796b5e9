"""Writes the crawl's final stats to a JSON file (STATS_FILE), for scheduled crawls and tests."""

from __future__ import annotations

import json
import logging
from pathlib import Path

from scrapy import signals
from scrapy.crawler import Crawler
from scrapy.exceptions import NotConfigured
from scrapy.statscollectors import StatsCollector

logger = logging.getLogger(__name__)


class StatsFileExtension:
    """On spider close, dumps every stats key to STATS_FILE as one JSON object."""

    def __init__(self, path: Path, stats: StatsCollector) -> None:
        self.path = path
        self.stats = stats

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> StatsFileExtension:
        path = crawler.settings.get("STATS_FILE")
        if not path:
            raise NotConfigured("STATS_FILE is not set")
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
