"""Feed files written line by line, and which feeds keep a killed crawl's records."""

from __future__ import annotations

from pathlib import Path

from crawler.feeds import LineFileFeedStorage, durable


def test_feed_file_is_unbuffered(tmp_path: Path) -> None:
    storage = LineFileFeedStorage(str(tmp_path / "out" / "feed.jsonl"), feed_options={"overwrite": True})
    file = storage.open(None)
    file.write(b'{"a": 1}\n')
    assert (tmp_path / "out" / "feed.jsonl").read_bytes() == b'{"a": 1}\n'  # on disk before close
    storage.store(file)


def test_durable_feeds() -> None:
    assert durable("corpus/%(time)s.jsonl") and durable("/srv/c.jsonl") and durable("file:///srv/c.jsonl")
    assert not durable("s3://bucket/c.jsonl") and not durable("stdout:")
    assert not durable("c.jsonl.gz", {"postprocessing": ["scrapy.extensions.postprocessing.GzipPlugin"]})
