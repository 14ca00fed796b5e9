"""Train the article gate (``extraction.gate``, ``models/gate/``).

    python -m models.training.train_gate [--out models/gate] [--refresh] [--seed 0]   (make train-gate)

1. Rows: the records of a replayed crawl of the training sites (``models.training.gate_data``: every set that
   may train and has page types, outside the held-out fold; the gate off), one per page, its features
   ``extraction.gate.gate_features(record)`` and its label: article (1) or not (list, other: 0). A page the
   crawl wrote no record for, or an error record, is left out (counted in ``meta.json``).
2. Weights: each set's articles and each set's non-articles weigh as much in total as that set's pages
   (``balanced_weights``): wcxb-dev's thousand pages do not drown the news sets, and no set's class mix
   decides the model's prior.
3. Model selection by site-grouped CV (``GroupKFold(FOLDS)`` over ``evaluation.folds.site_of``, so that a
   site's pages, and a publisher's in fundus-articles and frontpage-archive-de, stay in one fold):
   histogram gradient boosting over a small grid (``GRID``). Each candidate's out-of-fold probabilities
   give the threshold (``choose_threshold``: the highest that keeps ``TARGET_RECALL`` of the articles of
   every set with ``MIN_SET_ARTICLES`` articles, and of the smaller sets together) and, at it, the share of each
   set's list and other pages let in; the criterion is the mean over the sets with lists of the share of lists
   let in (lower is better), then the same for the other pages. "other" pages weigh ``other_weight``.
4. An ablation of ``extraction.gate.FEATURE_GROUPS`` with the chosen parameters (the same folds).
5. The chosen model is refit on all rows and exported by skl2onnx (``train_stack.export``: input float32
   [N, F], outputs label and probabilities [N, 2]; checked against scikit-learn), with ``meta.json``:
   features and their version, threshold, parameters, the rows per set and label, the training data's hash,
   the CV figures per set at the threshold, the ablation.

Held-out pages (the held-out fold of these sets and every eval-only set) are never read here: the bench
(``python -m bench.corpus_bench``) measures the shipped gate on them.
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import itertools
import json
import logging
import sys
from collections import Counter, defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
from sklearn.model_selection import GroupKFold
from threadpoolctl import threadpool_limits

from extraction.gate import FEATURE_GROUPS, GATE_DIR, GATE_FEATURE_VERSION, GATE_FEATURES, gate_features
from models.training.gate_data import Row, training_rows
from models.training.train_stack import export

logger = logging.getLogger("train_gate")

FOLDS = 5
SEED = 0
# The share of every training set's articles the threshold keeps in CV (a set's pages and their older copies
# together; the sets of fewer than MIN_SET_ARTICLES articles pooled): above the acceptance floor of 97%, so that
# sites unlike the training ones have a margin.
TARGET_RECALL = 0.98
MIN_SET_ARTICLES = 100
SMALL_SETS = "smaller sets"
# The model's parameters, and the weight of "other" pages (forums, products, documentation, legal pages) beside
# the lists: the corpus must keep nearly every article and let in few lists, and has no floor for the others, so
# the lists may weigh more. Grouped CV on wcxb-dev and chinese-wced-dev's pages, before the other sets were
# crawled (gate features only, at 97% of the articles kept): lists let in 4.1% with weight 1, 3.5% with 0.3,
# others 27% either way.
GRID: dict[str, Sequence[Any]] = {"learning_rate": (0.05, 0.1), "max_leaf_nodes": (7, 15),
                                  "min_samples_leaf": (10, 30), "l2_regularization": (1.0,), "max_iter": (300,),
                                  "other_weight": (1.0, 0.3)}
N_JOBS = 1
PROBABILITY_FEATURES = ("p_article", "p_list", "p_other")  # extraction.gate's, in CLASSES order

FloatArray = npt.NDArray[np.float64]


def matrix(rows: Sequence[Row]) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.int64], list[Row]]:
    """Return the features and labels (1: article) of the rows with a record that is no error, and those rows."""
    used = [row for row in rows if row.record is not None and not row.record.get("error")]
    x = np.stack([gate_features(row.record) for row in used]) if used else np.zeros((0, len(GATE_FEATURES)))
    columns = [GATE_FEATURES.index(name) for name in PROBABILITY_FEATURES]
    for i, row in enumerate(used):
        if row.page_probabilities is not None:  # out of fold (models.training.gate_dom_oof)
            x[i, columns] = row.page_probabilities
    y = np.asarray([int(row.label == "article") for row in used], dtype=np.int64)
    return x.astype(np.float32), y, used


def balanced_weights(rows: Sequence[Row], y: npt.NDArray[np.int64]) -> FloatArray:
    """Return per-row weights: within each set, articles and non-articles get half the set's pages each (a set
    of one class keeps weight 1 a page)."""
    counts = Counter((row.dataset, int(label)) for row, label in zip(rows, y, strict=True))
    sizes = Counter(row.dataset for row in rows)
    weights = np.empty(len(rows))
    for i, (row, label) in enumerate(zip(rows, y, strict=True)):
        classes = sum(1 for k in (0, 1) if counts[row.dataset, k])
        weights[i] = sizes[row.dataset] / (classes * counts[row.dataset, int(label)])
    return weights


def folds(rows: Sequence[Row]) -> list[tuple[npt.NDArray[np.intp], npt.NDArray[np.intp]]]:
    """Return the site-grouped CV splits (deterministic: GroupKFold sorts groups by size)."""
    groups = np.asarray([row.group for row in rows])
    return list(GroupKFold(n_splits=FOLDS).split(np.zeros(len(rows)), groups=groups))


def model(params: dict[str, Any], seed: int) -> Any:
    from sklearn.ensemble import HistGradientBoostingClassifier

    booster = {name: value for name, value in params.items() if name != "other_weight"}
    return HistGradientBoostingClassifier(early_stopping=False, random_state=seed, **booster)


def weighted(rows: Sequence[Row], weights: FloatArray, params: dict[str, Any]) -> FloatArray:
    """Return ``weights`` with the "other" pages' scaled by ``params["other_weight"]``."""
    other = np.asarray([row.label == "other" for row in rows])
    return np.where(other, weights * float(params.get("other_weight", 1.0)), weights)


