from __future__ import annotations

import codecs

import pytest

from extraction.dom.encoding import (
    MIXED_UTF8_SHARE,
    WEB_ENCODINGS,
    decode_html,
    header_charset,
    meta_charset,
    mixed_utf8,
    normalise_encoding,
)

ZH_SIMPLIFIED = "江城日报讯，市政府今日召开新闻发布会，宣布新的交通政策。市民反应热烈，专家认为这是一项重要改革。" * 8
ZH_TRADITIONAL = "臺北市政府今日宣布新的交通政策，市民反應熱烈，專家認為這是一項重要的改革措施。" * 8


def _page(text: str, head: str = "") -> str:
    return f"<html><head>{head}<title>t</title></head><body><p>{text}</p></body></html>"


@pytest.mark.parametrize(
    ("codec", "text", "expected"),
    [
        ("gbk", ZH_SIMPLIFIED, "gb18030"),
        ("gb18030", ZH_SIMPLIFIED + "𠀀", "gb18030"),
        ("big5", ZH_TRADITIONAL, "big5hkscs"),
    ],
)
def test_undeclared_chinese_is_detected(codec: str, text: str, expected: str) -> None:
    decoded = decode_html(_page(text).encode(codec), "text/html")
    assert decoded.source == "detected"
    assert decoded.encoding == expected
    assert text in decoded.text


def test_header_wins_when_body_agrees() -> None:
    body = _page(ZH_SIMPLIFIED).encode("gbk")
    decoded = decode_html(body, "text/html; charset=GB2312")
    assert (decoded.encoding, decoded.source) == ("gb18030", "header")


def test_wrong_header_is_not_believed() -> None:
    body = _page(ZH_SIMPLIFIED, '<meta charset="gbk">').encode("gbk")
    decoded = decode_html(body, "text/html; charset=utf-8")
    assert decoded.source == "meta" and ZH_SIMPLIFIED in decoded.text


def test_meta_declaration_and_bom() -> None:
    body = _page("café", '<meta http-equiv="Content-Type" content="text/html; charset=iso-8859-1">')
    decoded = decode_html(body.encode("latin-1"))
    assert (decoded.encoding, decoded.source) == ("cp1252", "meta") and "café" in decoded.text
    decoded = decode_html(codecs.BOM_UTF8 + _page("日本").encode("utf-8"), "text/html; charset=latin-1")
    assert decoded.source == "bom" and "日本" in decoded.text


def test_plain_utf8_without_declaration() -> None:
    decoded = decode_html(_page("naïve 中文").encode("utf-8"))
    assert (decoded.encoding, decoded.source) == ("utf-8", "utf-8")


def test_garbage_never_raises() -> None:
    decoded = decode_html(bytes(range(256)) * 3)
    assert decoded.text  # something, flagged by its source
    assert decoded.source in ("detected", "fallback")


def test_helpers() -> None:
    assert header_charset('text/html; charset="Big5"') == "Big5"
    assert header_charset("text/html") is None
    assert meta_charset(b'<meta charset="gbk">') == "gbk"
    assert normalise_encoding("GB2312") == "gb18030"
    assert normalise_encoding("no-such-codec") is None


def test_declared_charset_survives_a_few_broken_bytes() -> None:
    body = ('<meta charset="gbk"><p>' + "江城日报记者报道，市政府今日召开会议。" * 50 + "</p>").encode("gbk")
    broken = body[:300] + b"\xb0" + body[300:]  # a stray lead byte: strict GBK decoding fails
    decoded = decode_html(broken)
    assert (decoded.encoding, decoded.source) == ("gb18030", "meta")
    assert "市政府今日召开会议" in decoded.text
    many = body[:300] + b"\xb0\xff" * 200 + body[300:]  # mostly broken: not believed
    assert decode_html(many).source != "meta"


@pytest.mark.parametrize("declared", ["<meta charset=iso-8859-1>", "<meta charset=windows-1252>",
                                      "<meta http-equiv=Content-Type content='text/html; charset=latin2'>"])
