"""Web2Text block and edge features (paper 002, section 3.3): 128 per text block, 25 per adjacent pair.

The paper names the groups and a few examples ("the node is a <p>", "average word length",
"relative position in the source", "the parent's text contains an e-mail address", "stop-word
ratio of the whole page"; edges: tree distance 2/3/4/>4 one-hots, "a line break between the
nodes in the unstyled page", common-ancestor statistics) but prints no full list. Ours, in order
(``BLOCK_FEATURES``, ``EDGE_FEATURES``):

**Node statistics** (20, ``NODE_STATS``), computed for any CDOM node over the leaves below it:
log1p of characters, words and sentences; average word length (characters per word); log1p of
words per sentence; link density (characters inside ``<a>`` / characters); stop-word ratio
(stop words / words); punctuation, digit, upper-case (of letters) and Han (of letters) ratios;
whether the text holds an e-mail address, a URL, a year (1900-2099), a copyright mark; whether
its last leaf ends a sentence; log1p of children and of leaves; depth over the page's deepest
node; relative position (index of its first leaf over the number of leaves).

**Block features** (128) of leaf *i*, in this order: the node statistics of the leaf (20); 16
leaf extras (``LEAF_EXTRAS``): the same text on another leaf of the page (and log1p of how
many), starts with a digit / an upper-case letter, ends with a colon, holds a separator
(| » › · • >), inside a link / heading / list item / table cell / nav-like element /
article-like element, under a noise / content class or id (the groups of
``extraction.blockclf.features.CLASS_GROUPS``), characters before the leaf over the page's
characters, and the leaf's characters over its parent's; tag one-hots (``TAG_GROUPS``, 16) of
the leaf's merged tags; the node statistics of its parent (20) and the parent's tag one-hots
(16); the node statistics of its grandparent (20; the root when the tree is shallower) and of
the root (20, the page as a whole: "stop-word ratio of the whole page"). Four columns are
constant by construction, kept so that every node has the same 20 statistics: a leaf's
children (0) and leaves (1), the root's depth and position (0); standardisation maps them to 0.

**Edge features** (25) of leaves *i*, *i+1*: tree distance (levels from both to their first common
ancestor, summed) one-hots for 2, 3, 4 and > 4; a line break between them in the unstyled page
(``CDom.breaks``); the node statistics of their common ancestor (20).

Words: text with a Han character is cut by jieba (jieba-rs) with its HMM off (``block_features.text_tokens``;
about twice as fast, and the HMM only guesses words missing from the dictionary), other text into
``\\w+`` tokens. Traditional characters, which jieba's dictionary mostly lacks, then come out one
per word, so the Chinese list also holds the single characters of the traditional function
words. Stop words: ``extraction/data/stop_words_en.txt`` and ``stop_words_zh.txt``.
Upper-case ratio: ``str.isupper`` characters over letters (any script with case).
Sentences of a node: runs of . ! ? 。 ！ ？ below it, plus one when its text has a word after the
last of them.

The values returned here are raw; the model standardises them with the training set's mean and
standard deviation (``meta.json``), binary columns (``BINARY_BLOCK``, ``BINARY_EDGE``) left as 0/1.
``FEATURE_VERSION`` changes with any column, definition or word list.
"""

from __future__ import annotations

import functools
import itertools
import re
from collections import Counter

import numpy as np
import numpy.typing as npt

from extraction.blockclf.features import read_word_lists, text_tokens
from extraction.dom.lang import HAN_RE
from extraction.web2text import cdom as cd
from extraction.web2text.cdom import CDom

FEATURE_VERSION = 2
STOP_WORD_FILES = ("stop_words_en.txt", "stop_words_zh.txt")
TEXT_CACHE_SIZE = 16384

FloatArray = npt.NDArray[np.float32]

