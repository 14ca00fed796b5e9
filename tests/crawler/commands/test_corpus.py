"""``scrapy corpus``: the text corpus of a crawl's feeds (``crawler.corpus``)."""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from crawler.corpus import Filters, Selection, feed_paths, select, write_corpus
from crawler.files import replace_atomically
from extraction.record import Record
from tests.crawl_helpers import REPO

TEXT = "The council met on Tuesday to discuss the budget.\nResidents asked about the new library."


def _record(url: str, **fields: Any) -> dict[str, Any]:
    """A record as the crawl exports it (every field of the schema), an article with text of its own by default."""
    values: dict[str, Any] = {"page_type": "article", "text": f"{TEXT}\nMore at {url}.", "lang": "en", "change": "new",
                              "fetched_at": "2026-11-20T10:00:00+00:00", **fields}
    record = Record(url=url)
    for name, value in values.items():
        setattr(record, name, value)
    return record.as_dict()


def _feed(path: Path, records: list[Any], tail: bytes = b"") -> Path:
    data = b"".join(json.dumps(r, ensure_ascii=False).encode() + b"\n" for r in records) + tail
    if path.suffix == ".gz":
        data = gzip.compress(data)
    path.write_bytes(data)
    return path


def _corpus_of(feeds: list[Path], filters: Filters | None = None,
               fields: tuple[str, ...] = ()) -> tuple[Selection, list[dict[str, Any]]]:
    """Select and write the corpus of ``feeds``; return the selection (with the copies left out) and the records."""
    filters = filters or Filters()
    selection = select(feeds, filters)
    out = io.BytesIO()
    written = write_corpus(feeds, selection, out, fields, duplicates=filters.duplicates)
    assert written == selection.kept
    return selection, [json.loads(line) for line in out.getvalue().splitlines()]


def _urls(feeds: list[Path], filters: Filters | None = None) -> list[str]:
    return [record["url"] for record in _corpus_of(feeds, filters)[1]]


def test_the_corpus_keeps_articles_with_text_once_and_says_why_the_rest_went(tmp_path: Path) -> None:
    feed = _feed(tmp_path / "run.jsonl", [
        _record("http://n.test/a"),
        _record("http://n.test/error", error="http_404", text=""),
        _record("http://n.test/empty", text=" \n"),
        _record("http://n.test/list", page_type="list"),
        _record("http://n.test/dup", duplicate_of="http://n.test/a", duplicate_similarity=1.0),
        _record("http://n.test/b"),
    ], tail=b'{"url": "http://n.test/cut", "te')  # the line a killed crawl cut short
    selection = select([feed], Filters())
    assert selection.records == 6 and selection.kept == 2 and selection.unreadable == 1
    assert dict(selection.left_out) == {"error": 1, "empty": 1, "page_type": 1, "duplicate": 1}
    assert selection.summary() == ("Kept 2 of 6 records; left out: errors 1, without text 1, other page types 1, "
                                   "duplicates 1; lines that are no JSON record: 1.")
    assert _urls([feed]) == ["http://n.test/a", "http://n.test/b"]
    assert _urls([feed], Filters(page_types=(), duplicates="keep")) == [
        "http://n.test/a", "http://n.test/list", "http://n.test/dup", "http://n.test/b"]


def test_language_length_and_since(tmp_path: Path) -> None:
    feed = _feed(tmp_path / "run.jsonl", [
        _record("http://n.test/zh", lang="zh-Hans", date_published="2026-11-25T08:00:00+08:00"),
        _record("http://n.test/en-old", date_published="2026-11-01"),
        _record("http://n.test/en-undated", date_published=None),
        _record("http://n.test/short", text="Too short."),
    ])
    assert _urls([feed], Filters.parse(languages="zh")) == ["http://n.test/zh"]
    assert _urls([feed], Filters.parse(languages="ZH,en", min_chars=20)) == [
        "http://n.test/zh", "http://n.test/en-old", "http://n.test/en-undated"]
    # Published before --since is left out; an undated page is kept (as the crawl's -a since= keeps it).
    assert _urls([feed], Filters.parse(since="2026-11-24")) == [
        "http://n.test/zh", "http://n.test/en-undated", "http://n.test/short"]
    assert select([feed], Filters.parse(since="2026-11-24")).left_out == {"before_since": 1}


