"""The SVM block classifier and Web2Text together: method ``svm-web2text``.

Each CDOM leaf (``extraction.web2text.cdom``) lies in exactly one block of ``extraction.dom.blocks``
(the nearest block-level element over the element that holds its text), so every leaf has two
opinions: the SVM's P(content) of its block and Web2Text's unary P(content) of the leaf. Each is
centred on its own model's threshold (the SVM's from grouped CV, Web2Text's from its validation
sites) in log-odds, and the leaf is kept when the sum is at least 0:

    logit(p_svm) - logit(t_svm) + logit(p_w2t) - logit(t_w2t) >= 0

Nothing in the rule was fitted on evaluation pages: it has no parameter of its own. When no leaf
passes, the leaves of the blocks the SVM kept are the text (its own fallback included), so a
page with text never comes out empty. The SVM's paragraph denoiser is not applied (Web2Text
decides at the finer leaf level). Measured against the pipeline in docs/evaluation/index.md (Web2Text):
higher mean F1 over the five held-out sets, lower on Dragnet, so it is a method of its own and
not the pipeline's default.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
from lxml import html

from extraction.blockclf.classifier import BlockDecision, BlockModels, classify
from extraction.blockclf.classifier import shared_models as shared_block_models
from extraction.dom.html import page_title
from extraction.methods import Extraction
from extraction.web2text.cdom import CDom, collapse
from extraction.web2text.model import Web2TextModel, content_text, shared_models

NAME = "svm-web2text"
_CLIP = 1e-6

FloatArray = npt.NDArray[np.float64]


def logit(p: npt.ArrayLike) -> FloatArray:
    """Return log(p / (1 - p)), p clipped to [1e-6, 1 - 1e-6]."""
    q = np.clip(np.asarray(p, dtype=np.float64), _CLIP, 1.0 - _CLIP)
    return np.log(q / (1.0 - q))


def leaf_blocks(page: CDom, decision: BlockDecision) -> npt.NDArray[np.int64]:
    """Return per leaf the index of its block in ``decision.blocks`` (-1 when none holds it)."""
    index = {block.element: i for i, block in enumerate(decision.blocks)}
    found: dict[html.HtmlElement, int] = {}
    result = np.full(len(page), -1, dtype=np.int64)
    for leaf, owner in enumerate(page.owners):
        chain = []
        element: html.HtmlElement | None = owner
        while element is not None and element not in index and element not in found:
            chain.append(element)
            element = element.getparent()
        block = -1 if element is None else index[element] if element in index else found[element]
        for passed in chain:
            found[passed] = block
        result[leaf] = block
    return result


def combine(svm_p: npt.ArrayLike, svm_threshold: float, w2t_p: npt.ArrayLike,
            w2t_threshold: float) -> npt.NDArray[np.bool_]:
    """Return which leaves are kept by the summed, threshold-centred log-odds (module docstring)."""
    score = logit(svm_p) - logit(svm_threshold) + logit(w2t_p) - logit(w2t_threshold)
    return np.asarray(score >= 0.0)


def extract_ensemble(root: html.HtmlElement, url: str | None = None, model: Web2TextModel | None = None,
                     block_models: BlockModels | None = None) -> Extraction:
    """Return the main text by the SVM and Web2Text together (method ``svm-web2text``; the models
    default to the shipped ones)."""
    page = collapse(root)
    if not len(page):
        return Extraction(method=NAME, text="", title=page_title(root))
    model = model or shared_models()
    block_models = block_models or shared_block_models()
    w2t_p = model.unary_probabilities(page)
    decision = classify(root, block_models, trim=False, stack=False)  # the SVM; its paragraph model would go unused
    blocks = leaf_blocks(page, decision)
    # One extra entry at the end answers index -1 (a leaf in no block): P 0, not kept.
    svm_p = np.append(np.asarray(decision.probabilities, dtype=np.float64), 0.0)[blocks]
    keep = combine(svm_p, block_models.blocks.threshold, w2t_p, model.threshold)
    if not keep.any():
        keep = np.asarray([*decision.kept, False], dtype=bool)[blocks]
    return Extraction(method=NAME, text=content_text(page, keep.astype(np.int64)), title=page_title(root))
