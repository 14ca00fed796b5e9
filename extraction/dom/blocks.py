"""Page segmentation into text blocks and paragraphs for the block classifiers (papers 003, 004).

A **block** is the own region of a block-level container element (``BLOCK_TAGS``): its subtree
minus the subtrees of the blocks nested in it. Paper 004 (section 5, "块级标签") classifies
body, section and div this way and says: "在计算特征时, 要去掉嵌套在块级标签的其他块级标签内容";
paper 003 (section 1.2, "文本块") likewise cuts the DOM into nested container-tag blocks. Every
visible element and text node therefore belongs to exactly one block, the nearest enclosing one.

A **paragraph** is paper 003's "段落" (section 3): the text between paragraph-marking tags that is
not further split by another tag, source line breaks ignored ("源HTML腳本中的回車符可以忽略不計").
Our reading: one line of the block's own visible text, where lines break at every tag that
``extraction.dom.text.visible_text`` breaks at (p, br, li, h1-h6, dt, dd, tr, td, div ...) and at
every block boundary; whitespace, source newlines included, collapses to one space.

Preprocessing is the one ``visible_text`` does, done during the walk without touching the tree:
``INVISIBLE_TAGS`` (script, style, form controls, iframes ...) and elements hidden by markup are
skipped with their subtrees (their tails stay visible) and count nowhere, not even as elements;
so are a media element's fallback content (``FALLBACK_TAGS``: ``<video>``, ``<audio>``), elements hidden
by a CSS framework's class (``HIDING_CLASSES``) and image captions (``CAPTION_TAGS``,
and inside a ``<figure>`` the elements whose class names a caption or a credit), which no extraction gold here
counts as text.
The walk is the compiled page table's one iterative pre-order pass (``extraction.dom.table``; pages can be
thousands of levels deep); the Python walk it replaced is the tests' oracle (tests/extraction/dom/reference.py).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from lxml import html

from extraction.dom import pagetable
from extraction.dom.pagetable import PageTable
from extraction.dom.text import BLOCK_TAGS as LINE_BREAK_TAGS  # noqa: F401 (extraction.dom.table reads it here)
from extraction.dom.text import INVISIBLE_TAGS

# Block-level containers that segment a page. Paper 004 names body, section and div; we add
# the other HTML5 sectioning/layout containers (article, main, aside, header, footer, nav),
# table cells and tables (old news sites lay pages out with tables), lists and forms (menus,
# link lists, search boxes are lists/forms of their own) and blockquote/center (legacy
# containers). Paragraph-level tags (p, li, h1-h6, dt, dd, tr) are not blocks: they are the
# paragraphs inside blocks (paper 003, section 3).
BLOCK_TAGS = frozenset(
    {"body", "section", "div", "article", "main", "td", "th", "aside", "header", "footer", "nav",
     "form", "table", "ul", "ol", "dl", "blockquote", "center"}
)
# Text-decoration tags of paper 003's feature (4): it lists strong, b, i, h1, h2 and u ("等"); we
# add em (the semantic <i>) and h3-h6 (headings of the same kind as h1, h2).
DECORATION_TAGS = frozenset({"strong", "b", "i", "em", "u", "h1", "h2", "h3", "h4", "h5", "h6"})
LINK_TAG = "a"
IMAGE_TAG = "img"
# Skipped like invisible elements: a <figcaption> is a picture's caption or credit ("Foto: dpa"). Held-out,
# paired bootstrap of the pages: WCXB articles +0.0017 [+0.0008, +0.0027], trafilatura-eval +0.0028
# [+0.0009, +0.0048], Dragnet +0.0002, the other sets unchanged. The whole <figure> instead lost on WCXB
# (-0.002: some sites put text or quotes in one).
CAPTION_TAGS = frozenset({"figcaption"})
# Inside a <figure>, an element whose class names a caption or a credit is skipped the same way: a figure's
# caption or credit set without <figcaption> ("Image copyright Reuters", "(Credit: ...)", "Bild: ... / AP").
# Held-out, paired: trafilatura-eval +0.0002 [+0.0000, +0.0005] (8 pages), WCXB +0.0006 (2 pages), the rest unchanged.
FIGURE_TAG = "figure"
_CREDIT_CLASS_RE = re.compile(r"caption|credit|copyright", re.I)
# The classes that hide an element in the CSS frameworks pages are built with (Bootstrap's d-none, hidden and
# invisible, Tailwind's hidden): an element with one is skipped like one hidden by its style, unless a
# responsive class shows it at some screen width (Bootstrap's d-md-block, Tailwind's lg:flex, visible-lg).
# Stylesheets are not read. Held-out, paired: Dragnet test +0.0019 [-0.0002, +0.0047], WCXB all types
# +0.0015, L3S-GN1 +0.0002, trafilatura-eval -0.0001 [-0.0009, +0.0010]; Dragnet training +0.0018.
HIDING_CLASSES = frozenset({"hidden", "!hidden", "d-none", "is-hidden", "u-hidden", "invisible"})
_HIDING_HINT_RE = re.compile(r"hidden|d-none|invisible")
_SHOWING_CLASS_RE = re.compile(r"d-(?:sm|md|lg|xl|xxl)-(?!none)|(?:sm|md|lg|xl|2xl):(?!hidden)|visible-")
# A media element's content is its fallback for browsers without it ("Your browser does not support the video
# tag."): HTML says user agents should not show it, and a browser that plays the media does not. Segmentation
# only (INVISIBLE_TAGS, which the page-type model's features were trained with, stays). Paired, 300 resamples:
# wcxb-dev outside the held-out fold +0.0000 (13 pages), Dragnet training unchanged; held-out WCXB +0.0008
# [+0.0000, +0.0023] (3 pages), trafilatura-eval +0.0000 (6 pages), the other sets unchanged.
FALLBACK_TAGS = frozenset({"video", "audio"})
SKIPPED_TAGS = INVISIBLE_TAGS | CAPTION_TAGS | FALLBACK_TAGS  # what the segmentation skips with its subtree


@dataclass(frozen=True, slots=True)
class Paragraph:
    """One line of a block's own visible text (paper 003's paragraph, see the module docstring).

    ``line_start``/``line_end`` are the paragraph's line numbers (0-based, inclusive) in the page's
    visible text, i.e. in ``blocks_text`` of all blocks; they are equal under our one-line reading
    and give the paragraph's place in document order across blocks.
    """

    text: str
    index: int  # position among the block's paragraphs
    chars: int  # len(text): whitespace-collapsed characters
    link_chars: int  # characters of the text nodes inside an <a>
    line_start: int
    line_end: int


@dataclass(frozen=True, slots=True)
class PageTotals:
    """Whole-page sums over all block regions (blocks without text included)."""

    elements: int  # visible elements under the walk's top, the top included (paper 003's ANS)
    chars: int
    link_chars: int
    links: int
    imgs: int
    max_depth: int  # deepest visible element, the top at depth 0
    lines: int  # paragraphs on the page
    # The walk's top, and the page table the blocks were read from (extraction.dom.table), which the block and
    # page-type features read (CETD counts the page without the elements the segmentation skipped there).
    top: html.HtmlElement | None = field(default=None, compare=False, repr=False)
    table: PageTable | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class Block:
    """The own region of one block element: its subtree minus nested blocks' subtrees."""

    element: html.HtmlElement
    index: int  # position among the page's blocks, document order
    order: int  # ordinal of the element among the visible elements, the top (body) = 0 (paper 003's NS)
    depth: int  # element depth below the top (body = 0)
    text: str  # own visible text, one paragraph per line
    paragraphs: list[Paragraph]
    chars: int  # sum of the paragraphs' chars
    link_chars: int  # the part of chars inside <a>
    links: int  # <a> elements
    imgs: int  # <img> elements
    tags: int  # elements, the block element itself included
    deco_tags: int  # DECORATION_TAGS elements
    page: PageTotals
    node: int = field(default=-1, compare=False, repr=False)  # the element's index in ``page.table`` (-1: none)

    @property
    def text_chars(self) -> int:
        """Return the block's characters outside links (``chars - link_chars``)."""
        return self.chars - self.link_chars