def out_of_fold(x: npt.NDArray[np.float32], y: npt.NDArray[np.int64], weights: FloatArray,
                splits: Sequence[tuple[npt.NDArray[np.intp], npt.NDArray[np.intp]]], params: dict[str, Any],
                seed: int, columns: Sequence[int] | None = None) -> FloatArray:
    """Return each row's p(article) from the fold that held it out."""
    cols = list(range(x.shape[1])) if columns is None else list(columns)
    probabilities = np.zeros(len(y))
    for train, test in splits:
        fitted = model(params, seed).fit(x[train][:, cols], y[train], sample_weight=weights[train])
        probabilities[test] = fitted.predict_proba(x[test][:, cols])[:, 1]
    return probabilities


def part(row: Row) -> str:
    """Return the row's set, and its copy's kind for an older copy: "wcxb-dev", "wcxb-dev/archived"."""
    return row.dataset if row.variant == "page" else f"{row.dataset}/{row.variant}"


def threshold_groups(rows: Sequence[Row], y: npt.NDArray[np.int64]) -> list[str]:
    """Return each row's group for the threshold: its set, or ``SMALL_SETS`` for a set of fewer than
    ``MIN_SET_ARTICLES`` articles (its pages and their copies counted together)."""
    articles = Counter(row.dataset for row, label in zip(rows, y, strict=True) if label == 1)
    return [row.dataset if articles[row.dataset] >= MIN_SET_ARTICLES else SMALL_SETS for row in rows]


def choose_threshold(rows: Sequence[Row], y: npt.NDArray[np.int64], p: FloatArray,
                     target: float = TARGET_RECALL) -> float:
    """Return the highest threshold at which every group of ``threshold_groups`` keeps at least ``target`` of its
    articles."""
    limits = []
    groups = threshold_groups(rows, y)
    for name in sorted(set(groups)):
        scores = np.sort(np.asarray([p[i] for i, group in enumerate(groups) if group == name and y[i] == 1]))
        if len(scores):
            # keep ceil(target * n) articles: the threshold is the score of the lowest one kept
            lost = int(np.floor((1.0 - target) * len(scores) + 1e-9))
            limits.append(float(scores[lost]))
    return float(min(limits)) if limits else 0.5


def per_set(rows: Sequence[Row], p: FloatArray, threshold: float) -> dict[str, dict[str, list[int]]]:
    """Return per set and label ``[let in, pages]`` at ``threshold``."""
    out: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(lambda: [0, 0]))
    for row, score in zip(rows, p, strict=True):
        cell = out[part(row)][row.label]
        cell[0] += int(score >= threshold)
        cell[1] += 1
    return {name: dict(labels) for name, labels in sorted(out.items())}


def criterion(table: dict[str, dict[str, list[int]]]) -> float:
    """Return the mean over the sets with list pages (their copies apart) of the share of lists let in."""
    shares = [labels["list"][0] / labels["list"][1] for labels in table.values() if labels.get("list", [0, 0])[1]]
    return float(np.mean(shares)) if shares else 0.0


