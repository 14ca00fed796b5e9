"""Quality floors: our extraction methods on real labelled pages (tests/quality_floors.json).

Skipped with a reason when ../shared/datasets (or DATASETS_DIR) is absent; CI has it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from evaluation.datasets import datasets_dir
from evaluation.harness import evaluate_dataset

FLOORS: dict[str, Any] = json.loads((Path(__file__).parent / "quality_floors.json").read_text(encoding="utf-8"))
DATASETS = sorted(name for name in FLOORS if not name.startswith("_"))

pytestmark = [pytest.mark.datasets, pytest.mark.slow]


@pytest.mark.parametrize("entry", DATASETS)
def test_f1_floor(entry: str) -> None:
    spec = FLOORS[entry]
    dataset = spec.get("dataset", entry)  # an entry may name its dataset (two splits of one set)
    if not (datasets_dir() / dataset).is_dir():
        pytest.skip(f"dataset folder {datasets_dir() / dataset} is absent (set DATASETS_DIR)")
    result = evaluate_dataset(dataset, sorted(spec["floors"]), split=spec.get("split"))
    scores = {candidate.name: candidate.scores for candidate in result.candidates}
    below = []
    for method, groups in spec["floors"].items():
        assert scores[method], f"{method} produced no scores on {dataset}"
        for group, floor in groups.items():
            f1 = scores[method][group]["f1"]
            if f1 < floor:
                below.append(f"{method}/{group}: F1 {f1:.3f} < floor {floor}")
    assert not below, f"{dataset}: " + "; ".join(below)
