"""Train the block and paragraph SVMs of ``extraction.blockclf`` (papers 003 and 004) and export them to ONNX.

    python -m models.training.train_blocks [--seed 0] [--max-blocks N] [--quick] [--out DIR] [--threshold 0.5|cv]

Steps (sizes in ``FULL``; ``--quick`` runs every step on tiny samples, written to the cache
folder unless ``--out`` says otherwise):

1. Rows of the training pages (``evaluation.folds.training_pages``: the train sets, held-out
   fold left out), see ``models.training.block_data``.
2. Pages are split into ``FOLDS`` folds by ``GroupKFold`` over their site (``site_of``): no site
   is in training and validation at once. Every CV below uses these folds; validation rows are
   blocks of **article pages** (WCXB articles, CleanEval, Chinese-WCED), the pages the model runs
   on, sampled once per fold so every experiment is scored on the same rows.
3. Do WCXB's non-article pages (listing, collection, forum, product, ...) help? Grouped CV with
   paper 003's parameters, training samples of equal size drawn from article pages only or from
   all pages; the better one is used from here on.
4. Grid search of C and gamma (``GridSearchCV`` over the grouped splits, scoring F1 of the content
   class; paper 003's values are in the grid). Among the settings whose mean F1 is within one
   standard error of the best, the one with the fewest support vectors is chosen (the model runs
   on every block of every crawled page).
5. Ablation of the block feature groups (``ablation.md``).
6. Final model: min-max scaling, then the RBF SVM wrapped in ``CalibratedClassifierCV`` (sigmoid,
   grouped splits, ``ensemble=False``) for probabilities, refit on a larger sample that is shrunk
   until it has at most ``MAX_SUPPORT_VECTORS``; the calibrated model is also scored by grouped CV at
   every threshold of ``THRESHOLD_SCAN``. Exported to ONNX as a float64 graph (``export_onnx``; skl2onnx's
   float32 conversion is the cross-check) and checked against scikit-learn on ``PARITY_ROWS`` rows.

No held-out page and no evaluation-only dataset is read.
"""

from __future__ import annotations

import argparse
import datetime
import functools
import json
import logging
import math
import sys
import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import onnxruntime as ort
from sklearn.calibration import CalibratedClassifierCV
from sklearn.compose import ColumnTransformer
from sklearn.metrics import f1_score, make_scorer
from sklearn.model_selection import GridSearchCV, GroupKFold
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import MinMaxScaler
from sklearn.svm import SVC

from evaluation.folds import HELD_OUT_FOLD, TRAIN_DATASETS, training_pages
from evaluation.labels import CONTENT_SHARE
from extraction.blockclf.features import BLOCK_FEATURES, FEATURE_VERSION, PARAGRAPH_FEATURES
from models.training.block_data import MIN_PARAGRAPHS, IntArray, TrainingData, cache_dir, load, sample_blocks

logger = logging.getLogger(__name__)

MODELS_DIR = Path(__file__).resolve().parent.parent
ABLATION_FILE = Path(__file__).resolve().parent / "ablation.md"
META_VERSION = 1
FOLDS = 5
N_JOBS = 2  # the training machine has two cores
# Paper 003 (section 2.2, "调参方法" and the experiment set-up): sigma 1.6, C 3.0 for blocks,
# sigma 1.2, C 2.0 for paragraphs, found by GridSearchCV; gamma = 1 / (2 sigma^2).
PAPER_BLOCK_PARAMS = {"C": 3.0, "gamma": round(1 / (2 * 1.6**2), 3)}  # gamma 0.195
PAPER_PARAGRAPH_PARAMS = {"C": 2.0, "gamma": round(1 / (2 * 1.2**2), 3)}  # gamma 0.347
# Decision threshold on the calibrated P(content): "cv" (default) ships the threshold of ``THRESHOLD_SCAN``
# with the best calibrated grouped-CV F1 on the training folds. About 20% of blocks are content, so the
# calibrated probability of most content blocks sits near 0.45-0.6 and 0.5 drops many (block CV F1 0.552 at
# 0.5 vs 0.631 at 0.25). A number ships that number instead.
THRESHOLD = "cv"
# Thresholds at which the calibrated model's CV F1 is also recorded (meta.json, not used at run time).
THRESHOLD_SCAN = (0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6, 0.7, 0.8, 0.9)
# The final model's support vectors cost every crawled page one kernel row each per block.
MAX_SUPPORT_VECTORS = 5000
PARITY_ROWS = 2000
PARITY_TOLERANCE = 1e-4
TARGET_OPSET = 17
IR_VERSION = 8  # the IR version of opset 17; onnxruntime >= 1.13 reads it
CACHE_SIZE_MB = 1000  # libsvm's kernel cache per fit

