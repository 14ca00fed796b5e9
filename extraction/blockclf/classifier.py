"""The SVM block classifier and paragraph denoiser at inference time (papers 003 and 004).

Every block of the page (``extraction.dom.blocks``) gets its features (``extraction.blockclf.features``,
the same code that made the training data) and the block model's calibrated probability of
being content; blocks at or over the threshold in ``meta.json`` are kept. Inside each kept block
the paragraph model trims noise at the head and the tail (paper 003: in-block noise "usually sits
at the head or the tail of the content block and does not appear among the content
paragraphs"): leading and trailing paragraphs under the threshold are dropped, middle ones stay.
When no block reaches the threshold, the most probable block is kept (an empty text is never the
better answer for a page that has text; the decision is counted as ``fallback``).

Models are ONNX files exported by ``models/training/train_blocks.py`` and run with onnxruntime
(no scikit-learn at crawl time). ``meta.json`` names the features in order and their version;
a model whose features do not match this code is refused with a message saying so.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import onnxruntime as ort
from lxml import html

from extraction.blockclf.features import (
    BLOCK_FEATURES,
    FEATURE_VERSION,
    PARAGRAPH_FEATURES,
    block_features,
    paragraph_features,
)
from extraction.dom.blocks import Block, blocks_text, page_blocks
from extraction.dom.html import page_title
from extraction.methods import Extraction, register
from extraction.paths import MODELS_DIR

NAME = "svm"
# Shipped models (repository root / models); BLOCKS_MODEL_DIR in the environment points elsewhere.
META_FILE = "meta.json"


class ModelError(RuntimeError):
    """A model that cannot be used (missing file, features that do not match this code)."""


@dataclass(frozen=True)
class _Model:
    session: ort.InferenceSession
    input_name: str
    threshold: float

    def content_probability(self, features: np.ndarray) -> np.ndarray:
        """Return P(content) for each row of ``features``."""
        if len(features) == 0:
            return np.zeros(0, dtype=np.float32)
        outputs = self.session.run(None, {self.input_name: features.astype(np.float32, copy=False)})
        probabilities = np.asarray(outputs[1])
        return probabilities[:, 1]


@dataclass(frozen=True)
class BlockModels:
    """The block model, the paragraph model and their meta data."""

    blocks: _Model
    paragraphs: _Model
    meta: dict[str, Any]

    @classmethod
    def load(cls, directory: str | Path | None = None) -> BlockModels:
        """Load and validate the models of ``directory`` (default: BLOCKS_MODEL_DIR or ``models/``)."""
        folder = Path(directory or os.environ.get("BLOCKS_MODEL_DIR") or MODELS_DIR)
        meta_path = folder / META_FILE
        try:
            meta = json.loads(meta_path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ModelError(f"cannot read {meta_path}: {exc} (train with `make train-blocks`)") from exc
        return cls(_session(folder, meta, "blocks", BLOCK_FEATURES),
                   _session(folder, meta, "paragraphs", PARAGRAPH_FEATURES), meta)


def _session(folder: Path, meta: dict[str, Any], kind: str, names: tuple[str, ...]) -> _Model:
    entry = meta.get(kind) or {}
    where = folder / META_FILE
    if entry.get("feature_version") != FEATURE_VERSION:
        raise ModelError(f"{where}: {kind} model has feature version {entry.get('feature_version')!r}, this code "
                         f"computes version {FEATURE_VERSION}: retrain (models/training/train_blocks.py)")
    if tuple(entry.get("features", ())) != names:
        raise ModelError(f"{where}: {kind} model's feature names differ from this code's: retrain")
    path = folder / entry.get("file", f"{kind}.onnx")
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1  # one page at a time per crawl process; threads only add overhead
    options.inter_op_num_threads = 1
    try:
        session = ort.InferenceSession(str(path), sess_options=options, providers=["CPUExecutionProvider"])
    except Exception as exc:  # onnxruntime raises its own types for missing/corrupt files
        raise ModelError(f"cannot load {path}: {exc}") from exc
    return _Model(session, session.get_inputs()[0].name, float(entry.get("threshold", 0.5)))


@lru_cache(maxsize=4)
def shared_models(directory: str | None = None) -> BlockModels:
    """Return the models of ``directory``, loaded once per process."""
    return BlockModels.load(directory)


@dataclass
class BlockDecision:
    """What the classifier decided on one page."""

    blocks: list[Block]
    probabilities: np.ndarray
    kept: list[bool]
    paragraphs: list[list[bool]] = field(default_factory=list)  # per block: paragraphs kept
    fallback: bool = False

    @property
    def text(self) -> str:
        """Return the kept paragraphs of the kept blocks, one per line, in document order."""
        return blocks_text(self.blocks, self.kept, self.paragraphs)

    def stats(self) -> dict[str, int]:
        """Return counts per decision for the item and the crawl stats."""
        kept_paragraphs = sum(sum(flags) for flags, keep in zip(self.paragraphs, self.kept, strict=True) if keep)
        all_paragraphs = sum(len(b.paragraphs) for b, keep in zip(self.blocks, self.kept, strict=True) if keep)
        return {"blocks": len(self.blocks), "blocks_kept": sum(self.kept),
                "paragraphs_trimmed": all_paragraphs - kept_paragraphs, "fallback": int(self.fallback)}


def trim_ends(probabilities: np.ndarray, threshold: float) -> list[bool]:
    """Return which paragraphs stay: leading and trailing ones under ``threshold`` go, the middle stays."""
    flags = [bool(p >= threshold) for p in probabilities]
    if not any(flags):
        return [True] * len(flags)  # the block was judged content: keep it whole rather than empty
    first = flags.index(True)
    last = len(flags) - 1 - flags[::-1].index(True)
    return [first <= i <= last for i in range(len(flags))]


def classify(root: html.HtmlElement, models: BlockModels | None = None,
             blocks: list[Block] | None = None, trim: bool = True) -> BlockDecision:
    """Classify the blocks of a parsed page (not modified) and trim their paragraphs.

    ``blocks``: ``page_blocks(root)`` when the caller already has them; ``trim`` False skips the
    paragraph model (every paragraph of a kept block stays).
    """
    models = models or shared_models()
    blocks = page_blocks(root) if blocks is None else blocks
    probabilities = models.blocks.content_probability(block_features(blocks, root))
    kept = [bool(p >= models.blocks.threshold) for p in probabilities]
    decision = BlockDecision(blocks, probabilities, kept)
    if blocks and not any(kept):
        kept[int(np.argmax(probabilities))] = True
        decision.fallback = True
    chosen = [block for block, keep in zip(blocks, kept, strict=True)
              if trim and keep and len(block.paragraphs) > 1]
    if chosen:  # one model call for every paragraph of the page
        features = np.concatenate([paragraph_features(block) for block in chosen])
        probabilities_of = iter(np.split(models.paragraphs.content_probability(features),
                                         np.cumsum([len(block.paragraphs) for block in chosen])[:-1]))
    for block, keep in zip(blocks, kept, strict=True):
        if trim and keep and len(block.paragraphs) > 1:
            decision.paragraphs.append(trim_ends(next(probabilities_of), models.paragraphs.threshold))
        else:
            decision.paragraphs.append([True] * len(block.paragraphs))
    return decision


def extract_svm(root: html.HtmlElement, url: str | None) -> Extraction:
    """The ``svm`` method: blocks classified, paragraphs trimmed."""
    return Extraction(method=NAME, text=classify(root).text, title=page_title(root), page_type="article")


register(NAME, extract_svm)