def test_valid_utf8_wins_over_a_stale_single_byte_declaration(declared: str) -> None:
    """Pages re-encoded to UTF-8 that kept their old <meta> (22 of 2,000 replayed dataset pages were mojibake)."""
    body = f"{declared}<p>Café crème, naïve façade — “quoted”</p>".encode()
    decoded = decode_html(body)
    assert decoded.encoding == "utf-8" and decoded.source == "utf-8" and "Café crème" in decoded.text
    header = decode_html("<p>Café</p>".encode(), "text/html; charset=ISO-8859-1")
    assert header.encoding == "utf-8" and header.text == "<p>Café</p>"


def test_a_real_single_byte_page_keeps_its_declaration() -> None:
    for text, charset in (("<p>Café crème</p>", "iso-8859-1"), ("<p>Привет, мир</p>", "windows-1251"),
                          ("<p>Zażółć gęślą</p>", "iso-8859-2")):
        decoded = decode_html(f"<meta charset={charset}>{text}".encode(charset))
        assert decoded.source == "meta" and text in decoded.text
    ascii_page = decode_html(b"<meta charset=iso-8859-1><p>plain</p>")
    assert ascii_page.source == "meta"  # nothing to tell: the declaration stands


def test_utf8_with_stray_windows_1252_bytes_reads_both() -> None:
    """UTF-8 pages with a few windows-1252 bytes pasted in (a CMS import, a template): the strays are read as
    windows-1252, not replaced by U+FFFD, whether the page declares UTF-8 or nothing."""
    article = "<p>Zoë’s café — “naïve” façade.</p>" * 20
    stray = b"<p>Copyright " + b"\xa9 2008 Caf\xe9 \x93Bistro\x94</p>"  # windows-1252 bytes
    for head in (b"", b'<meta charset="utf-8">'):
        decoded = decode_html(head + article.encode() + stray)
        assert decoded.encoding == "utf-8" and decoded.source == ("meta" if head else "utf-8")
        assert article in decoded.text and "© 2008 Café “Bistro”" in decoded.text and "\ufffd" not in decoded.text
    assert mixed_utf8(b"plain") == ("plain", 1.0, 0)
    text, valid, stray = mixed_utf8("é".encode() * 9 + b"\xe9")
    assert text == "é" * 10 and valid == pytest.approx(18 / 19) and stray == 1


def test_a_declared_utf8_page_with_a_few_strays_among_few_non_ascii_bytes_stays_utf8() -> None:
    """Two stray non-breaking spaces in a German page of a few umlauts are a fifth of its non-ASCII bytes: the
    page's UTF-8 declaration stands (detection read it as windows-1250: "fĂĽr" for "für")."""
    page = '<meta charset="utf-8"><title>Expeditionen in Übersee</title><p>Wir planen Reisen für Bergsteiger.'
    body = page.encode() + b"\xa0Die H\xc3\xbctte\xa0liegt hoch.</p>"
    decoded = decode_html(body)
    assert (decoded.encoding, decoded.source) == ("utf-8", "meta")
    assert "Übersee" in decoded.text and "für" in decoded.text and "Hütte" in decoded.text
    undeclared = decode_html(body.replace(b'<meta charset="utf-8">', b""))
    assert undeclared.encoding != "utf-8"  # undeclared, the share alone decides (MIXED_UTF8_SHARE)


@pytest.mark.parametrize(("codec", "text", "expected"), [("gbk", ZH_SIMPLIFIED, "gb18030"),
                                                         ("big5", ZH_TRADITIONAL, "big5hkscs")])
@pytest.mark.parametrize("declared", ["header", "meta"])
def test_chinese_under_a_latin_declaration_is_read_as_chinese(codec: str, text: str, expected: str,
                                                              declared: str) -> None:
    """Servers send ISO-8859-1 by default, and templates carry a windows-1252 <meta>: GBK or Big5 bytes under
    either came out as mojibake ("ÀûÒæ¼¯ÍÅ")."""
    body = _page(text).encode(codec)
    if declared == "meta":
        decoded = decode_html(b"<meta charset=iso-8859-1>" + body)
    else:
        decoded = decode_html(body, "text/html; charset=ISO-8859-1")
    assert decoded.encoding == expected and text in decoded.text


def test_latin_text_under_a_latin_declaration_stays_latin() -> None:
    for text in ("<p>Größere Häuser für Familien, Straßen und Plätze.</p>" * 40, "<p>§§§§§ Façade « été »</p>" * 40):
        decoded = decode_html(b"<meta charset=iso-8859-1>" + text.encode("cp1252"))
        assert (decoded.encoding, decoded.source) == ("cp1252", "meta") and text in decoded.text


