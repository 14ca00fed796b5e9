"""Pinned floors of the article gate on sites no model trained on (tests/extraction/gate_floors.json).

The held-out labelled pages of the sets the issue that asked for the gate names (L3S-GN1's and gne-chinese's
articles, article-vs-nonarticle's articles and non-articles, the held-out sites of frontpage-archive-de and
gerapy-zh) run through the default flow one by one, as ``scrapy extract`` runs them
(``bench.corpus_bench.extract_shares``): the share of articles the gate types article (what ``scrapy corpus``
keeps) and the share of list and other pages it lets in. The floors are the figures measured with that function
at the shipped gate (docs/corpus-gate.md), not the acceptance targets; never loosen one to make the test pass.
The crawl's figures (template store, site evidence) are ``python -m bench.corpus_bench``'s.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from evaluation.datasets import datasets_dir
from extraction.gate import GATE_DIR

pytestmark = [pytest.mark.datasets, pytest.mark.slow, pytest.mark.timeout(1200)]
FLOORS: dict[str, Any] = json.loads((Path(__file__).parent / "gate_floors.json").read_text(encoding="utf-8"))
SETS = tuple(name for name in FLOORS if not name.startswith("_"))


@pytest.fixture(scope="module")
def shares() -> dict[str, dict[str, dict[str, list[int]]]]:
    if not (GATE_DIR / "meta.json").exists():
        pytest.skip("no shipped gate (make train-gate)")
    missing = [name for name in SETS if not (datasets_dir() / name).is_dir()]
    if missing:
        pytest.skip(f"datasets absent under {datasets_dir()}: {missing}")
    from bench.corpus_bench import corpus_pages, extract_shares

    return extract_shares(corpus_pages(SETS))


@pytest.mark.parametrize("dataset", SETS)
def test_gate_floors_on_held_out_sites(shares: dict[str, dict[str, dict[str, list[int]]]], dataset: str) -> None:
    floors, measured = FLOORS[dataset], shares[dataset]["gate"]
    for kind in ("article", "list", "other"):
        if kind not in floors:
            continue
        hits, pages = measured.get(kind, [0, 0])
        assert pages >= floors[kind]["min_pages"], f"{dataset}: {pages} {kind} pages"
        share = hits / pages
        if kind == "article":
            assert share >= floors[kind]["kept_at_least"], f"{dataset}: {share:.4f} of the articles kept"
        else:
            assert share <= floors[kind]["let_in_at_most"], f"{dataset}: {share:.4f} of the {kind} pages let in"
