"""Train the default block model: gradient-boosted trees over blocks in context (``models/stack/``).

``python -m models.training.train_stack [--out models/stack] [--quick]``

Rows are the blocks of the training pages (``evaluation.folds.training_pages``: the train sets
without their held-out fold; every page type of WCXB), with the columns of
``extraction.blockclf.context.FEATURES`` computed by the crawl's own code, and the label of
``models.training.block_data``: content when one LCS alignment of the page's blocks to the gold
matches at least half of the block's tokens. The model is scikit-learn's
``HistGradientBoostingClassifier`` (no support vectors to score at crawl time), exported to ONNX
with skl2onnx and run with onnxruntime.

Grouped 5-fold CV by site (``evaluation.folds.site_of``) picks the number of trees (early stopping
inside each fold's training part) and the threshold with the best characters-weighted F1 of the
content class over all held-out folds' blocks (chosen over the mean of per-page F1, which picked 0.225 and lost
0.003-0.012 on four of the six held-out sets of ``scrapy evaluate``), and by the same criterion one
threshold per page type, the type the rows' page-type columns decide (``row_types``): list pages keep
more of their text than articles (``meta.json`` "thresholds", read by ``_StackModel.threshold_for``; the
global one stays for untyped pages); ``meta.json`` records all of them, the CV scores, the feature
names and version, and the data hash. Feature rows are cached under ``~/.cache/newscorpus`` (npz).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from evaluation.datasets import Page
from evaluation.folds import data_hash, site_of, training_pages
from evaluation.labels import label_texts
from extraction.blockclf.context import CONTEXT_VERSION, FEATURES, context_features
from extraction.blockclf.features import block_features
from extraction.dom.blocks import page_blocks
from extraction.dom.encoding import decode_html
from extraction.dom.html import parse_html
from extraction.pagetype.models import CLASSES, decide_all
from extraction.pagetype.models import shared_models as page_type_models
from extraction.paths import MODELS_DIR
from models.training.block_data import cache_dir
from models.training.block_svm import PARITY_ROWS, PARITY_TOLERANCE, TARGET_OPSET, onnx_probabilities

logger = logging.getLogger("train_stack")

OUT_DIR = MODELS_DIR / "stack"
FOLDS = 5
SEED = 0
PARAMS: dict[str, Any] = {"learning_rate": 0.08, "max_leaf_nodes": 48, "min_samples_leaf": 40, "l2_regularization": 1.0,
                          "max_iter": 600, "early_stopping": True, "validation_fraction": 0.1, "n_iter_no_change": 30}
THRESHOLDS = np.round(np.arange(0.2, 0.71, 0.025), 3)
MIN_TYPE_PAGES = 50  # a page type with fewer training pages keeps the global threshold
# The favors other than balanced (BLOCKS_FAVOR, extraction.blockclf.classifier.FAVORS): the F-beta their
# thresholds maximise, on a wider grid (precision's best may lie above THRESHOLDS).
FAVOR_BETAS: dict[str, float] = {"precision": 0.5, "recall": 2.0}
FAVOR_THRESHOLDS = np.round(np.arange(0.05, 0.951, 0.025), 3)

FloatArray = npt.NDArray[np.float32]


@dataclass
class Rows:
    x: FloatArray
    y: npt.NDArray[np.bool_]
    chars: npt.NDArray[np.float32]
    page: npt.NDArray[np.int64]
    groups: npt.NDArray[np.str_]  # per page
    keys: npt.NDArray[np.str_]  # per page


def page_rows(page: Page) -> tuple[FloatArray, npt.NDArray[np.bool_], npt.NDArray[np.float32]]:
    """Return the context features, labels and characters of one page's blocks."""
    root = parse_html(decode_html(page.html_bytes()).text)
    blocks = page_blocks(root)
    if not blocks:
        return np.zeros((0, len(FEATURES)), np.float32), np.zeros(0, bool), np.zeros(0, np.float32)
    dom = page_type_models().dom_probabilities(root, page.url, blocks)
    x = context_features(blocks, block_features(blocks, root), [float(dom[CLASSES.index(c)])
                                                             for c in ("article", "list", "other")])
    y = np.asarray(label_texts([block.text for block in blocks], page.gold_text), dtype=bool)
    return x, y, np.asarray([block.chars for block in blocks], dtype=np.float32)