def test_a_default_latin_header_gives_way_to_the_pages_meta() -> None:
    text = "<p>Привет, мир. Новости дня и погода в Москве.</p>" * 10
    body = b"<meta charset=windows-1251>" + text.encode("cp1251")
    decoded = decode_html(body, "text/html; charset=ISO-8859-1")
    assert (decoded.encoding, decoded.source) == ("cp1251", "meta") and text in decoded.text
    assert decode_html(body, "text/html; charset=koi8-r").encoding == "koi8-r"  # another header still wins


def test_a_declaration_no_browser_reads_is_no_evidence() -> None:
    """UTF-7 and EBCDIC are Python codecs, not web encodings: a page declaring one is read without it. A <meta>
    naming UTF-16 means UTF-8 (HTML standard: the declaration itself was read as ASCII)."""
    page = "<title>Headline</title><p>Straße und Café</p>"
    for charset in ("utf-7", "cp037", "utf-16", "utf-16le"):
        decoded = decode_html(f'<meta charset="{charset}">{page}'.encode())
        assert decoded.encoding == "utf-8" and page in decoded.text, charset


def test_a_bom_the_bytes_contradict_is_no_evidence() -> None:
    text = _page(ZH_SIMPLIFIED)
    after_utf8_bom = decode_html(codecs.BOM_UTF8 + b"<meta charset=gbk>" + text.encode("gbk"))
    assert after_utf8_bom.encoding == "gb18030" and ZH_SIMPLIFIED in after_utf8_bom.text
    after_utf16_bom = decode_html(codecs.BOM_UTF16_LE + text.encode("utf-8"))
    assert after_utf16_bom.encoding == "utf-8" and ZH_SIMPLIFIED in after_utf16_bom.text
    real = decode_html(codecs.BOM_UTF16_LE + text.encode("utf-16-le"))
    assert (real.encoding, real.source) == ("utf-16-le", "bom") and ZH_SIMPLIFIED in real.text


def test_a_legacy_page_is_not_taken_for_utf8_with_strays() -> None:
    body = ("<p>" + "江城日报记者报道，市政府今日召开会议，研究部署城市建设工作。" * 30 + "</p>").encode("gbk")
    assert mixed_utf8(body)[1] < MIXED_UTF8_SHARE
    assert decode_html(body).encoding == "gb18030"
    declared_wrong = b'<meta charset="utf-8">' + body  # a wrong declaration is not believed either
    assert decode_html(declared_wrong).encoding == "gb18030"


@pytest.mark.parametrize(("codec", "text", "expected"), [("gbk", ZH_SIMPLIFIED, "gb18030"),
                                                         ("big5", ZH_TRADITIONAL, "big5hkscs")])
def test_undeclared_chinese_with_a_broken_character_is_still_chinese(codec: str, text: str, expected: str) -> None:
    """One truncated character fails every strict CJK decode; detection alone read such a page as Cyrillic."""
    broken = _page(text).encode(codec).replace(b"</p>", b"</p><p>" + text[0].encode(codec)[:1] + b"</p>", 1)
    decoded = decode_html(broken + _page(text).encode(codec))
    assert decoded.encoding == expected and decoded.source == "detected"
    assert decoded.text.count(text) == 2 and decoded.text.count("\ufffd") == 1


def test_undeclared_latin_page_is_read_as_windows_1252() -> None:
    """An English page with a few non-ASCII bytes reads as well in many single-byte codecs: the tie goes to the
    web's most used one (detection left free took "Español" for "Espańol" or "Espa±ol", quotes for letters)."""
    text = ("<p><a>En Español</a> Code of\u00a0Ethics, la matière, “I read it,” she said – twice.</p>"
            + "<p>The board of the company met on Monday and published its annual report on the website.</p>" * 20)
    decoded = decode_html(f"<html><body>{text}</body></html>".encode("cp1252"))
    assert decoded.encoding == "cp1252" and decoded.source == "detected" and text in decoded.text


def test_detection_chooses_among_the_web_encodings() -> None:
    assert "cp1252" in WEB_ENCODINGS and not {"cp775", "cp852", "ptcp154", "mac_roman"} & set(WEB_ENCODINGS)
    assert normalise_encoding("latin_1") == normalise_encoding("iso8859-1") == "cp1252"
