"""Leaf tags of a page and paper 004's closeness rule, with a bucketed index for fast matching.

What a leaf tag and a sentence are, and why, is in the package docstring (:mod:`extraction.templates`).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from lxml import etree, html
from rapidfuzz import process
from rapidfuzz.distance import Levenshtein

from extraction.dom.text import INVISIBLE_TAGS, document_body, is_hidden

# Paper 004: texts whose shorter one has at most 8 characters must be equal; beyond that one
# edit is allowed per 8 characters of the shorter text: D <= min(len(a), len(b)) / 8.
EXACT_MAX_CHARS = 8
CHARS_PER_EDIT = 8
# Ours: leaves longer than this are never counted (article paragraphs; bounds fuzzy cost).
MAX_TEMPLATE_CHARS = 500
# Ours: at most this many leaves of one page are looked at (pathological pages).
MAX_LEAVES_PER_PAGE = 5000

VOID_TAGS = frozenset({"br", "wbr", "img", "hr", "input", "source", "track", "area", "col", "embed", "param"})
# Phrasing (inline) elements: a sentence made of text and these is one unit (see "Sentences").
INLINE_TAGS = frozenset({"a", "abbr", "b", "bdi", "bdo", "big", "cite", "code", "data", "del", "dfn", "em", "font",
                         "i", "ins", "kbd", "label", "mark", "nobr", "q", "s", "samp", "small", "span", "strike",
                         "strong", "sub", "sup", "time", "tt", "u", "var"}) | VOID_TAGS
_SPACE_RE = re.compile(r"\s+")
# A letter or digit: text of its own that makes an element a sentence (and a leaf running text).
WORD_RE = re.compile(r"\w")


def normalise_text(text: str) -> str:
    """Return ``text`` with whitespace runs (any Unicode space) collapsed and ends stripped."""
    return _SPACE_RE.sub(" ", text).strip()


def max_distance(len_a: int, len_b: int) -> int:
    """Return the largest edit distance at which texts of these lengths are close (paper 004)."""
    shorter = min(len_a, len_b)
    return 0 if shorter <= EXACT_MAX_CHARS else shorter // CHARS_PER_EDIT


def texts_close(a: str, b: str) -> bool:
    """Return True when ``a`` and ``b`` are close by paper 004's edit-distance rule."""
    limit = max_distance(len(a), len(b))
    if limit == 0:
        return a == b
    return Levenshtein.distance(a, b, score_cutoff=limit) <= limit


@dataclass(frozen=True)
class Leaf:
    """A leaf tag of a page: the element, its tag name and its normalised text."""

    element: html.HtmlElement
    tag: str
    text: str


# Elements that may be hidden by markup (checked with is_hidden); one XPath, evaluated in C.
_MAYBE_HIDDEN = etree.XPath("descendant-or-self::*[@hidden or @aria-hidden or @style]")


def _invisible(top: html.HtmlElement) -> set[html.HtmlElement]:
    """Return the elements of invisible subtrees (script, style..., hidden by markup)."""
    excluded: set[html.HtmlElement] = set()  # holding the proxies keeps their identity stable
    for element in top.iter(*INVISIBLE_TAGS):
        excluded.update(element.iter())
    for element in _MAYBE_HIDDEN(top):
        if is_hidden(element):
            excluded.update(element.iter())
    return excluded


