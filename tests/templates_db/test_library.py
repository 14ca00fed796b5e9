"""The template library inside the page flow: learned and applied by process(), as the crawl builds it."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from scrapy import signals
from scrapy.crawler import Crawler
from scrapy.utils.test import get_crawler

from extraction.dom.text import visible_text
from extraction.page import Page
from extraction.process import Context, process
from extraction.record import Record, schema
from pipelines.process import ProcessPipeline
from templates_db.library import TemplateLibrary, TemplatesConfig
from templates_db.store import open_store
from tests.extraction.templates.test_templates import FOOTER, _page


def _crawler(tmp_path: Path, **settings: Any) -> Crawler:
    crawler = get_crawler(settings_dict={"EXTRACT_WORKERS": 0, "TEMPLATES_STORE": str(tmp_path),
                                         "ARCHIVE_DIR": str(tmp_path / "archive"), "TEMPLATES_REFRESH_INTERVAL": 0,
                                         **settings})
    assert crawler.stats is not None
    crawler.stats.open_spider()
    return crawler


def _item(html: str, site: str | None = "gazette", url: str = "https://news.test/a.html") -> Record:
    return Record(url=url, site=site, page=Page(html.encode("utf-8"), url, "text/html; charset=utf-8", site=site))


def _stat(crawler: Crawler, key: str) -> Any:
    assert crawler.stats is not None
    return crawler.stats.get_value(key)


BATCH = 4  # TEMPLATES_BATCH_PAGES of the process() tests (the default, 10, only makes them longer)


def _library(store: Path | str, counts: Counter[str], **settings: Any) -> TemplateLibrary:
    config = TemplatesConfig.from_settings({"TEMPLATES_STORE": str(store), "TEMPLATES_BATCH_PAGES": BATCH,
                                            "TEMPLATES_REFRESH_INTERVAL": 0, **settings})
    return TemplateLibrary.open(config, count=lambda key: counts.update([key]))


def _counting_context(library: TemplateLibrary, counts: Counter[str]) -> Context:
    def count(key: str, n: int = 1) -> None:
        counts[key] += n

    return Context(templates=library, count=count)  # no models: the text is the (cleaned) full text


def _processed(context: Context, seed: int, site: str | None = "gazette") -> tuple[Record, list[str]]:
    html, paragraphs = _page(seed)
    url = f"https://news.test/a/{seed}.html"
    record = process(Page(html.encode("utf-8"), url, "text/html; charset=utf-8", site=site), context)
    jsonschema.validate(record.as_dict(), schema())
    return record, paragraphs


def test_a_released_sites_batch_is_parked_for_its_next_owner(location: str) -> None:
    """Site leases (crawler/leases.py): the worker giving up a site parks its unfinished batch, and the worker that
    claims the site next continues it, on either backend."""
    first, second = Counter[str](), Counter[str]()
    library = _library(location, first)
    for seed in range(BATCH - 1):
        _processed(_counting_context(library, first), seed)
    library.release("gazette")
    assert "gazette" not in library.summary()  # forgotten: nothing of it left to park at close
    heir = _library(location, second)
    _processed(_counting_context(heir, second), BATCH)  # completes the batch it claimed
    assert second["templates/promoted"] > 0 and first["templates/promoted"] == 0
    assert heir.store is not None and heir.store.claim("gazette") == []
    library.close()
    heir.close()


def test_process_learns_a_batch_then_cleans_the_sites_pages(tmp_path: Path) -> None:
    counts: Counter[str] = Counter()
    library = _library(tmp_path / "store", counts)
    context = _counting_context(library, counts)
    assert library.learns and library.config.batch_pages == BATCH
    first = [_processed(context, seed)[0] for seed in range(BATCH - 1)]
    assert all(record.template_cleaning is None for record in first)  # nothing learned yet
    assert counts["templates/no_templates"] == BATCH - 1 and counts["templates/batch"] == 0
    last, _ = _processed(context, BATCH - 1)  # completes the batch, then is cleaned by what it taught
    assert counts["templates/batch"] == 1 and counts["templates/promoted"] >= 6
    assert last.template_cleaning is not None and last.template_cleaning["removed_nodes"] > 0
    for seed in range(50, 53):
        record, paragraphs = _processed(context, seed)
        assert record.template_cleaning is not None and record.template_cleaning["removed_nodes"] >= 6
        assert all(p in record.text for p in paragraphs) and "Copyright" not in record.text
        assert "Home" not in record.text.split("\n") and record.extraction_method == "fulltext"
    assert counts["templates/pages"] == BATCH + 3 and counts["templates/denoised"] == 4
    other, paragraphs = _processed(context, 60, site="elsewhere")  # another site learned nothing
    assert other.template_cleaning is None and "Copyright" in other.text
    assert all(p in other.text for p in paragraphs)
    unsited, _ = _processed(context, 61, site=None)  # no site: no learning, no cleaning
    assert unsited.template_cleaning is None and counts["templates/pages"] == BATCH + 4
    library.close()
    store = open_store(tmp_path / "store")
    assert len(store.templates("gazette")) >= 6 and store.templates("elsewhere") == []
    store.close()


def test_process_with_learning_off_applies_but_does_not_learn(tmp_path: Path) -> None:
    teacher_counts: Counter[str] = Counter()
    teacher = _library(tmp_path, teacher_counts)
    teach = _counting_context(teacher, teacher_counts)
    for seed in range(BATCH):
        _processed(teach, seed)
    teacher.close()
    counts: Counter[str] = Counter()
    library = _library(tmp_path, counts, TEMPLATES_LEARN="false")
    assert not library.learns and library.available
    context = _counting_context(library, counts)
    for seed in range(20, 20 + 2 * BATCH):
        record, paragraphs = _processed(context, seed)
        assert record.template_cleaning is not None and record.template_cleaning["removed_nodes"] >= 6
        assert all(p in record.text for p in paragraphs) and "Copyright" not in record.text
    new_site, _ = _processed(context, 40, site="elsewhere")
    assert new_site.template_cleaning is None
    assert counts["templates/pages"] == 0 and counts["templates/batch"] == 0
    library.close()
    store = open_store(tmp_path)
    assert store.claim("gazette") == [] and store.claim("elsewhere") == []  # nothing parked either
    store.close()


@pytest.mark.parametrize("settings", [{"TEMPLATES_ENABLED": False}, {"TEMPLATES_ENABLED": "0"}])
def test_pipeline_without_templates_has_no_library(tmp_path: Path, settings: dict[str, Any]) -> None:
    crawler = _crawler(tmp_path, **settings)
    pipeline = ProcessPipeline.from_crawler(crawler)
    assert pipeline.context.templates is None
    for seed in range(12):
        assert pipeline.process_item(_item(_page(seed)[0])).template_cleaning is None
    assert not any(key.startswith("templates/") for key in crawler.stats.get_stats())  # type: ignore[union-attr]
    assert [path.name for path in tmp_path.iterdir()] == ["archive"]  # the pages' WARC files; no template store


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
    assert applier.process_item(_item(_page(1)[0], site=None)).template_cleaning is None  # no site: nothing applied


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
