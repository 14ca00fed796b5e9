"""The crawl's extensions: the progress line, the report's path and settings."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from scrapy.exceptions import NotConfigured
from scrapy.utils.test import get_crawler

from crawler.extensions import CrawlProgressExtension, CrawlReportExtension
from crawler.outputs import CrawlOutputs
from extraction.record import Record


class _Spider:
    name = "news_sites"

    def budget(self) -> dict[str, tuple[int, int]]:
        return {"small": (200, 200), "big": (120, 500), "mid": (80, 300)}


def _crawler(**settings: Any) -> Any:
    crawler = get_crawler(settings_dict=settings)
    assert crawler.stats is not None
    crawler.stats.open_spider()
    crawler.spider = _Spider()  # type: ignore[assignment]
    return crawler


def test_the_progress_line_has_the_rates_and_each_sites_budget_left() -> None:
    crawler = _crawler()
    extension = CrawlProgressExtension(crawler, 60.0)
    extension.started = extension.last[0] - 30.0  # the crawl began 30 s ago
    extension.last = (extension.started, 0)
    crawler.stats.set_value("crawl/page", 300)
    crawler.stats.set_value("item_scraped_count", 290)
    line = extension.line()
    assert line.startswith("Progress: 300 pages fetched (")
    assert "pages/s in the last" in line and "overall), 290 records exported" in line
    assert "page budget left per site: small 0/200, big 380/500, mid 220/300; 1 of 3 sites at max_pages" in line


def test_no_progress_line_with_logstats_interval_zero_but_the_summary() -> None:
    crawler = _crawler(LOGSTATS_INTERVAL=0, FEEDS={"corpus.jsonl": {"format": "jsonlines"}},
                       ARCHIVE_DIR="corpus")
    extension = CrawlProgressExtension.from_crawler(crawler)
    extension.spider_opened()
    assert extension.task is None
    for kind in ("article", "article", "list", None):
        extension.item_scraped(Record(url="http://a.test/", page_type=kind, error=None if kind else "http_404"))
    crawler.stats.set_value("crawl/page", 4)
    lines = extension.summary("finished")
    assert lines[0].startswith("Crawled 4 pages in ") and lines[0].endswith(
        ": 4 records exported (2 articles, 1 lists, 1 errors)")
    assert lines[1] == "Written: feed corpus.jsonl; WARC corpus/warc"


def test_the_report_goes_beside_the_feed_unless_told(tmp_path: Any) -> None:
    crawler = _crawler()
    crawler.spider.outputs = CrawlOutputs.of({str(tmp_path / "corpus.jsonl"): {}}, "news_sites", "T")
    extension = CrawlReportExtension.from_crawler(crawler)
    assert extension.path() == tmp_path / "corpus.report.html"
    crawler.spider.outputs = None  # another spider: the time the crawl started, in output/
    crawler.stats.set_value("start_time", datetime(2026, 11, 25, 7, 5, 9, tzinfo=UTC))
    assert extension.path() == Path("output/news_sites-2026-11-25T07-05-09+00-00.report.html")
    extension.item_scraped(Record(url="http://a.test/", site="a", page_type="article", text="x"))
    assert extension.summary.records == 1
    told = CrawlReportExtension.from_crawler(_crawler(REPORT_FILE=str(tmp_path / "r-%(time)s.html")))
    told.stats.set_value("start_time", datetime(2026, 11, 25, 7, 5, 9, tzinfo=UTC))
    assert told.path() == tmp_path / "r-2026-11-25T07-05-09+00-00.html"
    with pytest.raises(NotConfigured):
        CrawlReportExtension.from_crawler(get_crawler(settings_dict={"REPORT_ENABLED": False}))
