"""The state pipeline: new, changed and duplicate records, what is not exported, what the state keeps."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from scrapy.crawler import Crawler
from scrapy.exceptions import DropItem
from scrapy.utils.test import get_crawler

from crawler.spiders.news_sites import NewsSitesSpider
from extraction.record import Record
from pipelines.state import CrawlStatePipeline
from tests.crawl_helpers import sites_yaml

TEXT = ("The harbour authority approved a new budget for the eastern docks on Tuesday, after a debate that "
        "lasted most of the afternoon. Councillors said the money would repair the sea wall, dredge the "
        "channel and build a small ferry terminal, and that work would begin in the spring.\n"
        "Residents who spoke at the meeting asked for the ferry to run on weekends as well.")
OTHER = ("A late goal gave the Mariners a two to one win over the Falcons on Saturday, their fourth win in a "
         "row. The coach praised the defence, which has conceded three goals in five matches, and said the "
         "team would rest two players before the cup game on Wednesday evening against the league leaders.")


def _crawler(tmp_path: Path, **settings: Any) -> tuple[Crawler, CrawlStatePipeline]:
    sites = tmp_path / "sites.yaml"
    sites.write_text(sites_yaml([{"name": "s", "start_urls": ["http://s.test/"],
                                  "allowed_prefixes": ["http://s.test/"]}]), encoding="utf-8")
    crawler = get_crawler(NewsSitesSpider, {"TEMPLATES_STORE": str(tmp_path / "db"), **settings})
    crawler.stats.open_spider()  # type: ignore[union-attr]
    crawler.settings.frozen = False  # in a crawl the spider is made before the settings freeze (DOWNLOAD_SLOTS)
    spider = NewsSitesSpider.from_crawler(crawler, sites=str(sites))
    crawler.spider = spider
    spider.crawl_state.begin(["s"])
    return crawler, CrawlStatePipeline.from_crawler(crawler)


def _item(path: str, text: str = TEXT, **fields: Any) -> Record:
    values = {"canonical_url": f"http://s.test{path}", "page_type": "article", **fields}
    record = Record(url=f"http://s.test{path}", site="s", depth=1, status=200, text=text, **values)
    record.crawl["url"] = record.url
    return record


def test_new_records_and_duplicates_across_urls(tmp_path: Path) -> None:
    crawler, pipeline = _crawler(tmp_path)
    first = pipeline.process_item(_item("/a"))
    assert first.change == "new" and first.duplicate_of is None
    pipeline.item_scraped(first)
    reflowed = pipeline.process_item(_item("/b", TEXT.replace("\n", " ").upper()))
    assert reflowed.duplicate_of == "http://s.test/a" and reflowed.duplicate_similarity == 1.0
    framed = pipeline.process_item(_item("/c", "Originally published by the Harbor Gazette.\n" + TEXT))
    assert framed.duplicate_of == "http://s.test/a" and framed.duplicate_similarity >= 0.85  # near, not exact
    assert pipeline.process_item(_item("/d", OTHER)).duplicate_of is None
    stats = crawler.stats.get_stats()  # type: ignore[union-attr]
    assert stats["dedup/exact"] == 1 and stats["dedup/near"] == 1


def test_duplicates_dropped_when_asked(tmp_path: Path) -> None:
    _, pipeline = _crawler(tmp_path, DEDUP_DROP=True)
    pipeline.process_item(_item("/a"))
    with pytest.raises(DropItem, match=r"duplicate of http://s\.test/a"):
        pipeline.process_item(_item("/b"))


def test_a_declared_canonical_already_crawled_makes_a_duplicate(tmp_path: Path) -> None:
    crawler, pipeline = _crawler(tmp_path)
    pipeline.item_scraped(pipeline.process_item(_item("/story")))
    amp = _item("/amp/story", OTHER)  # whatever its text, it names the crawled page as its canonical URL
    amp.canonical_url = "http://s.test/story"
    assert pipeline.process_item(amp).duplicate_of == "http://s.test/story"
    assert crawler.stats.get_value("dedup/canonical") == 1  # type: ignore[union-attr]


def test_known_pages_exported_only_when_changed(tmp_path: Path) -> None:
    crawler, pipeline = _crawler(tmp_path)
    first = pipeline.process_item(_item("/a"))
    old_hash = first.crawl["text_hash"]

    def refetched(text: str, revisit: bool, export_changed: bool) -> Record:
        item = _item("/a", text)
        item.crawl.update(known_text_hash=old_hash, revisit=revisit, export_changed=export_changed)
        return item

    with pytest.raises(DropItem, match="unchanged"):
        pipeline.process_item(refetched(TEXT, revisit=False, export_changed=True))
    with pytest.raises(DropItem, match="unchanged"):  # recrawl=new: known articles are never exported again
        pipeline.process_item(refetched(TEXT + "\nCorrection added.", revisit=False, export_changed=False))
    with pytest.raises(DropItem, match="revisit"):  # a hub is revisited for its links
        pipeline.process_item(refetched(OTHER, revisit=True, export_changed=True))
    changed = pipeline.process_item(refetched(TEXT + "\nCorrection: the vote was on Wednesday.", False, True))
    assert changed.change == "changed" and changed.duplicate_of is None  # not a duplicate of its own old text
    assert crawler.stats.get_value("export/skipped/unchanged") == 2  # type: ignore[union-attr]


def test_since_leaves_out_older_records(tmp_path: Path) -> None:
    _, pipeline = _crawler(tmp_path)
    pipeline.crawler.spider.since = NewsSitesSpider(since="2026-03-01").since  # type: ignore[union-attr]
    with pytest.raises(DropItem, match="before since"):
        pipeline.process_item(_item("/old", date_published="2026-02-27"))
    assert pipeline.process_item(_item("/new", OTHER, date_published="2026-03-02T08:00:00+08:00")).change == "new"
    assert pipeline.process_item(_item("/undated", TEXT + " More.")).change == "new"


def test_completed_pages_and_aliases_in_the_state(tmp_path: Path) -> None:
    crawler, pipeline = _crawler(tmp_path)
    spider: Any = crawler.spider
    item = pipeline.process_item(_item("/a?id=1", canonical_url="http://s.test/a"))
    item.crawl.update(etag='"v1"', amp=["http://s.test/amp/a"])
    pipeline.item_scraped(item)
    failed = _item("/b")
    failed.error = "timeout"
    pipeline.item_dropped(failed)
    known = spider.crawl_state.known(["http://s.test/a?id=1", "http://s.test/a", "http://s.test/amp/a",
                                      "http://s.test/b"])
    assert known["http://s.test/a?id=1"].etag == '"v1"' and known["http://s.test/a?id=1"].status == "done"
    assert known["http://s.test/a"].url == known["http://s.test/amp/a"].url == "http://s.test/a?id=1"
    assert known["http://s.test/b"].status == "failed"  # tried again next run
    assert {"http://s.test/a", "http://s.test/amp/a"} <= spider._state["seen"]  # not fetched in this run either


def test_a_canonical_naming_a_list_or_start_page_is_neither_duplicate_nor_alias(tmp_path: Path) -> None:
    crawler, pipeline = _crawler(tmp_path)
    spider: Any = crawler.spider
    home = _item("/", OTHER + " Latest news.", page_type="list")
    pipeline.item_scraped(pipeline.process_item(home))
    misconfigured = _item("/story", canonical_url="http://s.test/")  # a site-wide canonical naming the home page
    pipeline.item_scraped(pipeline.process_item(misconfigured))
    assert misconfigured.duplicate_of is None
    section = _item("/other-story", OTHER, canonical_url="http://s.test/section/")  # a list page not crawled yet
    pipeline.item_scraped(pipeline.process_item(section))
    known = spider.crawl_state.known(["http://s.test/", "http://s.test/section/"])
    assert known["http://s.test/"].url == "http://s.test/"  # the home page stays itself
    assert known["http://s.test/section/"].url == "http://s.test/other-story"  # unknown then: an alias
    bad = _item("/bad", TEXT + " Other words here.", canonical_url="https://s.test:99999/x")
    bad.crawl["amp"] = ["http://[broken"]
    pipeline.item_scraped(pipeline.process_item(bad))  # a malformed URL is no alias, and no error
    assert spider.crawl_state.known(["http://s.test/bad"])["http://s.test/bad"].status == "done"