NODE_STATS: tuple[str, ...] = (
    "log_chars", "log_words", "log_sentences", "avg_word_length", "log_words_per_sentence",
    "link_density", "stop_word_ratio", "punctuation_ratio", "digit_ratio", "upper_ratio", "han_ratio",
    "has_email", "has_url", "has_year", "has_copyright", "ends_sentence", "log_children", "log_leaves",
    "relative_depth", "relative_position",
)
_BINARY_STATS = frozenset({"has_email", "has_url", "has_year", "has_copyright", "ends_sentence"})
# Tag groups of the one-hots: a node "is" a group when any tag of its merged chain is in it.
TAG_GROUPS: tuple[tuple[str, frozenset[str]], ...] = (
    ("p", frozenset({"p"})),
    ("a", frozenset({"a"})),
    ("li", frozenset({"li"})),
    ("cell", frozenset({"td", "th"})),
    ("table", frozenset({"table", "tbody", "thead", "tfoot", "tr", "caption"})),
    ("heading", frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})),
    ("span", frozenset({"span", "font"})),
    ("div", frozenset({"div"})),
    ("emphasis", frozenset({"b", "strong", "em", "i", "u"})),
    ("list", frozenset({"ul", "ol", "dl", "dd", "dt", "menu"})),
    ("section", frozenset({"section", "article", "main"})),
    ("nav_like", frozenset({"nav", "header", "footer", "aside"})),
    ("form", frozenset({"form", "label", "button", "fieldset", "legend"})),
    ("pre", frozenset({"blockquote", "pre", "code", "q"})),
    ("meta_text", frozenset({"time", "address", "small", "cite", "sup", "sub"})),
    ("figure", frozenset({"figure", "figcaption"})),
)
LEAF_EXTRAS: tuple[str, ...] = (
    "duplicate", "log_duplicates", "starts_digit", "starts_upper", "ends_colon", "has_separator",
    "in_link", "in_heading", "in_list_item", "in_table_cell", "in_nav_like", "in_article_like",
    "under_noise_class", "under_content_class", "chars_before_share", "share_of_parent_chars",
)
_BINARY_EXTRAS = frozenset(LEAF_EXTRAS[:1] + LEAF_EXTRAS[2:14])
_EXTRA_FLAGS = (cd.IN_LINK, cd.IN_HEADING, cd.IN_LIST_ITEM, cd.IN_TABLE_CELL, cd.IN_NAV_LIKE, cd.IN_ARTICLE_LIKE,
                cd.UNDER_NOISE_CLASS, cd.UNDER_CONTENT_CLASS)

BLOCK_FEATURES: tuple[str, ...] = (
    tuple(f"leaf_{name}" for name in NODE_STATS)
    + tuple(f"leaf_{name}" for name in LEAF_EXTRAS)
    + tuple(f"leaf_tag_{name}" for name, _ in TAG_GROUPS)
    + tuple(f"parent_{name}" for name in NODE_STATS)
    + tuple(f"parent_tag_{name}" for name, _ in TAG_GROUPS)
    + tuple(f"grandparent_{name}" for name in NODE_STATS)
    + tuple(f"root_{name}" for name in NODE_STATS)
)
EDGE_FEATURES: tuple[str, ...] = (
    "distance_2", "distance_3", "distance_4", "distance_over_4", "line_break",
    *(f"ancestor_{name}" for name in NODE_STATS),
)
BINARY_BLOCK: tuple[bool, ...] = tuple(
    name.split("_", 1)[1] in _BINARY_STATS or name.startswith(("leaf_tag_", "parent_tag_"))
    or (name.startswith("leaf_") and name[5:] in _BINARY_EXTRAS)
    for name in BLOCK_FEATURES
)
BINARY_EDGE: tuple[bool, ...] = tuple(
    index < 5 or name.split("_", 1)[1] in _BINARY_STATS for index, name in enumerate(EDGE_FEATURES)
)

_WORD_RE = re.compile(r"\w+")
_SENTENCE_END_RE = re.compile(r"[.!?\u3002\uff01\uff1f]+")
_PUNCT_RE = re.compile(r"[^\w\s]")
_DIGIT_RE = re.compile(r"\d")
_LETTER_RE = re.compile(r"[^\W\d_]")
_EMAIL_RE = re.compile(r"[\w.+-]+@[\w-]+\.[\w.-]*\w")
_URL_RE = re.compile(r"https?://|\bwww\.\w", re.IGNORECASE)
_YEAR_RE = re.compile(r"(?<!\d)(?:19|20)\d\d(?!\d)")
_COPYRIGHT_RE = re.compile(r"\u00a9|\(c\)|copyright|all rights reserved|\u7248\u6743|\u7248\u6b0a", re.IGNORECASE)
_SEPARATOR_RE = re.compile(r"[|\u00bb\u203a\u00b7\u2022>\uff1e]")
_ENDS_SENTENCE_RE = re.compile(r"[.!?\u3002\uff01\uff1f][\"'\u201d\u2019)\]\u300d\u300f]*$")

# Additive per-leaf counts (columns of the prefix sums) and per-leaf flags.
_CHARS, _LINK_CHARS, _WORDS, _WORD_CHARS, _STOPS, _SENTENCES, _PUNCT, _DIGITS, _UPPER, _LETTERS, _HAN, \
    _EMAIL, _URL, _YEAR, _COPYRIGHT = range(15)
_COUNTS = 15
# Sentence states of a leaf (see text_stats).
NEUTRAL, CLOSED, OPEN = 0, 1, 2


@functools.cache
def stop_words() -> frozenset[str]:
    """Return the entries of the stop-word lists (``STOP_WORD_FILES``), lower-cased."""
    return read_word_lists(STOP_WORD_FILES)


