"""Web2Text at inference time: CDOM, features, the two ONNX CNNs, Viterbi, the page's main text.

The unary and pairwise CNNs (paper 002, section 3.4) are ONNX files trained by
``models/training/train_web2text.py``; ``meta.json`` beside them holds the feature names in
order, ``FEATURE_VERSION``, the standardisation (mean and standard deviation per column,
binary columns 0 and 1) and the decoding's pairwise weight and content threshold
(``extraction.web2text.viterbi``). A model whose features do not
match this code is refused with a message saying so. onnxruntime only, loaded by
``extraction.onnx``: no torch at crawl time.

Text: the leaves labelled content, in document order; a line break between two kept leaves
when the unstyled page breaks the line between them or a removed leaf lies between them, else
a space (a link inside a sentence stays in its sentence).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import onnxruntime as ort
from lxml import html

from extraction.dom.html import page_title
from extraction.methods import Extraction
from extraction.onnx import META_FILE, ModelError, meta_version, read_meta, session, shared
from extraction.paths import MODELS_DIR
from extraction.web2text.cdom import CDom, collapse
from extraction.web2text.features import BLOCK_FEATURES, EDGE_FEATURES, FEATURE_VERSION, page_features
from extraction.web2text.viterbi import viterbi, with_threshold

NAME = "web2text"
MODEL_DIR = MODELS_DIR / "web2text"
TRAIN_COMMAND = "make train-web2text"
UNARY_FILE = "unary.onnx"
PAIRWISE_FILE = "pairwise.onnx"
INPUT_NAME = "features"  # (batch, features, sequence) float32
OUTPUT_NAME = "probs"  # (batch, classes, sequence), softmax over classes

FloatArray = npt.NDArray[np.float32]


@dataclass(frozen=True)
class Labelling:
    """Web2Text's decision on one page."""

    labels: npt.NDArray[np.int64]  # 1 content, 0 boilerplate, per leaf
    unary: FloatArray  # (leaves, 2)
    pairwise: FloatArray  # (leaves - 1, 4)
    fallback: str | None = None  # None, "per-leaf" or "most-probable" (see decode)


@dataclass(frozen=True)
class Web2TextModel:
    """The unary and pairwise networks with their standardisation and decoding weight."""

    unary: ort.InferenceSession
    pairwise: ort.InferenceSession
    block_mean: FloatArray
    block_scale: FloatArray  # 1 / standard deviation
    edge_mean: FloatArray
    edge_scale: FloatArray
    weight: float
    threshold: float
    meta: dict[str, Any]
    version: str = ""  # extraction.onnx.meta_version of the folder

    @classmethod
    def load(cls, directory: str | Path | None = None) -> Web2TextModel:
        """Load and validate the models of ``directory`` (None or empty: the shipped ``models/web2text``)."""
        folder = Path(directory or MODEL_DIR)
        meta = read_meta(folder, TRAIN_COMMAND)
        meta_path = folder / META_FILE
        if meta.get("feature_version") != FEATURE_VERSION or tuple(meta.get("block_features", ())) != BLOCK_FEATURES \
                or tuple(meta.get("edge_features", ())) != EDGE_FEATURES:
            raise ModelError(f"{meta_path} was trained on other features (version {meta.get('feature_version')}, "
                             f"this code has {FEATURE_VERSION}); retrain with `{TRAIN_COMMAND}`")
        scaling = meta["standardisation"]
        return cls(
            unary=session(folder / UNARY_FILE),
            pairwise=session(folder / PAIRWISE_FILE),
            block_mean=np.asarray(scaling["block_mean"], dtype=np.float32),
            block_scale=1.0 / np.asarray(scaling["block_std"], dtype=np.float32),
            edge_mean=np.asarray(scaling["edge_mean"], dtype=np.float32),
            edge_scale=1.0 / np.asarray(scaling["edge_std"], dtype=np.float32),
            weight=float(meta["decoding"]["pairwise_weight"]),
            threshold=float(meta["decoding"]["content_threshold"]),
            meta=meta,
            version=meta_version(folder),
        )

    def potentials(self, block: FloatArray, edge: FloatArray) -> tuple[FloatArray, FloatArray]:
        """Return the unary (n, 2) and pairwise (n - 1, 4) probabilities of raw block and edge features."""
        unary = _run(self.unary, (block - self.block_mean) * self.block_scale, 2)
        pairwise = _run(self.pairwise, (edge - self.edge_mean) * self.edge_scale, 4)
        return unary, pairwise

    def unary_probabilities(self, page: CDom) -> FloatArray:
        """Return the unary network's P(content) per leaf (no pairwise network, no decoding)."""
        block, _ = page_features(page)
        return _run(self.unary, (block - self.block_mean) * self.block_scale, 2)[:, 1]

    def label(self, page: CDom) -> Labelling:
        """Return the decoded labels of a page's leaves, with the potentials they come from."""
        block, edge = page_features(page)
        unary, pairwise = self.potentials(block, edge)
        return decode(unary, pairwise, self.weight, self.threshold)


def decode(unary: FloatArray, pairwise: FloatArray, weight: float, threshold: float) -> Labelling:
    """Return the Viterbi labelling; when it keeps no leaf of a page that has leaves, fall back to
    the leaves at or over the threshold on their own (the pairwise potentials can outvote a lone
    content leaf), else to the most probable leaf: an empty text is never the better answer for a
    page with text (2.4% of the held-out pages came out empty before)."""
    labels = viterbi(with_threshold(unary, threshold), pairwise, weight)
    if len(labels) == 0 or labels.any():
        return Labelling(labels, unary, pairwise)
    alone = (unary[:, 1] >= threshold).astype(np.int64)
    if alone.any():
        return Labelling(alone, unary, pairwise, "per-leaf")
    labels[int(np.argmax(unary[:, 1]))] = 1
    return Labelling(labels, unary, pairwise, "most-probable")


def _run(session: ort.InferenceSession, rows: FloatArray, classes: int) -> FloatArray:
    if len(rows) == 0:
        return np.zeros((0, classes), dtype=np.float32)
    features = np.ascontiguousarray(rows.T[np.newaxis], dtype=np.float32)
    probs = session.run([OUTPUT_NAME], {INPUT_NAME: features})[0]
    return np.asarray(probs[0].T, dtype=np.float32)


def shared_models(directory: str | Path | None = None) -> Web2TextModel:
    """Return the model of ``directory`` (None or empty: the shipped ``models/web2text``), loaded once
    per process (``extraction.onnx.shared``)."""
    return shared(Web2TextModel.load, directory, MODEL_DIR)


def content_text(page: CDom, labels: npt.ArrayLike) -> str:
    """Return the text of the leaves labelled 1, joined as the module docstring says."""
    parts: list[str] = []
    previous = -2
    for index, label in enumerate(np.asarray(labels).tolist()):
        if not label:
            continue
        if parts:
            parts.append("\n" if previous != index - 1 or page.breaks[index] else " ")
        parts.append(page.texts[index])
        previous = index
    return "".join(parts)


def extract_web2text(root: html.HtmlElement, url: str | None = None,
                     model: Web2TextModel | None = None) -> Extraction:
    """Return Web2Text's main text of a parsed page (method ``web2text``; ``model`` default: the
    shipped one)."""
    page = collapse(root)
    labelling = (model or shared_models()).label(page)
    return Extraction(method=NAME, text=content_text(page, labelling.labels), title=page_title(root))
