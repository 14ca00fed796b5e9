"""Page segmentation into blocks and paragraphs (papers 003 and 004) on small inline pages."""

from __future__ import annotations

from itertools import islice

import pytest
from lxml import etree, html

from evaluation.datasets import datasets_dir, iter_pages
from evaluation.datasets.textutil import decode_text
from extraction.dom.blocks import BLOCK_TAGS, CAPTION_TAGS, Block, blocks_text, page_blocks, walk_top
from extraction.dom.html import parse_html
from extraction.dom.preprocess import remove_keep_tail
from extraction.dom.text import visible_text

# Real pages per dataset in the consistency check (a quick sample, not a benchmark).
REAL_PAGES = 15


def _blocks(page: str) -> list[Block]:
    return page_blocks(parse_html(page))


def _by_id(blocks: list[Block], element_id: str) -> Block:
    return next(block for block in blocks if block.element.get("id") == element_id)


def _skipped_tags(blocks: list[Block]) -> list[str]:
    """The tags of the elements the segmentation skipped (the page table's rows, outermost only)."""
    table = blocks[0].page.table
    assert table is not None
    return [table.tags[table.tag[row]] for row in table.skipped]


def _skipped_classes(blocks: list[Block]) -> list[str]:
    table = blocks[0].page.table
    assert table is not None
    return [table.strings[table.cls[row]] for row in table.skipped]


def test_nested_blocks_are_excluded_from_the_parent_region() -> None:
    blocks = _blocks(
        "<body><div id='outer'>before <b>bold</b><div id='inner'>in <a href='/'>link</a>"
        "<img src='x.png'></div>after</div></body>"
    )
    assert [block.element.get("id") for block in blocks] == ["outer", "inner"]
    outer, inner = blocks
    assert outer.text == "before bold\nafter"
    assert (outer.chars, outer.link_chars, outer.links, outer.imgs) == (16, 0, 0, 0)
    assert (outer.tags, outer.deco_tags) == (2, 1)  # div + b; the inner div and its children are not its own
    assert inner.text == "in link"
    assert (inner.chars, inner.link_chars, inner.links, inner.imgs, inner.tags) == (7, 4, 1, 1, 3)


def test_blocks_without_own_text_are_left_out_but_count_in_page_totals() -> None:
    blocks = _blocks("<body><div id='wrap'><ul id='nav'><li><a href='/'>Home</a></li></ul><img></div></body>")
    assert [block.element.get("id") for block in blocks] == ["nav"]  # body and the wrapping div have no text
    page = blocks[0].page
    assert (page.imgs, page.links, page.chars, page.link_chars) == (1, 1, 4, 4)
    assert page.elements == 6  # body, div, ul, li, a, img


def test_captions_are_skipped_like_invisible_elements() -> None:
    blocks = _blocks("<body><article><p>The river rose.</p><figure><img src='a.jpg'>"
                     "<figcaption>Foto: dpa</figcaption></figure> tail<p>It fell.</p></article></body>")
    assert blocks[0].text == "The river rose.\ntail\nIt fell."
    assert blocks[0].page.elements == 6  # body, article, p, figure, img, p: the figcaption does not count
    assert _skipped_tags(blocks) == ["figcaption"]


def test_a_media_elements_fallback_content_is_skipped() -> None:
    blocks = _blocks("<body><article><p>The river rose.</p><video controls><source src='a.mp4'>"
                     "<p>Your browser does not support the video tag.</p></video><audio><a href='a.mp3'>Download"
                     "</a></audio><p>It fell.</p></article></body>")
    assert blocks[0].text == "The river rose.\nIt fell."
    assert set(_skipped_tags(blocks)) == {"video", "audio"}