def load_rows(pages: list[Page]) -> Rows:
    """Return the rows of ``pages``, from the cache when it has them (keyed on the pages, the features and the
    page-type model whose probabilities they hold: a retrained page-type model makes new rows)."""
    key = data_hash(pages) + CONTEXT_VERSION + ",".join(FEATURES) + page_type_models().version
    digest = hashlib.sha256(key.encode()).hexdigest()[:20]
    path = cache_dir() / f"stack-{digest}.npz"
    if path.exists():
        with np.load(path) as data:
            return Rows(data["x"], data["y"], data["chars"], data["page"], data["groups"], data["keys"])
    started = time.monotonic()
    xs, ys, cs, ps = [], [], [], []
    for index, page in enumerate(pages):
        x, y, chars = page_rows(page)
        xs.append(x)
        ys.append(y)
        cs.append(chars)
        ps.append(np.full(len(y), index, dtype=np.int64))
        if (index + 1) % 200 == 0:
            logger.info("features: %d/%d pages, %.0f s", index + 1, len(pages), time.monotonic() - started)
    rows = Rows(np.concatenate(xs), np.concatenate(ys), np.concatenate(cs), np.concatenate(ps),
                np.asarray([site_of(page) for page in pages]), np.asarray([f"{p.dataset}/{p.page_id}" for p in pages]))
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(path, x=rows.x, y=rows.y, chars=rows.chars, page=rows.page, groups=rows.groups, keys=rows.keys)
    return rows


def weighted_f1(y: npt.NDArray[np.bool_], predicted: npt.NDArray[np.bool_], weight: npt.NDArray[np.float32]) -> float:
    """Return the content-class F1 with every block weighted by its characters."""
    return weighted_fbeta(y, predicted, weight, 1.0)


def weighted_fbeta(y: npt.NDArray[np.bool_], predicted: npt.NDArray[np.bool_], weight: npt.NDArray[np.float32],
                   beta: float) -> float:
    """Return the content-class F-beta with every block weighted by its characters."""
    tp = float(weight[y & predicted].sum())
    fp = float(weight[~y & predicted].sum())
    fn = float(weight[y & ~predicted].sum())
    return (1 + beta**2) * tp / ((1 + beta**2) * tp + fp + beta**2 * fn) if tp else 0.0


def favor_thresholds(rows: Rows, probabilities: npt.NDArray[np.float64],
                     types: npt.NDArray[np.int64]) -> dict[str, Any]:
    """Return per favor of ``FAVOR_BETAS`` its threshold for untyped pages (the best characters-weighted F-beta of
    the out-of-fold ``probabilities`` over all blocks) and per page type (the best on that type's blocks; the
    overall one for a type with under ``MIN_TYPE_PAGES`` pages), with the precision, recall and mean per-page
    F1 of the typed thresholds."""
    found: dict[str, Any] = {}
    for favor, beta in FAVOR_BETAS.items():
        scores = {float(t): weighted_fbeta(rows.y, probabilities >= t, rows.chars, beta) for t in FAVOR_THRESHOLDS}
        overall = max(scores, key=scores.__getitem__)
        by_type = type_thresholds(rows, probabilities, overall, types, beta, FAVOR_THRESHOLDS)
        chosen = {name: by_type[name]["threshold"] for name in CLASSES}
        predicted = probabilities >= np.asarray([chosen[name] for name in CLASSES])[types]
        weight, y = rows.chars, rows.y
        kept = float(weight[predicted].sum())
        found[favor] = {"beta": beta, "threshold": overall, "thresholds": chosen,
                        "precision": round(float(weight[y & predicted].sum()) / kept, 4) if kept else 0.0,
                        "recall": round(float(weight[y & predicted].sum()) / float(weight[y].sum()), 4),
                        "page_mean_f1": round(page_mean_f1(rows, predicted), 4)}
    return found


