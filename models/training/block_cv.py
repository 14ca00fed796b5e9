"""Grouped cross-validation of the block and paragraph SVMs: folds by site, grid search, threshold, ablation.

Used by ``models.training.train_blocks`` (steps 2 to 6 of its docstring). Every CV here scores
on the same grouped splits: no site is in training and validation at once.
"""

from __future__ import annotations

import functools
import logging
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt
from sklearn.metrics import f1_score, make_scorer
from sklearn.model_selection import GridSearchCV, GroupKFold
from sklearn.pipeline import Pipeline

from extraction.blockclf.features import BLOCK_FEATURES, PARAGRAPH_FEATURES
from models.training.block_data import IntArray, TrainingData, sample_blocks
from models.training.block_svm import N_JOBS, Split, calibrated_model, support_vectors, svm_pipeline

logger = logging.getLogger(__name__)

FOLDS = 5  # grouped CV folds (GroupKFold over the pages' sites)
# Thresholds at which the calibrated model's CV F1 is also recorded (meta.json, not used at run time).
THRESHOLD_SCAN = (0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6, 0.7, 0.8, 0.9)
# Feature groups of the ablation, cumulative in this order (names by prefix, see block_features).
PAPER_003 = ("link_density", "noise_word_density", "zh_punct_density", "latin_punct_density", "deco_tag_density",
             "region_position")
FEATURE_GROUPS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("paper 004 R1-R5", tuple(name for name in BLOCK_FEATURES if name[:1] == "r" and name[1:2].isdigit())),
    ("paper 003 densities", PAPER_003),
    ("class/id tokens", tuple(name for name in BLOCK_FEATURES if name.startswith(("class_", "ancestor_class_")))),
    ("CETD", tuple(name for name in BLOCK_FEATURES if name.startswith("cetd_"))),
)


@dataclass(frozen=True)
class Budget:
    """Sample sizes and grids of one run (RBF SVMs train in O(n^2): every size here is a time budget)."""

    per_page: int  # rows a page contributes to any sample at most
    cv_train_rows: int  # training rows per CV fold
    cv_eval_rows: int  # validation rows per CV fold
    final_rows: int  # training rows of the final model before the support-vector limit shrinks them
    block_grid: dict[str, list[float]] = field(default_factory=dict)
    paragraph_grid: dict[str, list[float]] = field(default_factory=dict)
    ablation_gamma_factors: tuple[float, ...] = (1 / 9, 1 / 3, 1.0, 3.0, 9.0)


FULL = Budget(
    per_page=60,
    cv_train_rows=16000,
    cv_eval_rows=5000,
    final_rows=25000,
    block_grid={"C": [1.0, 3.0, 10.0, 30.0], "gamma": [0.05, 0.195, 0.347, 1.0, 3.0]},
    paragraph_grid={"C": [0.5, 2.0, 8.0, 32.0], "gamma": [0.347, 1.0, 3.0, 10.0]},
)
QUICK = Budget(
    per_page=30,
    cv_train_rows=1500,
    cv_eval_rows=800,
    final_rows=2000,
    block_grid={"C": [3.0], "gamma": [0.195, 1.0]},
    paragraph_grid={"C": [2.0], "gamma": [0.347, 1.0]},
    ablation_gamma_factors=(1.0,),
)


@dataclass(frozen=True)
class Rows:
    """The rows of one model (blocks or paragraphs) and where they come from."""

    kind: str
    features: tuple[str, ...]
    x: npt.NDArray[np.float32]
    y: npt.NDArray[np.int64]
    page: IntArray


def model_rows(data: TrainingData, kind: str) -> Rows:
    """Return the block or the paragraph rows of ``data``."""
    if kind == "blocks":
        return Rows(kind, BLOCK_FEATURES, data.block_x, data.block_y.astype(np.int64), data.block_page)
    return Rows(kind, PARAGRAPH_FEATURES, data.paragraph_x, data.paragraph_y.astype(np.int64), data.paragraph_page)


# --- scoring and cross-validation ---------------------------------------------------------------


def char_weighted_f1(estimator: Any, x: npt.NDArray[np.float32], y: npt.NDArray[np.int64], column: int) -> float:
    """Return the content F1 with rows weighted by their characters (``expm1`` of the log-chars column)."""
    weights = np.expm1(x[:, column].astype(np.float64))
    return float(f1_score(y, estimator.predict(x), sample_weight=weights, zero_division=0.0))


