"""`scrapy reextract`: a crawl's WARC archive in, the records the crawl writes out."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from demo.server import DemoServer
from extraction.page import Page
from extraction.record import Record, schema
from extraction.warc import WarcWriter
from tests.crawl_helpers import REPO, SLOW_PAGE_TIMEOUT, needs_chromium, run_crawl, slow_page
from tests.crawler.test_crawl_demo import demo_sites


def _run(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "scrapy", "reextract", *args], cwd=REPO, capture_output=True,
                          text=True, timeout=timeout, stdin=subprocess.DEVNULL)


def _records(path: Path) -> list[dict[str, Any]]:
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").split("\n") if line]
    for record in records:
        jsonschema.validate(record, schema())
    return records


def _archive(folder: Path, pages: list[tuple[str, bytes]], **crawl: Any) -> list[Path]:
    """Write the pages (URL, body) as captures, each with the crawl notes ``crawl`` (a capture id per page: "n")."""
    writer = WarcWriter(folder)
    for number, (url, body) in enumerate(pages):
        record = Record(url=url, canonical_url=url, final_url=url, status=200)
        record.crawl.update({"url": url, "capture": f"c{number}"}, **crawl)
        writer.write(Page(body, url, "text/html"), record)
    writer.close()
    return writer.files


def _article(words: str) -> bytes:
    return (b"<html><body><article><p>" + words.encode() * 20 + b"</p></article></body></html>")


def test_exit_status_and_a_cut_file(tmp_path: Path) -> None:
    assert _run().returncode == 2  # usage: no WARC given
    assert _run(str(tmp_path / "nothing-here")).returncode == 2
    (tmp_path / "empty").mkdir()
    assert _run(str(tmp_path / "empty")).returncode == 2
    article = _article("A sentence of the article, long enough to be text. ")
    files = _archive(tmp_path / "warc", [("http://a.test/1", article), ("http://a.test/2", b"%PDF-1.7 binary"),
                                         ("http://a.test/3", article.replace(b"article", b"story"))])
    data = files[0].read_bytes()
    files[0].write_bytes(data[:-30])  # a crawl killed while writing its last capture
    out = tmp_path / "out.jsonl"
    done = _run(str(tmp_path / "warc"), "-o", str(out), "-s", "TEMPLATES_ENABLED=False")
    assert done.returncode == 0, done.stderr
    records = _records(out)
    assert [(r["url"], r["error"]) for r in records] == [("http://a.test/1", None), ("http://a.test/2", "not_html")]
    assert records[0]["warc_file"] == str(files[0]) and records[0]["change"] == "new"
    assert "A sentence of the article" in records[0]["text"]
    assert "cut short" in done.stderr or "ends inside a capture" in done.stderr
    progress = [line for line in done.stderr.splitlines() if "Re-extracting:" in line]
    assert progress and "pages 2, written 2, failed 1" in progress[-1]  # a plain line (no terminal), with the rate
    # The pages went through the extraction workers (one per CPU); in this process (EXTRACT_WORKERS=0) the records
    # are the same.
    alone = tmp_path / "alone.jsonl"
    assert _run(str(tmp_path / "warc"), "-o", str(alone), "-s", "TEMPLATES_ENABLED=False",
                "-s", "EXTRACT_WORKERS=0").returncode == 0
    assert _records(alone) == records
    # A page over EXTRACT_TIMEOUT has its worker replaced and its record says so; the run goes on to the next page
    # (exit status 1: every record written failed).
    slow = tmp_path / "slow.jsonl"
    _archive(tmp_path / "warc-slow", [("http://a.test/1", slow_page()), ("http://a.test/2", b"%PDF-1.7 binary")])
    timed_out = _run(str(tmp_path / "warc-slow"), "-o", str(slow), "-s", "TEMPLATES_ENABLED=False",
                     "-s", f"EXTRACT_TIMEOUT={SLOW_PAGE_TIMEOUT}", "-s", "EXTRACT_WORKERS=1")
    assert timed_out.returncode == 1, timed_out.stderr
    late = _records(slow)
    assert [(r["url"], r["error"]) for r in late] == [("http://a.test/1", "extract_timeout"),
                                                      ("http://a.test/2", "not_html")]
    assert late[0]["text"] == "" and "extract_timeout" in timed_out.stderr


def test_each_page_once_changed_articles_again_as_the_crawl_state_does(tmp_path: Path) -> None:
    """The WARC files of several scheduled runs read together: a page archived twice (its worker died) is one
    record, a later capture of a page is written only when its text changed (a hub revisited never)."""
    first, changed = _article("The council approved the budget on Monday. "), _article("The vote was delayed. ")
    hub = b"<html><body>" + b"".join(b'<li><a href="/a/%d">A headline long enough for a list %d</a></li>' % (n, n)
                                      for n in range(30)) + b"</body></html>"
    writer = WarcWriter(tmp_path / "warc")
    for capture, url, body, refetch in (("c1", "http://a.test/a/1", first, None),
                                        ("c1", "http://a.test/a/1", first, None),  # the same capture again
                                        ("c2", "http://a.test/", hub, None),
                                        ("c3", "http://a.test/a/2", changed, None),
                                        ("c4", "http://a.test/", hub, "revisit"),  # the next run's hub revisit
                                        ("c5", "http://a.test/a/1", first, "recrawl"),  # rechecked, unchanged
                                        ("c6", "http://a.test/a/2", first + b" ", "recrawl")):  # rechecked, new text
        record = Record(url=url, canonical_url=url, final_url=url, status=200, site="a")
        record.crawl.update({"url": url, "capture": capture})
        if refetch:
            record.crawl.update({"known_text_hash": "x", "revisit": refetch == "revisit"})
        writer.write(Page(body, url, "text/html"), record)
    writer.close()
    out = tmp_path / "out.jsonl"
    done = _run(str(tmp_path / "warc"), "-o", str(out), "-s", "TEMPLATES_ENABLED=False")
    assert done.returncode == 0, done.stderr
    records = [(r["url"], r["change"], r["duplicate_of"]) for r in _records(out)]
    assert records == [("http://a.test/a/1", "new", None), ("http://a.test/", "new", None),
                       ("http://a.test/a/2", "new", None), ("http://a.test/a/2", "changed", "http://a.test/a/1")]
    assert "not written: archived_twice 1, revisit 1, unchanged 1" in done.stderr


@pytest.fixture(scope="module")
def server() -> Iterator[DemoServer]:
    with DemoServer() as running:
        yield running


@needs_chromium
@pytest.mark.browser
def test_reextract_of_a_crawl_gives_its_records(server: DemoServer, tmp_path: Path) -> None:
    """A crawl's WARC files re-extracted with the template store it used (frozen in both: the crawl applies the
    store a first crawl learned, as reextract does) give every record the crawl wrote, field for field: rendered
    (DOM-read pages, screenshots) and plain."""
    first = run_crawl(tmp_path, demo_sites(server.url, render=False), name="learn")
    assert first.returncode == 0, first.log[-3000:]
    store = str(first.archive.parent / "templates_db")
    for render in (True, False):
        crawl = run_crawl(tmp_path, demo_sites(server.url, render=render), name=f"frozen-{render}",
                          settings={"TEMPLATES_STORE": store, "TEMPLATES_LEARN": "False",
                                    "CRAWL_STATE_ENABLED": "False"})
        assert crawl.returncode == 0, crawl.log[-3000:]
        out = tmp_path / f"re-{render}.jsonl"
        done = _run(str(crawl.archive / "warc"), "-o", str(out), "-s", f"TEMPLATES_STORE={store}")
        assert done.returncode == 0, done.stderr[-3000:]
        again = {record["url"]: record for record in _records(out)}
        assert len(again) == len(crawl.items) == 100
        for item in crawl.items:
            assert again[item["url"]] == item, item["url"]
        if render:
            assert sum(item["text_source"] == "rendered" for item in crawl.items) == 8  # the DOM-read pages
        assert sum(bool(item["template_cleaning"]) for item in crawl.items) >= 90


def test_an_output_that_cannot_be_written_is_a_usage_error(tmp_path: Path) -> None:
    files = _archive(tmp_path / "warc", [("http://a.test/1", _article("A sentence of the article. "))])
    for output in (tmp_path / "no" / "such" / "folder" / "out.jsonl", tmp_path / "warc"):
        done = _run(str(files[0]), "-o", str(output), "-s", "TEMPLATES_ENABLED=False", "-s", "EXTRACT_WORKERS=0")
        assert done.returncode == 2 and "cannot write" in done.stderr and "Traceback" not in done.stderr


def test_a_file_that_is_no_warc_is_named_not_read(tmp_path: Path) -> None:
    feed = tmp_path / "corpus.jsonl"
    feed.write_text('{"url": "http://a.test/1", "text": "words"}\n' * 50, encoding="utf-8")
    packed = tmp_path / "page.warc.gz"
    packed.write_bytes(gzip.compress(b"<html><body>not a WARC record</body></html>"))
    for wrong in (feed, packed):
        done = _run(str(wrong))
        assert done.returncode == 2
        assert done.stderr.strip().splitlines() == [
            f"error: not a WARC file: {wrong} (a crawl's WARC files are in the folder named like its feed, under "
            "warc/)"]


def test_the_warc_files_a_feed_names(tmp_path: Path) -> None:
    """--feed FEED: the WARC files its records name, whichever folder they are in."""
    first = _archive(tmp_path / "run-1", [("http://a.test/1", _article("The first article's words. "))])
    _archive(tmp_path / "run-2", [("http://a.test/2", _article("Another run's article words. "))])
    feed = tmp_path / "run-1.jsonl"
    feed.write_text(json.dumps({"url": "http://a.test/1", "warc_file": str(first[0])}) + "\n", encoding="utf-8")
    out = tmp_path / "out.jsonl"
    done = _run("--feed", str(feed), "-o", str(out), "-s", "TEMPLATES_ENABLED=False", "-s", "EXTRACT_WORKERS=0")
    assert done.returncode == 0, done.stderr
    assert [r["url"] for r in _records(out)] == ["http://a.test/1"]
    (tmp_path / "no-warc.jsonl").write_text('{"url": "http://a.test/1"}\n', encoding="utf-8")
    refused = _run("--feed", str(tmp_path / "no-warc.jsonl"))
    assert refused.returncode == 2 and refused.stderr.strip().startswith("error: --feed")