def words_of(text: str) -> list[str]:
    """Return the words of ``text`` as the features count them (module docstring)."""
    return text_tokens(text, hmm=False)


@functools.lru_cache(maxsize=TEXT_CACHE_SIZE)
def text_stats(text: str) -> tuple[tuple[int, ...], tuple[bool, bool, bool, bool], int]:
    """Return the additive counts of one leaf text (link characters 0), its flags
    ``(ends sentence, starts with a digit, starts upper-case, ends with a colon)`` and its
    sentence state: ``OPEN`` when a word follows its last sentence end (or it has words and no
    end), ``CLOSED`` when it has a sentence end and no word after it, ``NEUTRAL`` otherwise."""
    words = words_of(text)
    stops = stop_words()
    word_chars = sum(map(len, words))
    stop_count = sum(1 for word in words if word.lower() in stops)
    ends = list(_SENTENCE_END_RE.finditer(text))
    sentences = len(ends)
    state = (OPEN if _WORD_RE.search(text, ends[-1].end()) else CLOSED) if ends else OPEN if words else NEUTRAL
    counts = (
        len(text), 0, len(words), word_chars, stop_count, sentences, len(_PUNCT_RE.findall(text)),
        len(_DIGIT_RE.findall(text)), sum(map(str.isupper, text)), len(_LETTER_RE.findall(text)),
        len(HAN_RE.findall(text)), int(bool(_EMAIL_RE.search(text))), int(bool(_URL_RE.search(text))),
        int(bool(_YEAR_RE.search(text))), int(bool(_COPYRIGHT_RE.search(text))),
    )
    first = text[:1]
    leaf_flags = (bool(_ENDS_SENTENCE_RE.search(text)), first.isdigit(), first.isupper(),
                  text.endswith((":", "\uff1a")))
    return counts, leaf_flags, state


def _tag_masks() -> dict[str, int]:
    masks: dict[str, int] = {}
    for bit, (_, tags) in enumerate(TAG_GROUPS):
        for tag in tags:
            masks[tag] = masks.get(tag, 0) | 1 << bit
    return masks


_TAG_MASKS = _tag_masks()


@functools.lru_cache(maxsize=4096)
def _tag_onehots(tags: tuple[str, ...]) -> tuple[float, ...]:
    mask = 0
    for tag in tags:
        mask |= _TAG_MASKS.get(tag, 0)
    return tuple(float(mask >> bit & 1) for bit in range(len(TAG_GROUPS)))


def page_features(page: CDom) -> tuple[FloatArray, FloatArray]:
    """Return the raw ``(block features (leaves, 128), edge features (leaves - 1, 25))`` of a CDOM."""
    n = len(page)
    if n == 0:
        return np.zeros((0, len(BLOCK_FEATURES)), np.float32), np.zeros((0, len(EDGE_FEATURES)), np.float32)
    counts = np.empty((n, _COUNTS), dtype=np.float64)
    leaf_flags = np.empty((n, 4), dtype=bool)
    states = np.empty(n, dtype=np.int64)
    for index, (text, flags) in enumerate(zip(page.texts, page.flags, strict=True)):
        row, lflags, states[index] = text_stats(text)
        counts[index] = row
        leaf_flags[index] = lflags
        if flags & cd.IN_LINK:
            counts[index, _LINK_CHARS] = row[_CHARS]
    prefix = np.zeros((n + 1, _COUNTS), dtype=np.float64)
    np.cumsum(counts, axis=0, out=prefix[1:])

    nodes = page.nodes
    leaf_nodes = np.asarray(page.leaves, dtype=np.int64)
    parent = np.asarray([node.parent for node in nodes], dtype=np.int64)
    depth = np.asarray([node.depth for node in nodes], dtype=np.int64)
    stats = _node_stats(page, prefix, leaf_flags[:, 0], states, depth)  # (nodes, 20)

    parents = np.where(parent[leaf_nodes] >= 0, parent[leaf_nodes], 0)
    grandparents = np.where(parent[parents] >= 0, parent[parents], 0)
    root_stats = np.broadcast_to(stats[0], (n, len(NODE_STATS)))

    texts = page.texts
    seen = Counter(texts)
    duplicates = np.asarray([seen[text] - 1 for text in texts], dtype=np.float64)
    flag_values = np.asarray(page.flags, dtype=np.int64)
    total_chars = max(prefix[n, _CHARS], 1.0)
    parent_chars = prefix[[nodes[p].end_leaf for p in parents], _CHARS] - prefix[
        [nodes[p].first_leaf for p in parents], _CHARS]
    separators = np.asarray([bool(_SEPARATOR_RE.search(text)) for text in texts], dtype=np.float64)
    extras = np.column_stack(
        [duplicates > 0, np.log1p(duplicates), leaf_flags[:, 1], leaf_flags[:, 2],
         leaf_flags[:, 3], separators]
        + [(flag_values & flag) > 0 for flag in _EXTRA_FLAGS]
        + [prefix[:n, _CHARS] / total_chars, counts[:, _CHARS] / np.maximum(parent_chars, 1.0)]
    ).astype(np.float64)
    leaf_tags = np.asarray([_tag_onehots(nodes[index].tags) for index in page.leaves], dtype=np.float64)
    parent_tags = np.asarray([_tag_onehots(nodes[index].tags) for index in parents], dtype=np.float64)
    block = np.concatenate(
        [stats[leaf_nodes], extras, leaf_tags, stats[parents], parent_tags, stats[grandparents], root_stats], axis=1)

    edges = np.zeros((n - 1, len(EDGE_FEATURES)), dtype=np.float64)
    if n > 1:
        ancestors, distances = _common_ancestors(leaf_nodes, parent, depth)
        edges[:, 0] = distances == 2
        edges[:, 1] = distances == 3
        edges[:, 2] = distances == 4
        edges[:, 3] = distances > 4
        edges[:, 4] = np.asarray(page.breaks[1:], dtype=np.float64)
        edges[:, 5:] = stats[ancestors]
    return block.astype(np.float32), edges.astype(np.float32)