def leaf_tags(root: html.HtmlElement, max_chars: int = MAX_TEMPLATE_CHARS,
              limit: int = MAX_LEAVES_PER_PAGE, sentences: bool = True) -> list[Leaf]:
    """Return the page's leaf tags in document order (see the module docstring for "leaf").

    With ``sentences``, elements that hold a sentence of their own text and inline elements
    only (``<p>Copyright 2005 <a>CNN</a>. All rights reserved.</p>``) are units too.
    Leaves with more than ``max_chars`` characters are left out; at most ``limit`` are returned.
    One pass over the elements; invisible subtrees are collected first (they are few).
    """
    top = document_body(root)
    excluded = _invisible(top)
    leaves: list[Leaf] = []
    for element in top.iter():
        tag = element.tag
        if not isinstance(tag, str) or tag in VOID_TAGS:
            continue
        if len(element):
            leaf, sentence, own_text = True, sentences, bool(element.text and not element.text.isspace())
            for child in element:  # plain loops and early exits: this runs for every element
                child_tag = child.tag
                if isinstance(child_tag, str) and child_tag not in VOID_TAGS:
                    leaf = False
                    if child_tag not in INLINE_TAGS:
                        sentence = False
                        break
                if not own_text and child.tail and not child.tail.isspace():
                    own_text = True
            if leaf:
                raw = " ".join(element.itertext())  # a <br> separates words
            elif sentence and own_text and _is_sentence(element):
                raw = "".join(element.itertext())
            else:
                continue
        else:
            raw = element.text
        if not raw or element in excluded:
            continue
        text = " ".join(raw.split())
        if text and len(text) <= max_chars:
            leaves.append(Leaf(element, tag, text))
            if len(leaves) >= limit:
                break
    return leaves


def _is_sentence(element: html.HtmlElement) -> bool:
    """Return True for text of its own (a letter or digit) mixed with inline elements only.

    (The caller has checked the children; this checks the words and the deeper descendants.)
    """
    if not ((element.text and WORD_RE.search(element.text))
            or any(child.tail and WORD_RE.search(child.tail) for child in element)):
        return False
    return all(not isinstance(d.tag, str) or d.tag in INLINE_TAGS for d in element.iterdescendants())


class TagIndex:
    """Entries keyed by (tag, text), found again by paper 004's closeness rule.

    Exact texts are a dict lookup. Fuzzy candidates are bucketed by tag and text length:
    texts of lengths L and M can only be close when |L - M| <= min(L, M) / 8, i.e. M lies in
    [ceil(8L/9), floor(9L/8)], so only those buckets are scored, by rapidfuzz's bit-parallel
    Levenshtein with a cutoff. No loop over every entry.
    """

    def __init__(self) -> None:
        self._exact: dict[tuple[str, str], int] = {}
        self._by_length: dict[str, dict[int, list[str]]] = {}
        self.tags: list[str] = []
        self.texts: list[str] = []

    def __len__(self) -> int:
        return len(self.texts)

    def add(self, tag: str, text: str) -> int:
        """Add an entry (if the exact pair is new) and return its id."""
        key = (tag, text)
        found = self._exact.get(key)
        if found is not None:
            return found
        entry = len(self.texts)
        self._exact[key] = entry
        self.tags.append(tag)
        self.texts.append(text)
        self._by_length.setdefault(tag, {}).setdefault(len(text), []).append(text)
        return entry

    def find(self, tag: str, text: str) -> int | None:
        """Return the id of the closest entry with the same tag and a close text, else None.

        Ties go to the entry added first, so results do not depend on anything but the order
        of the input.
        """
        found = self._exact.get((tag, text))
        if found is not None:
            return found
        length = len(text)
        if length <= EXACT_MAX_CHARS:
            return None
        buckets = self._by_length.get(tag)
        if not buckets:
            return None
        low = max(EXACT_MAX_CHARS + 1, math.ceil(8 * length / 9))
        high = (9 * length) // 8
        candidates = [t for m in range(low, high + 1) for t in buckets.get(m, ())]
        if not candidates:
            return None
        best: int | None = None
        for choice, distance, _ in process.extract(text, candidates, scorer=Levenshtein.distance,
                                                    score_cutoff=length // CHARS_PER_EDIT, limit=None):
            if distance <= max_distance(length, len(choice)):
                entry = self._exact[(tag, choice)]
                if best is None or entry < best:
                    best = entry
                if distance == 0:
                    break
        return best

