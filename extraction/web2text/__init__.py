"""Web2Text (paper 002): collapsed DOM, block and edge features, unary and pairwise CNNs, Viterbi.

``cdom`` builds the collapsed DOM and its leaves (the text blocks), ``features`` the 128 block
and 25 edge features, ``viterbi`` decodes the potentials, ``model`` runs the ONNX networks
(method ``web2text``), ``ensemble`` joins them with the SVM block classifier (method
``svm-web2text``). The networks are trained by ``models/training/train_web2text.py``.
A package rather than one module: its parts are each tested on their own, and the training code
imports ``cdom`` and ``features`` without loading onnxruntime sessions.
"""

from __future__ import annotations

from typing import Any

from lxml import html

from extraction.methods import Extraction, register


def _extract(root: html.HtmlElement, url: str | None, model: Any = None) -> Extraction:
    from extraction.web2text.model import extract_web2text  # lazy: onnxruntime and the models load on use

    return extract_web2text(root, url, model)


def _extract_ensemble(root: html.HtmlElement, url: str | None, model: Any = None,
                      block_models: Any = None) -> Extraction:
    from extraction.web2text.ensemble import extract_ensemble

    return extract_ensemble(root, url, model, block_models)


register("web2text", _extract)
register("svm-web2text", _extract_ensemble)