# Feature groups of the ablation, cumulative in this order (names by prefix, see block_features).
PAPER_003 = ("link_density", "noise_word_density", "zh_punct_density", "latin_punct_density", "deco_tag_density",
             "region_position")
FEATURE_GROUPS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("paper 004 R1-R5", tuple(name for name in BLOCK_FEATURES if name[:1] == "r" and name[1:2].isdigit())),
    ("paper 003 densities", PAPER_003),
    ("class/id tokens", tuple(name for name in BLOCK_FEATURES if name.startswith(("class_", "ancestor_class_")))),
    ("CETD", tuple(name for name in BLOCK_FEATURES if name.startswith("cetd_"))),
)
LABEL_RULE = (f"block: content when >= {CONTENT_SHARE} of its tokens are matched by one LCS alignment of all the "
              "page's blocks to the gold text (evaluation.labels.label_texts); paragraph: the same rule on one "
              "alignment of all the page's paragraphs, rows only for paragraphs of content blocks with >= "
              f"{MIN_PARAGRAPHS} paragraphs")


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

Split = tuple[IntArray, IntArray]


# --- models -------------------------------------------------------------------------------------


def svm_pipeline(c: float, gamma: float, columns: Sequence[int] | None = None) -> Pipeline:
    """Return min-max scaling and a class-balanced RBF SVM, on ``columns`` only when given."""
    steps: list[tuple[str, Any]] = []
    if columns is not None:
        steps.append(("select", ColumnTransformer([("keep", "passthrough", list(columns))])))
    steps.append(("scale", MinMaxScaler()))
    steps.append(("svm", SVC(kernel="rbf", C=c, gamma=gamma, class_weight="balanced", cache_size=CACHE_SIZE_MB)))
    return Pipeline(steps)


def calibrated_model(c: float, gamma: float, splits: list[Split]) -> Pipeline:
    """Return min-max scaling and the RBF SVM calibrated by a sigmoid over ``splits`` (one SVM refit on all rows).

    The scaler sits outside the calibration so that the exported graph is scaler -> calibrated SVM.
    """
    svm = SVC(kernel="rbf", C=c, gamma=gamma, class_weight="balanced", cache_size=CACHE_SIZE_MB)
    calibrated = CalibratedClassifierCV(svm, method="sigmoid", cv=splits, ensemble=False, n_jobs=N_JOBS)
    return Pipeline([("scale", MinMaxScaler()), ("calibrated", calibrated)])


def support_vectors(model: Pipeline) -> int:
    """Return the support vectors of a fitted ``svm_pipeline`` or ``calibrated_model``."""
    last = model.steps[-1][1]
    svm = last.calibrated_classifiers_[0].estimator if isinstance(last, CalibratedClassifierCV) else last
    return int(svm.n_support_.sum())


