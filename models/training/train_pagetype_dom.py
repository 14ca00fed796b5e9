"""Train the DOM/URL page-type model (article / list / other) and export it to ``models/pagetype/dom.onnx``.

    python -m models.training.train_pagetype_dom [--seed 0] [--no-cache] [--ablation-features] [--out DIR]

1. Training pages, only from sets that may train shipped models and carry page types: wcxb-dev
   outside the held-out fold (``evaluation.folds``; listing/collection = "list", forum, product,
   service, documentation = "other"), chinese-wced-dev outside it (news articles: its reader types
   every page article) and the demo sites (``demo.content.build_sites``). Features:
   ``extraction.pagetype.features.dom_features`` on the page decoded by ``extraction.dom.encoding`` and
   parsed by ``extraction.dom.html``; cached as ``.npz`` under ``$PAGETYPE_CACHE`` (default
   ``~/.cache/news-crawler/pagetype``). The pages, features and copies: ``models.training.pagetype_dom_data``.
2. Every page also enters once without its URL (URL features zero, ``has_url`` 0), so the model
   has seen the DOM-only case (pages stored without their address); see ``AUGMENT_NO_URL``. And once
   with other sites' link blocks injected around its body (``models.training.pagetype_chrome``,
   ``AUGMENT_CHROME``): news portals wrap their articles in menus and link lists. And every article once
   with its body cut to a few paragraphs (``models.training.pagetype_short``, ``AUGMENT_SHORT``): news
   stories are shorter than the training sets' posts and guides. And every article once cut so and with its
   paragraphs split into one or two sentences (``models.training.pagetype_wire``, ``AUGMENT_WIRE``): wire
   stories write a paragraph per sentence or two.
3. Model selection by grouped CV (``GroupKFold(5)`` over site groups; a page and its URL-less copy
   share a group): standardised class-balanced logistic regression, random forest and histogram
   gradient boosting, small grids; the criterion is macro-F1 over the three classes on the pages
   with URL. Then an ablation of ``FEATURE_GROUPS`` with the chosen model.
4. The chosen model is refit on all rows, exported by skl2onnx (input ``features`` float32 [N, F];
   outputs ``label`` (string) and ``probabilities`` float32 [N, 3] in ``CLASSES`` order) and checked
   against scikit-learn on the training matrix.
5. ``meta.json`` section "dom" (``models.training.pagetype_meta``) and, for the fusion step,
   ``dom_predictions.jsonl`` in the cache folder: grouped-CV out-of-fold probabilities of every
   training page and the final model's probabilities of the held-out pages (wcxb-dev held-out
   fold, article-vs-nonarticle, gne-chinese). Held-out pages are never trained on and no model or
   parameter is selected on them; one feature decision was prompted by them (``CJK_CHAR_WEIGHT`` in
   ``extraction.pagetype.features``, after Chinese articles of gne-chinese came out as lists).
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import json
import logging
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import onnxruntime as ort
from sklearn.ensemble import HistGradientBoostingClassifier, RandomForestClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import f1_score
from sklearn.model_selection import GroupKFold
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler
from threadpoolctl import threadpool_limits

from evaluation.folds import HELD_OUT_FOLD, data_hash
from extraction.pagetype.features import DOM_FEATURE_VERSION, DOM_FEATURES, FEATURE_GROUPS, URL_FEATURES
from extraction.pagetype.models import decide_all
from models.training.pagetype_dom_data import (
    N_JOBS,
    Copies,
    FloatArray,
    Item,
    cache_dir,
    chrome_copies,
    held_out_items,
    items_hash,
    load_features,
    short_copies,
    training_items,
    wire_copies,
    without_url,
)
from models.training.pagetype_meta import PAGETYPE_DIR, update_meta

logger = logging.getLogger(__name__)

CLASSES = ("article", "list", "other")  # = sorted labels, the order of classes_ and of the probabilities
ONNX_FILE = "dom.onnx"
PREDICTIONS_FILE = "dom_predictions.jsonl"
FOLDS = 5
# OpenMP threads of the boosters. On two shared cores OpenMP's spin-waiting made one fit 25 times
# slower with two threads than with one (89 s vs 3.8 s): one thread each, the folds run in turn.
OPENMP_THREADS = 1
TARGET_OPSET = 17
PARITY_TOLERANCE = 1e-4
# Train on every page twice, with and without its URL (step 2 of the docstring). Grouped CV of the
# chosen model (meta.json "augmentation"): without the copies, pages without URL fall from macro-F1
# 0.789 to 0.710 (article vs list 0.942 -> 0.870: the model leans on URL features it then lacks);
# with them, pages with URL lose 0.006 (0.812 -> 0.806), well within the fold spread (0.023).
AUGMENT_NO_URL = True
# Margins tried for "other" (extraction.pagetype.models.decide), chosen by grouped-CV macro-F1.
MARGIN_GRID = tuple(round(0.05 * k, 2) for k in range(11))
# Train on a chrome-injected copy of every page too (models.training.pagetype_chrome): grouped CV on the
# training sites is unchanged within noise (meta.json "augmentation"); Chinese portal articles of
# chinese-wced-dev (a training set of another domain, out of fold) are typed article more often.
AUGMENT_CHROME = True
# Train on a short-article copy of every article too (models.training.pagetype_short): the training articles
# are long, a news crawl's are often a few paragraphs, and short articles were typed "other".
AUGMENT_SHORT = True
# Train on a wire-style copy of every article too (models.training.pagetype_wire): news agencies' paragraphs are
# a sentence or two, and articles of such short paragraphs were typed "other".
AUGMENT_WIRE = True

StrArray = npt.NDArray[np.str_]
Split = tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]


@dataclass(frozen=True)
class Candidate:
    """A model family and one grid point."""

    family: str
    params: dict[str, Any]
    build: Callable[[], Any]


# --- data ---------------------------------------------------------------------------------------


# --- models and cross-validation ----------------------------------------------------------------


def logistic_regression(c: float) -> Pipeline:
    """Return standardisation and a class-balanced multinomial logistic regression."""
    return Pipeline([("scale", StandardScaler()),
                     ("model", LogisticRegression(C=c, class_weight="balanced", max_iter=5000))])


def random_forest(max_depth: int | None, min_samples_leaf: int, seed: int) -> Pipeline:
    """Return a random forest of 300 trees, class-balanced per bootstrap sample."""
    return Pipeline([("model", RandomForestClassifier(
        n_estimators=300, max_depth=max_depth, min_samples_leaf=min_samples_leaf, class_weight="balanced_subsample",
        n_jobs=N_JOBS, random_state=seed))])


def hist_gradient_boosting(params: dict[str, Any], seed: int) -> Pipeline:
    """Return class-balanced histogram gradient boosting with ``params``, no early stopping (no inner split)."""
    return Pipeline([("model", HistGradientBoostingClassifier(**params, class_weight="balanced", early_stopping=False,
                                                              random_state=seed))])


def candidates(seed: int) -> list[Candidate]:
    """Return the grid: logistic regression, random forest, histogram gradient boosting."""
    grid = [Candidate("logistic_regression", {"C": c}, functools.partial(logistic_regression, c))
            for c in (0.1, 1.0, 10.0)]
    grid += [Candidate("random_forest", {"n_estimators": 300, "max_depth": depth, "min_samples_leaf": leaf},
                       functools.partial(random_forest, depth, leaf, seed))
             for depth in (None, 12) for leaf in (1, 3)]
    for rate in (0.05, 0.1):
        for leaves in (15, 31):
            for l2 in (0.0, 1.0):
                params = {"learning_rate": rate, "max_iter": 200, "max_leaf_nodes": leaves, "l2_regularization": l2}
                grid.append(Candidate("hist_gradient_boosting", params,
                                      functools.partial(hist_gradient_boosting, params, seed)))
    return grid


def grouped_splits(groups: StrArray) -> list[Split]:
    """Return the ``GroupKFold(FOLDS)`` splits over the pages' groups."""
    return [(np.asarray(a, dtype=np.int64), np.asarray(b, dtype=np.int64))
            for a, b in GroupKFold(FOLDS).split(np.zeros(len(groups)), groups=groups)]


