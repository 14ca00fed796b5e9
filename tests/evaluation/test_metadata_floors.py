"""Metadata floors on real pages with gold (``bench.metadata_eval``'s sets and scoring, the default flow).

Each floor is the figure of ``bench/results/metadata.md`` (2026-11-27; Chinese authors 2026-11-28, WCXB authors
2026-11-29) rounded down to 0.01: raise one when a change improves it, never lower one to make the test pass.
WCXB's held-out fold is the title chooser's unseen pages; the date and byline rules are not trained."""

from __future__ import annotations

import math

import pytest

from bench.metadata_eval import Scores, gold_pages, ours, score
from evaluation.datasets.base import datasets_dir

FLOORS = {
    "wcxb-dev-held-out": {"date": 0.86, "author": 0.84, "title": 0.84, "lang": 0.99},
    "chinese-wced-dev": {"date": 0.84, "author": 0.75, "lang": 1.00},
}


@pytest.mark.parametrize("name", sorted(FLOORS))
def test_metadata_floors(name: str) -> None:
    folder = datasets_dir() / name.removesuffix("-held-out")
    if not folder.is_dir():
        pytest.skip(f"dataset folder {folder} is absent")
    run, scores = ours(), Scores()
    for gold in gold_pages(name):
        score(gold, run(gold), scores)
    measured = {field: sum(kept) / len(kept) for field, values in scores.values.items()
                if (kept := [value for value in values if not math.isnan(value)])}
    low = {field: round(measured.get(field, 0.0), 4) for field, floor in FLOORS[name].items()
           if measured.get(field, 0.0) < floor}
    assert not low, f"{name}: under the floors {FLOORS[name]}: {low}"
