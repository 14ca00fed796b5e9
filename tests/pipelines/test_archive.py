from __future__ import annotations

import gzip
from pathlib import Path

import pytest
from scrapy.exceptions import NotConfigured
from scrapy.utils.test import get_crawler

from extraction.page import Page
from extraction.record import EXPORT_FIELDS, Record
from pipelines.archive import ArchivePipeline, ContentStore, html_archive_bytes, read_archived_html


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


def test_pipeline_writes_files_and_counts(tmp_path: Path) -> None:
    crawler = get_crawler(settings_dict={"ARCHIVE_DIR": str(tmp_path)})
    crawler.stats.open_spider()  # type: ignore[union-attr]
    pipeline = ArchivePipeline.from_crawler(crawler)
    item = pipeline.process_item(_item(html="<p>x</p>", screenshot=b"\x89PNG fake"))
    assert item.html_file and read_archived_html(item.html_file) == "<p>x</p>"
    assert item.screenshot_file and Path(item.screenshot_file).read_bytes() == b"\x89PNG fake"
    pipeline.process_item(_item(html="<p>x</p>"))
    stats = crawler.stats.get_stats()  # type: ignore[union-attr]
    assert stats["archive/html/written"] == 1 and stats["archive/html/exists"] == 1
    assert stats["archive/screenshots/written"] == 1


def test_failed_page_has_no_files(tmp_path: Path) -> None:
    crawler = get_crawler(settings_dict={"ARCHIVE_DIR": str(tmp_path)})
    item = ArchivePipeline.from_crawler(crawler).process_item(_item(error="timeout"))
    assert item.html_file is None and item.screenshot_file is None


@pytest.mark.parametrize("page", [
    Page(b"%PDF-1.7 binary", "http://a.test/x.pdf"), Page(b"  \n", "http://a.test/blank"),
    Page(b"<p>x</p>", "http://a.test/x.png", "image/png", screenshot=b"\x89PNG fake"),
    Page.from_text(" ", "http://a.test/blank", screenshot=b"\x89PNG fake"),
], ids=["pdf", "blank", "declared-image", "blank-rendered"])
def test_refused_page_is_not_archived(tmp_path: Path, page: Page) -> None:
    crawler = get_crawler(settings_dict={"ARCHIVE_DIR": str(tmp_path)})
    crawler.stats.open_spider()  # type: ignore[union-attr]
    item = ArchivePipeline.from_crawler(crawler).process_item(Record(url=page.url, page=page))
    assert page.refusal is not None and item.page is page  # left for the process pipeline to record
    assert item.html_file is None and item.screenshot_file is None
    assert not [path for path in tmp_path.rglob("*") if path.is_file()]
    assert not crawler.stats.get_stats()  # type: ignore[union-attr]


def test_fetched_bytes_are_archived_as_the_decoded_text(tmp_path: Path) -> None:
    """A GBK page that declares nothing: the archive holds its text, which reads back the same."""
    html = "<html><head><title>江城日报</title></head><body><p>记者周一从市统计局了解到经济运行平稳。</p></body></html>"
    page = Page(html.encode("gbk"), "http://a.test/zh.html", "text/html", site="a")
    crawler = get_crawler(settings_dict={"ARCHIVE_DIR": str(tmp_path / "corpus")})
    crawler.stats.open_spider()  # type: ignore[union-attr]
    item = ArchivePipeline.from_crawler(crawler).process_item(Record(url=page.url, page=page))
    assert item.html_file and Path(item.html_file).is_relative_to(tmp_path / "corpus" / "html")
    assert item.html_file.endswith(".html.gz") and read_archived_html(item.html_file) == page.text == html
    reread = Page(gzip.decompress(Path(item.html_file).read_bytes()), page.url)  # what scrapy extract reads
    assert reread.text == html and reread.decoded.source == "bom"
    assert item.screenshot_file is None and item.page is page


def test_archive_can_be_switched_off() -> None:
    with pytest.raises(NotConfigured, match="ARCHIVE_ENABLED"):
        ArchivePipeline.from_crawler(get_crawler(settings_dict={"ARCHIVE_ENABLED": "false"}))


def test_internal_fields_are_not_exported() -> None:
    assert "page" not in EXPORT_FIELDS
    assert {"url", "canonical_url", "site", "fetched_at", "status", "final_url", "encoding", "title",
            "html_file", "screenshot_file", "page_type", "text", "extraction_method", "lang",
            "error"} <= set(EXPORT_FIELDS)