def training_rows(x: FloatArray, y: StrArray, rows: npt.NDArray[np.int64], augment: bool,
                  copies: Sequence[Copies] = ()) -> tuple[FloatArray, StrArray]:
    """Return the training matrix of the pages ``rows``: each page, its copy without URL (``augment``), and its
    altered copies (chrome, short, wire) with and without URL."""
    parts, labels = [x[rows]], [y[rows]]
    for copy in copies:
        with_copy = rows[copy.has[rows]]
        parts.append(copy.x[with_copy])
        labels.append(y[with_copy])
    if augment:
        parts += [without_url(part) for part in parts]
        labels += labels
    return np.concatenate(parts), np.concatenate(labels)


def oof_probabilities(build: Callable[[], Any], x: FloatArray, y: StrArray, splits: Sequence[Split],
                      augment: bool, columns: Sequence[int] | None = None,
                      copies: Sequence[Copies] = ()) -> tuple[FloatArray, FloatArray]:
    """Return out-of-fold probabilities ``(with URL, without URL)`` of every page, [N, 3] each (altered copies
    train with their page's fold, never validate)."""
    cols = list(range(x.shape[1])) if columns is None else list(columns)
    x_none = without_url(x)
    with_url = np.zeros((len(y), len(CLASSES)), dtype=np.float32)
    no_url = np.zeros_like(with_url)
    for train, test in splits:
        x_train, y_train = training_rows(x, y, train, augment, copies)
        model = build().fit(x_train[:, cols], y_train)
        if list(model.classes_) != list(CLASSES):
            raise ValueError(f"fold without every class: {model.classes_}")
        with_url[test] = model.predict_proba(x[test][:, cols])
        no_url[test] = model.predict_proba(x_none[test][:, cols])
    return with_url, no_url


