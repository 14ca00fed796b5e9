from __future__ import annotations

from extraction.dom.html import declared_lang, page_title, parse_html
from extraction.dom.lang import script_language
from extraction.dom.text import visible_text


def test_visible_text_keeps_blocks_and_drops_invisible() -> None:
    root = parse_html(
        "<html><head><title>T</title><style>p{}</style></head><body>"
        "<div>Hello <b>world</b><script>var x;</script> again</div>"
        "<p>Para<span style='display: none'>hidden</span> end</p>"
        "<div hidden>gone</div><noscript>enable js</noscript><p>last</p></body></html>"
    )
    assert visible_text(root) == "Hello world again\nPara end\nlast"


def test_tail_of_hidden_element_is_kept() -> None:
    root = parse_html("<body><p>a<span style='visibility:hidden'>x</span>b</p></body>")
    assert visible_text(root) == "ab"


def test_malformed_markup_survives() -> None:
    root = parse_html("<body><p>one<p>two</td></div><table><b>three<!-- unclosed")
    assert visible_text(root).split("\n") == ["one", "two", "three"]


def test_page_behind_an_empty_first_html_element_is_found() -> None:
    # A cut <html> start tag (seen in L3S-GN1): libxml2 leaves an empty <html> first and puts the
    # page into a second top-level <html>; before the fix every method saw no text.
    root = parse_html('<!DOCTYPE html><html x" /></a></td><td>Hello <b>there</b></td><p>Para</p></html>')
    assert [child.tag for child in root] == ["body"]
    assert visible_text(root) == "Hello there\nPara"
    # A first <html> with only a head, the body in a second one (a stray </html>).
    root = parse_html("<html><head><title>T</title></head></html><html><body><p>Text</p></body></html>")
    assert visible_text(root) == "Text" and page_title(root) == "T"


def test_very_deep_nesting_keeps_text() -> None:
    depth = 5000
    root = parse_html("<p>top</p>" + "<div>" * depth + "deep" + "</div>" * depth + "<p>after</p>")
    assert visible_text(root) == "top\ndeep\nafter"


def test_empty_and_xml_declared_pages() -> None:
    assert visible_text(parse_html("")) == ""
    root = parse_html('<?xml version="1.0" encoding="gbk"?><html><body><p>中文</p></body></html>')
    assert visible_text(root) == "中文"


def test_title_and_lang() -> None:
    root = parse_html('<html lang="zh-CN"><head><title> A \n title </title></head><body></body></html>')
    assert page_title(root) == "A title"
    assert declared_lang(root) == "zh"
    root = parse_html("<html><body><h1>Only heading</h1></body></html>")
    assert page_title(root) == "Only heading"
    assert declared_lang(root) is None


def test_script_language() -> None:
    assert script_language("江城日报讯，市政府今日召开新闻发布会 2026 NBA") == "zh"
    assert script_language("東京は今日、晴れです。ニュースをお伝えします") == "ja"
    assert script_language("서울시는 오늘 새로운 교통 정책을 발표했다") == "ko"
    assert script_language("The council met on Monday.") is None
    assert script_language("") is None


def test_unicode_line_separators_end_lines() -> None:
    """A JSONL corpus read with str.splitlines must find one record per line: no U+2028 & co in the text."""
    from extraction.dom.text import normalise_lines

    text = normalise_lines("one\u2028two\u2029three\x85four\x1cfive  six\n\nseven")
    assert text == "one\ntwo\nthree\nfour\nfive six\nseven"
    assert text.splitlines() == text.split("\n")