def support_vector_score(estimator: Any, x: npt.NDArray[np.float32], y: npt.NDArray[np.int64]) -> float:
    """Return the fitted model's support vectors (a "score" so that the grid search records them)."""
    return float(support_vectors(estimator))


def scorers(features: Sequence[str]) -> dict[str, Any]:
    """Return the metrics recorded by every CV: content F1 (the criterion), char-weighted F1, noise F1, SVs."""
    return {
        "f1": make_scorer(f1_score, zero_division=0.0),
        "f1_chars": functools.partial(char_weighted_f1, column=list(features).index("log_chars")),
        "f1_noise": make_scorer(f1_score, pos_label=0, zero_division=0.0),
        "support_vectors": support_vector_score,
    }


def page_folds(groups: npt.NDArray[np.str_]) -> IntArray:
    """Return the CV fold of each page: ``GroupKFold`` over the pages' sites."""
    folds = np.zeros(len(groups), dtype=np.int64)
    for fold, (_, validation) in enumerate(GroupKFold(FOLDS).split(np.zeros(len(groups)), groups=groups)):
        folds[validation] = fold
    return folds


def eval_rows(page_of_row: IntArray, folds: IntArray, articles: npt.NDArray[np.bool_], budget: Budget,
              rng: np.random.Generator) -> list[IntArray]:
    """Return per fold the validation rows: a sample of the rows of the fold's article pages."""
    return [sample_blocks(page_of_row, np.flatnonzero((folds == fold) & articles), budget.cv_eval_rows,
                          budget.per_page, rng) for fold in range(FOLDS)]


def train_splits(page_of_row: IntArray, folds: IntArray, allowed: npt.NDArray[np.bool_], validation: list[IntArray],
                 budget: Budget, rng: np.random.Generator) -> list[Split]:
    """Return per fold (training rows, validation rows), training rows sampled from the other folds' allowed pages."""
    return [(sample_blocks(page_of_row, np.flatnonzero((folds != fold) & allowed), budget.cv_train_rows,
                           budget.per_page, rng), validation[fold]) for fold in range(FOLDS)]


def summarise(search: GridSearchCV) -> list[dict[str, float]]:
    """Return one row per grid point: C, gamma and the mean/std of every metric over the folds."""
    results = search.cv_results_
    rows = []
    for i, params in enumerate(results["params"]):
        row = {name.split("__")[-1]: float(value) for name, value in params.items()}
        for metric in ("f1", "f1_chars", "f1_noise", "support_vectors"):
            row[f"{metric}_mean"] = round(float(results[f"mean_test_{metric}"][i]), 4)
            row[f"{metric}_std"] = round(float(results[f"std_test_{metric}"][i]), 4)
        rows.append(row)
    return rows


def grid_search(estimator: Pipeline, grid: dict[str, list[float]], x: npt.NDArray[np.float32],
                y: npt.NDArray[np.int64], splits: list[Split], features: Sequence[str]) -> list[dict[str, float]]:
    """Return the grid's rows (``summarise``) after a grouped-CV grid search over ``splits``."""
    search = GridSearchCV(estimator, {f"svm__{name}": values for name, values in grid.items()},
                          scoring=scorers(features), refit=False, cv=splits, n_jobs=N_JOBS)
    search.fit(x, y)
    return summarise(search)


def choose(rows: list[dict[str, float]]) -> dict[str, float]:
    """Return the row with the fewest support vectors among those within one standard error of the best F1."""
    best = max(rows, key=lambda row: row["f1_mean"])
    floor = best["f1_mean"] - best["f1_std"] / math.sqrt(FOLDS)
    return min((row for row in rows if row["f1_mean"] >= floor), key=lambda row: row["support_vectors_mean"])