def test_elements_hidden_by_a_frameworks_class_are_skipped() -> None:
    # Bootstrap's d-none and Tailwind's hidden hide; a responsive class that shows the element at some width
    # (d-md-block, lg:flex) keeps it, and so does a class that only contains the word (overflow-hidden).
    blocks = _blocks("<body><article><p>The river rose.</p><div class='carousel-item d-none'>Other story</div>"
                     "<div class='hidden'>Adblocker notice</div><nav class='hidden lg:flex'>Desktop menu</nav>"
                     "<span class='d-none d-md-inline'>Share</span><p class='overflow-hidden'>It fell.</p>"
                     "</article></body>")
    assert [block.text for block in blocks] == ["The river rose.\nShare\nIt fell.", "Desktop menu"]
    assert sorted(_skipped_classes(blocks)) == ["carousel-item d-none", "hidden"]


def test_a_figures_credit_without_figcaption_is_skipped() -> None:
    # BBC's markup: the credit in a span of its own inside the <figure>, no <figcaption>.
    blocks = _blocks("<body><article><p>The river rose.</p><figure class='media-with-caption'><img src='a.jpg'>"
                     "<span class='story-image-copyright'>Image copyright Reuters</span></figure>"
                     "<p class='credit-line'>It fell.</p></article></body>")
    # Only inside a figure: the paragraph with "credit" in its class after the figure stays, and so does the
    # figure's own text when its class names a caption.
    assert blocks[0].text == "The river rose.\nIt fell."
    assert _skipped_tags(blocks) == ["span"]
    outside = _blocks("<body><figure class='caption'><p>A quote set as a figure.</p></figure></body>")
    assert outside[0].text == "A quote set as a figure."


def test_paragraph_level_tags_are_not_blocks() -> None:
    blocks = _blocks("<body><article><h1>Title</h1><p>One.</p><ul><li>item</li></ul><p>Two.</p></article></body>")
    assert [block.element.tag for block in blocks] == ["article", "ul"]
    assert blocks[0].text == "Title\nOne.\nTwo."
    assert not {"p", "li", "h1", "h2", "br", "tr", "dd"} & BLOCK_TAGS


def test_paragraphs_split_at_paragraph_tags_and_source_newlines_collapse() -> None:
    block, definitions = _blocks(
        "<body><div>a<br>b<p>c\n   continued</p>d <b>e</b> f<h2>g</h2><dl><dt>t</dt><dd>u</dd></dl></div></body>"
    )
    assert [p.text for p in block.paragraphs] == ["a", "b", "c continued", "d e f", "g"]
    assert [p.index for p in block.paragraphs] == [0, 1, 2, 3, 4]
    assert [p.chars for p in block.paragraphs] == [1, 1, 11, 5, 1]
    assert block.chars == sum(p.chars for p in block.paragraphs)
    assert definitions.text == "t\nu"  # dl is a block of its own, dt and dd its paragraphs


def test_paragraph_link_chars_and_page_line_numbers() -> None:
    outer, inner = _blocks("<body><div>x <a href='/'>link text</a> y<div>inner</div>after</div></body>")
    first, last = outer.paragraphs
    assert (first.text, first.chars, first.link_chars) == ("x link text y", 13, 9)
    assert (first.line_start, first.line_end) == (0, 0)
    assert (inner.paragraphs[0].line_start, last.line_start) == (1, 2)  # document order across blocks


def test_invisible_and_hidden_elements_are_skipped_but_their_tails_kept() -> None:
    (block,) = _blocks(
        "<body><div>a<script>var x = 1;</script>b<style>p {}</style>c<span hidden>h</span>d"
        "<div style='display: none'>gone<div>nested</div></div>e<select><option>o</option></select></div></body>"
    )
    assert block.text == "abcde"
    assert block.tags == 1
    assert block.page.elements == 2  # body and the div: skipped subtrees count nowhere


def test_comment_tails_are_text() -> None:
    root = html.fromstring("<html><body><div>a<!-- note -->b</div></body></html>")  # comments kept
    (block,) = page_blocks(root)
    assert block.text == "ab"


