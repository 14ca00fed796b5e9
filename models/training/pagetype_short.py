"""Short-article copies: training copies of article pages with the body cut to a news story's length (DOM/URL
page-type model).

The article pages that may train the page-type model are mostly long blog posts and guides of small sites
(wcxb-dev's articles: a median longest run of running text of about 7,500 characters), while a news crawl's
articles are often wire-length stories of a few paragraphs (L3S-GN1 and Dragnet, evaluation sets: a median
of about 2,100). A model that learned "an article is long" types short stories as "other", the class of the
short product, service and documentation pages it saw: 43% of L3S-GN1's 621 news articles, and the run
features alone moved most of them (set to the median of held-out articles, 47% -> 91% typed article). Each
training article therefore also enters once with its body cut after its first ``MIN_PARAGRAPHS`` to
``MAX_PARAGRAPHS`` paragraphs (seeded), everything around the body kept: menus, related links and footers
make no article longer. The copy keeps its label and the CV group of its page.

The body (``body_container``): the element whose ``<p>`` children hold the most text; the copy drops every
child after the last kept ``<p>``. A body of at most the kept count plus one ``<p>`` children gets no copy (it
is short already). The paragraph range was chosen by grouped-CV macro-F1 among (2, 6), (3, 8) and (5, 12)
(docs/evaluation/page-type.md).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt
from lxml import html

from extraction.pagetype.features import dom_features
from models.training.pagetype_chrome import parse

MIN_PARAGRAPHS, MAX_PARAGRAPHS = 5, 12


def body_container(root: html.HtmlElement) -> html.HtmlElement | None:
    """Return the element whose ``<p>`` children hold the most text (at least two of them), or None."""
    best, best_chars = None, 0
    for element in root.iter():
        if not isinstance(element.tag, str):
            continue
        paragraphs = [child for child in element if child.tag == "p"]
        if len(paragraphs) < 2:
            continue
        chars = sum(len(child.text_content()) for child in paragraphs)
        if chars > best_chars:
            best, best_chars = element, chars
    return best


def cut_body(root: html.HtmlElement, keep: int) -> bool:
    """Drop the body's children after its ``keep``-th ``<p>``; return False (``root`` unchanged) when it has no
    body or at most ``keep + 1`` paragraphs."""
    body = body_container(root)
    if body is None:
        return False
    paragraphs = [child for child in body if child.tag == "p"]
    if len(paragraphs) <= keep + 1:
        return False
    last = paragraphs[keep - 1]
    children = list(body)
    for child in children[children.index(last) + 1:]:
        body.remove(child)
    return True


def short_copy(body: bytes, content_type: str | None, url: str | None,
               seed: int) -> npt.NDArray[np.float32] | None:
    """Return the features of the page with its body cut (see the module docstring), or None when it gets no
    copy."""
    root = parse(body, content_type)
    keep = random.Random(seed).randint(MIN_PARAGRAPHS, MAX_PARAGRAPHS)
    return dom_features(root, url) if cut_body(root, keep) else None


CopyArgs = tuple[bytes, str | None, str | None, int]  # a page's bytes, content type, URL and the copy's seed


def pooled_copy(copy: Callable[..., Any], args: CopyArgs) -> Any:
    """``copy(*args)`` for a process pool; a page that fails gives None (it gets no copy)."""
    try:
        return copy(*args)
    except Exception:  # a malformed page: no copy
        return None


def short_features(args: CopyArgs) -> Any:
    """``short_copy`` for a process pool (``pooled_copy``)."""
    return pooled_copy(short_copy, args)
