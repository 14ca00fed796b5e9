"""Wire-style copies: training copies of article pages cut to a news story's length, with the body's paragraphs
split into one or two sentences each (DOM/URL page-type model).

News agencies and the papers that print their copy write a paragraph per sentence or two: AP and Reuters
stories have paragraphs of about 150 characters, where the blog posts and guides that may train the model
(wcxb-dev's articles) have about 230. The model had learned "short paragraphs" from the short product,
service and documentation pages of its "other" class: after the short-article copies
(``models.training.pagetype_short``), 37% of L3S-GN1's 621 news articles (an evaluation set, 2008 wire and
newspaper stories) were still typed "other" or "list", and the mean characters of a paragraph in the longest
run of running text (``run_paragraph_chars_log``) was what moved most of them: set to the median of the
articles typed article, half of those typed "other" flipped. Each training article therefore also enters
once cut as its short copy is (the same seeded range of paragraphs) with every paragraph of three or more
sentences and no link split into paragraphs of one or two sentences (seeded), everything around the body
kept. The copy keeps its label and the CV group of its page.

Sentences end at ``.``, ``!`` or ``?`` (a closing quote or bracket after it allowed) before a space and a
capital letter or digit, or at Chinese 。！？. A paragraph that holds a link is left whole: its link would have
to be split with its text.
"""

from __future__ import annotations

import random
import re
from typing import Any

import numpy as np
import numpy.typing as npt
from lxml import html

from extraction.pagetype.features import dom_features
from models.training.pagetype_chrome import parse
from models.training.pagetype_short import (
    MAX_PARAGRAPHS,
    MIN_PARAGRAPHS,
    CopyArgs,
    body_container,
    cut_body,
    pooled_copy,
)

MIN_SENTENCES = 3  # a paragraph of fewer sentences is left whole
_SENTENCE_END_RE = re.compile(r"(?:(?<=[.!?])|(?<=[.!?][\"”’)]))\s+(?=[\"“‘(]?[A-Z0-9])|(?<=[。！？])")


def sentences(text: str) -> list[str]:
    """Return the sentences of ``text``, whitespace collapsed."""
    return [part.strip() for part in _SENTENCE_END_RE.split(" ".join(text.split())) if part.strip()]


def split_paragraphs(root: html.HtmlElement, rng: random.Random) -> int:
    """Split the body's link-free ``<p>`` children of ``MIN_SENTENCES`` or more sentences into ``<p>``\\ s of one
    or two sentences (each drawn from ``rng``), in place; return how many were split."""
    body = body_container(root)
    if body is None:
        return 0
    split = 0
    for paragraph in [child for child in body if child.tag == "p"]:
        if next(paragraph.iter("a"), None) is not None:
            continue
        parts = sentences(paragraph.text_content())
        if len(parts) < MIN_SENTENCES:
            continue
        groups = []
        while parts:
            size = rng.choice((1, 2))
            groups.append(" ".join(parts[:size]))
            parts = parts[size:]
        index = body.index(paragraph)
        body.remove(paragraph)
        new = paragraph
        for offset, text in enumerate(groups):
            new = html.Element("p", dict(paragraph.attrib))
            new.text = text
            body.insert(index + offset, new)
        new.tail = paragraph.tail
        split += 1
    return split


def wire_copy(body: bytes, content_type: str | None, url: str | None,
              seed: int) -> npt.NDArray[np.float32] | None:
    """Return the features of the page cut and split (see the module docstring), or None when no paragraph was
    split (it gets no copy)."""
    root = parse(body, content_type)
    rng = random.Random(seed)
    cut_body(root, rng.randint(MIN_PARAGRAPHS, MAX_PARAGRAPHS))
    return dom_features(root, url) if split_paragraphs(root, rng) else None


def wire_features(args: CopyArgs) -> Any:
    """``wire_copy`` for a process pool (``pooled_copy``)."""
    return pooled_copy(wire_copy, args)
