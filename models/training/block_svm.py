"""The block and paragraph SVMs of ``models.training.train_blocks``: scikit-learn pipelines and their ONNX export.

``export_onnx`` builds the float64 graph that ``extraction.blockclf.classifier`` runs;
``skl2onnx_export`` is the cross-check; ``parity`` compares either with scikit-learn.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import onnxruntime as ort
from sklearn.calibration import CalibratedClassifierCV
from sklearn.compose import ColumnTransformer
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import MinMaxScaler
from sklearn.svm import SVC

from models.training.block_data import IntArray

N_JOBS = 2  # the training machine has two cores
PARITY_ROWS = 2000
PARITY_TOLERANCE = 1e-4
TARGET_OPSET = 17
IR_VERSION = 8  # the IR version of opset 17; onnxruntime >= 1.13 reads it
CACHE_SIZE_MB = 1000  # libsvm's kernel cache per fit

Split = tuple[IntArray, IntArray]  # (training rows, validation rows) of one CV fold


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


@dataclass(frozen=True)
class RbfSvm:
    """The numbers of a calibrated RBF SVM after min-max scaling: all that ``rbf_svm_graph`` needs.

    P(content) = 1 / (1 + exp(a * decision + b)), decision = sum_i dual_i exp(-gamma ||z - sv_i||^2)
    + intercept, z = x * scale + offset.
    """

    scale: npt.NDArray[np.float64]  # [n_features]
    offset: npt.NDArray[np.float64]  # [n_features]
    vectors: npt.NDArray[np.float64]  # [n_support, n_features], scaled space
    dual: npt.NDArray[np.float64]  # [n_support]
    intercept: float
    gamma: float
    a: float
    b: float

    @classmethod
    def of(cls, model: Pipeline) -> RbfSvm:
        """Return the numbers of a fitted ``calibrated_model``."""
        scaler = model.named_steps["scale"]
        calibrated = model.named_steps["calibrated"]
        classifier = calibrated.calibrated_classifiers_[0]
        svm = classifier.estimator
        sigmoid = classifier.calibrators[0]
        if (len(calibrated.calibrated_classifiers_) != 1 or svm.kernel != "rbf" or list(svm.classes_) != [0, 1]
                or isinstance(svm.gamma, str)):
            raise ValueError("export_onnx takes a calibrated_model: one calibrated binary RBF SVC (ensemble=False), "
                             "numeric gamma")
        return cls(np.asarray(scaler.scale_, dtype=np.float64), np.asarray(scaler.min_, dtype=np.float64),
                   np.asarray(svm.support_vectors_, dtype=np.float64),
                   np.asarray(svm.dual_coef_, dtype=np.float64).reshape(-1), float(svm.intercept_[0]),
                   float(svm.gamma), float(sigmoid.a_), float(sigmoid.b_))

    @classmethod
    def read(cls, onnx_model: bytes) -> RbfSvm:
        """Return the numbers of a graph written by ``rbf_svm_graph`` (this layout or an earlier one, which had
        ``vectors_t`` without the row of -1, or ``minus_gamma`` for ``gamma``), to write them again in the
        current layout."""
        import onnx  # training-only dependency
        from onnx import numpy_helper

        graph = onnx.load_from_string(onnx_model).graph
        values = {init.name: numpy_helper.to_array(init) for init in graph.initializer}
        gamma = float(values["gamma"]) if "gamma" in values else -float(values["minus_gamma"])
        vectors_t = values["vectors_t_augmented"][:-1] if "vectors_t_augmented" in values else values["vectors_t"]
        return cls(values["scale"].reshape(-1), values["offset"].reshape(-1), np.asarray(vectors_t.T),
                   values["dual_t"].reshape(-1), float(values["intercept"]), gamma,
                   -float(values["minus_a"]), -float(values["minus_b"]))


def export_onnx(model: Pipeline, n_features: int) -> bytes:
    """Return the ONNX graph of a fitted ``calibrated_model`` (``rbf_svm_graph`` of its ``RbfSvm``)."""
    return rbf_svm_graph(RbfSvm.of(model), n_features)


def rbf_svm_graph(svm: RbfSvm, n_features: int) -> bytes:
    """Return the ONNX graph of ``svm``: input float32 [N, n_features], outputs ``label`` (int64 [N]) and
    ``probabilities`` (float32 [N, 2], column 1 = P(content)).

    Built here from standard ONNX operators, in float64 but for the kernel's ``Exp``: min-max scaling,
    the exponents -gamma ||z - sv||^2 = (2 gamma z).sv - gamma ||z||^2 - gamma ||sv||^2 in one ``Gemm``
    ([2 gamma z, gamma ||z||^2] times [sv^T; -1], plus the row -gamma ||sv||^2), the kernel, the dual
    coefficients, then the sigmoid calibration P = 1 / (1 + exp(a * decision + b)), as scikit-learn
    computes it. The ``Exp`` of the [N, n_support] exponents runs in float32 (half the graph's time in
    float64; P(content) moves by ~2e-5 on the shipped paragraph model, inside ``PARITY_TOLERANCE``).
    The [N, n_support] arrays are what costs: one ``Gemm`` instead of a MatMul and two Subs, and no cap of
    the exponents at 0 (rounding leaves them within ~1e-12 of it, and exp of that is 1 in float32) took
    200 rows of the block model from 3.2 to 2.5 ms (P(content) moved by at most 4e-7). skl2onnx's converter uses
    ONNX-ML's ``SVMClassifier``, all float32: on the class-balanced SVMs here (dual coefficients up to
    C x class weight, thousands of support vectors) its P(content) drifts by ~1e-4 from scikit-learn,
    over ``PARITY_TOLERANCE``; ``skl2onnx_export`` is kept as a cross-check.
    """
    import onnx  # training-only dependency (installed with skl2onnx)
    from onnx import TensorProto, helper, numpy_helper

    def constant(name: str, value: Any) -> onnx.TensorProto:
        return numpy_helper.from_array(np.asarray(value, dtype=np.float64), name)

    vectors = np.asarray(svm.vectors, dtype=np.float64)
    initializers = [
        constant("scale", svm.scale.reshape(1, -1)),
        constant("offset", svm.offset.reshape(1, -1)),
        # the support vectors (transposed) and a row of -1 that takes gamma ||z||^2 off each exponent
        constant("vectors_t_augmented", np.vstack([vectors.T, -np.ones((1, len(vectors)))])),
        constant("minus_gamma_vector_norms", -svm.gamma * (vectors**2).sum(axis=1).reshape(1, -1)),
        constant("gamma", svm.gamma),
        constant("two_gamma", 2.0 * svm.gamma),
        constant("dual_t", svm.dual.reshape(-1, 1)),
        constant("intercept", svm.intercept),
        constant("minus_a", -svm.a),
        constant("minus_b", -svm.b),
        constant("one", 1.0),
        numpy_helper.from_array(np.asarray([1], dtype=np.int64), "axis_1"),
    ]
    nodes = [
        helper.make_node("Cast", ["features"], ["x"], to=TensorProto.DOUBLE),
        helper.make_node("Mul", ["x", "scale"], ["x_scaled"]),
        helper.make_node("Add", ["x_scaled", "offset"], ["z"]),  # MinMaxScaler: x * scale_ + min_
        helper.make_node("Mul", ["z", "z"], ["z_squares"]),
        helper.make_node("ReduceSum", ["z_squares", "axis_1"], ["z_norms"], keepdims=1),
        helper.make_node("Mul", ["z_norms", "gamma"], ["gamma_z_norms"]),
        helper.make_node("Mul", ["z", "two_gamma"], ["two_gamma_z"]),
        helper.make_node("Concat", ["two_gamma_z", "gamma_z_norms"], ["z_augmented"], axis=1),
        helper.make_node("Gemm", ["z_augmented", "vectors_t_augmented", "minus_gamma_vector_norms"], ["exponents"]),
        helper.make_node("Cast", ["exponents"], ["exponents_float"], to=TensorProto.FLOAT),
        helper.make_node("Exp", ["exponents_float"], ["kernel_float"]),
        helper.make_node("Cast", ["kernel_float"], ["kernel"], to=TensorProto.DOUBLE),
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
