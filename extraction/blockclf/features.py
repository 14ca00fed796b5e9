"""Feature vectors of blocks and paragraphs for the SVM block classifiers (papers 003 and 004).

One code path for training and inference: training code and the crawl-time classifier both call
``block_features(page_blocks(root), root)`` and ``paragraph_features(block)``; the column names
are ``BLOCK_FEATURES`` and ``PARAGRAPH_FEATURES`` in order, and ``FEATURE_VERSION`` changes
whenever a column, its definition or a data list (``extraction/data``) changes, so that a model
trained on other features is refused.

Block features (``inner`` = the block's own region, see ``extraction.dom.blocks``):

* Paper 004, section 5.1-5.2, with its "+1" smoothing. The paper's ``outerLen`` etc. are totals
  of the **whole page** ("整个 HTML 页所有文本长度"), not of the rest of it: its table 4 gives
  R1 = 83 / (192 + 1) = 0.430 for a block of 83 of the page's 192 characters.
  r1_text_share = inner chars / (page chars + 1); r2_link_text_share = inner link chars / (page
  link chars + 1); r3_link_count_share = inner <a> / (page <a> + 1); r4_img_count_share = inner
  <img> / (page <img> + 1); r5_link_text_ratio = inner link chars / (inner chars + 1).
* Paper 003, section 2.1, the five densities: link_density = link chars / chars (eq. 1);
  noise_word_density = noise-word tokens / tokens (eq. 2; jieba tokens for text with Han
  characters, ``\\w+`` otherwise; lists in ``extraction/data``); zh_punct_density = Chinese
  punctuation / chars (eq. 3) and latin_punct_density, its counterpart for other scripts;
  deco_tag_density = decoration tags / tags (eq. 4); region_position = NS / ANS, the element's
  ordinal among the page's visible elements over their number (eq. 5).
* Extras: class/id token groups of the block element (class_*) and of its ancestors below the
  top (ancestor_class_*); CETD-TPC (paper 001, ``extraction.cetd``) computed once per page with
  its invisible elements skipped (``compute_stats(top, skip)``): log1p(TBD), content-tag-path coverage, whether
  the block lies inside CETD's content block, and its TDTPC over the page's best; depth over the
  page's maximum depth; log1p(chars); log1p(paragraphs); log1p(mean paragraph chars); index over
  (blocks - 1).

Rows for some of a page's blocks only (``block_features(blocks, root, scored)``, the classifier's
cap on blocks per page): every column but CETD's is the same as with all blocks; CETD runs on a
copy of the page that holds only the scored blocks' regions and their ancestors, so its cost
follows the scored blocks, not the page (a full copy of a 400,000-block page and its statistics
take about 600 MB).

Paragraph features (paper 003, section 3): text_density = paragraph chars / block chars
(definition 1); zh_punct_density = Chinese punctuation / paragraph chars (definition 2) and
latin_punct_density; region_density = ((MIN(PC) + MAX(PC)) / 2) / APC (definition 3, eq. 8) with
1-based paragraph ordinals -- a paragraph is one line here, so it is (index + 1) / paragraphs;
then link_density, log1p(chars), noise_word_density, is_first and is_last.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Collection, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
from lxml import etree, html

from extraction.cetd import TAU_LAMBDA, score
from extraction.dom.blocks import BLOCK_TAGS, SKIPPED_TAGS, Block, hidden_by_class, walk_top
from extraction.dom.lang import HAN_RE
from extraction.dom.pagetable import cetd_scores, char_counts, class_mask, element_masks, noise_tokens
from extraction.dom.preprocess import _XML_INVALID_RE
from extraction.dom.stats import compute_stats
from extraction.dom.text import is_hidden
from extraction.dom.tokens import han_tokens, word_tokens
from extraction.paths import DATA_DIR

# Bump on any change to the columns below, their definitions or the noise-word lists.
FEATURE_VERSION = 1

NOISE_WORD_FILES = ("noise_words_zh.txt", "noise_words_en.txt")
# Paper 003, eq. 3 counts "中文标点"; the paper prints no list. Ours: the common full-width marks
# of running Chinese text, 「」『』 included for traditional-character pages.
ZH_PUNCTUATION = "，。！？；：、“”（）《》「」『』‘’"
# The same density for Latin-script text (our addition: paper 003 handles Chinese pages only).
LATIN_PUNCTUATION = ".,;:!?'\"()"
# Cache sizes for per-text and per-attribute results; nav items and class names repeat across
# the pages of a site, article paragraphs are looked up twice (block and paragraph features).
TEXT_CACHE_SIZE = 16384
# Paragraphs whose tokens are kept for the next feature set: more than a page has (99th percentile of
# dataset pages: about 1,500), few enough to stay small (a few MB).
PARAGRAPH_TOKENS_CACHE_SIZE = 4096
CLASS_CACHE_SIZE = 4096

# Groups of class/id tokens that mark noise or content regions; the words follow Readability.js's
# REGEXPS (unlikelyCandidates, positive, negative). A token matches a group when it equals one of
# its words: substrings do not count ("header" holds no "ad").
CLASS_GROUPS: tuple[tuple[str, frozenset[str]], ...] = (
    ("nav", frozenset({"nav", "navs", "navbar", "navigation", "menu", "menus", "breadcrumb",
                       "breadcrumbs", "crumb", "crumbs"})),
    ("footer", frozenset({"footer", "footers", "copyright", "copyrights"})),
    ("comment", frozenset({"comment", "comments", "reply", "replies"})),
    ("article", frozenset({"article", "articles", "content", "contents", "story", "stories", "post",
                           "posts", "entry", "entries", "body", "text", "texts"})),
    ("sidebar", frozenset({"sidebar", "sidebars", "aside", "related", "recommend", "recommended",
                           "recommendation", "recommendations"})),
    ("ad", frozenset({"ad", "ads", "advert", "adverts", "advertisement", "advertisements", "advertising",
                      "sponsor", "sponsors", "sponsored", "promo", "promos", "promotion"})),
    ("share", frozenset({"share", "shares", "sharing", "social"})),
)

BLOCK_FEATURES: tuple[str, ...] = (
    "r1_text_share",
    "r2_link_text_share",
    "r3_link_count_share",
    "r4_img_count_share",
    "r5_link_text_ratio",
    "link_density",
    "noise_word_density",
    "zh_punct_density",
    "latin_punct_density",
    "deco_tag_density",
    "region_position",
    *(f"class_{name}" for name, _ in CLASS_GROUPS),
    *(f"ancestor_class_{name}" for name, _ in CLASS_GROUPS),
    "cetd_tbd_log",
    "cetd_path_coverage",
    "cetd_in_content",
    "cetd_score_ratio",
    "depth",
    "log_chars",
    "log_paragraphs",
    "log_mean_paragraph_chars",
    "relative_index",
)
PARAGRAPH_FEATURES: tuple[str, ...] = (
    "text_density",
    "zh_punct_density",
    "latin_punct_density",
    "region_density",
    "link_density",
    "log_chars",
    "noise_word_density",
    "is_first",
    "is_last",
)

FloatArray = npt.NDArray[np.float32]

_HIDING_XPATH = ".//*[@hidden or @aria-hidden or @style]"


# --- text statistics ----------------------------------------------------------------------------


def read_word_lists(names: Sequence[str]) -> frozenset[str]:
    """Return the entries of word-list files in ``extraction/data`` (one per line, ``#`` comments),
    lower-cased and with their spaces removed."""
    words: set[str] = set()
    for name in names:
        for line in (DATA_DIR / name).read_text(encoding="utf-8").splitlines():
            entry = "".join(line.split()).lower()
            if entry and not entry.startswith("#"):
                words.add(entry)
    return frozenset(words)


@functools.cache
def noise_words() -> frozenset[str]:
    """Return the entries of the noise-word lists (``NOISE_WORD_FILES``)."""
    return read_word_lists(NOISE_WORD_FILES)


@functools.cache
def _noise_prefixes() -> frozenset[str]:
    return frozenset(word[:end] for word in noise_words() for end in range(1, len(word) + 1))


def text_tokens(text: str, hmm: bool = True) -> list[str]:
    """Return the words of ``text``: jieba's segmentation (``han_tokens``, its HMM on or off) when it has
    a Han character, else ``\\w+`` matches."""
    return han_tokens(text, hmm) if HAN_RE.search(text) else word_tokens(text)


@functools.lru_cache(maxsize=PARAGRAPH_TOKENS_CACHE_SIZE)
def paragraph_tokens(text: str) -> tuple[str, ...]:
    """Return ``text_tokens(text)`` as a tuple, cached: ``text_counts`` here and the context model's
    ``text_shape`` read the same paragraphs of a page one after the other (1 ms a WCXB page less)."""
    return tuple(text_tokens(text))


@functools.lru_cache(maxsize=TEXT_CACHE_SIZE)
def text_counts(text: str) -> tuple[int, int, int, int]:
    """Return ``(noise-word tokens, tokens, Chinese punctuation, Latin punctuation)`` of ``text``.

    A noise-word entry matches the longest run of consecutive tokens whose concatenation
    (lower-cased) equals it; all tokens of the run count as noise.
    """
    tokens = paragraph_tokens(text)
    zh, latin = char_counts(text, ZH_PUNCTUATION, LATIN_PUNCTUATION)
    return noise_tokens(tokens, noise_words(), _noise_prefixes()), len(tokens), zh, latin


@functools.lru_cache(maxsize=CLASS_CACHE_SIZE)
def class_groups(value: str) -> int:
    """Return the bit mask of the ``CLASS_GROUPS`` that a class/id value has a token of.

    Tokens: the value split at non-letters, lower-cased, plus the camelCase parts of each piece
    (``articleBody`` gives articlebody, article and body).
    """
    return class_mask(value, _word_masks())


@functools.cache
def _word_masks() -> dict[str, int]:
    """Return per word of ``CLASS_GROUPS`` the bit mask of the groups that hold it."""
    masks: dict[str, int] = {}
    for bit, (_, group) in enumerate(CLASS_GROUPS):
        for word in group:
            masks[word] = masks.get(word, 0) | 1 << bit
    return masks


def element_groups(element: html.HtmlElement) -> int:
    """Return the ``CLASS_GROUPS`` bit mask of an element's class and id (0 without either)."""
    cls = element.get("class")
    ident = element.get("id")
    if not cls and not ident:
        return 0
    return class_groups(f"{cls or ''} {ident or ''}")


def _ancestor_groups(blocks: Sequence[Block], top: html.HtmlElement) -> list[int]:
    """Return per block the class groups of its ancestors strictly below ``top`` (blocks not read from a page
    table: ``_class_columns`` reads the table)."""
    inclusive: dict[html.HtmlElement, int] = {}  # element -> groups of it and its ancestors below top
    masks: list[int] = []
    for block in blocks:
        chain: list[html.HtmlElement] = []
        node = None if block.element is top else block.element.getparent()
        while node is not None and node is not top and node not in inclusive:
            chain.append(node)
            node = node.getparent()
        mask = inclusive.get(node, 0) if node is not None else 0
        for element in reversed(chain):  # iterative, outermost first: deep pages are fine
            mask |= element_groups(element)
            inclusive[element] = mask
        masks.append(mask)
    return masks


def _value_groups(cls: str | None, ident: str | None) -> int:
    """``element_groups`` of an element with these class and id values (None: no such attribute)."""
    if not cls and not ident:
        return 0
    return class_groups(f"{cls or ''} {ident or ''}")


def _class_columns(blocks: Sequence[Block], top: html.HtmlElement) -> tuple[npt.NDArray[np.int64],
                                                                           npt.NDArray[np.int64]]:
    """Return per block the class groups of its element and those of its ancestors strictly below ``top``."""
    table = blocks[0].page.table if blocks else None
    if table is not None and blocks[0].page.top is top:
        nodes = np.fromiter((block.node for block in blocks), dtype=np.int32, count=len(blocks))
        own, ancestors = element_masks(table, nodes, _value_groups)
        return own, ancestors
    return (np.array([element_groups(block.element) for block in blocks], dtype=np.int64),
            np.array(_ancestor_groups(blocks, top), dtype=np.int64))


def _log1p(values: npt.NDArray[Any]) -> npt.NDArray[np.float64]:
    """Return ``math.log1p`` of each value: the C library's, to the last bit (numpy's may be a vector version)."""
    return np.array([math.log1p(value) for value in values.tolist()], dtype=np.float64)


# --- CETD-TPC -----------------------------------------------------------------------------------


def _cetd_columns(blocks: Sequence[Block], top: html.HtmlElement, whole: bool = True) -> npt.NDArray[np.float64]:
    """Return per block (log1p TBD, CTPC, inside the content block, TDTPC / best TDTPC), shape (blocks, 4).

    CETD runs on the page without the elements ``page_blocks`` skips (script text in the body would otherwise
    count as text). ``whole``: ``blocks`` are all the page's blocks, and CETD reads the statistics of their page
    table (``extraction.dom.pagetable.cetd_scores``: those of ``compute_stats(top, skipped)``, by the
    segmentation's element ordinal); else it runs on a copy that holds only their regions (``_pruned_copy``).
    """
    page = blocks[0].page if blocks else None
    columns = np.zeros((len(blocks), 4), dtype=np.float64)
    if not blocks:
        return columns
    if whole and page is not None and page.table is not None and page.top is top:
        table = page.table
        tbd, ctpc, tdtpc, _, _, best = cetd_scores(table, TAU_LAMBDA)
        rows = np.fromiter((block.order for block in blocks), dtype=np.int64, count=len(blocks))
        tn = table.s_tn
    else:
        clean, twins = _pruned_copy(top, blocks, _invisible(top))
        stats = compute_stats(clean)
        scores = score(stats)
        tbd, ctpc, tdtpc, best = (np.asarray(scores.tbd, dtype=np.float64), np.asarray(scores.ctpc, dtype=np.float64),
                                  np.asarray(scores.tdtpc, dtype=np.float64), scores.best)
        rows = np.array([stats.index.get(twins.get(block.element), -1) for block in blocks], dtype=np.int64)
        tn = np.asarray(stats.tn, dtype=np.int64)
    found = rows >= 0
    at = rows[found]
    best_end = best + int(tn[best]) if best >= 0 else -1  # pre-order: the subtree is a range
    best_score = float(tdtpc[best]) if best >= 0 else 0.0
    columns[found, 0] = _log1p(tbd[at])
    columns[found, 1] = ctpc[at]
    columns[found, 2] = ((best <= at) & (at < best_end)).astype(np.float64)
    columns[found, 3] = tdtpc[at] / best_score if best_score > 0 else 0.0
    return columns


Twins = dict[html.HtmlElement, html.HtmlElement]


def _invisible(top: html.HtmlElement) -> set[html.HtmlElement]:
    """Return the elements of ``top``'s subtree that CETD does not count, as ``page_blocks`` skips them: the
    segmentation's skipped tags (invisible ones, captions), elements hidden by markup or by a class."""
    doomed = set(top.iter(*SKIPPED_TAGS))
    doomed.update(node for node in top.xpath(_HIDING_XPATH) if is_hidden(node))
    doomed.update(node for node in top.xpath(".//*[@class]") if hidden_by_class(node))
    return doomed


def _pruned_copy(top: html.HtmlElement, blocks: Sequence[Block],
                 skip: Collection[html.HtmlElement] | None = None) -> tuple[html.HtmlElement, Twins]:
    """Return a copy of ``top`` with only the visible regions of ``blocks`` (some of the page's
    blocks) and their ancestors (without their text), and the copies of the blocks' elements;
    ``skip``: the elements the segmentation skipped, left out with their subtrees (None: ``_invisible(top)``).

    A region is a block element with its subtree minus the nested block elements, as in
    ``extraction.dom.blocks``; the text of a left-out or invisible element's tail joins the text
    before it, as ``remove_keep_tail`` does. Copies keep their tag and class, all that
    ``compute_stats`` reads.
    """
    skip = _invisible(top) if skip is None else skip
    regions = {block.element for block in blocks}
    needed: set[html.HtmlElement] = set()  # elements with a region at or below them
    for element in regions:
        node: html.HtmlElement | None = element
        while node is not None and node not in needed:
            needed.add(node)
            node = None if node is top else node.getparent()
    clean = html.Element(top.tag, _class_of(top))
    twins: Twins = {}
    stack = [(top, clean, top in regions)]
    while stack:
        original, twin, in_region = stack.pop()
        if original in regions:
            twins[original] = twin
        if in_region:
            _append_text(twin, original.text)
        for child in original:
            tag = child.tag
            visible = isinstance(tag, str) and child not in skip
            child_in_region = (child in regions if tag in BLOCK_TAGS else in_region) if visible else False
            if visible and (child in needed or (child_in_region and tag not in BLOCK_TAGS)):
                copied = etree.SubElement(twin, tag, _class_of(child))
                stack.append((child, copied, child_in_region))
                if in_region:
                    copied.tail = _xml_text(child.tail)
            elif in_region:  # left out: its tail is still the region's text
                _append_text(twin, child.tail)
    return clean, twins


def _class_of(element: html.HtmlElement) -> dict[str, str]:
    value = _xml_text(element.get("class"))
    return {"class": value} if value else {}


def _append_text(twin: html.HtmlElement, text: str | None) -> None:
    """Add ``text`` after the last child of ``twin`` (to its text when it has none)."""
    if not text:
        return
    if len(twin):
        last = twin[-1]
        last.tail = _xml_text((last.tail or "") + text)
    else:
        twin.text = _xml_text((twin.text or "") + text)


def _xml_text(text: str | None) -> str | None:
    """Return ``text`` without the characters lxml refuses in assigned text (its parser lets some in)."""
    return _XML_INVALID_RE.sub("", text) if text else text


# --- feature matrices ---------------------------------------------------------------------------


def block_features(blocks: Sequence[Block], root: html.HtmlElement | None = None,
                   scored: Sequence[int] | None = None) -> FloatArray:
    """Return the ``BLOCK_FEATURES`` of ``blocks`` as a float32 array of shape (blocks, features).

    ``blocks`` are all the blocks of one page, as ``page_blocks(root)`` returned them; ``root``
    is the root given to ``page_blocks`` (default: the document root of the blocks' elements).
    ``scored``: ascending indices of the blocks to compute rows for (default all); with fewer
    than all, CETD sees only their regions (module docstring).
    """
    chosen = blocks if scored is None else [blocks[i] for i in scored]
    if not chosen:
        return np.zeros((0, len(BLOCK_FEATURES)), dtype=np.float32)
    top = walk_top(root if root is not None else blocks[0].element.getroottree().getroot())
    page = blocks[0].page
    n = len(chosen)
    cetd = _cetd_columns(chosen, top, whole=len(chosen) == len(blocks))
    own_masks, ancestor_masks = _class_columns(chosen, top)
    # per block: chars, link chars, links, images, tags, decoration tags, order, depth, paragraphs, index
    counts = np.array([(block.chars, block.link_chars, block.links, block.imgs, block.tags, block.deco_tags,
                        block.order, block.depth, len(block.paragraphs), block.index) for block in chosen],
                      dtype=np.int64).reshape(n, 10)
    chars, link_chars, links, imgs, tags, deco, order, depth, paragraph_count, index = counts.T
    texts = [text_counts(paragraph.text) for block in chosen for paragraph in block.paragraphs]
    sums = np.add.reduceat(np.array(texts, dtype=np.int64).reshape(len(texts), 4),
                           np.cumsum(paragraph_count) - paragraph_count) if texts else np.zeros((n, 4), np.int64)
    noise, words, zh, latin = sums.T
    bounded_chars = np.maximum(chars, 1)
    columns = [
        chars / (page.chars + 1),
        link_chars / (page.link_chars + 1),
        links / (page.links + 1),
        imgs / (page.imgs + 1),
        link_chars / (chars + 1),
        link_chars / bounded_chars,
        np.divide(noise, words, out=np.zeros(n), where=words > 0),
        zh / bounded_chars,
        latin / bounded_chars,
        deco / np.maximum(tags, 1),
        order / max(page.elements, 1),
        *((own_masks >> bit & 1).astype(np.float64) for bit in range(len(CLASS_GROUPS))),
        *((ancestor_masks >> bit & 1).astype(np.float64) for bit in range(len(CLASS_GROUPS))),
        *cetd.T,
        depth / max(page.max_depth, 1),
        _log1p(chars),
        _log1p(paragraph_count),
        _log1p(chars / np.maximum(paragraph_count, 1)),
        index / max(len(blocks) - 1, 1),
    ]
    return np.stack(columns, axis=1).astype(np.float32)


def paragraph_features(block: Block) -> FloatArray:
    """Return the ``PARAGRAPH_FEATURES`` of the block's paragraphs, float32 (paragraphs, features)."""
    count = len(block.paragraphs)
    total = max(block.chars, 1)
    rows: list[list[float]] = []
    for paragraph in block.paragraphs:
        noise, words, zh, latin = text_counts(paragraph.text)
        chars = max(paragraph.chars, 1)
        rows.append([
            paragraph.chars / total,
            zh / chars,
            latin / chars,
            (paragraph.index + 1) / count,
            paragraph.link_chars / chars,
            math.log1p(paragraph.chars),
            noise / words if words else 0.0,
            1.0 if paragraph.index == 0 else 0.0,
            1.0 if paragraph.index == count - 1 else 0.0,
        ])
    if not rows:
        return np.zeros((0, len(PARAGRAPH_FEATURES)), dtype=np.float32)
    return np.asarray(rows, dtype=np.float32)
