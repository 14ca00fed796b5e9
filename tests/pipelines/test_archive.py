from __future__ import annotations

import gzip
from collections import Counter
from pathlib import Path

import pytest

from extraction.page import Page
from extraction.record import EXPORT_FIELDS, Record
from extraction.warc import read_capture
from pipelines.archive import ContentStore, PageArchive, html_archive_bytes, read_archived_html


def _item(html: str | None = None, screenshot: bytes | None = None, error: str | None = None) -> Record:
    page = None if html is None else Page.from_text(html, "http://a.test/", screenshot=screenshot)
    return Record(url="http://a.test/", canonical_url="http://a.test/", site="a",
                  fetched_at="2026-01-01T00:00:00+00:00", page=page, error=error)


def test_store_is_content_addressed_and_idempotent(tmp_path: Path) -> None:
    store = ContentStore(tmp_path)
    path, written = store.put("html", b"abc", ".bin")
    again, written_again = store.put("html", b"abc", ".bin")
    assert written and not written_again and path == again
    assert Path(path).name.startswith("ba7816bf")  # sha256("abc")
    assert Path(path).read_bytes() == b"abc"
    assert not list(tmp_path.rglob(".tmp-*"))


def test_archived_html_keeps_chinese_and_overrides_stale_meta(tmp_path: Path) -> None:
    html = '<html><head><meta charset="gbk"></head><body>江城日报</body></html>'
    data = html_archive_bytes(html)
    assert gzip.decompress(data).startswith(b"\xef\xbb\xbf")
    assert data == html_archive_bytes(html)  # reproducible (no gzip timestamp)
    path = tmp_path / "p.html.gz"
    path.write_bytes(data)
    assert read_archived_html(path) == html


def _archive(folder: Path, archive_format: str = "files") -> tuple[PageArchive, Counter[str]]:
    counts: Counter[str] = Counter()
    archive = PageArchive.from_settings({"ARCHIVE_DIR": str(folder), "ARCHIVE_FORMAT": archive_format},
                                        lambda key, n: counts.update({key: n}))
    assert archive is not None
    return archive, counts


def test_archive_writes_files_and_counts(tmp_path: Path) -> None:
    archive, counts = _archive(tmp_path)
    item = _item(html="<p>x</p>", screenshot=b"\x89PNG fake")
    assert item.page is not None
    archive.keep(item.page, item)
    assert item.html_file and read_archived_html(item.html_file) == "<p>x</p>"
    assert item.screenshot_file and Path(item.screenshot_file).read_bytes() == b"\x89PNG fake"
    again = _item(html="<p>x</p>")
    assert again.page is not None
    archive.keep(again.page, again)
    assert again.html_file == item.html_file and again.screenshot_file is None
    assert counts == {"archive/html/written": 1, "archive/html/exists": 1, "archive/screenshots/written": 1}


def test_rendered_dom_is_archived_beside_the_fetched_html(tmp_path: Path) -> None:
    archive, counts = _archive(tmp_path)
    page = Page(b"<p>fetched</p>", "http://a.test/", rendered="<html><body><p>built</p></body></html>")
    record = Record(url=page.url)
    archive.keep(page, record)
    assert record.html_file and read_archived_html(record.html_file) == "<p>fetched</p>"
    assert record.rendered_file and read_archived_html(record.rendered_file).endswith("<p>built</p></body></html>")
    assert counts["archive/html/written"] == 2


@pytest.mark.parametrize("page", [
    Page(b"%PDF-1.7 binary", "http://a.test/x.pdf"), Page(b"  \n", "http://a.test/blank"),
    Page(b"<p>x</p>", "http://a.test/x.png", "image/png", screenshot=b"\x89PNG fake"),
    Page.from_text(" ", "http://a.test/blank", screenshot=b"\x89PNG fake"),
], ids=["pdf", "blank", "declared-image", "blank-rendered"])
def test_refused_page_is_not_archived_as_files(tmp_path: Path, page: Page) -> None:
    archive, counts = _archive(tmp_path)
    record = Record(url=page.url)
    archive.keep(page, record)
    assert page.refusal is not None  # left for the flow to record
    assert record.html_file is None and record.screenshot_file is None
    assert not [path for path in tmp_path.rglob("*") if path.is_file()]
    assert not counts


