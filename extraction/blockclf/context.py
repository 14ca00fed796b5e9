"""Block features in context, for the default block model (``models/stack/``).

The SVM of papers 003/004 scores each block from its own 31 features
(``extraction.blockclf.features``). Most of its errors are decisions that the block's neighbours
settle (error analysis: ``bench/error_analysis.py``): an article's short first paragraph between
a headline and the body, a comment thread right after the article, a "related" list inside the
article's container. The stacked model reads, for every block:

* its own features (``BLOCK_FEATURES``);
* the shape of its text, language-independent: tokens per paragraph, mean token length, the
  share of short tokens (3 characters or fewer: function words in Latin scripts), of capitalised
  and of numeric tokens, and of paragraphs that end a sentence;
* the same few numbers of its neighbours in document order (the 1st and 2nd before and after:
  characters, link density, short-token share, sentence ends, inside CETD's content block);
* where it stands: the share of the page's text before it, its distance in blocks and the
  direction to the page's longest non-link block, the longest block within 3 on each side;
* the page: blocks, characters and link density (log), and the page-type model's probabilities
  of article, list and other (``extraction.pagetype``; zero when the page is not typed).

``FEATURES`` names the columns in order; ``CONTEXT_VERSION`` changes with any of them, and a model
trained on other columns is refused.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from extraction.blockclf.features import BLOCK_FEATURES, FEATURE_VERSION, TEXT_CACHE_SIZE, paragraph_tokens
from extraction.dom.blocks import Block
from extraction.dom.pagetable import token_shape

# Bump on any change to the columns or their definitions (FEATURE_VERSION of the own features too).
CONTEXT_VERSION = f"{FEATURE_VERSION}.1"

SHAPE_FEATURES: tuple[str, ...] = (
    "tokens_per_paragraph_log", "mean_token_chars", "short_token_share", "capital_share", "numeric_share",
    "sentence_end_share",
)
NEIGHBOUR_FEATURES: tuple[str, ...] = ("log_chars", "link_density", "short_token_share", "sentence_end_share",
                                       "cetd_in_content")
NEIGHBOURS = (-2, -1, 1, 2)
POSITION_FEATURES: tuple[str, ...] = (
    "text_before_share", "to_longest_blocks", "after_longest", "window_longest_ratio",
)
PAGE_FEATURES: tuple[str, ...] = ("page_blocks_log", "page_chars_log", "page_link_density", "p_article", "p_list",
                                  "p_other")
FEATURES: tuple[str, ...] = (
    *BLOCK_FEATURES, *SHAPE_FEATURES,
    *(f"n{offset:+d}_{name}" for offset in NEIGHBOURS for name in NEIGHBOUR_FEATURES),
    *POSITION_FEATURES, *PAGE_FEATURES,
)
WINDOW = 3  # blocks on each side for window_longest_ratio

_SENTENCE_END_RE = re.compile(r"[.!?。！？…:;：；]['\"”’」』)）]*$")
_LOG_CHARS = BLOCK_FEATURES.index("log_chars")
_LINK_DENSITY = BLOCK_FEATURES.index("link_density")
_IN_CONTENT = BLOCK_FEATURES.index("cetd_in_content")

FloatArray = npt.NDArray[np.float32]


@functools.lru_cache(maxsize=TEXT_CACHE_SIZE)
def text_shape(text: str) -> tuple[int, int, int, int, int, bool]:
    """Return ``(tokens, token characters, short tokens, capitalised tokens, numeric tokens, ends a sentence)``."""
    count, chars, short, capital, numeric = token_shape(paragraph_tokens(text))  # first characters: str.isupper, \d
    return count, chars, short, capital, numeric, bool(_SENTENCE_END_RE.search(text))


def shape_rows(blocks: Sequence[Block]) -> FloatArray:
    """Return the ``SHAPE_FEATURES`` of each block, float32 (blocks, 6)."""
    rows = np.zeros((len(blocks), len(SHAPE_FEATURES)), dtype=np.float32)
    for i, block in enumerate(blocks):
        tokens = chars = short = capital = numeric = ends = 0
        for paragraph in block.paragraphs:
            t, c, s, cap, num, end = text_shape(paragraph.text)
            tokens += t
            chars += c
            short += s
            capital += cap
            numeric += num
            ends += end
        paragraphs = max(len(block.paragraphs), 1)
        if tokens:
            rows[i] = (math.log1p(tokens / paragraphs), chars / tokens, short / tokens, capital / tokens,
                       numeric / tokens, ends / paragraphs)
        else:
            rows[i, 5] = ends / paragraphs
    return rows


def context_features(blocks: Sequence[Block], own: FloatArray, page_probabilities: Sequence[float] | None = None,
                     rows: Sequence[int] | None = None) -> FloatArray:
    """Return the ``FEATURES`` of ``blocks`` (all the page's blocks, in order) as float32.

    ``own``: ``block_features`` of the blocks ``rows`` (default all, in order); ``page_probabilities``:
    the page-type model's (article, list, other), or None. Neighbours and positions are taken among
    the scored rows, so a page over the classifier's block cap sees the blocks it scores.
    """
    chosen = list(range(len(blocks))) if rows is None else list(rows)
    n = len(chosen)
    if n == 0:
        return np.zeros((0, len(FEATURES)), dtype=np.float32)
    scored = [blocks[i] for i in chosen]
    shape = shape_rows(scored)
    chars = np.fromiter((block.chars for block in scored), dtype=np.float64, count=n)
    own_chars = np.fromiter((block.text_chars for block in scored), dtype=np.float64, count=n)
    # Neighbour columns: log chars, link density, short-token share, sentence ends, inside CETD's block.
    base = np.stack([own[:, _LOG_CHARS], own[:, _LINK_DENSITY], shape[:, 2], shape[:, 5], own[:, _IN_CONTENT]], axis=1)
    neighbours = []
    for offset in NEIGHBOURS:
        shifted = np.zeros_like(base)
        if offset < 0 and n + offset > 0:
            shifted[-offset:] = base[:offset]
        elif offset > 0 and n - offset > 0:
            shifted[:-offset] = base[offset:]
        neighbours.append(shifted)
    total = max(float(chars.sum()), 1.0)
    before = (np.cumsum(chars) - chars) / total
    longest = int(np.argmax(own_chars))
    index = np.arange(n)
    window = np.array([own_chars[max(0, i - WINDOW):i + WINDOW + 1].max() for i in range(n)])
    position = np.stack([before, (index - longest) / max(n - 1, 1), (index > longest).astype(np.float64),
                         own_chars / np.maximum(window, 1.0)], axis=1)
    page_totals = scored[0].page
    probabilities = list(page_probabilities) if page_probabilities is not None else [0.0, 0.0, 0.0]
    page = np.tile(np.array([math.log1p(len(blocks)), math.log1p(page_totals.chars),
                             page_totals.link_chars / max(page_totals.chars, 1), *probabilities]), (n, 1))
    return np.concatenate([own, shape, *neighbours, position, page], axis=1).astype(np.float32)