def calibrated_cv(rows: Rows, data: TrainingData, splits: list[Split], params: dict[str, float]) -> dict[str, Any]:
    """Return the grouped-CV metrics of the shipped form of the model (calibrated P(content) over a threshold)
    at every threshold of ``THRESHOLD_SCAN``: ``{"0.50": {"f1_mean", "f1_std", "f1_chars_mean", "f1_noise_mean"}}``.

    Each fold's calibrated model gets its own inner grouped splits of its training rows.
    """
    scores: dict[float, dict[str, list[float]]] = {
        threshold: {"f1": [], "f1_chars": [], "f1_noise": []} for threshold in THRESHOLD_SCAN}
    chars_column = list(rows.features).index("log_chars")
    for train_rows, validation_rows in splits:
        groups = data.page_groups[rows.page[train_rows]]
        inner = [(a.astype(np.int64), b.astype(np.int64))
                 for a, b in GroupKFold(FOLDS).split(train_rows, groups=groups)]
        model = calibrated_model(params["C"], params["gamma"], inner).fit(rows.x[train_rows], rows.y[train_rows])
        probabilities = model.predict_proba(rows.x[validation_rows])[:, 1]
        truth = rows.y[validation_rows]
        weights = np.expm1(rows.x[validation_rows, chars_column].astype(np.float64))
        for threshold, values in scores.items():
            predicted = (probabilities >= threshold).astype(np.int64)
            values["f1"].append(float(f1_score(truth, predicted, zero_division=0.0)))
            values["f1_chars"].append(float(f1_score(truth, predicted, sample_weight=weights, zero_division=0.0)))
            values["f1_noise"].append(float(f1_score(truth, predicted, pos_label=0, zero_division=0.0)))
    result: dict[str, Any] = {}
    for threshold, values in scores.items():
        row = {f"{name}_mean": round(float(np.mean(folds)), 4) for name, folds in values.items()}
        row["f1_std"] = round(float(np.std(values["f1"])), 4)
        result[f"{threshold:.2f}"] = row
    return result


def pick_threshold(by_threshold: dict[str, Any], wanted: float | None) -> float:
    """Return ``wanted``, or when it is None the scanned threshold with the best calibrated CV F1."""
    if wanted is not None:
        return wanted
    return float(max(by_threshold, key=lambda key: by_threshold[key]["f1_mean"]))


def all_content_f1(rows: Rows, splits: list[Split]) -> float:
    """Return the mean content F1 over the validation folds of calling every row content (the trivial baseline)."""
    return round(float(np.mean([f1_score(rows.y[validation], np.ones(len(validation), dtype=np.int64))
                                for _, validation in splits])), 4)


def cv_at(c: float, gamma: float, x: npt.NDArray[np.float32], y: npt.NDArray[np.int64], splits: list[Split],
          features: Sequence[str], columns: Sequence[int] | None = None) -> dict[str, float]:
    """Return the CV metrics of one setting (a one-point grid)."""
    return grid_search(svm_pipeline(c, gamma, columns), {"C": [c], "gamma": [gamma]}, x, y, splits, features)[0]


# --- ablation -----------------------------------------------------------------------------------


def ablation(rows: Rows, splits: list[Split], params: dict[str, float], budget: Budget) -> dict[str, Any]:
    """Return the grouped-CV metrics of the block model on cumulative feature groups and with each group left out.

    Cumulative rows get a small gamma grid each (fewer columns mean shorter distances, so the best
    gamma moves); leave-one-out rows use the full model's parameters.
    """
    names = list(rows.features)
    grouped = {name for _, group in FEATURE_GROUPS for name in group}
    rest = tuple(name for name in names if name not in grouped)
    groups = (*FEATURE_GROUPS, ("the rest (depth, sizes, index)", rest))
    cumulative: list[dict[str, Any]] = []
    columns: list[str] = []
    for label, group in groups:
        columns += group
        gammas = [params["gamma"] * factor for factor in budget.ablation_gamma_factors]
        grid_rows = grid_search(svm_pipeline(1.0, 1.0, [names.index(name) for name in columns]),
                                {"C": [params["C"]], "gamma": gammas}, rows.x, rows.y, splits, names)
        best = max(grid_rows, key=lambda row: row["f1_mean"])
        cumulative.append({"added": label, "features": len(columns), **best})
        logger.info("ablation: + %s (%d features): F1 %.4f +- %.4f, chars %.4f (gamma %g)", label, len(columns),
                    best["f1_mean"], best["f1_std"], best["f1_chars_mean"], best["gamma"])
    left_out: list[dict[str, Any]] = []
    for label, group in groups:
        kept = [names.index(name) for name in names if name not in group]
        result = cv_at(params["C"], params["gamma"], rows.x, rows.y, splits, names, kept)
        left_out.append({"left_out": label, "features": len(kept), **result})
        logger.info("ablation: all but %s: F1 %.4f +- %.4f, chars %.4f", label, result["f1_mean"], result["f1_std"],
                    result["f1_chars_mean"])
    return {"params": params, "gamma_factors": [round(f, 4) for f in budget.ablation_gamma_factors],
            "cumulative": cumulative, "left_out": left_out,
            "groups": {label: list(group) for label, group in groups}}