def scores(y: StrArray, probs: FloatArray, folds: Sequence[Split] | None = None,
           margin: float = 0.0) -> dict[str, float]:
    """Return macro-F1, 3-class accuracy (``decide_all`` with the "other" ``margin``) and article-vs-list
    accuracy (article/list pages, p_article vs p_list)."""
    predicted = np.asarray(CLASSES)[decide_all(probs, margin)]
    pair = (y == "article") | (y == "list")
    pair_predicted = np.where(probs[:, 0] >= probs[:, 1], "article", "list")
    result = {
        "macro_f1": round(float(f1_score(y, predicted, average="macro")), 4),
        "accuracy": round(float((predicted == y).mean()), 4),
        "article_vs_list_accuracy": round(float((pair_predicted[pair] == y[pair]).mean()), 4),
    }
    if folds is not None:
        per_fold = [f1_score(y[test], predicted[test], average="macro") for _, test in folds]
        result["macro_f1_fold_std"] = round(float(np.std(per_fold)), 4)
    return result


def choose_margin(y: StrArray, probs: FloatArray,
                  folds: Sequence[Split]) -> tuple[float, list[dict[str, float]]]:
    """Return the "other" margin (``extraction.pagetype.models.decide``) by the one-standard-error rule, and the
    grid's rows: the largest margin whose macro-F1 of the out-of-fold probabilities ``probs`` is within one
    standard error (the best margin's per-fold macro-F1 std / sqrt(folds)) of the best. The grid is flat within
    the noise; the rule takes its most cautious point about "other" (which counts as wrong between article and
    list) instead of the noise's maximum."""
    rows = []
    for m in MARGIN_GRID:
        predicted = np.asarray(CLASSES)[decide_all(probs, float(m))]
        per_fold = [f1_score(y[test], predicted[test], average="macro") for _, test in folds]
        rows.append({"margin": float(m), "macro_f1": round(float(f1_score(y, predicted, average="macro")), 4),
                     "fold_se": round(float(np.std(per_fold) / np.sqrt(len(folds))), 4)})
    best = max(rows, key=lambda row: (row["macro_f1"], -row["margin"]))
    within = [row for row in rows if row["macro_f1"] >= best["macro_f1"] - best["fold_se"]]
    return max(row["margin"] for row in within), rows


def confusion(y: Iterable[str], predicted: Iterable[str], labels: Sequence[str],
              columns: Sequence[str]) -> list[list[int]]:
    """Return the confusion matrix: rows = true ``labels``, columns = predicted ``columns``."""
    matrix = [[0] * len(columns) for _ in labels]
    for truth, guess in zip(y, predicted, strict=True):
        if truth in labels and guess in columns:
            matrix[list(labels).index(truth)][list(columns).index(guess)] += 1
    return matrix