def _node_stats(page: CDom, prefix: npt.NDArray[np.float64], ends_sentence: npt.NDArray[np.bool_],
                states: npt.NDArray[np.int64], depth: npt.NDArray[np.int64]) -> npt.NDArray[np.float64]:
    """Return the ``NODE_STATS`` of every CDOM node, from the prefix sums of the leaf counts.

    A node's sentences: the sentence ends below it, plus one when its text has a word after the
    last of them, i.e. when the last of its leaves that is not ``NEUTRAL`` is ``OPEN`` (a leaf may
    end mid-sentence: "Hello <b>world</b> again." is one sentence over three leaves, and a
    trailing "»" leaf does not open a new one).
    """
    nodes = page.nodes
    first = np.asarray([node.first_leaf for node in nodes], dtype=np.int64)
    end = np.asarray([node.end_leaf for node in nodes], dtype=np.int64)
    sums = prefix[end] - prefix[first]
    chars = sums[:, _CHARS]
    words = sums[:, _WORDS]
    # Index of the last non-neutral leaf at or before each leaf (-1 when none).
    positions = np.where(states != NEUTRAL, np.arange(len(states)), -1)
    last_marked = np.maximum.accumulate(positions) if len(positions) else positions
    last = last_marked[end - 1]
    open_tail = (last >= first) & (states[np.maximum(last, 0)] == OPEN)
    sentences = sums[:, _SENTENCES] + open_tail
    letters = np.maximum(sums[:, _LETTERS], 1.0)
    children = np.asarray([len(node.children) for node in nodes], dtype=np.float64)
    leaves = max(len(page), 1)
    return np.column_stack([
        np.log1p(chars), np.log1p(words), np.log1p(sentences),
        sums[:, _WORD_CHARS] / np.maximum(words, 1.0),
        np.log1p(words / np.maximum(sentences, 1.0)),
        sums[:, _LINK_CHARS] / np.maximum(chars, 1.0),
        sums[:, _STOPS] / np.maximum(words, 1.0),
        sums[:, _PUNCT] / np.maximum(chars, 1.0),
        sums[:, _DIGITS] / np.maximum(chars, 1.0),
        sums[:, _UPPER] / letters,
        sums[:, _HAN] / letters,
        sums[:, _EMAIL] > 0, sums[:, _URL] > 0, sums[:, _YEAR] > 0, sums[:, _COPYRIGHT] > 0,
        ends_sentence[end - 1],
        np.log1p(children), np.log1p(end - first),
        depth / max(page.max_depth, 1),
        first / leaves,
    ]).astype(np.float64)


def _common_ancestors(leaf_nodes: npt.NDArray[np.int64], parent: npt.NDArray[np.int64],
                      depth: npt.NDArray[np.int64]) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """Return, per pair of adjacent leaves, their first common ancestor and their tree distance
    (levels from both leaves up to it, summed)."""
    parents = parent.tolist()
    depths = depth.tolist()
    ancestors: list[int] = []
    distances: list[int] = []
    leaves = leaf_nodes.tolist()
    for a, b in itertools.pairwise(leaves):
        x, y = a, b
        while depths[x] > depths[y]:
            x = parents[x]
        while depths[y] > depths[x]:
            y = parents[y]
        while x != y:
            x = parents[x]
            y = parents[y]
        ancestors.append(x)
        distances.append(depths[a] + depths[b] - 2 * depths[x])
    return np.asarray(ancestors, dtype=np.int64), np.asarray(distances, dtype=np.int64)