def cross_validate(rows: Rows, params: dict[str, Any]) -> dict[str, Any]:
    """Return grouped-CV scores per threshold and the iterations early stopping chose."""
    from sklearn.ensemble import HistGradientBoostingClassifier
    from sklearn.model_selection import GroupKFold

    groups = rows.groups[rows.page]
    probabilities = np.zeros(len(rows.y), dtype=np.float64)
    iterations = []
    for fold, (train, test) in enumerate(GroupKFold(FOLDS).split(rows.x, rows.y, groups)):
        model = HistGradientBoostingClassifier(random_state=SEED, **params)
        model.fit(rows.x[train], rows.y[train].astype(np.int64))
        probabilities[test] = model.predict_proba(rows.x[test])[:, 1]
        iterations.append(int(model.n_iter_))
        logger.info("fold %d: %d trees, weighted F1 at 0.5: %.4f", fold, model.n_iter_,
                    weighted_f1(rows.y[test], probabilities[test] >= 0.5, rows.chars[test]))
    scores = {float(t): weighted_f1(rows.y, probabilities >= t, rows.chars) for t in THRESHOLDS}
    best = max(scores, key=scores.__getitem__)
    types = row_types(rows.x)
    by_type = type_thresholds(rows, probabilities, best, types)
    chosen = np.asarray([by_type[name]["threshold"] for name in CLASSES])[types]
    return {"thresholds": scores, "threshold": best, "weighted_f1": scores[best], "iterations": iterations,
            "favor": favor_thresholds(rows, probabilities, types),
            "page_mean_f1": page_mean_f1(rows, probabilities >= best),
            "block_f1": weighted_f1(rows.y, probabilities >= best, np.ones_like(rows.chars)),
            "by_type": by_type, "by_type_weighted_f1": weighted_f1(rows.y, probabilities >= chosen, rows.chars),
            "by_type_page_mean_f1": page_mean_f1(rows, probabilities >= chosen)}


def row_types(x: FloatArray) -> npt.NDArray[np.int64]:
    """Return each row's page type as an index of ``CLASSES``: what the page-type probabilities among its
    columns decide with the shipped page-type model's margin (``_StackModel.threshold_for`` decides the same)."""
    columns = [FEATURES.index(f"p_{name}") for name in CLASSES]
    return decide_all(x[:, columns].astype(np.float64), page_type_models().other_margin).astype(np.int64)


def type_thresholds(rows: Rows, probabilities: npt.NDArray[np.float64], fallback: float,
                    types: npt.NDArray[np.int64] | None = None, beta: float = 1.0,
                    grid: npt.NDArray[np.float64] = THRESHOLDS) -> dict[str, Any]:
    """Return per page type the CV scores per threshold of ``grid`` on its pages' blocks and the best threshold
    by the same criterion as the global one, characters-weighted F1 (F-beta for a favor's ``beta``;
    ``fallback`` for a type with under ``MIN_TYPE_PAGES`` pages); ``types``: ``row_types(rows.x)`` when the
    caller has them."""
    types = row_types(rows.x) if types is None else types
    found: dict[str, Any] = {}
    for index, name in enumerate(CLASSES):
        mask = types == index
        pages = len(np.unique(rows.page[mask]))
        y, weight = rows.y[mask], rows.chars[mask]
        scores = {float(t): weighted_fbeta(y, probabilities[mask] >= t, weight, beta) for t in grid}
        best = max(scores, key=scores.__getitem__) if pages >= MIN_TYPE_PAGES else fallback
        found[name] = {"pages": pages, "thresholds": scores, "threshold": best, "weighted_f1": scores.get(best)}
    return found


def page_mean_f1(rows: Rows, predicted: npt.NDArray[np.bool_]) -> float:
    """Return the mean over pages of the characters-weighted content F1 (the evaluation's per-page mean)."""
    pages = int(rows.page.max()) + 1 if len(rows.page) else 0
    tp = np.bincount(rows.page, weights=rows.chars * (rows.y & predicted), minlength=pages)
    fp = np.bincount(rows.page, weights=rows.chars * (~rows.y & predicted), minlength=pages)
    fn = np.bincount(rows.page, weights=rows.chars * (rows.y & ~predicted), minlength=pages)
    scored = (tp + fp + fn) > 0
    return float(np.mean(2 * tp[scored] / (2 * tp[scored] + fp[scored] + fn[scored])))