def select(x: FloatArray, y: StrArray, splits: Sequence[Split], seed: int,
           copies: Sequence[Copies]) -> tuple[Candidate, list[dict[str, Any]]]:
    """Return the candidate with the best grouped-CV macro-F1 (pages with URL) and one row per grid point."""
    rows: list[dict[str, Any]] = []
    best: tuple[float, Candidate] | None = None
    for candidate in candidates(seed):
        started = time.monotonic()
        with_url, no_url = oof_probabilities(candidate.build, x, y, splits, AUGMENT_NO_URL, copies=copies)
        row: dict[str, Any] = {"family": candidate.family, "params": candidate.params, **scores(y, with_url, splits),
               "no_url": scores(y, no_url), "seconds": round(time.monotonic() - started, 1)}
        rows.append(row)
        logger.info("cv %s %s: macro-F1 %.4f, article-vs-list %.4f, no URL %.4f (%.0f s)", candidate.family,
                    candidate.params, row["macro_f1"], row["article_vs_list_accuracy"], row["no_url"]["macro_f1"],
                    row["seconds"])
        if best is None or float(row["macro_f1"]) > best[0]:
            best = (float(row["macro_f1"]), candidate)
    assert best is not None
    return best[1], rows


def ablation(candidate: Candidate, x: FloatArray, y: StrArray, splits: Sequence[Split],
             single_features: bool, copies: Sequence[Copies]) -> dict[str, Any]:
    """Return grouped-CV scores with each feature group (and, if asked, each feature) left out."""
    result: dict[str, Any] = {}
    left_out: dict[str, tuple[str, ...]] = dict(FEATURE_GROUPS)
    if single_features:
        left_out |= {name: (name,) for name in DOM_FEATURES}
    for label, names in left_out.items():
        if names == URL_FEATURES:
            continue  # without URL features the with-URL rows equal the no-URL rows: see "no_url"
        columns = [i for i, name in enumerate(DOM_FEATURES) if name not in names]
        with_url, no_url = oof_probabilities(candidate.build, x, y, splits, AUGMENT_NO_URL, columns, copies)
        result[label] = {**scores(y, with_url), "no_url_macro_f1": scores(y, no_url)["macro_f1"]}
        logger.info("ablation without %s: macro-F1 %.4f, article-vs-list %.4f", label, result[label]["macro_f1"],
                    result[label]["article_vs_list_accuracy"])
    return result


# --- export -------------------------------------------------------------------------------------


@contextlib.contextmanager
def _missing_flags_as_int() -> Iterator[None]:
    """Work around skl2onnx 1.20 on HistGradientBoosting: it gives leaves a Python ``False`` and branches a
    NumPy integer as ``nodes_missing_value_tracks_true``, and onnx rejects the mixed list ("Expected an
    int, got a boolean"); every flag is cast to int while converting."""
    from skl2onnx.common import tree_ensemble

    original = tree_ensemble.add_node

    def add_node(*args: Any, **kwargs: Any) -> Any:
        if "nodes_missing_value_tracks_true" in kwargs:
            kwargs["nodes_missing_value_tracks_true"] = int(kwargs["nodes_missing_value_tracks_true"])
        return original(*args, **kwargs)

    tree_ensemble.add_node = add_node
    try:
        yield
    finally:
        tree_ensemble.add_node = original


def export_onnx(model: Pipeline, n_features: int) -> bytes:
    """Return the skl2onnx graph of ``model``: input ``features`` float32 [N, n_features], outputs ``label``
    (string [N]) and ``probabilities`` (float32 [N, 3], ``CLASSES`` order; no ZipMap)."""
    import onnx  # training-only dependencies
    from skl2onnx import to_onnx
    from skl2onnx.common.data_types import FloatTensorType

    with _missing_flags_as_int():
        graph = to_onnx(model, initial_types=[("features", FloatTensorType([None, n_features]))],
                        options={id(model.steps[-1][1]): {"zipmap": False}},
                        target_opset={"": TARGET_OPSET, "ai.onnx.ml": 3})
    renames = dict(zip([output.name for output in graph.graph.output], ("label", "probabilities"), strict=True))
    for node in graph.graph.node:
        node.output[:] = [renames.get(name, name) for name in node.output]
    for output in graph.graph.output:
        output.name = renames[output.name]
    graph.producer_name = "models.training.train_pagetype_dom"
    onnx.checker.check_model(graph)
    data: bytes = graph.SerializeToString()
    return data


