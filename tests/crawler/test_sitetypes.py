"""The crawl's page-type site evidence (crawler/sitetypes.py): votes stored with the templates, hints, bad stores."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from scrapy.settings import Settings

from crawler.sitetypes import SiteTypeEvidence, SiteTypesConfig, stored_hint
from extraction.record import Record
from templates_db.store import STORE_FILENAME, open_store

SITE = "news.example"


def _record(url: str, page_type: str, confidence: float = 0.95, listed: bool = False) -> Record:
    record = Record(url=url, canonical_url=url, site=SITE)
    record.crawl["url"] = url
    record.crawl["page_type_page"] = [page_type, confidence]
    if listed:
        record.crawl["listed"] = True
    return record


def _evidence(tmp_path: Path, **settings: object) -> tuple[SiteTypeEvidence, Counter[str]]:
    counts: Counter[str] = Counter()
    values = {"TEMPLATES_STORE": str(tmp_path / "templates_db"), **settings}
    evidence = SiteTypeEvidence.from_settings(Settings(values), lambda key, n: counts.update({key: n}))
    return evidence, counts


def test_votes_are_written_to_the_template_store_and_read_by_the_next_crawl(tmp_path: Path) -> None:
    evidence, counts = _evidence(tmp_path, PAGETYPE_SITE_FLUSH_VOTES=4)
    for i in range(10):
        evidence.observe(_record(f"https://news.example/news/story-number-{i}", "article"))
    evidence.observe(_record("https://news.example/news/unsure-story-here", "list", confidence=0.5))
    hint = evidence.hint(SITE, "https://news.example/news/brand-new-story")
    assert hint is not None and hint.page_type == "article"
    assert counts["pagetype/site/votes"] == 10 and counts["pagetype/site/hint/article"] == 1
    evidence.close()
    store = open_store(tmp_path / "templates_db")
    assert store.page_type_votes(SITE)["f:news/S"] == (10.0, 0.0, 0.0)
    store.close()

    again, _ = _evidence(tmp_path)
    assert again.hint(SITE, "https://news.example/news/another-new-story") == hint.__class__(
        "article", hint.share, 10.0, "f:news/S")
    settings = Settings({"TEMPLATES_STORE": str(tmp_path / "templates_db")})
    assert stored_hint(settings, SITE, "https://news.example/news/x-y-z") is not None
    assert stored_hint(settings, SITE, "https://news.example/") is None
    assert stored_hint(settings, "other.site", "https://news.example/news/x-y-z") is None
    assert stored_hint(Settings({"TEMPLATES_STORE": str(tmp_path / "absent")}), SITE, "https://x.org/a-b-c") is None
    assert not (tmp_path / "absent").exists()  # extract never creates a store


def test_frozen_library_applies_votes_without_adding(tmp_path: Path) -> None:
    evidence, _ = _evidence(tmp_path)
    for i in range(10):
        evidence.observe(_record(f"https://news.example/a/story-number-{i}", "article", listed=True))
    evidence.close()
    frozen, counts = _evidence(tmp_path, TEMPLATES_LEARN=False)
    frozen.observe(_record("https://news.example/a/one-more-story", "list"))
    frozen.close()
    assert "pagetype/site/votes" not in counts
    store = open_store(tmp_path / "templates_db")
    assert store.page_type_votes(SITE)["f:a/S"] == (20.0, 0.0, 0.0)  # 10 pages, each a vote and a feed listing
    store.close()


def test_disabled_evidence_gives_no_hint(tmp_path: Path) -> None:
    evidence, counts = _evidence(tmp_path, PAGETYPE_SITE_ENABLED=False)
    for i in range(20):
        evidence.observe(_record(f"https://news.example/news/story-number-{i}", "article"))
    assert evidence.hint(SITE, "https://news.example/news/a-b-c") is None
    evidence.close()
    assert not counts and not (tmp_path / "templates_db").exists()


def test_corrupt_store_is_reported_counted_and_the_evidence_kept_in_memory(tmp_path: Path,
                                                                           caplog: pytest.LogCaptureFixture) -> None:
    folder = tmp_path / "templates_db"
    folder.mkdir()
    (folder / STORE_FILENAME).write_bytes(b"not a database at all" * 100)
    evidence, counts = _evidence(tmp_path, PAGETYPE_SITE_FLUSH_VOTES=1)
    for i in range(10):
        evidence.observe(_record(f"https://news.example/news/story-number-{i}", "article"))
    hint = evidence.hint(SITE, "https://news.example/news/a-b-c")
    evidence.close()
    assert hint is not None and hint.page_type == "article"
    assert counts["pagetype/site/error"] == 1
    assert sum("Page-type site evidence" in message for message in caplog.messages) == 1


def test_bad_setting_names_itself() -> None:
    with pytest.raises(ValueError, match="PAGETYPE_SITE_FLUSH_VOTES"):
        SiteTypesConfig.from_settings(Settings({"PAGETYPE_SITE_FLUSH_VOTES": 0}))


def test_a_page_the_crawl_state_knew_does_not_vote_again(tmp_path: Path) -> None:
    evidence, counts = _evidence(tmp_path)
    record = _record("https://news.example/latest", "list")
    record.entries = [{"title": "t", "url": "https://news.example/n/1001"}]
    evidence.observe(record)
    assert counts["pagetype/site/votes"] == 2
    record.crawl["known_text_hash"] = "abc"  # the same hub revisited in a later round
    evidence.observe(record)
    assert counts["pagetype/site/votes"] == 2
    evidence.close()
