"""Noise removal before extraction (extraction.dom.preprocess)."""

from __future__ import annotations

from lxml import html

from extraction.dom.html import parse_html
from extraction.dom.preprocess import (
    ARTICLE_NOISE,
    LIST_NOISE,
    PreprocessOptions,
    link_heavy_blocks,
    preprocess,
    remove_keep_tail,
)

PAGE = (
    "<html><head><title>T</title><style>s{}</style></head><body>"
    "<script>js()</script>a<noscript>ns</noscript>b"
    "<div hidden>h1</div><p style='display: none'>h2</p>"
    "<form><input value='i'><button>btn</button><textarea>ta</textarea><select><option>o</option></select></form>"
    "<iframe src='x'></iframe><svg><text>svg</text></svg>"
    "<nav><a href='/'>Home</a></nav><div role='navigation'>menu</div>"
    "<p>kept text</p></body></html>"
)


def _text(root):
    return " ".join(" ".join(root.itertext()).split())


def test_defaults_remove_scripts_head_hidden_forms_embeds_but_keep_nav():
    root = parse_html(PAGE)
    assert preprocess(root) is root  # in place
    assert root.find("head") is None
    assert _text(root) == "ab Home menu kept text"


def test_each_option_can_be_turned_off():
    kept = {
        "scripts": "js()",
        "head": "T",
        "hidden": "h1",
        "forms": "btn",
        "embeds": "svg",
    }
    for option, word in kept.items():
        root = preprocess(parse_html(PAGE), PreprocessOptions(**{option: False}))
        assert word in _text(root), option


def test_comments_are_removed_keeping_their_tail():
    root = html.fragment_fromstring("<div>a<!-- c -->b</div>")
    preprocess(root)
    assert len(root) == 0 and root.text == "ab"
    root = html.fragment_fromstring("<div>a<!-- c -->b</div>")
    preprocess(root, PreprocessOptions(comments=False))
    assert len(root) == 1


def test_nav_removal_for_iawce():
    root = preprocess(parse_html(PAGE), LIST_NOISE)
    assert _text(root) == "ab kept text"


def test_removal_keeps_tail_text():
    root = html.fragment_fromstring("<div>x<b>y</b>z<i>w</i>v</div>")
    remove_keep_tail(root[1])
    remove_keep_tail(root[0])
    assert html.tostring(root) == b"<div>xzv</div>"


def test_link_heavy_threshold_both_sides():
    # 7 of 10 characters in links: share 0.7 >= 0.7 -> noise.
    heavy = parse_html("<body><div id='d'><a href='/'>aaaaaaa</a>bbb</div><p>text</p></body>")
    assert [e.get("id") for e in link_heavy_blocks(heavy)] == ["d"]
    # 6 of 10: below the share, kept.
    light = parse_html("<body><div id='d'><a href='/'>aaaaaa</a>bbbb</div><p>text</p></body>")
    assert link_heavy_blocks(light) == []


def test_link_heavy_removes_outermost_block_only_and_never_body():
    root = parse_html("<body><a href='/'>all links</a><ul id='u'><li><a href='/'>x</a></li></ul></body>")
    blocks = link_heavy_blocks(root)
    assert [e.tag for e in blocks] == ["ul"]
    preprocess(root, ARTICLE_NOISE)
    assert _text(root) == "all links"


def test_control_characters_in_moved_tail_are_dropped():
    root = parse_html("<body><p>a\x01b<script>x</script>c\x02d</p></body>")
    preprocess(root)
    assert root.find(".//p").text == "abcd"