def onnx_predict(onnx_model: bytes, x: FloatArray) -> tuple[StrArray, FloatArray]:
    """Return (labels, probabilities) of ``x`` as onnxruntime computes them."""
    session = ort.InferenceSession(onnx_model, providers=["CPUExecutionProvider"])
    label, probabilities = session.run(["label", "probabilities"], {"features": x.astype(np.float32)})
    return np.asarray(label, dtype=np.str_), np.asarray(probabilities, dtype=np.float32)


def prediction_lines(items: Iterable[Item], probs: FloatArray, split: str) -> list[str]:
    """Return one JSON line per page for ``dom_predictions.jsonl``."""
    return [json.dumps({"dataset": item.dataset, "page_id": item.page_id, "site": item.site, "label": item.label,
                        "split": split, "probs": [round(float(p), 6) for p in row]}, ensure_ascii=False)
            for item, row in zip(items, probs, strict=True)]


# --- main ---------------------------------------------------------------------------------------


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    """Return the command-line options."""
    parser = argparse.ArgumentParser(prog="python -m models.training.train_pagetype_dom",
                                     description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--seed", type=int, default=0, help="seed of the forests and boosters (default 0)")
    parser.add_argument("--no-cache", action="store_true", help="compute the features again, ignoring the cache")
    parser.add_argument("--ablation-features", action="store_true", help="also leave out each single feature")
    parser.add_argument("--out", type=Path, default=PAGETYPE_DIR, help=f"model folder (default {PAGETYPE_DIR})")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    """Train, select, export and describe the model; return the exit status."""
    args = parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s", stream=sys.stderr)
    with threadpool_limits(limits=OPENMP_THREADS, user_api="openmp"):
        return train(args)


def train(args: argparse.Namespace) -> int:
    """Run every step of the module docstring with the parsed options; return the exit status."""
    started = time.monotonic()
    train_items = training_items()
    x = load_features(train_items, "train", not args.no_cache)
    y = np.asarray([item.label for item in train_items], dtype=np.str_)
    groups = np.asarray([item.group for item in train_items], dtype=np.str_)
    splits = grouped_splits(groups)
    logger.info("training: %d pages in %d groups: %s", len(y), len(set(groups)),
                dict(zip(*np.unique(y, return_counts=True), strict=True)))

    chrome = chrome_copies(train_items, args.seed, not args.no_cache) if AUGMENT_CHROME else None
    short = short_copies(train_items, args.seed, not args.no_cache) if AUGMENT_SHORT else None
    wire = wire_copies(train_items, args.seed, not args.no_cache) if AUGMENT_WIRE else None
    copies = [copy for copy in (chrome, short, wire) if copy is not None]
    chosen, grid = select(x, y, splits, args.seed, copies)
    with_url, no_url = oof_probabilities(chosen.build, x, y, splits, AUGMENT_NO_URL, copies=copies)
    plain_url, plain_no_url = oof_probabilities(chosen.build, x, y, splits, not AUGMENT_NO_URL, copies=copies)
    chinese = np.asarray([item.dataset == "chinese-wced-dev" for item in train_items])
    augmentation: dict[str, Any] = {
        "augment_no_url": AUGMENT_NO_URL,
        "augment_chrome": AUGMENT_CHROME,
        "augment_short": AUGMENT_SHORT,
        "augment_wire": AUGMENT_WIRE,
        "as_shipped": {"url": scores(y, with_url), "no_url": scores(y, no_url),
                       "chinese_wced_articles": round(float((decide_all(with_url[chinese]) == 0).mean()), 4)},
        "without_no_url_copies": {"url": scores(y, plain_url), "no_url": scores(y, plain_no_url)},
    }
    for name, left_out in (("chrome", chrome), ("short", short), ("wire", wire)):
        if left_out is None:
            continue
        rest = [copy for copy in copies if copy is not left_out]
        part_url, part_no_url = oof_probabilities(chosen.build, x, y, splits, AUGMENT_NO_URL, copies=rest)
        augmentation[f"without_{name}_copies"] = {
            "url": scores(y, part_url), "no_url": scores(y, part_no_url),
            "chinese_wced_articles": round(float((decide_all(part_url[chinese]) == 0).mean()), 4)}
    study = ablation(chosen, x, y, splits, args.ablation_features, copies)

    x_final, y_final = training_rows(x, y, np.arange(len(y)), AUGMENT_NO_URL, copies)
    model = chosen.build().fit(x_final, y_final)
    onnx_model = export_onnx(model, len(DOM_FEATURES))
    onnx_labels, onnx_probs = onnx_predict(onnx_model, x_final)
    parity = float(np.abs(onnx_probs - model.predict_proba(x_final)).max())
    label_agreement = float((onnx_labels == model.predict(x_final)).mean())
    if parity >= PARITY_TOLERANCE:
        raise SystemExit(f"ONNX parity {parity:.2e} >= {PARITY_TOLERANCE}: not shipping")
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / ONNX_FILE).write_bytes(onnx_model)

    evaluation_items = held_out_items()
    x_held = load_features(evaluation_items, "held-out", not args.no_cache)
    _, held_probs = onnx_predict(onnx_model, x_held)
    lines = prediction_lines(train_items, with_url, "oof") + prediction_lines(evaluation_items, held_probs, "held-out")
    cache_dir().mkdir(parents=True, exist_ok=True)
    predictions = cache_dir() / PREDICTIONS_FILE
    predictions.write_text("\n".join(lines) + "\n", encoding="utf-8")

    margin, margin_grid = choose_margin(y, with_url, splits)
    cv = scores(y, with_url, splits, margin)
    oof_predicted = np.asarray(CLASSES)[decide_all(with_url, margin)]
    seconds = round(time.monotonic() - started)
    update_meta("dom", {
        "file": ONNX_FILE,
        "input": "features",
        "outputs": {"label": "string [N]", "probabilities": "float32 [N, 3], classes order"},
        "features": list(DOM_FEATURES),
        "feature_version": DOM_FEATURE_VERSION,
        "classes": list(CLASSES),
        "model": {"family": chosen.family, "params": chosen.params, "class_weight": "balanced",
                  "augment_no_url": AUGMENT_NO_URL, "augment_chrome": AUGMENT_CHROME, "augment_short": AUGMENT_SHORT,
                  "augment_wire": AUGMENT_WIRE,
                  "chrome_copies": 0 if chrome is None else int(chrome.has.sum()),
                  "short_copies": 0 if short is None else int(short.has.sum()),
                  "wire_copies": 0 if wire is None else int(wire.has.sum())},
        "other_margin": margin,
        "other_margin_rule": "largest margin within one standard error of the best grouped-CV macro-F1",
        "cv": {"folds": FOLDS, "grouping": "site (evaluation.folds.site_of; demo: its site)", **cv,
               "no_url": scores(y, no_url, margin=margin), "other_margin_grid": margin_grid,
               "confusion": {"labels": list(CLASSES),
                             "matrix": confusion(y.tolist(), oof_predicted.tolist(), CLASSES, CLASSES)},
               "grid": grid},
        "augmentation": augmentation,
        "ablation": study,
        "parity": {"max_abs_diff_probabilities": parity, "label_agreement": label_agreement, "rows": len(y_final)},
        "training_data": {
            "datasets": ["wcxb-dev", "chinese-wced-dev", "demo"], "held_out_fold": HELD_OUT_FOLD,
            "pages": len(y), "groups": len(set(groups)),
            "pages_by_label": {str(k): int(v) for k, v in zip(*np.unique(y, return_counts=True), strict=True)},
            "wcxb_pages": sum(item.dataset == "wcxb-dev" for item in train_items),
            "chinese_wced_pages": sum(item.dataset == "chinese-wced-dev" for item in train_items),
            "demo_pages": sum(item.dataset == "demo" for item in train_items),
            "data_hash": data_hash(item.page for item in train_items if item.page is not None),
            "items_hash": items_hash(train_items),
        },
        "size_bytes": len(onnx_model),
        "seed": args.seed,
        "seconds": seconds,
    }, path=args.out / "meta.json")
    logger.info("chosen %s %s, other margin %.2f: grouped-CV macro-F1 %.4f (+- %.4f), accuracy %.4f, "
                "article-vs-list %.4f; parity %.2e; wrote %s (%d bytes), meta and %s in %d s", chosen.family,
                chosen.params, margin, cv["macro_f1"], cv["macro_f1_fold_std"], cv["accuracy"],
                cv["article_vs_list_accuracy"], parity, args.out / ONNX_FILE, len(onnx_model), predictions, seconds)
    return 0


if __name__ == "__main__":
    sys.exit(main())
