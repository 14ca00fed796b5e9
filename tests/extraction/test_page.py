"""The door: what Page refuses, how it decodes, and that it parses once."""

from __future__ import annotations

import codecs
import gzip
import io
import random
import zipfile

import pytest
from PIL import Image

from extraction.dom.html import parse_html
from extraction.page import SNIFF_BYTES, Page, sniff

HTML = "<html><head><title>江城日报</title></head><body><p>记者周一从市统计局了解到经济运行总体平稳。</p></body></html>"


def _image(kind: str) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (4, 4)).save(out, kind)
    return out.getvalue()


def _zip() -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr("a.html", HTML)
    return out.getvalue()


@pytest.mark.parametrize("body", [
    b"", b"   \n\t ", codecs.BOM_UTF8 + b" \r\n", codecs.BOM_UTF8, b" " * (3 * SNIFF_BYTES),
    codecs.BOM_UTF16_LE + " \n ".encode("utf-16-le"),
], ids=["nothing", "whitespace", "bom", "bom-only", "whitespace-past-sniff", "utf16-whitespace"])
def test_empty_bodies(body: bytes) -> None:
    assert sniff(body) == "empty" and Page(body).refusal == "empty"


def test_text_after_a_long_run_of_whitespace_is_a_page() -> None:
    body = b" " * (2 * SNIFF_BYTES) + HTML.encode()
    assert Page(body).refusal is None and Page(codecs.BOM_UTF8 + body).refusal is None
    assert "江城日报" in Page(body).text


def test_nul_bytes_count_within_the_sniffed_head_only() -> None:
    page = b"<html><body>" + b"x" * SNIFF_BYTES + b"</body></html>"
    assert sniff(page[:SNIFF_BYTES - 1] + b"\x00" + page[SNIFF_BYTES:]) == "not_html"
    assert sniff(page[:SNIFF_BYTES] + b"\x00" + page[SNIFF_BYTES + 1:]) is None


@pytest.mark.parametrize("body", [
    random.Random(7).randbytes(200_000), b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj", _image("PNG"), _image("GIF"),
    _image("JPEG"), _zip(), gzip.compress(HTML.encode()), b"  \n%PDF-1.4 after whitespace",
    b"<html><body>text\x00with a NUL</body></html>",
], ids=["random", "pdf", "png", "gif", "jpeg", "zip", "gzip", "pdf-after-space", "nul"])
def test_binary_bodies_are_not_html(body: bytes) -> None:
    assert Page(body).refusal == "not_html"


@pytest.mark.parametrize("content_type", ["application/pdf", "image/png", "text/plain; charset=utf-8"])
def test_declared_non_html_types_are_refused(content_type: str) -> None:
    assert sniff(HTML.encode(), content_type) == "not_html"
    assert Page(HTML.encode(), content_type=content_type).refusal == "not_html"
    assert Page.from_text(HTML, content_type=content_type).refusal == "not_html"


@pytest.mark.parametrize("content_type", [None, "", "text/html", "application/xhtml+xml; charset=utf-8"])
def test_html_types_pass(content_type: str | None) -> None:
    assert Page(HTML.encode(), content_type=content_type).refusal is None


@pytest.mark.parametrize("codec", ["utf-16-le", "utf-16-be", "utf-32-le"])
def test_wide_text_with_bom_is_decoded(codec: str) -> None:
    bom = {"utf-16-le": codecs.BOM_UTF16_LE, "utf-16-be": codecs.BOM_UTF16_BE, "utf-32-le": codecs.BOM_UTF32_LE}
    page = Page(bom[codec] + HTML.encode(codec))
    assert page.refusal is None and page.text == HTML and page.decoded.source == "bom"
    assert page.tree.findtext(".//title") == "江城日报"


def test_utf16_declared_in_the_header_without_bom_is_a_page() -> None:
    content_type = "text/html; charset=utf-16le"
    assert Page(HTML.encode("utf-16-le"), content_type=content_type).refusal is None
    assert Page(b"BMW news<html><body>cars</body></html>").refusal is None  # no two-letter signatures


def test_gbk_without_declaration_is_detected() -> None:
    page = Page(HTML.encode("gbk"))
    assert page.refusal is None and "记者周一从市统计局" in page.text
    assert page.decoded.encoding.lower() in ("gbk", "gb18030", "gb2312")


def test_header_charset_is_used() -> None:
    page = Page(HTML.encode("big5", "replace"), content_type="text/html; charset=big5")
    assert page.decoded.source == "header" and page.decoded.encoding.lower().startswith("big5")  # big5hkscs: a superset


def test_tree_is_parsed_once_and_shared() -> None:
    page = Page(HTML.encode())
    assert page.tree is page.tree and page.decoded is page.decoded
    assert page.tree.findtext(".//title") == "江城日报"


def test_text_given_by_a_browser() -> None:
    page = Page.from_text(HTML, "http://a.test/", encoding="GBK")
    assert page.refusal is None and page.text == HTML
    assert (page.decoded.encoding, page.decoded.source) == ("GBK", "browser")
    assert Page.from_text("   ").refusal == "empty"


@pytest.mark.parametrize(("text", "refusal"), [
    ("", "empty"), (" \n\t ", "empty"), ("<p>x</p>", None), ("just words", None),
    ("%PDF-1.7 shown as text", None),  # the browser decoded it as a document: no byte sniffing
])
def test_text_given_is_refused_only_when_blank(text: str, refusal: str | None) -> None:
    assert Page.from_text(text).refusal == refusal


def test_page_around_a_parsed_tree() -> None:
    root = parse_html(HTML)
    page = Page.from_tree(root, "http://a.test/")
    assert page.tree is root and page.refusal is None and page.url == "http://a.test/"
