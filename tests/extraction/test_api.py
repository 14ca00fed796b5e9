"""The one-page job as a function (extraction/api.py): HTML in, the crawl's record out."""

from __future__ import annotations

import jsonschema
import pytest

from demo.content import build_sites
from extraction.api import extract
from extraction.record import schema


def test_html_and_its_url_in_the_record_out() -> None:
    site = build_sites()[1]  # the Chinese site: a third of its pages are GBK bytes
    page = next(p for p in site.pages.values() if p.page_type == "article" and p.encoding.lower() == "gbk")
    record = extract(page.body_bytes, "http://news.test/zh/a.html")
    jsonschema.validate(record, schema())
    assert record["url"] == "http://news.test/zh/a.html" and record["page_type"] == "article"
    assert record["encoding"] == "gb18030" and page.body[0][:20] in record["text"]  # GBK read as its superset
    same = extract(page.body_bytes.decode("gbk"), "http://news.test/zh/a.html")  # text: decoded already
    assert same["text"] == record["text"] and same["encoding_source"] == "given"


def test_settings_by_name_and_bad_input() -> None:
    assert extract(b"   ")["error"] == "empty"
    assert extract(b"%PDF-1.7 ...")["error"] == "not_html"
    assert extract(b"<p>" + b"A line of text. " * 40 + b"</p>", PAGETYPE_ENABLED=False)["page_type"] is None
    with pytest.raises(ValueError, match="BLOCKS_FAVOR"):
        extract(b"<p>text</p>", BLOCKS_FAVOR="precison")