def test_order_depth_and_index() -> None:
    blocks = _blocks("<body><div id='a'>a<span>s</span></div><section><div id='b'>b</div></section></body>")
    a, b = _by_id(blocks, "a"), _by_id(blocks, "b")
    assert (a.order, a.depth, a.index) == (1, 1, 0)
    assert (b.order, b.depth, b.index) == (4, 2, 1)  # body 0, div 1, span 2, section 3, div 4
    assert a.page.elements == 5 and a.page.max_depth == 2


def test_body_text_is_a_block_and_table_cells_are_blocks() -> None:
    blocks = _blocks("<body>loose text<table><tr><td>c1</td><td>c2</td></tr></table></body>")
    assert [(block.element.tag, block.text) for block in blocks] == [("body", "loose text"), ("td", "c1"), ("td", "c2")]


def test_fragment_root_is_its_own_top_block() -> None:
    fragment = html.fragment_fromstring("<span>inline <a href='/'>top</a></span>")
    assert walk_top(fragment) is fragment
    (block,) = page_blocks(fragment)
    assert block.element is fragment and block.text == "inline top" and block.link_chars == 3


def test_blocks_text_keeps_document_order() -> None:
    root = parse_html(
        "<body><div id='o'>before<div id='i'>inside</div>after</div><ul id='n'><li>nav</li></ul></body>"
    )
    blocks = page_blocks(root)
    assert blocks_text(blocks, [True] * len(blocks)) == "before\ninside\nafter\nnav"
    assert blocks_text(blocks, [True] * len(blocks)) == visible_text(root)
    assert blocks_text(blocks, [True, False, False]) == "before\nafter"
    assert blocks_text(blocks, [False, True, True]) == "inside\nnav"
    assert blocks_text(blocks, [False] * len(blocks)) == ""
    with pytest.raises(ValueError, match="3 blocks"):
        blocks_text(blocks, [True])


def test_empty_body_gives_no_blocks() -> None:
    assert page_blocks(parse_html("<html><body></body></html>")) == []
    assert page_blocks(parse_html("<html><body hidden>all hidden</body></html>")) == []
    assert page_blocks(parse_html("")) == []
    assert page_blocks(parse_html("<body><div> <img src='a.png'> </div><script>text()</script></body>")) == []


def test_very_deep_document_does_not_recurse() -> None:
    body = etree.SubElement(html.Element("html"), "body")
    node = body
    for _ in range(5000):
        node = etree.SubElement(node, "div")
    node.text = "deep"
    node.tail = "tail"
    blocks = page_blocks(body.getparent())
    # Blocks are in document order of their elements: the tail's owner (depth 4999) starts first.
    assert [(block.text, block.depth) for block in blocks] == [("tail", 4999), ("deep", 5000)]
    assert blocks_text(blocks, [True, True]) == "deep\ntail"
    assert blocks[0].page.max_depth == 5000


@pytest.mark.datasets
@pytest.mark.parametrize("dataset", ["cleaneval", "chinese-wced-dev"])
def test_real_pages_blocks_hold_the_visible_text(dataset: str) -> None:
    folder = datasets_dir() / dataset
    if not folder.is_dir():
        pytest.skip(f"dataset folder {folder} is absent (set DATASETS_DIR)")
    for page in islice(iter_pages(dataset), REAL_PAGES):
        root = parse_html(decode_text(page.html_bytes()))
        blocks = page_blocks(root)
        for caption in list(root.iter(*CAPTION_TAGS)):  # the segmentation skips captions
            remove_keep_tail(caption)
        # visible_text also breaks lines at source newlines inside text; the words must agree.
        assert blocks_text(blocks, [True] * len(blocks)).split() == visible_text(root).split(), page.page_id
        assert all(0 <= p.link_chars <= p.chars for block in blocks for p in block.paragraphs)
        assert [block.index for block in blocks] == list(range(len(blocks)))
