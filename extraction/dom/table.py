"""The page table of a page's walk top (``extraction.dom.pagetable``, compiled), with the rules it reads.

``page_table(top)`` runs the compiled pass with the callbacks that keep each rule in one place: the tag kinds of
the segmentation (``extraction.dom.blocks``), the invisible tags and the hiding style (``extraction.dom.text``),
the hiding classes (``extraction.dom.blocks._hidden_by_class``) and the page-type model's item signature and
thresholds (``extraction.pagetype.features``). Each callback runs once per distinct tag, style or class value of
a page, and is cached across pages (bounded).
"""

from __future__ import annotations

import functools
from typing import Any

from lxml import html

from extraction.dom import pagetable
from extraction.dom.pagetable import PageTable

KIND_BITS = pagetable.KIND_BITS
CACHE_SIZE = 4096  # distinct tags, styles and class values remembered across pages


@functools.cache
def _rules() -> dict[str, Any]:
    """Return the sets and constants the pass reads, from the modules that define them (imported here: they
    import this module's callers)."""
    from extraction.dom import blocks, text
    from extraction.pagetype import features

    groups = {
        "block": blocks.BLOCK_TAGS, "break": blocks.BLOCK_TAGS | blocks.LINE_BREAK_TAGS, "link": {blocks.LINK_TAG},
        "image": {blocks.IMAGE_TAG}, "decoration": blocks.DECORATION_TAGS, "skipped": blocks.SKIPPED_TAGS,
        "figure": {blocks.FIGURE_TAG}, "invisible": text.INVISIBLE_TAGS, "p": {"p"}, "article": {"article"},
        "time": {"time"}, "heading": features._HEADINGS, "control": {"input", "select", "textarea", "button"},
        "code": {"pre", "code"}, "video": {"video"}, "iframe": {"iframe"},
    }
    return {"groups": groups, "hidden_style": text._HIDDEN_STYLE_RE, "class_hides": blocks._hidden_by_class,
            "digits": features._DIGITS_RE, "players": tuple(features._PLAYER_SOURCES),
            "headline": (features.HEADLINE_CHARS, features.HEADLINE_CJK_CHARS),
            "item_link_share": features.ITEM_LINK_SHARE}


@functools.lru_cache(maxsize=CACHE_SIZE)
def tag_kinds(tag: str) -> tuple[int, str]:
    """Return the kind bits of a tag (``KIND_BITS``) and the tag lower-cased (the CETD statistics' tag paths)."""
    bits = 0
    for name, tags in _rules()["groups"].items():
        if tag in tags:
            bits |= KIND_BITS[name]
    lower = tag.lower()
    if lower == "a":
        bits |= KIND_BITS["lower_link"]
    return bits, lower


@functools.lru_cache(maxsize=CACHE_SIZE)
def style_hides(style: str) -> bool:
    """Return whether an inline style hides its element (``extraction.dom.text.is_hidden``)."""
    return bool(style and _rules()["hidden_style"].search(style))


def class_hides(classes: str, in_figure: bool) -> bool:
    """Return whether a class value hides its element from the segmentation (``_hidden_by_class``)."""
    return bool(_rules()["class_hides"](classes, in_figure))


@functools.lru_cache(maxsize=CACHE_SIZE)
def item_signature(tag: str, classes: str | None) -> str:
    """Return the page-type model's signature of a sibling item: its tag and its class names without digits,
    sorted (``"post-123 post-124"`` siblings are one repeated item)."""
    if not classes:
        return tag
    return f"{tag}.{' '.join(sorted(_rules()['digits'].sub('', classes).split()))}"


def page_table(top: html.HtmlElement) -> PageTable:
    """Return the page table of ``top``'s subtree (``extraction.dom.pagetable``); the tree is not changed."""
    rules = _rules()
    headline_chars, headline_cjk = rules["headline"]
    return pagetable.page_table(top, tag_kinds, style_hides, class_hides, item_signature, rules["players"],
                                headline_chars, headline_cjk, rules["item_link_share"])