def ablation_markdown(result: dict[str, Any], seed: int) -> str:
    """Return the ablation as a Markdown report."""
    lines = [
        "# Block model: feature-group ablation",
        "",
        f"Written by `python -m models.training.train_blocks` (seed {seed}). Grouped {FOLDS}-fold CV (folds by"
        " site), validation on the blocks of article pages, the same splits as the block model's grid search.",
        f"Scaling and SVM as the shipped model (C {result['params']['C']:g}); each cumulative row picks the best"
        f" gamma of the full model's gamma x ({', '.join(f'{f:.3g}' for f in result['gamma_factors'])});"
        " the leave-one-out rows use the full model's gamma"
        f" {result['params']['gamma']:g}. F1 = content-class F1 per block; chars = the same F1 with blocks"
        " weighted by their characters; SVs = support vectors (mean over folds).",
        "",
        "## Cumulative",
        "",
        "| features added | columns | gamma | F1 (mean +- std) | gain | F1 chars | gain | SVs |",
        "|---|---|---|---|---|---|---|---|",
    ]
    previous: dict[str, Any] | None = None
    for row in result["cumulative"]:
        gain = f"{row['f1_mean'] - previous['f1_mean']:+.4f}" if previous else ""
        gain_chars = f"{row['f1_chars_mean'] - previous['f1_chars_mean']:+.4f}" if previous else ""
        lines.append(f"| + {row['added']} | {row['features']} | {row['gamma']:.3g} | {row['f1_mean']:.4f} +- "
                     f"{row['f1_std']:.4f} | {gain} | {row['f1_chars_mean']:.4f} | {gain_chars} | "
                     f"{row['support_vectors_mean']:.0f} |")
        previous = row
    full = result["cumulative"][-1]
    lines += ["", "## Each group left out of the full model", "",
              "| left out | columns | F1 (mean +- std) | change vs all | F1 chars | change | SVs |",
              "|---|---|---|---|---|---|---|"]
    for row in result["left_out"]:
        lines.append(f"| {row['left_out']} | {row['features']} | {row['f1_mean']:.4f} +- {row['f1_std']:.4f} | "
                     f"{row['f1_mean'] - full['f1_mean']:+.4f} | {row['f1_chars_mean']:.4f} | "
                     f"{row['f1_chars_mean'] - full['f1_chars_mean']:+.4f} | {row['support_vectors_mean']:.0f} |")
    lines += ["", "## Verdict", "",
              "Standard error = std / sqrt(folds) of the larger of the two rows compared; changes inside it are"
              " not measurable on this data (conservative: both rows are scored on the same folds). Redrawing the"
              " training sample alone moves F1 by about 0.01-0.02.", ""]
    for row, previous_row in zip(result["cumulative"][1:], result["cumulative"], strict=False):
        gain = row["f1_mean"] - previous_row["f1_mean"]
        error = max(row["f1_std"], previous_row["f1_std"]) / math.sqrt(FOLDS)
        if gain <= -error:
            verdict = "**hurts** (F1 falls by more than the standard error): candidate to drop in a later change"
        elif gain < error:
            verdict = f"no measurable gain (standard error {error:.4f})"
        else:
            verdict = "helps"
        lines.append(f"- + {row['added']}: {gain:+.4f} F1, {verdict}.")
    for row in result["left_out"]:
        change = row["f1_mean"] - full["f1_mean"]
        error = max(row["f1_std"], full["f1_std"]) / math.sqrt(FOLDS)
        if change >= error:
            lines.append(f"- leaving out {row['left_out']} **raises** F1 by {change:+.4f} (standard error {error:.4f}):"
                         " the group hurts the full model; candidate to drop in a later change.")
        elif change > -error:
            lines.append(f"- leaving out {row['left_out']} changes F1 by {change:+.4f}, inside the standard error"
                         f" ({error:.4f}): no measurable contribution once the other groups are there.")
        else:
            lines.append(f"- leaving out {row['left_out']} costs {change:+.4f} F1 (standard error {error:.4f}).")
    lines += ["", "Groups: " + "; ".join(f"{label}: {', '.join(names)}" for label, names in result["groups"].items()),
              ""]
    return "\n".join(lines)