def test_fetched_bytes_are_archived_as_the_decoded_text(tmp_path: Path) -> None:
    """A GBK page that declares nothing: the archive holds its text, which reads back the same."""
    html = "<html><head><title>江城日报</title></head><body><p>记者周一从市统计局了解到经济运行平稳。</p></body></html>"
    page = Page(html.encode("gbk"), "http://a.test/zh.html", "text/html", site="a")
    archive, _ = _archive(tmp_path / "corpus")
    item = Record(url=page.url)
    archive.keep(page, item)
    assert item.html_file and Path(item.html_file).is_relative_to(tmp_path / "corpus" / "html")
    assert item.html_file.endswith(".html.gz") and read_archived_html(item.html_file) == page.text == html
    reread = Page(gzip.decompress(Path(item.html_file).read_bytes()), page.url)  # what scrapy extract reads
    assert reread.text == html and reread.decoded.source == "bom"
    assert item.screenshot_file is None


def test_archive_can_be_switched_off() -> None:
    assert PageArchive.from_settings({"ARCHIVE_ENABLED": "false"}) is None


def test_warc_is_the_default_and_keeps_refused_pages_too(tmp_path: Path) -> None:
    """Every fetched response goes to the WARC archive, a PDF too: the record says why it was not extracted."""
    counts: Counter[str] = Counter()
    archive = PageArchive.from_settings({"ARCHIVE_DIR": str(tmp_path)}, lambda key, n: counts.update({key: n}))
    assert archive is not None and archive.warc is not None and archive.store is None
    for body, url in ((b"<p>x</p>", "http://a.test/"), (b"%PDF-1.7 binary", "http://a.test/x.pdf")):
        record = Record(url=url, final_url=url)
        archive.keep(Page(body, url), record)
        assert record.warc_file and Path(record.warc_file).parent == tmp_path / "warc"
        assert record.html_file is None and record.warc_offset is not None and record.warc_length
        capture = read_capture(record.warc_file, record.warc_offset)
        assert capture is not None and capture.body == body
    archive.close()
    assert counts["archive/warc/captures"] == 2 and counts["archive/warc/bytes"] > 0


def test_a_disk_that_refuses_the_warc_loses_no_record(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the archive folder should be")
    counts: Counter[str] = Counter()
    archive = PageArchive.from_settings({"ARCHIVE_DIR": str(blocker)}, lambda key, n: counts.update({key: n}))
    assert archive is not None
    record = Record(url="http://a.test/")
    archive.keep(Page(b"<p>x</p>", "http://a.test/"), record)
    assert record.warc_file is None and "archive_failed" in record.flags and counts["archive/error"] == 1


@pytest.mark.parametrize(("name", "value"), [("ARCHIVE_FORMAT", "zip"), ("ARCHIVE_WARC_MAX_SIZE", 0),
                                             ("ARCHIVE_WARC_PREFIX", "a/b"), ("ARCHIVE_GZIP_LEVEL", 0),
                                             ("ARCHIVE_GZIP_LEVEL", 10)])
def test_bad_archive_setting_names_itself(name: str, value: object) -> None:
    with pytest.raises(ValueError, match=name):
        PageArchive.from_settings({name: value})


def test_internal_fields_are_not_exported() -> None:
    assert "page" not in EXPORT_FIELDS
    assert {"url", "canonical_url", "site", "fetched_at", "status", "final_url", "encoding", "title",
            "html_file", "screenshot_file", "warc_file", "warc_offset", "page_type", "text", "extraction_method",
            "lang", "error"} <= set(EXPORT_FIELDS)
