"""Where a crawl's files go (crawler/outputs.py): named like its feed; the crawl state beside its site list."""

from __future__ import annotations

from pathlib import Path

import pytest

from crawler.outputs import BUNDLED_SITES, CrawlOutputs, fill_feed_uris, local_path, state_location, stem


@pytest.mark.parametrize(("uri", "expected"), [
    ("corpus.jsonl", Path("corpus.jsonl")), ("/data/c.jsonl", Path("/data/c.jsonl")),
    ("file:///data/c.jsonl", Path("/data/c.jsonl")), ("-", None), ("stdout:", None),
    ("s3://bucket/c.jsonl", None), ("out/%(batch_id)d.jsonl", None), ("C:\\data\\c.jsonl", Path("C:\\data\\c.jsonl")),
])
def test_local_path(uri: str, expected: Path | None) -> None:
    assert local_path(uri) == expected


@pytest.mark.parametrize(("name", "expected"), [
    ("corpus.jsonl", "corpus"), ("2026-12-01T06-00-00+00-00.jsonl", "2026-12-01T06-00-00+00-00"),
    ("c.jsonl.gz", "c"), ("c.jl", "c"), ("corpus", "corpus.run"), (".jsonl", ".jsonl.run"),
])
def test_a_runs_files_are_named_after_its_feed(name: str, expected: str) -> None:
    assert stem(Path("out") / name) == Path("out") / expected


def test_the_feeds_time_is_filled_in_once() -> None:
    feeds = fill_feed_uris({"corpus/%(time)s.jsonl": {"format": "jsonlines"}, "s3://b/%(name)s.jsonl": None},
                           "news_sites", "2026-12-01T06-00-00+00-00")
    assert list(feeds) == ["corpus/2026-12-01T06-00-00+00-00.jsonl", "s3://b/news_sites.jsonl"]
    outputs = CrawlOutputs.of(feeds, "news_sites", "2026-12-01T06-00-00+00-00")
    assert outputs.folder == Path("corpus/2026-12-01T06-00-00+00-00")
    assert outputs.report == Path("corpus/2026-12-01T06-00-00+00-00.report.html")
    remote = CrawlOutputs.of({"s3://b/x.jsonl": {}}, "news_sites", "T")
    assert remote.feed is None and remote.folder == Path("output/news_sites-T")


def test_a_site_lists_state_is_its_own(tmp_path: Path) -> None:
    assert state_location(tmp_path / "my-sites.yaml") == str(tmp_path / "my-sites.state")
    assert state_location(tmp_path / "other.yml") == str(tmp_path / "other.state")
    assert state_location(BUNDLED_SITES / "demo.yaml") == str(Path("output") / "demo.state")
    run = CrawlOutputs.of({str(tmp_path / "feed.jsonl"): {}}, "news_sites", "T")
    assert state_location(BUNDLED_SITES / "demo.yaml", run) == str(tmp_path / "feed" / "state")