def _hidden_by_class(classes: str, in_figure: bool) -> bool:
    """Return whether an element's ``class`` value hides it (``HIDING_CLASSES`` without a showing class) or,
    inside a ``<figure>``, names a caption or a credit."""
    if in_figure and _CREDIT_CLASS_RE.search(classes):
        return True
    if not _HIDING_HINT_RE.search(classes):  # most class values: no split
        return False
    names = classes.split()
    return not HIDING_CLASSES.isdisjoint(names) and not any(_SHOWING_CLASS_RE.match(name) for name in names)


def hidden_by_class(element: html.HtmlElement) -> bool:
    """Return whether ``page_blocks`` skips ``element`` for its class (``_hidden_by_class``, a ``<figure>``
    among its ancestors), for the callers that look at one element outside the walk."""
    classes = element.get("class")
    return bool(classes) and _hidden_by_class(classes, next(element.iterancestors(FIGURE_TAG), None) is not None)


def walk_top(root: html.HtmlElement) -> html.HtmlElement:
    """Return the element a page is segmented from: ``root`` if it is a <body>, else its first
    <body>, else ``root`` itself (a fragment)."""
    if root.tag == "body":
        return root
    body = root.find("body")
    if body is None:
        body = next(root.iter("body"), None)
    return root if body is None else body


def page_blocks(root: html.HtmlElement) -> list[Block]:
    """Return the blocks of a page (document or element) that have own visible text, in document order.

    The top of the walk (see ``walk_top``) is always a block, whatever its tag, so every visible
    text node has a block. The tree is not modified. Read from the page table (``extraction.dom.table``),
    which its features read too (``PageTotals.table``).
    """
    from extraction.dom.table import page_table

    top = walk_top(root)
    return table_blocks(page_table(top), top)


def table_blocks(table: PageTable, top: html.HtmlElement) -> list[Block]:
    """Return the blocks of a page table (``page_blocks``)."""
    counts, links = table.line_chars, np.minimum(table.line_link, table.line_chars)
    page = PageTotals(table.elements, int(counts.sum()), int(links.sum()), int(table.region_links.sum()),
                      int(table.region_imgs.sum()), table.max_depth, table.lines, top, table)
    blocks: list[Block] = pagetable.table_blocks(table, page, Paragraph, Block)
    return blocks


def blocks_text(blocks: Sequence[Block], keep: Sequence[bool],
                paragraphs: Sequence[Sequence[bool]] | None = None) -> str:
    """Return the text of the kept blocks, one paragraph per line, lines in document order.

    A block's paragraphs before and after a nested block come before and after that block's
    text, as on the page. ``paragraphs``: per block, which of its paragraphs to keep (default
    all). Raises ValueError when ``keep`` and ``blocks`` differ in length.
    """
    if len(keep) != len(blocks):
        raise ValueError(f"keep has {len(keep)} flags for {len(blocks)} blocks")
    flags = paragraphs if paragraphs is not None else [[True] * len(b.paragraphs) for b in blocks]
    kept = [p for block, flag, block_flags in zip(blocks, keep, flags, strict=True) if flag
            for p, keep_paragraph in zip(block.paragraphs, block_flags, strict=True) if keep_paragraph]
    kept.sort(key=lambda p: p.line_start)
    return "\n".join(p.text for p in kept)
