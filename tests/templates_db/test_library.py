"""The template library inside the page flow: learned and applied by process(), as the crawl builds it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from scrapy import signals
from scrapy.crawler import Crawler
from scrapy.utils.test import get_crawler

from extraction.dom.text import visible_text
from extraction.page import Page
from extraction.record import Record
from pipelines.process import ProcessPipeline
from templates_db.store import open_store
from tests.extraction.templates.test_templates import FOOTER, _page


def _crawler(tmp_path: Path, **settings: Any) -> Crawler:
    crawler = get_crawler(settings_dict={"TEMPLATES_STORE": str(tmp_path), "TEMPLATES_REFRESH_INTERVAL": 0,
                                         **settings})
    assert crawler.stats is not None
    crawler.stats.open_spider()
    return crawler


def _item(html: str, site: str | None = "gazette", url: str = "https://news.test/a.html") -> Record:
    return Record(url=url, site=site, page=Page(html.encode("utf-8"), url, "text/html; charset=utf-8", site=site))


def _stat(crawler: Crawler, key: str) -> Any:
    assert crawler.stats is not None
    return crawler.stats.get_value(key)


def test_disabled_means_no_library(tmp_path: Path) -> None:
    pipeline = ProcessPipeline.from_crawler(_crawler(tmp_path, TEMPLATES_ENABLED=False))
    assert pipeline.context.templates is None
    item = pipeline.process_item(_item(_page(1)[0]))
    assert item.template_cleaning is None and not list(tmp_path.iterdir())


def test_pages_teach_the_site_and_later_pages_are_cleaned(tmp_path: Path) -> None:
    crawler = _crawler(tmp_path)
    pipeline = ProcessPipeline.from_crawler(crawler)
    for seed in range(10):
        pipeline.process_item(_item(_page(seed)[0], url=f"https://news.test/a/{seed}.html"))
    assert _stat(crawler, "templates/pages") == 10 and _stat(crawler, "templates/batch") == 1
    html, paragraphs = _page(42)
    page = Page(html.encode("utf-8"), "https://news.test/a/42.html", site="gazette")
    item = pipeline.process_item(Record(url="u", site="gazette", page=page))
    assert item.template_cleaning is not None and item.template_cleaning["removed_nodes"] >= 6
    text = visible_text(page.tree)  # the page's one tree, cleaned in place
    assert all(p in text for p in paragraphs) and "Copyright" not in text
    assert _stat(crawler, "templates/denoised") == 2  # the 10th page promoted the batch, then was cleaned
    other = pipeline.process_item(_item(html, site="elsewhere"))
    assert other.template_cleaning is None and _stat(crawler, "templates/no_templates") >= 1


def test_learning_off_applies_but_does_not_learn(tmp_path: Path) -> None:
    learner = _crawler(tmp_path)
    pipeline = ProcessPipeline.from_crawler(learner)
    for seed in range(10):
        pipeline.process_item(_item(_page(seed)[0]))
    learner.signals.send_catch_log(signals.spider_closed, spider=None, reason="finished")
    frozen = _crawler(tmp_path, TEMPLATES_LEARN=False)
    applier = ProcessPipeline.from_crawler(frozen)
    for seed in range(20, 32):
        item = applier.process_item(_item(_page(seed)[0]))
        assert item.template_cleaning is not None and item.template_cleaning["removed_nodes"] >= 6
    assert _stat(frozen, "templates/pages") is None and _stat(frozen, "templates/batch") is None
    for item in (applier.process_item(_item(_page(1)[0], site=None)),):  # no site: nothing to apply
        assert item.template_cleaning is None


def test_refused_pages_teach_nothing(tmp_path: Path) -> None:
    crawler = _crawler(tmp_path)
    pipeline = ProcessPipeline.from_crawler(crawler)
    item = Record(url="u", site="gazette", page=Page(b"%PDF-1.5 \x00\x01", "https://news.test/x.pdf", site="gazette"))
    assert pipeline.process_item(item).error == "not_html"
    assert _stat(crawler, "templates/pages") is None


def test_unfinished_batch_is_parked_when_the_spider_closes(tmp_path: Path) -> None:
    crawler = _crawler(tmp_path)
    pipeline = ProcessPipeline.from_crawler(crawler)
    for seed in range(4):
        pipeline.process_item(_item(_page(seed)[0]))
    crawler.signals.send_catch_log(signals.spider_closed, spider=None, reason="finished")
    store = open_store(tmp_path)
    assert [batch.pages for batch in store.claim("gazette")] == [4]
    store.close()


def test_corrupt_store_is_counted_and_the_crawl_goes_on(tmp_path: Path) -> None:
    (tmp_path / "templates.sqlite3").write_bytes(b"garbage" * 1000)
    crawler = _crawler(tmp_path)
    pipeline = ProcessPipeline.from_crawler(crawler)
    for seed in range(12):
        pipeline.process_item(_item(_page(seed)[0]))
    item = pipeline.process_item(_item(_page(1, footer=FOOTER)[0]))
    assert item.template_cleaning is None and item.error is None and item.text
    assert _stat(crawler, "templates/store_unusable") == 1
    assert (tmp_path / "templates.sqlite3").read_bytes() == b"garbage" * 1000  # left untouched
