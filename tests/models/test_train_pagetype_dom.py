"""The DOM/URL page-type trainer's choice of the "other" margin."""

from __future__ import annotations

import numpy as np

from extraction.pagetype.models import CLASSES
from models.training.train_pagetype_dom import MARGIN_GRID, choose_margin


def _pages(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Return labels and out-of-fold-like probabilities: each page's own class likelier, with noise."""
    rng = np.random.default_rng(seed)
    own = rng.integers(0, 3, n)
    probs = rng.dirichlet([1.0, 1.0, 1.0], n)
    probs[np.arange(n), own] += 0.6
    return np.asarray(CLASSES)[own], probs / probs.sum(axis=1, keepdims=True)


def test_the_largest_margin_within_one_standard_error_of_the_best() -> None:
    y, probs = _pages(600, 0)
    folds = [(np.setdiff1d(np.arange(600), test), test) for test in np.array_split(np.arange(600), 5)]
    margin, rows = choose_margin(y, probs, folds)
    assert [row["margin"] for row in rows] == list(MARGIN_GRID)
    best = max(rows, key=lambda row: (row["macro_f1"], -row["margin"]))
    chosen = next(row for row in rows if row["margin"] == margin)
    assert chosen["macro_f1"] >= best["macro_f1"] - best["fold_se"]
    assert margin >= best["margin"]
    # No larger margin is within the error: the rule takes the most cautious point, not any point.
    assert all(row["macro_f1"] < best["macro_f1"] - best["fold_se"] for row in rows if row["margin"] > margin)
    # One fold (no spread): the rule is the best margin itself.
    whole = [(np.arange(0), np.arange(600))]
    assert choose_margin(y, probs, whole)[0] == best["margin"]