def export_onnx(model: Pipeline, n_features: int) -> bytes:
    """Return the ONNX graph of a fitted ``calibrated_model``: input float32 [N, n_features], outputs ``label``
    (int64 [N]) and ``probabilities`` (float32 [N, 2], column 1 = P(content)).

    The graph is built here from standard ONNX operators, computed in float64: min-max scaling, the RBF
    kernel against the support vectors (||z||^2 + ||sv||^2 - 2 z.sv, one MatMul), the dual coefficients,
    then the sigmoid calibration P = 1 / (1 + exp(a * decision + b)), exactly as scikit-learn
    computes it. skl2onnx's converter uses ONNX-ML's ``SVMClassifier``, which works in float32: on the
    class-balanced SVMs here (dual coefficients up to C x class weight, thousands of support vectors) its
    P(content) drifts by ~1e-4 from scikit-learn, over ``PARITY_TOLERANCE``; ``skl2onnx_export`` is kept
    as a cross-check.
    """
    import onnx  # training-only dependency (installed with skl2onnx)
    from onnx import TensorProto, helper, numpy_helper

    scaler = model.named_steps["scale"]
    calibrated = model.named_steps["calibrated"]
    classifier = calibrated.calibrated_classifiers_[0]
    svm = classifier.estimator
    sigmoid = classifier.calibrators[0]
    if (len(calibrated.calibrated_classifiers_) != 1 or svm.kernel != "rbf" or list(svm.classes_) != [0, 1]
            or isinstance(svm.gamma, str)):
            raise ValueError("export_onnx takes a calibrated_model: one calibrated binary RBF SVC (ensemble=False), "
                         "numeric gamma")
    vectors = np.asarray(svm.support_vectors_, dtype=np.float64)

    def constant(name: str, value: Any) -> onnx.TensorProto:
        return numpy_helper.from_array(np.asarray(value, dtype=np.float64), name)

    initializers = [
        constant("scale", scaler.scale_.reshape(1, -1)),
        constant("offset", scaler.min_.reshape(1, -1)),
        constant("vectors_t", vectors.T),
        constant("vector_norms", (vectors**2).sum(axis=1).reshape(1, -1)),
        constant("minus_two", -2.0),
        constant("zero", 0.0),
        constant("minus_gamma", -float(svm.gamma)),
        constant("dual_t", np.asarray(svm.dual_coef_, dtype=np.float64).T),
        constant("intercept", float(svm.intercept_[0])),
        constant("minus_a", -float(sigmoid.a_)),
        constant("minus_b", -float(sigmoid.b_)),
        constant("one", 1.0),
        numpy_helper.from_array(np.asarray([1], dtype=np.int64), "axis_1"),
    ]
    nodes = [
        helper.make_node("Cast", ["features"], ["x"], to=TensorProto.DOUBLE),
        helper.make_node("Mul", ["x", "scale"], ["x_scaled"]),
        helper.make_node("Add", ["x_scaled", "offset"], ["z"]),  # MinMaxScaler: x * scale_ + min_
        helper.make_node("Mul", ["z", "z"], ["z_squares"]),
        helper.make_node("ReduceSum", ["z_squares", "axis_1"], ["z_norms"], keepdims=1),
        helper.make_node("MatMul", ["z", "vectors_t"], ["dots"]),
        helper.make_node("Mul", ["dots", "minus_two"], ["minus_two_dots"]),
        helper.make_node("Add", ["minus_two_dots", "z_norms"], ["partial"]),
        helper.make_node("Add", ["partial", "vector_norms"], ["raw_distances"]),
        helper.make_node("Max", ["raw_distances", "zero"], ["distances"]),  # rounding must not go negative
        helper.make_node("Mul", ["distances", "minus_gamma"], ["exponents"]),
        helper.make_node("Exp", ["exponents"], ["kernel"]),
        helper.make_node("MatMul", ["kernel", "dual_t"], ["weighted"]),
        helper.make_node("Add", ["weighted", "intercept"], ["decision"]),
        helper.make_node("Mul", ["decision", "minus_a"], ["scaled_decision"]),
        helper.make_node("Add", ["scaled_decision", "minus_b"], ["logit"]),
        helper.make_node("Sigmoid", ["logit"], ["p_content"]),
        helper.make_node("Sub", ["one", "p_content"], ["p_noise"]),
        helper.make_node("Concat", ["p_noise", "p_content"], ["probabilities_double"], axis=1),
        helper.make_node("Cast", ["probabilities_double"], ["probabilities"], to=TensorProto.FLOAT),
        helper.make_node("ArgMax", ["probabilities_double"], ["label"], axis=1, keepdims=0),
    ]
    graph = helper.make_graph(
        nodes, "calibrated_rbf_svm",
        [helper.make_tensor_value_info("features", TensorProto.FLOAT, [None, n_features])],
        [helper.make_tensor_value_info("label", TensorProto.INT64, [None]),
         helper.make_tensor_value_info("probabilities", TensorProto.FLOAT, [None, 2])],
        initializers,
    )
    onnx_model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", TARGET_OPSET)],
                                   producer_name="models.training.train_blocks")
    onnx_model.ir_version = IR_VERSION
    onnx.checker.check_model(onnx_model)
    data: bytes = onnx_model.SerializeToString()
    return data


def skl2onnx_export(model: Pipeline, n_features: int) -> bytes:
    """Return skl2onnx's conversion of the same model (float32 ``SVMClassifier``), for the parity cross-check."""
    from skl2onnx import to_onnx  # training-only dependency

    sample = np.zeros((1, n_features), dtype=np.float32)
    with warnings.catch_warnings():
        # skl2onnx reads SVC.probA_/probB_, deprecated in scikit-learn 1.9 (unused here: no probability=True).
        warnings.filterwarnings("ignore", message=".*probA_|.*probB_", category=FutureWarning)
        graph = to_onnx(model, sample, target_opset={"": TARGET_OPSET, "ai.onnx.ml": 3},
                        options={id(model): {"zipmap": False}})
    data: bytes = graph.SerializeToString()
    return data


