"""The stacked block model's training code: export to ONNX through skl2onnx (with its workaround) and CV helpers."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import onnxruntime as ort

from extraction.blockclf.context import FEATURES
from models.training.train_stack import Rows, export, page_mean_f1, weighted_f1


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
