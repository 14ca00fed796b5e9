"""The stacked block model's training code: export to ONNX through skl2onnx (with its workaround) and CV helpers."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import onnxruntime as ort

from extraction.blockclf.context import FEATURES
from extraction.pagetype.models import shared_models as page_type_models
from models.training.train_stack import (
    MIN_TYPE_PAGES,
    Rows,
    export,
    favor_thresholds,
    page_mean_f1,
    row_types,
    type_thresholds,
    weighted_f1,
    weighted_fbeta,
)


def test_export_agrees_with_scikit_learn(tmp_path: Path) -> None:
    from sklearn.ensemble import HistGradientBoostingClassifier

    rng = np.random.default_rng(0)
    x = rng.random((400, len(FEATURES)), dtype=np.float32)
    y = (x[:, 0] + 0.3 * x[:, 5] > 0.7).astype(np.int64)
    model = HistGradientBoostingClassifier(max_iter=30, random_state=0).fit(x, y)
    meta: dict[str, object] = {"features": list(FEATURES), "file": "model.onnx"}
    export(model, tmp_path, meta, x[:100])
    written = json.loads((tmp_path / "meta.json").read_text(encoding="utf-8"))
    assert written["onnx_parity"] < 1e-4
    session = ort.InferenceSession(str(tmp_path / "model.onnx"), providers=["CPUExecutionProvider"])
    onnx = np.asarray(session.run(None, {session.get_inputs()[0].name: x})[1])[:, 1]
    assert np.abs(onnx - model.predict_proba(x)[:, 1]).max() < 1e-4


def test_f1_helpers_weight_by_characters_and_average_pages() -> None:
    y = np.array([True, True, False, True, False])
    predicted = np.array([True, False, True, True, False])
    chars = np.array([10, 30, 10, 5, 5], dtype=np.float32)
    assert weighted_f1(y, predicted, chars) == 2 * 15 / (2 * 15 + 10 + 30)
    rows = Rows(np.zeros((5, 1), np.float32), y, chars, np.array([0, 0, 0, 1, 1]), np.array(["a", "b"]),
                np.array(["p0", "p1"]))
    assert page_mean_f1(rows, predicted) == (2 * 10 / (2 * 10 + 10 + 30) + 1.0) / 2


def _typed_rows(types: list[int], y: list[bool]) -> Rows:
    """One block per page; the page-type columns say article (0), list (1) or other (2) for each."""
    x = np.zeros((len(types), len(FEATURES)), np.float32)
    for row, kind in enumerate(types):
        x[row, FEATURES.index(("p_article", "p_list", "p_other")[kind])] = 0.9
    pages = np.arange(len(types))
    return Rows(x, np.asarray(y), np.ones(len(types), np.float32), pages, pages.astype(str), pages.astype(str))


def test_row_types_decide_like_the_page_type_model() -> None:
    rows = _typed_rows([0, 1, 2], [True, True, True])
    assert row_types(rows.x).tolist() == [0, 1, 2]
    close = rows.x[2:3].copy()
    close[0, FEATURES.index("p_article")] = 0.9 - page_type_models().other_margin / 2
    assert row_types(close).tolist() == [0]  # "other" must beat article and list by the model's margin


def test_type_thresholds_pick_each_types_best_and_fall_back_for_rare_types() -> None:
    n = MIN_TYPE_PAGES
    # Articles: content scored 0.6, noise 0.4 (best threshold above 0.4); lists: content scored 0.25 (best
    # at or under 0.25); "other": too few pages, the fallback.
    types = [0] * (2 * n) + [1] * (2 * n) + [2] * 3
    y = [True, False] * n + [True, False] * n + [True, False, True]
    probabilities = np.asarray([0.6, 0.4] * n + [0.25, 0.1] * n + [0.5, 0.5, 0.5])
    found = type_thresholds(_typed_rows(types, y), probabilities, fallback=0.35)
    assert 0.4 < found["article"]["threshold"] <= 0.6 and found["article"]["weighted_f1"] == 1.0
    assert 0.1 < found["list"]["threshold"] <= 0.25 and found["list"]["weighted_f1"] == 1.0
    assert found["other"]["threshold"] == 0.35 and found["other"]["pages"] == 3


def test_favors_thresholds_maximise_f_beta_per_page_type() -> None:
    y = np.array([True, True, False, True, False])
    predicted = np.array([True, False, True, True, False])
    chars = np.array([10, 30, 10, 5, 5], dtype=np.float32)
    assert weighted_fbeta(y, predicted, chars, 1.0) == weighted_f1(y, predicted, chars)
    assert weighted_fbeta(y, predicted, chars, 0.5) == 1.25 * 15 / (1.25 * 15 + 0.25 * 30 + 10)
    # MIN_TYPE_PAGES article pages of one block each: content blocks score 0.8 or 0.4, boilerplate 0.6. Keeping
    # only the 0.8s is the most precise; keeping everything down to 0.4 loses no content.
    rng = np.random.default_rng(0)
    scores = rng.choice([0.8, 0.6, 0.4], size=3 * MIN_TYPE_PAGES)
    rows = _typed_rows([0] * len(scores), (scores != 0.6).tolist())
    found = favor_thresholds(rows, scores, row_types(rows.x))
    assert 0.6 < found["precision"]["thresholds"]["article"] <= 0.8
    assert found["precision"]["precision"] == 1.0
    assert found["recall"]["thresholds"]["article"] <= 0.4 and found["recall"]["recall"] == 1.0
    # Types with too few pages take the threshold of all the blocks.
    assert found["precision"]["thresholds"]["list"] == found["precision"]["thresholds"]["article"]