def onnx_probabilities(onnx_model: bytes, x: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    """Return P(content) of each row as onnxruntime computes it from the exported graph."""
    session = ort.InferenceSession(onnx_model, providers=["CPUExecutionProvider"])
    outputs = session.run(None, {session.get_inputs()[0].name: x.astype(np.float32)})
    return np.asarray(outputs[1])[:, 1]


def parity(model: Pipeline, onnx_model: bytes, x: npt.NDArray[np.float32]) -> float:
    """Return the largest absolute difference of P(content) between scikit-learn and onnxruntime on ``x``."""
    expected = model.predict_proba(x)[:, 1]
    return float(np.abs(onnx_probabilities(onnx_model, x) - expected).max(initial=0.0))


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


# --- the two models -----------------------------------------------------------------------------


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


@dataclass
class Trained:
    """A trained model with everything ``meta.json`` records about it."""

    model: Pipeline
    onnx: bytes
    meta: dict[str, Any]
    splits: list[Split]  # the grouped CV splits of the chosen data (the ablation reuses them)


def train(rows: Rows, data: TrainingData, budget: Budget, paper: dict[str, float], grid: dict[str, list[float]],
          seed: int, threshold: float | None = None) -> Trained:
    """Return the final calibrated model of ``rows`` after the data decision and the grid search.

    ``threshold``: the decision threshold to ship; None picks it by grouped CV (``pick_threshold``).
    """
    rng = np.random.default_rng([seed, 0 if rows.kind == "blocks" else 1])
    folds = page_folds(data.page_groups)
    non_article = data.non_article_pages()
    validation = eval_rows(rows.page, folds, ~non_article, budget, rng)
    started = time.monotonic()
    decision: dict[str, Any] = {}
    for include in (False, True):
        allowed = np.ones(data.pages, dtype=bool) if include else ~non_article
        splits = train_splits(rows.page, folds, allowed, validation, budget, rng)
        decision["with_non_articles" if include else "articles_only"] = result = cv_at(
            paper["C"], paper["gamma"], rows.x, rows.y, splits, rows.features)
        logger.info("%s, %s: F1 %.4f +- %.4f (chars %.4f) on article pages, C %s gamma %s", rows.kind,
                    "with non-article pages" if include else "article pages only", result["f1_mean"],
                    result["f1_std"], result["f1_chars_mean"], paper["C"], paper["gamma"])
    include_non_articles = decision["with_non_articles"]["f1_mean"] > decision["articles_only"]["f1_mean"]
    allowed = np.ones(data.pages, dtype=bool) if include_non_articles else ~non_article
    splits = train_splits(rows.page, folds, allowed, validation, budget, rng)
    decided = time.monotonic()

    grid_rows = grid_search(svm_pipeline(1.0, 1.0), grid, rows.x, rows.y, splits, rows.features)
    chosen = choose(grid_rows)
    best = max(grid_rows, key=lambda row: row["f1_mean"])
    for row in grid_rows:
        logger.info("%s grid: C %-5g gamma %-6g F1 %.4f +- %.4f  chars %.4f  noise %.4f  SVs %.0f", rows.kind,
                    row["C"], row["gamma"], row["f1_mean"], row["f1_std"], row["f1_chars_mean"], row["f1_noise_mean"],
                    row["support_vectors_mean"])
    logger.info("%s: chosen C %g gamma %g (F1 %.4f, %.0f SVs); best F1 C %g gamma %g (F1 %.4f, %.0f SVs)", rows.kind,
                chosen["C"], chosen["gamma"], chosen["f1_mean"], chosen["support_vectors_mean"], best["C"],
                best["gamma"], best["f1_mean"], best["support_vectors_mean"])
    by_threshold = calibrated_cv(rows, data, splits, chosen)
    for key, row in by_threshold.items():
        logger.info("%s calibrated: P >= %s: F1 %.4f +- %.4f, chars %.4f, noise %.4f", rows.kind, key, row["f1_mean"],
                    row["f1_std"], row["f1_chars_mean"], row["f1_noise_mean"])
    threshold = pick_threshold(by_threshold, threshold)
    shipped_form = by_threshold.get(f"{threshold:.2f}", {})
    baseline = all_content_f1(rows, splits)
    logger.info("%s: threshold %.2f (all-content baseline F1 %.4f)", rows.kind, threshold, baseline)
    searched = time.monotonic()

    model, sample = final_model(rows, data, allowed, chosen, budget, rng)
    onnx_model = export_onnx(model, len(rows.features))
    check = rng.choice(len(rows.y), size=min(PARITY_ROWS, len(rows.y)), replace=False)
    difference = parity(model, onnx_model, rows.x[check])
    if difference >= PARITY_TOLERANCE:
        raise RuntimeError(f"{rows.kind}: ONNX and scikit-learn differ by {difference:.2e} (>= {PARITY_TOLERANCE})")
    reference = parity(model, skl2onnx_export(model, len(rows.features)), rows.x[check])
    svs = support_vectors(model)
    logger.info("%s: final model on %d rows, %d support vectors, ONNX %d bytes, parity %.2e (skl2onnx's float32 graph: "
                "%.2e)", rows.kind, len(sample), svs, len(onnx_model), difference, reference)
    finished = time.monotonic()
    meta = {
        "file": f"{rows.kind}.onnx",
        "features": list(rows.features),
        "feature_version": FEATURE_VERSION,
        "labels": [0, 1],
        "threshold": threshold,
        "params": {"C": chosen["C"], "gamma": chosen["gamma"], "kernel": "rbf", "class_weight": "balanced",
                   "scaling": "min-max", "calibration": "sigmoid, grouped CV, ensemble=False"},
        "paper_params": paper,
        "cv": {
            "f1_mean": chosen["f1_mean"], "f1_std": chosen["f1_std"], "f1_chars_mean": chosen["f1_chars_mean"],
            "f1_noise_mean": chosen["f1_noise_mean"], "folds": FOLDS, "grouped_by": "site_of(page)",
            "validation": "article pages only (WCXB articles, CleanEval, Chinese-WCED)",
            "train_rows_per_fold": [len(train_rows) for train_rows, _ in splits],
            "validation_rows_per_fold": [len(rows_) for rows_ in validation],
            "selection": "fewest support vectors within one standard error of the best mean F1",
            "best_f1": {"C": best["C"], "gamma": best["gamma"], "f1_mean": best["f1_mean"]},
            "calibrated": {"threshold": threshold, **shipped_form, "by_threshold": by_threshold},
            "all_content_f1": baseline,
            "grid": grid_rows,
        },
        "non_articles": decision,
        "include_non_articles": bool(include_non_articles),
        "support_vectors": svs,
        "size_bytes": len(onnx_model),
        "train_blocks" if rows.kind == "blocks" else "train_paragraphs": len(sample),
        "train_pages": len(np.unique(rows.page[sample])),
        "label_rule": LABEL_RULE,
        "parity": {"rows": len(check), "max_abs_diff": difference, "skl2onnx_float32_max_abs_diff": reference},
        "seconds": {"data_decision": round(decided - started), "grid_search": round(searched - decided),
                    "final_fit": round(finished - searched)},
    }
    return Trained(model, onnx_model, meta, splits)


def final_model(rows: Rows, data: TrainingData, allowed: npt.NDArray[np.bool_], params: dict[str, float],
                budget: Budget, rng: np.random.Generator) -> tuple[Pipeline, IntArray]:
    """Return the calibrated model and its training rows: the largest sample up to ``final_rows`` whose SVM
    has at most ``MAX_SUPPORT_VECTORS`` (each retry shrinks the sample by the excess ratio)."""
    pages = np.flatnonzero(allowed)
    size = budget.final_rows
    for _ in range(4):
        sample = sample_blocks(rows.page, pages, size, budget.per_page, rng)
        probe = svm_pipeline(params["C"], params["gamma"]).fit(rows.x[sample], rows.y[sample])
        count = support_vectors(probe)
        logger.info("%s: %d rows give %d support vectors", rows.kind, len(sample), count)
        if count <= MAX_SUPPORT_VECTORS:
            break
        size = int(len(sample) * MAX_SUPPORT_VECTORS / count * 0.97)
    groups = data.page_groups[rows.page[sample]]
    splits = [(train_rows.astype(np.int64), test_rows.astype(np.int64))
              for train_rows, test_rows in GroupKFold(FOLDS).split(sample, groups=groups)]
    model = calibrated_model(params["C"], params["gamma"], splits)
    model.fit(rows.x[sample], rows.y[sample])
    return model, sample


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


# --- main ---------------------------------------------------------------------------------------


def describe(entry: dict[str, Any]) -> str:
    """Return one model's part of the summary line: support vectors and grouped-CV F1 (SVM and as shipped)."""
    kind = entry["file"].removesuffix(".onnx")
    calibrated = entry["cv"]["calibrated"]
    return (f"{kind}: {entry['support_vectors']} SVs, grouped-CV F1 {entry['cv']['f1_mean']:.3f} "
            f"(calibrated, P >= {calibrated['threshold']:.2f}: {calibrated.get('f1_mean', float('nan')):.3f})")


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    """Return the command-line options."""
    parser = argparse.ArgumentParser(prog="python -m models.training.train_blocks", description=__doc__.split("\n")[0])
    parser.add_argument("--seed", type=int, default=0, help="seed of every sample (default 0)")
    parser.add_argument("--max-blocks", type=int, default=None,
                        help=f"largest training sample of a final model, rows (default {FULL.final_rows})")
    parser.add_argument("--quick", action="store_true", help="tiny samples and grids: a smoke test of every step")
    parser.add_argument("--out", type=Path, default=None,
                        help="output folder (default: models/, or the cache folder with --quick)")
    parser.add_argument("--threshold", default=THRESHOLD,
                        help=f"P(content) threshold written to meta.json, or 'cv' for the one with the best calibrated "
                             f"grouped-CV F1 (default {THRESHOLD})")
    parser.add_argument("--no-cache", action="store_true", help="extract the features again, ignoring the cache")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    """Train, export and describe both models; return the exit status."""
    args = parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s", stream=sys.stderr)
    budget = QUICK if args.quick else FULL
    threshold = None if args.threshold == "cv" else float(args.threshold)
    if args.max_blocks:
        budget = replace(budget, final_rows=args.max_blocks, cv_train_rows=min(budget.cv_train_rows, args.max_blocks))
    out = args.out or (cache_dir() / "quick-models" if args.quick else MODELS_DIR)
    started = time.monotonic()
    pages = list(training_pages())
    data = load(pages, use_cache=not args.no_cache)
    logger.info("data: %d pages in %d groups, %d blocks (%.1f%% content), %d paragraphs (%.1f%% content), "
                "%d non-article pages", data.pages, len(set(data.page_groups)), len(data.block_y),
                100 * data.block_y.mean(), len(data.paragraph_y), 100 * data.paragraph_y.mean(),
                int(data.non_article_pages().sum()))
    block_rows = model_rows(data, "blocks")
    blocks = train(block_rows, data, budget, PAPER_BLOCK_PARAMS, budget.block_grid, args.seed, threshold)
    ablation_started = time.monotonic()
    study = ablation(block_rows, blocks.splits, blocks.meta["params"], budget)
    ablation_seconds = round(time.monotonic() - ablation_started)
    paragraphs = train(model_rows(data, "paragraphs"), data, budget, PAPER_PARAGRAPH_PARAMS, budget.paragraph_grid,
                       args.seed, threshold)
    seconds = round(time.monotonic() - started)
    meta = {
        "version": META_VERSION,
        "created": datetime.date.today().isoformat(),
        "seed": args.seed,
        "quick": bool(args.quick),
        "summary": f"{describe(blocks.meta)}; {describe(paragraphs.meta)} (RBF SVMs, papers 003/004)",
        "training_data": {
            "datasets": list(TRAIN_DATASETS),
            "pages": data.pages,
            "groups": len(set(data.page_groups)),
            "non_article_pages": int(data.non_article_pages().sum()),
            "blocks": len(data.block_y),
            "paragraphs": len(data.paragraph_y),
            "hash": data.hash,
            "held_out_fold": HELD_OUT_FOLD,
        },
        "blocks": blocks.meta,
        "paragraphs": paragraphs.meta,
        "ablation": {**study, "seconds": ablation_seconds},
        "seconds": seconds,
    }
    out.mkdir(parents=True, exist_ok=True)
    (out / "blocks.onnx").write_bytes(blocks.onnx)
    (out / "paragraphs.onnx").write_bytes(paragraphs.onnx)
    (out / "meta.json").write_text(json.dumps(meta, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    ablation_path = ABLATION_FILE if out == MODELS_DIR else out / ABLATION_FILE.name
    ablation_path.write_text(ablation_markdown(study, args.seed), encoding="utf-8")
    logger.info("wrote %s, %s and %s in %d s: %s", out / "meta.json", out / "blocks.onnx", ablation_path, seconds,
                meta["summary"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