def other_share(table: dict[str, dict[str, list[int]]]) -> float:
    """Return the mean over the sets with other pages of the share of them let in."""
    shares = [labels["other"][0] / labels["other"][1] for labels in table.values() if labels.get("other", [0, 0])[1]]
    return float(np.mean(shares)) if shares else 0.0


def rows_hash(rows: Sequence[Row]) -> str:
    """Return a sha256 over the rows' dataset, page key, URL, HTML bytes and label, sorted."""
    lines = sorted(f"{row.dataset}\t{row.page.key}\t{row.page.url}\t{hashlib.sha256(row.page.body).hexdigest()}\t"
                   f"{row.label}\n" for row in rows)
    return hashlib.sha256("".join(lines).encode("utf-8")).hexdigest()


def grid() -> list[dict[str, Any]]:
    names = list(GRID)
    return [dict(zip(names, values, strict=True)) for values in itertools.product(*(GRID[n] for n in names))]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m models.training.train_gate", description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=GATE_DIR)
    parser.add_argument("--refresh", action="store_true", help="crawl the training pages again (not the cache)")
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--no-ablation", dest="ablation", action="store_false")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s", stream=sys.stderr)
    rows_all = training_rows(args.refresh)
    x, y, rows = matrix(rows_all)
    missing = Counter(row.dataset for row in rows_all if row.record is None or row.record.get("error"))
    logger.info("%d rows (%d articles); without a usable record: %s", len(rows), int(y.sum()), dict(missing))
    weights = balanced_weights(rows, y)
    splits = folds(rows)
    results = []
    with threadpool_limits(N_JOBS):
        for params in grid():
            p = out_of_fold(x, y, weighted(rows, weights, params), splits, params, args.seed)
            threshold = choose_threshold(rows, y, p)
            table = per_set(rows, p, threshold)
            results.append((criterion(table), other_share(table), params, threshold, table, p))
            logger.info("%s: threshold %.3f, lists let in %.4f, others %.4f", params, threshold,
                        results[-1][0], results[-1][1])
        results.sort(key=lambda r: (r[0], r[1]))
        best_criterion, best_other, params, threshold, table, p = results[0]
        ablation: dict[str, dict[str, float]] = {}
        if args.ablation:
            for group, names in FEATURE_GROUPS.items():
                keep = [i for i, name in enumerate(GATE_FEATURES) if name not in names]
                q = out_of_fold(x, y, weighted(rows, weights, params), splits, params, args.seed, keep)
                t = choose_threshold(rows, y, q)
                table_q = per_set(rows, q, t)
                ablation[group] = {"lists_let_in": round(criterion(table_q), 4),
                                   "others_let_in": round(other_share(table_q), 4), "threshold": round(t, 4)}
                logger.info("without %s: %s", group, ablation[group])
        final = model(params, args.seed).fit(x, y, sample_weight=weighted(rows, weights, params))
    meta: dict[str, Any] = {
        "version": 1, "file": "model.onnx", "model": "HistGradientBoostingClassifier", "params": params,
        "features": list(GATE_FEATURES), "feature_version": GATE_FEATURE_VERSION, "classes": ["not_article", "article"],
        "threshold": round(threshold, 6), "target_recall": TARGET_RECALL, "seed": args.seed, "folds": FOLDS,
        "rows": {name: dict(Counter(row.label for row in rows if part(row) == name))
                 for name in sorted({part(row) for row in rows})},
        "rows_out_of_fold_page_type": sum(row.page_probabilities is not None for row in rows),
        "rows_without_record": dict(missing), "data_hash": rows_hash(rows),
        "cv": {"lists_let_in": round(best_criterion, 4), "others_let_in": round(best_other, 4), "per_set": table,
               "threshold_rule": f"the highest keeping {TARGET_RECALL} of the articles of every set of at least "
                                 f"{MIN_SET_ARTICLES} (its pages and their copies) and of the smaller sets pooled",
               "grid": [{"params": r[2], "lists_let_in": round(r[0], 4), "others_let_in": round(r[1], 4),
                         "threshold": round(r[3], 4)} for r in results]},
        "ablation": ablation, "created": dt.date.today().isoformat(),
        "command": "python -m models.training.train_gate",
    }
    sample = x[: min(len(x), 2000)]
    export(final, args.out, meta, sample)
    predictions = args.out.parent / "gate_cv.jsonl" if args.out != GATE_DIR else None
    if predictions is not None:
        predictions.write_text("".join(json.dumps({"dataset": row.dataset, "key": row.page.key, "label": row.label,
                                                   "p": round(float(q), 4)}) + "\n" for row, q in zip(rows, p,
                                                                                                       strict=True)))
    logger.info("wrote %s (threshold %.4f); CV per set: %s", args.out, threshold, json.dumps(table))
    return 0


if __name__ == "__main__":
    sys.exit(main())
