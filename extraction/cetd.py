"""CETD-TPC: content extraction by text block density x content tag-path coverage (paper 001).

Paper 001 (section 2-3, algorithm CETD-TPC): for every block ``blk(v)`` (the subtree rooted at
element ``v``)

* TBD(v) = sum over the children v_i of v of (CN - LCN + 1) / (TN - LTN + 1)      -- eq. (1)
  The parse tree of the paper has text nodes as leaves, so a direct text node of ``v`` is a
  child too: it holds no tags (TN = LTN = 0), so it adds (chars + 1) / 1, or 1 inside a link.
* TPR(p) = chars of the text nodes reached by tag path p / number of those text nodes -- eq. (3)
* content nodes: text nodes whose path has TPR > tau; cntPaths: their tag paths.
* CTPC(blk) = text nodes of blk on cntPaths / text nodes of the page on cntPaths  -- eq. (4)-(5)
* TDTPC(blk) = TBD(blk) x CTPC(blk); the block with the largest TDTPC is the content -- eq. (6)

tau: paper 001 only says it takes "CEPR's empirical threshold" (ref. [22], Wu et al. 2013) and
prints no number. CEPR, like CETR before it, separates content from noise with a threshold
proportional to the spread of the ratio over the page, tau = lambda x sigma. We use
tau = TAU_LAMBDA x sigma, sigma the population standard deviation of TPR over the page's text
nodes (each text node contributes the TPR of its path), with TAU_LAMBDA = 1. On a page where
all text shares one path (sigma = 0) every text node is a content node.

Everything is linear in the number of nodes: one statistics walk (extraction.dom.stats), then
passes over its arrays.
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass

from lxml import html

from extraction.dom.html import page_title
from extraction.dom.preprocess import preprocess
from extraction.dom.stats import DomStats, compute_stats
from extraction.dom.text import document_body, visible_text
from extraction.methods import Extraction, register

NAME = "cetd-tpc"
# tau = TAU_LAMBDA x std(TPR): CEPR's/CETR's threshold form (paper 001, section 3, step 3-5,
# citing CEPR [22]); the factor is not printed in paper 001, 1.0 is CETR's default.
TAU_LAMBDA = 1.0


@dataclass(frozen=True)
class CetdScores:
    """Per-element TBD, CTPC and TDTPC (parallel to ``stats``), the threshold and the winner."""

    stats: DomStats
    tbd: list[float]
    ctpc: list[float]
    tdtpc: list[float]
    tau: float
    content_paths: frozenset[int]
    best: int  # index of the content block, -1 when the page has no text


def path_ratios(stats: DomStats) -> dict[int, float]:
    """Return TPR per tag-path id (eq. 3), for the paths that reach at least one text node."""
    chars: dict[int, int] = {}
    nodes: dict[int, int] = {}
    for i, path in enumerate(stats.path):
        if stats.own_text_nodes[i]:
            chars[path] = chars.get(path, 0) + stats.own_text_len[i]
            nodes[path] = nodes.get(path, 0) + stats.own_text_nodes[i]
    return {path: chars[path] / nodes[path] for path in nodes}


def threshold(stats: DomStats, tpr: dict[int, float]) -> float:
    """Return tau = TAU_LAMBDA x population std of TPR over the page's text nodes (0 if none)."""
    weights = [(tpr[stats.path[i]], n) for i, n in enumerate(stats.own_text_nodes) if n]
    total = sum(n for _, n in weights)
    if not total:
        return 0.0
    mean = sum(value * n for value, n in weights) / total
    variance = sum(n * (value - mean) ** 2 for value, n in weights) / total
    return TAU_LAMBDA * math.sqrt(variance)


def score(stats: DomStats) -> CetdScores:
    """Return the CETD-TPC scores of every element of ``stats``."""
    size = len(stats)
    tpr = path_ratios(stats)
    tau = threshold(stats, tpr)
    content_paths = frozenset(path for path, value in tpr.items() if value > tau)
    tbd = [0.0] * size
    covered = [0] * size
    # Elements are in pre-order: walking backwards visits every child before its parent.
    for i in range(size - 1, -1, -1):
        own = stats.own_text_nodes[i]
        # Direct text nodes as children of eq. (1): no tags, so the denominator is 1.
        tbd[i] += own if stats.in_link[i] else stats.own_text_len[i] + own
        if stats.path[i] in content_paths:
            covered[i] += own
        parent = stats.parent[i]
        if parent >= 0:
            tbd[parent] += (stats.cn[i] - stats.lcn[i] + 1) / (stats.tn[i] - stats.ltn[i] + 1)
            covered[parent] += covered[i]
    total = covered[0] if size else 0
    ctpc = [c / total if total else 0.0 for c in covered]
    tdtpc = [d * c for d, c in zip(tbd, ctpc, strict=True)]
    best = max(range(size), key=tdtpc.__getitem__) if total else -1  # first maximum: outermost
    return CetdScores(stats, tbd, ctpc, tdtpc, tau, content_paths, best)


def content_block(root: html.HtmlElement) -> html.HtmlElement | None:
    """Return the element with the largest TDTPC in an already preprocessed page (None if no text)."""
    scores = score(compute_stats(document_body(root)))
    return scores.stats.elements[scores.best] if scores.best >= 0 else None


def block_text(element: html.HtmlElement) -> str:
    """Return the visible text of one element, one block-level element per line."""
    return visible_text(element)


def extract_cetd(root: html.HtmlElement, url: str | None = None) -> Extraction:
    """Return the CETD-TPC extraction of a parsed page (the page itself is not modified)."""
    title = page_title(root)
    cleaned = preprocess(copy.deepcopy(root))
    block = content_block(cleaned)
    text = block_text(block) if block is not None else ""
    return Extraction(method=NAME, text=text, title=title)


register(NAME, extract_cetd)