def test_a_page_exported_again_keeps_its_last_good_version(tmp_path: Path) -> None:
    first = _feed(tmp_path / "2026-11-20.jsonl", [
        _record("http://n.test/a", text="First text of the article, long enough."),
        _record("http://n.test/b", text="B as first fetched."),
        _record("http://n.test/c", fetched_at="2026-11-22T10:00:00+00:00", text="C fetched last."),
    ])
    second = _feed(tmp_path / "2026-11-21.jsonl", [
        _record("http://n.test/a", change="changed", fetched_at="2026-11-21T10:00:00+00:00",
                text="The article's corrected text."),
        _record("http://n.test/b", error="http_500", text="", fetched_at="2026-11-21T10:00:00+00:00"),
        _record("http://n.test/c", change="changed", fetched_at="2026-11-21T10:00:00+00:00", text="C earlier."),
    ])
    selection = select([first, second], Filters())
    assert selection.left_out == {"older_version": 2, "error": 1}
    out = io.BytesIO()
    write_corpus([first, second], selection, out)
    texts = {r["url"]: r["text"] for r in map(json.loads, out.getvalue().splitlines())}
    # a: the changed text of the later run; b: the later fetch failed, the good one stays; c: fetched later,
    # though in the earlier file.
    assert texts == {"http://n.test/a": "The article's corrected text.", "http://n.test/b": "B as first fetched.",
                     "http://n.test/c": "C fetched last."}


def test_lines_are_written_as_the_crawl_wrote_them_or_with_the_fields_asked(tmp_path: Path) -> None:
    line = json.dumps(_record("http://n.test/新闻", title="新闻 “quoted”"), ensure_ascii=False).encode() + b"\n"
    feed = tmp_path / "run.jsonl"
    feed.write_bytes(line + line.replace(b"http://n.test/", b"http://m.test/").rstrip(b"\n"))  # no final newline
    out = io.BytesIO()
    write_corpus([feed], select([feed], Filters()), out)
    assert out.getvalue() == line + line.replace(b"http://n.test/", b"http://m.test/")
    out = io.BytesIO()
    write_corpus([feed], select([feed], Filters()), out, ("title", "url"))
    assert out.getvalue().splitlines()[0].decode() == '{"title": "新闻 “quoted”", "url": "http://n.test/新闻"}'
    # A lone surrogate (a JSON escape in the feed) stays an escape: the corpus is valid UTF-8.
    feed.write_bytes(b'{"url": "http://n.test/s", "page_type": "article", "text": "x\\udfff", "error": null}\n')
    out = io.BytesIO()
    write_corpus([feed], select([feed], Filters()), out, ("text",))
    assert out.getvalue() == b'{"text": "x\\udfff"}\n'