def export(model: Any, out: Path, meta: dict[str, Any], sample: FloatArray) -> None:
    """Write ``model.onnx`` and ``meta.json`` to ``out``, once onnxruntime agrees with scikit-learn on ``sample``
    (a gradient-boosted classifier over ``sample.shape[1]`` float32 columns; ``train_title`` uses it too)."""
    from skl2onnx import to_onnx
    from skl2onnx.common import tree_ensemble

    # skl2onnx 1.20.0 passes a Python bool as a leaf's nodes_missing_value_tracks_true among the
    # branches' uint8 values, and onnx refuses the mixed list; the value is cast to int on its way in.
    add_node = tree_ensemble.add_node

    def add_node_int(*args: Any, nodes_missing_value_tracks_true: Any = 0, **kwargs: Any) -> Any:
        return add_node(*args, nodes_missing_value_tracks_true=int(nodes_missing_value_tracks_true), **kwargs)

    tree_ensemble.add_node = add_node_int
    try:
        onx = to_onnx(model, np.zeros((1, sample.shape[1]), dtype=np.float32),
                      options={id(model): {"zipmap": False}}, target_opset={"": TARGET_OPSET, "ai.onnx.ml": 3})
    finally:
        tree_ensemble.add_node = add_node
    difference = float(np.abs(model.predict_proba(sample)[:, 1] - onnx_probabilities(onx.SerializeToString(),
                                                                                      sample)).max())
    if difference > PARITY_TOLERANCE:
        raise RuntimeError(f"onnxruntime and scikit-learn differ by {difference:.2g} on the training rows")
    meta["onnx_parity"] = difference
    out.mkdir(parents=True, exist_ok=True)
    (out / "model.onnx").write_bytes(onx.SerializeToString())
    (out / "meta.json").write_text(json.dumps(meta, indent=1) + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    """Train, cross-validate and export; return the exit status."""
    from sklearn.ensemble import HistGradientBoostingClassifier

    parser = argparse.ArgumentParser(prog="python -m models.training.train_stack", description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=str(OUT_DIR))
    parser.add_argument("--quick", action="store_true", help="200 pages, for a smoke test")
    parser.add_argument("--favor-only", action="store_true",
                        help="cross-validate and write only the favors' thresholds into --out's meta.json (its model "
                             "is not retrained: for a model trained before favors existed)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s", stream=sys.stderr)
    pages = list(training_pages())
    if args.quick:
        pages = pages[:200]
    logger.info("%d training pages", len(pages))
    rows = load_rows(pages)
    logger.info("%d blocks (%.1f%% content), %d features", len(rows.y), 100 * rows.y.mean(), rows.x.shape[1])
    cv = cross_validate(rows, PARAMS)
    logger.info("CV: threshold %.3f, page mean F1 %.4f, weighted F1 %.4f, block F1 %.4f, trees %s", cv["threshold"],
                cv["page_mean_f1"], cv["weighted_f1"], cv["block_f1"], cv["iterations"])
    logger.info("CV by page type: thresholds %s, page mean F1 %.4f, weighted F1 %.4f",
                {name: cv["by_type"][name]["threshold"] for name in CLASSES}, cv["by_type_page_mean_f1"],
                cv["by_type_weighted_f1"])
    if args.favor_only:
        return write_favors(Path(args.out), cv["favor"], data_hash(pages))
    final = {**PARAMS, "early_stopping": False, "max_iter": int(np.median(cv["iterations"]))}
    model = HistGradientBoostingClassifier(random_state=SEED, **final)
    model.fit(rows.x, rows.y.astype(np.int64))  # int labels: skl2onnx refuses boolean class labels
    meta = {"version": 1, "model": "HistGradientBoostingClassifier", "params": final, "features": list(FEATURES),
            "context_version": CONTEXT_VERSION, "threshold": cv["threshold"],
            "thresholds": {name: cv["by_type"][name]["threshold"] for name in CLASSES}, "favor": cv["favor"],
            "type_margin": page_type_models().other_margin, "cv": cv,
            "pages": len(pages), "blocks": len(rows.y), "data_hash": data_hash(pages),
            "train_command": "make train-stack", "file": "model.onnx"}
    export(model, Path(args.out), meta, rows.x[np.random.default_rng(SEED).choice(len(rows.x), PARITY_ROWS)])
    logger.info("wrote %s", args.out)
    return 0


def write_favors(out: Path, favors: dict[str, Any], pages_hash: str) -> int:
    """Write the favors' thresholds into the meta.json of the model in ``out``, when it was trained on the same
    pages (``data_hash``); return the exit status."""
    path = out / "meta.json"
    meta = json.loads(path.read_text(encoding="utf-8"))
    if meta.get("data_hash") != pages_hash:
        logger.error("%s was trained on other pages (data_hash): retrain it with `make train-stack`", path)
        return 1
    meta["favor"] = favors
    path.write_text(json.dumps(meta, indent=1) + "\n", encoding="utf-8")
    logger.info("wrote the favors' thresholds into %s: %s", path,
                {name: entry["thresholds"] for name, entry in favors.items()})
    return 0


if __name__ == "__main__":
    sys.exit(main())
