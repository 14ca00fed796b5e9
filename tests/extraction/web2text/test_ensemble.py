"""The SVM block classifier and Web2Text together (``extraction.web2text.ensemble``, method svm-web2text)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from extraction.blockclf.classifier import classify
from extraction.dom.html import parse_html
from extraction.methods import extract
from extraction.web2text.cdom import collapse
from extraction.web2text.ensemble import combine, leaf_blocks, logit
from tests.extraction.web2text.test_model import ARTICLE, _news_page, requires_model


def test_every_leaf_maps_to_the_block_whose_own_text_holds_it() -> None:
    root = parse_html("<html><body><div id='a'>one <b>two</b><div id='b'>three</div>four</div>"
                      "<ul><li>five</li></ul></body></html>")
    page = collapse(root)
    decision = classify(root)
    blocks = leaf_blocks(page, decision)
    ids = [decision.blocks[i].element.get("id") or decision.blocks[i].element.tag for i in blocks]
    # "two" is inside <b> of div#a; "four" is div#b's tail, so div#a's own text again.
    assert page.texts == ["one", "two", "three", "four", "five"]
    assert ids == ["a", "a", "b", "a", "ul"]


def test_combine_sums_threshold_centred_log_odds() -> None:
    assert logit(0.5) == pytest.approx(0.0)
    assert logit(0.8) == pytest.approx(math.log(4.0))
    # Each model exactly at its threshold: kept (score 0).
    assert combine([0.25], 0.25, [0.3], 0.3).tolist() == [True]
    # A confident SVM outvotes a doubtful Web2Text and the reverse; two doubts lose.
    svm = np.array([0.9, 0.2, 0.2, 0.24])
    w2t = np.array([0.2, 0.9, 0.25, 0.29])
    # By hand, first leaf: log(9) - log(1/3) + log(1/4) - log(3/7) = 2.76 > 0; last leaf: both
    # just under their thresholds, -0.052 - 0.048 < 0.
    assert combine(svm, 0.25, w2t, 0.3).tolist() == [True, True, False, False]


@requires_model
def test_method_keeps_the_article_and_drops_the_footer() -> None:
    text = extract(_news_page(ARTICLE), "svm-web2text").text
    article_words = " ".join(ARTICLE).split()
    kept = set(text.split())
    assert sum(word in kept for word in article_words) >= 0.8 * len(article_words)
    assert "rights reserved" not in text


@requires_model
def test_page_without_text_gives_empty_text() -> None:
    assert extract("<html><body><img src='x.png'></body></html>", "svm-web2text").text == ""