def test_compressed_feeds_and_one_cut_by_a_kill(tmp_path: Path) -> None:
    whole = _feed(tmp_path / "a.jsonl.gz", [_record("http://n.test/a")])
    texts = [hashlib.sha256(str(i).encode()).hexdigest() * 20 for i in range(50)]  # texts that do not compress away
    data = gzip.compress(b"".join(json.dumps(_record(f"http://n.test/{i}", text=text)).encode() + b"\n"
                                  for i, text in enumerate(texts)))
    cut = tmp_path / "b.jsonl.gz"
    cut.write_bytes(data[:len(data) // 2])
    selection = select([whole, cut], Filters())
    assert selection.cut == [f"{cut} ends early (a compressed feed cut by a kill)"] and 1 < selection.kept < 51
    joined = tmp_path / "c.jsonl.gz"  # two gzip streams one after the other (``cat a.gz b.gz``)
    joined.write_bytes(whole.read_bytes() + gzip.compress(json.dumps(_record("http://n.test/b")).encode()))
    assert _urls([joined]) == ["http://n.test/a", "http://n.test/b"] and not select([joined], Filters()).cut
    padded = tmp_path / "d.jsonl.gz"  # zeros after the stream, which gzip reads past
    padded.write_bytes(whole.read_bytes() + b"\0" * 700)
    assert _urls([padded]) == ["http://n.test/a"] and not select([padded], Filters()).cut
    other = tmp_path / "e.jsonl.gz"  # no gzip at all
    other.write_bytes(b'{"url": "http://n.test/a"}\n')
    assert select([other], Filters()).cut[0].startswith(f"{other} holds data that is no gzip stream")


def test_folders_give_their_feeds_in_name_order(tmp_path: Path) -> None:
    for name in ("2026-11-21.jsonl", "2026-11-20.jsonl.gz", "notes.txt", "2026-11-22.jsonl"):
        (tmp_path / name).write_bytes(b"")
    assert [p.name for p in feed_paths([str(tmp_path)])] == ["2026-11-20.jsonl.gz", "2026-11-21.jsonl",
                                                            "2026-11-22.jsonl"]
    with pytest.raises(ValueError, match="no file or folder"):
        feed_paths([str(tmp_path / "missing.jsonl")])


@pytest.mark.parametrize(("options", "message"), [
    ({"page_types": "articles"}, "unknown page type"), ({"page_types": " , "}, "at least one page type"),
    ({"min_chars": -1}, "--min-chars"), ({"duplicates": "drop"}, "--duplicates"),
    ({"since": "last week"}, "--since: .*ISO 8601")])
def test_options_that_cannot_be_read(options: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Filters.parse(**options)


def test_a_failed_write_leaves_the_old_corpus(tmp_path: Path) -> None:
    target = tmp_path / "corpus.jsonl"
    target.write_bytes(b"old\n")

    def failing(out: Any) -> None:
        out.write(b"half")
        raise OSError("disk full")

    with pytest.raises(OSError):
        replace_atomically(target, failing)
    assert target.read_bytes() == b"old\n" and [p.name for p in tmp_path.iterdir()] == ["corpus.jsonl"]


def _corpus(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "scrapy", "corpus", *args], cwd=REPO, capture_output=True,
                          text=True, stdin=subprocess.DEVNULL, timeout=120)


def test_the_command(tmp_path: Path) -> None:
    (tmp_path / "runs").mkdir()
    _feed(tmp_path / "runs" / "2026-11-20.jsonl",
          [_record("http://n.test/a"), _record("http://n.test/l", page_type="list")])
    _feed(tmp_path / "runs" / "2026-11-21.jsonl", [_record("http://n.test/b", lang="zh")])
    out = tmp_path / "corpus.jsonl"
    done = _corpus(str(tmp_path / "runs"), "-o", str(out), "--fields", "url,lang")
    assert done.returncode == 0, done.stderr
    assert "Kept 2 of 3 records; left out: other page types 1." in done.stderr
    assert out.read_text().splitlines() == ['{"url": "http://n.test/a", "lang": "en"}',
                                            '{"url": "http://n.test/b", "lang": "zh"}']
    shown = _corpus(str(tmp_path / "runs"), "--lang", "zh", "--fields", "url")
    assert shown.returncode == 0 and shown.stdout == '{"url": "http://n.test/b"}\n'
    assert _corpus(str(tmp_path / "missing.jsonl")).returncode == 2
    wrong = _corpus(str(tmp_path / "runs"), "--fields", "url,body")
    assert wrong.returncode == 2 and "unknown field(s) body" in wrong.stderr
    (tmp_path / "empty.jsonl").write_bytes(b"\n")
    assert _corpus(str(tmp_path / "empty.jsonl")).returncode == 1
    assert Selection().summary() == "Kept 0 of 0 records."


def test_a_file_that_is_no_feed_is_named(tmp_path: Path) -> None:
    page = tmp_path / "page.html"
    page.write_text("<html><body><p>Hello</p></body></html>\n<p>again</p>\n", encoding="utf-8")
    stats = tmp_path / "stats.jsonl"
    stats.write_text('{"item_scraped_count": 3}\n', encoding="utf-8")
    for wrong, lines in ((page, 2), (stats, 1)):
        done = _corpus(str(wrong))
        assert done.returncode == 2
        assert done.stderr.strip().splitlines() == [
            f"error: not a JSONL feed of the crawl (no line is a crawl record): {wrong} ({lines} lines)"]


def test_nothing_kept_is_a_failure_and_leaves_the_corpus_as_it_was(tmp_path: Path) -> None:
    feed = _feed(tmp_path / "run.jsonl", [_record("http://n.test/a"), _record("http://n.test/b")])
    out = tmp_path / "corpus.jsonl"
    out.write_bytes(b'{"url": "kept before"}\n')
    done = _corpus(str(feed), "--lang", "fr", "-o", str(out))
    assert done.returncode == 1
    assert "Kept 0 of 2 records; left out: other languages 2." in done.stderr
    assert f"error: nothing kept of the feeds' records; {out} is left as it was" in done.stderr
    assert out.read_bytes() == b'{"url": "kept before"}\n'


def test_duplicates_first_seen_by_another_crawl_are_told_apart(tmp_path: Path) -> None:
    """The crawl marks a record duplicate_of a page its crawl state knew: when that page is in no feed given, the
    state was shared with another crawl (the user learns where the missing articles went)."""
    feed = _feed(tmp_path / "run.jsonl", [
        _record("http://n.test/a"),
        _record("http://n.test/b", duplicate_of="http://n.test/a"),  # a copy of a page of these feeds
        _record("http://n.test/c", duplicate_of="http://demo.test/x"),  # of a page another crawl exported
        _record("http://n.test/d", duplicate_of="http://demo.test/y")])
    done = _corpus(str(feed), "-o", str(tmp_path / "corpus.jsonl"))
    assert done.returncode == 0, done.stderr
    assert ("Kept 1 of 4 records; left out: duplicates 3 (2 of pages first seen outside these feeds, by another "
            "crawl with the same crawl state).") in done.stderr


def test_the_report_reads_compressed_feeds_as_the_corpus_does(tmp_path: Path) -> None:
    feed = _feed(tmp_path / "run.jsonl.gz", [_record("http://n.test/a"), _record("http://n.test/l", page_type="list")])
    report = subprocess.run([sys.executable, "-m", "scrapy", "report", str(feed), "--templates", str(tmp_path)],
                            cwd=REPO, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=120)
    assert report.returncode == 0, report.stderr
    assert "Report of 2 records written to" in report.stdout and (tmp_path / "run.report.html").is_file()


def test_copies_of_an_earlier_text_are_left_out_across_feeds(tmp_path: Path) -> None:
    story = "The council met on Tuesday to discuss the budget for the coming year. " * 8
    first = _feed(tmp_path / "a.jsonl", [_record("http://n.test/a", text=story),
                                         _record("http://n.test/list", page_type="list", text="Home\nNews")])
    second = _feed(tmp_path / "b.jsonl", [
        _record("http://m.test/copy", text=story.upper().replace(". ", ".\n")),  # the same text, reflowed
        _record("http://m.test/framed", text="Reprinted from the Gazette.\n" + story),  # a near-duplicate
        _record("http://m.test/list", page_type="list", text="Home\nNews"),  # lists are not deduplicated
    ])
    selection, records = _corpus_of([first, second], Filters(page_types=(), duplicates="exact"))
    assert [r["url"] for r in records] == ["http://n.test/a", "http://n.test/list", "http://m.test/framed",
                                           "http://m.test/list"]
    assert selection.left_out == {"copy": 1} and selection.kept == 4
    selection, records = _corpus_of([first, second], Filters(page_types=()))  # near: the default
    assert [r["url"] for r in records] == ["http://n.test/a", "http://n.test/list", "http://m.test/list"]
    assert selection.summary() == "Kept 3 of 5 records; left out: copies of an earlier record's text 2."
    assert len(_urls([first, second], Filters(page_types=(), duplicates="keep"))) == 5


def test_versions_are_ordered_by_time_whatever_the_zone(tmp_path: Path) -> None:
    feed = _feed(tmp_path / "run.jsonl", [
        _record("http://n.test/a", text="Fetched at 02:00 UTC, the later one.", fetched_at="2026-11-20T02:00:00+00:00"),
        _record("http://n.test/a", text="Fetched at 01:00 UTC.", fetched_at="2026-11-20T09:00:00+08:00"),
        _record("http://n.test/b", text="B with a time."),
        _record("http://n.test/b", text="B without one.", fetched_at=None),
    ])
    assert [r["text"] for r in _corpus_of([feed])[1]] == ["Fetched at 02:00 UTC, the later one.", "B with a time."]


def test_a_language_asked_with_its_region_is_the_language(tmp_path: Path) -> None:
    feed = _feed(tmp_path / "run.jsonl", [_record("http://n.test/a", lang="en"), _record("http://n.test/b", lang="de")])
    assert _urls([feed], Filters.parse(languages="en-US")) == ["http://n.test/a"]


def test_each_feed_is_read_once_and_never_the_output(tmp_path: Path) -> None:
    feed = _feed(tmp_path / "2026-11-20.jsonl", [_record("http://n.test/a")])
    old_corpus = _feed(tmp_path / "all.jsonl", [_record("http://n.test/old")])
    assert feed_paths([str(tmp_path), str(feed), str(tmp_path / "." / feed.name)], output=old_corpus) == [feed]
    with pytest.raises(ValueError, match="is one of the feeds"):
        feed_paths([str(feed)], output=feed)
    assert select(feed_paths([str(feed), str(feed)]), Filters()).records == 1


def test_a_feed_rewritten_between_the_two_passes_is_counted_not_a_traceback(tmp_path: Path) -> None:
    feed = _feed(tmp_path / "run.jsonl", [_record("http://n.test/a"), _record("http://n.test/b")])
    selection = select([feed], Filters())
    _feed(feed, [_record("http://n.test/b"), _record("http://n.test/a")])  # the same pages, other lines
    out = io.BytesIO()
    assert write_corpus([feed], selection, out) == 0 and out.getvalue() == b""
    assert selection.summary() == "Kept 0 of 2 records; left out: changed in their feed since it was read 2."


def test_the_corpus_file_gets_the_mode_of_the_one_it_replaces(tmp_path: Path) -> None:
    target = tmp_path / "corpus.jsonl"
    replace_atomically(target, lambda out: out.write(b"new\n"))
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(target.stat().st_mode) == 0o666 & ~umask
    target.chmod(0o640)
    replace_atomically(target, lambda out: out.write(b"newer\n"))
    assert stat.S_IMODE(target.stat().st_mode) == 0o640 and target.read_bytes() == b"newer\n"
