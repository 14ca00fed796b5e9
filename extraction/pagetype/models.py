"""Page type (article / list / other) from the screenshot, the DOM and the URL (paper 000).

Paper 000 classifies the rendered screenshot with a CNN and runs a different extractor per type.
Here three ONNX models in ``models/pagetype/`` (trained by ``models/training/``) decide:

- an **image model** on the screenshot: a small residual network (``resnet``, 448x224 input,
  three classes); paper 000's LeNet-5 (224x224, article vs list) is shipped beside it for the
  comparison in docs/evaluation/page-type.md and the bench;
- the **DOM/URL model** (``extraction.pagetype.features``: link-text shares, repeated structures,
  og:type and JSON-LD types, URL shape);
- their **fusion**: a weighted product of the two distributions, p ~ p_img^w x p_dom^(1-w),
  renormalised, with ``w`` chosen on validation sites (``meta.json``, section ``fusion``).
  Without a screenshot (rendering off, ``scrapy extract`` on saved pages without ``--render``)
  or with a blank one (``MIN_INK_SHARE``) the DOM model decides alone.

Preprocessing, the same function for training and inference (``prepare_screenshot``): grey
levels of the top ``CROP_RATIO`` x width rows of the full-page screenshot (a shorter page is
padded with white below), resized with a box filter to the model's input size, inverted and
scaled to [0, 1] (white background = 0). Paper 000 resizes the whole screenshot; a long page
(8,192 px) squashed into 224 rows keeps no structure, so we look at its top two screens.
"""

from __future__ import annotations

import functools
import io
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from lxml import html
from PIL import Image

from extraction import paths
from extraction.dom.blocks import Block
from extraction.onnx import META_FILE, ModelError, meta_version, read_meta, session, shared

CLASSES: tuple[str, ...] = ("article", "list", "other")
# Rows of the screenshot the image models see, per unit of its width (2.0: 2,560 rows at 1,280 px).
CROP_RATIO = 2.0
# A screenshot with ink (grey level at least INK_LEVEL after inversion) on fewer than this share of
# the model input carries no layout: pages hidden until outside CSS/JS runs, icons blown up
# without their CSS. The image model then abstains and the DOM/URL model decides (training
# leaves such renders out too).
MIN_INK_SHARE = 0.01
INK_LEVEL = 0.1
MODELS_DIR = paths.MODELS_DIR / "pagetype"
# "other" (forum, product, service, documentation, video ... pages) is chosen only when its probability
# exceeds both article's and list's by a margin: the trainer picks it by grouped CV on the training
# sites (``meta.json`` dom.other_margin). An article typed "other" loses its article handling, so a
# close call goes to article or list.
TRAIN_COMMAND = "make train-pagetype"


class PageTypeModelError(ModelError):
    """The page-type models are missing, unreadable or do not match ``meta.json``."""


# Screenshots decoded lately: the crawl checks a capture as it is taken and types the page a moment later;
# decoding a 1280 x 2560 PNG costs about 70 ms, so it is decoded once.
GRAY_CACHE_IMAGES = 8


@functools.lru_cache(maxsize=GRAY_CACHE_IMAGES)
def load_gray(png: bytes) -> np.ndarray:
    """Return an image (PNG or any format Pillow reads) as a read-only 2-D uint8 array of grey levels."""
    with Image.open(io.BytesIO(png)) as image:
        gray = np.asarray(image.convert("L"))
    gray.flags.writeable = False  # shared by the callers of the cache
    return gray


def top_crop(gray: np.ndarray, crop_ratio: float = CROP_RATIO) -> np.ndarray:
    """Return the top ``crop_ratio`` x width rows (padded with white when the page is shorter)."""
    if gray.ndim != 2 or gray.shape[1] == 0:
        raise ValueError(f"expected a 2-D grey image, got shape {gray.shape}")
    rows = max(1, round(crop_ratio * gray.shape[1]))
    top = gray[:rows]
    if top.shape[0] < rows:
        pad = np.full((rows - top.shape[0], gray.shape[1]), 255, dtype=np.uint8)
        top = np.vstack([top, pad])
    return np.ascontiguousarray(top, dtype=np.uint8)


def prepare_screenshot(image: bytes | np.ndarray, height: int, width: int,
                       crop_ratio: float = CROP_RATIO) -> np.ndarray:
    """Return the model input for one screenshot: float32 (1, height, width) in [0, 1], ink = 1.

    ``image``: PNG bytes or a 2-D uint8 grey array (e.g. a cached crop of at least the rows
    ``top_crop`` keeps: cropping again changes nothing, so cached and live inputs agree).
    """
    gray = load_gray(image) if isinstance(image, bytes) else image
    top = top_crop(gray, crop_ratio)
    resized = Image.fromarray(top).resize((width, height), Image.Resampling.BOX)
    return (1.0 - np.asarray(resized, dtype=np.float32) / 255.0)[None]


def ink_share(x: np.ndarray) -> float:
    """Return the share of a model input's pixels that carry ink (see ``MIN_INK_SHARE``)."""
    return float(np.mean(x >= INK_LEVEL)) if x.size else 0.0


def parity_inputs(height: int, width: int, count: int = 3) -> np.ndarray:
    """Fixed model inputs (float32, count x 1 x height x width) for the ONNX vs torch parity check.

    The trainer stores torch's outputs on these in ``meta.json``; the tests run the ONNX model on
    the same inputs, so parity is checked where torch is not installed.
    """
    rng = np.random.default_rng(20261121)
    x = rng.random((count, 1, height, width), dtype=np.float32)
    x[0, 0, :, : width // 2] = 0.0  # a blank half
    x[-1, 0, :: max(1, height // 40)] = 1.0  # ruled lines
    return x


@dataclass(frozen=True)
class PageTypeDecision:
    """The page type with its probability and what decided it ("fusion", "dom" or "image")."""

    page_type: str
    confidence: float
    source: str
    probabilities: Mapping[str, float] = field(default_factory=dict)
    image_probabilities: Mapping[str, float] | None = None
    dom_probabilities: Mapping[str, float] | None = None

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"page_type": self.page_type, "confidence": round(self.confidence, 4),
                               "source": self.source,
                               "probabilities": {k: round(v, 4) for k, v in self.probabilities.items()}}
        if self.image_probabilities is not None:
            out["image"] = {k: round(v, 4) for k, v in self.image_probabilities.items()}
        if self.dom_probabilities is not None:
            out["dom"] = {k: round(v, 4) for k, v in self.dom_probabilities.items()}
        return out


def fuse(image: np.ndarray, dom: np.ndarray, weight: float) -> np.ndarray:
    """Weighted product of two distributions over ``CLASSES``, renormalised (weight on the image)."""
    logp = weight * np.log(np.clip(image, 1e-6, 1.0)) + (1.0 - weight) * np.log(np.clip(dom, 1e-6, 1.0))
    p = np.exp(logp - logp.max(axis=-1, keepdims=True))
    return np.asarray(p / p.sum(axis=-1, keepdims=True), dtype=np.float64)


def _as_mapping(probs: np.ndarray) -> dict[str, float]:
    return {name: float(p) for name, p in zip(CLASSES, probs, strict=True)}


@dataclass
class ImageModel:
    """One screenshot CNN (ONNX) with its input size and classes from ``meta.json``."""

    name: str
    session: Any
    height: int
    width: int
    classes: tuple[str, ...]
    crop_ratio: float = CROP_RATIO

    def probabilities(self, screenshot: bytes | np.ndarray) -> np.ndarray | None:
        """Return probabilities over ``CLASSES`` (a two-class model gives "other" 0), or None when
        the screenshot is (nearly) blank (``MIN_INK_SHARE``)."""
        x = prepare_screenshot(screenshot, self.height, self.width, self.crop_ratio)[None]
        if ink_share(x) < MIN_INK_SHARE:
            return None
        out = np.asarray(self.session.run(None, {self.session.get_inputs()[0].name: x})[0][0], dtype=np.float64)
        probs = np.zeros(len(CLASSES))
        for name, p in zip(self.classes, out, strict=True):
            probs[CLASSES.index(name)] = p
        return probs


@dataclass
class PageTypeModels:
    """The shipped page-type models: image CNN, DOM/URL model, fusion weight."""

    image: ImageModel | None
    dom: Any
    fusion_weight: float
    meta: dict[str, Any]
    images: dict[str, ImageModel] = field(default_factory=dict)
    version: str = ""  # extraction.onnx.meta_version of the folder, recorded with the page type

    @staticmethod
    def version_of(folder: str | Path | None = None) -> str:
        """Return the version the models of ``folder`` (None or empty: the shipped ones) load with, from their
        meta.json alone."""
        return meta_version(Path(folder or MODELS_DIR))

    @classmethod
    def load(cls, folder: str | Path | None = None, image_model: str | None = None) -> PageTypeModels:
        """Load the models named in ``folder/meta.json`` (None or empty: the shipped ``models/pagetype``);
        fail fast, with a ``PageTypeModelError``, on anything missing or inconsistent."""
        try:
            return cls._load(Path(folder or MODELS_DIR), image_model)
        except PageTypeModelError:
            raise
        except ModelError as exc:  # from extraction.onnx: callers catch the page-type error
            raise PageTypeModelError(str(exc)) from exc

    @classmethod
    def _load(cls, folder: Path, image_model: str | None) -> PageTypeModels:
        from extraction.pagetype.features import DOM_FEATURE_VERSION, DOM_FEATURES

        meta = read_meta(folder, TRAIN_COMMAND)
        meta_path = folder / META_FILE
        dom_meta = meta.get("dom") or {}
        if tuple(dom_meta.get("features", ())) != DOM_FEATURES:
            raise PageTypeModelError(f"{meta_path}: the DOM model's features differ from extraction.pagetype.features")
        if dom_meta.get("feature_version") != DOM_FEATURE_VERSION:
            raise PageTypeModelError(f"{meta_path}: DOM feature version {dom_meta.get('feature_version')} "
                                     f"!= {DOM_FEATURE_VERSION}")
        if tuple(dom_meta.get("classes", ())) != CLASSES:
            raise PageTypeModelError(f"{meta_path}: DOM model classes {dom_meta.get('classes')} != {CLASSES}")
        dom = session(folder / dom_meta["file"])
        images: dict[str, ImageModel] = {}
        for name in ("resnet", "lenet5"):
            spec = meta.get(name)
            if not spec or not (folder / spec["file"]).exists():
                continue
            images[name] = ImageModel(name, session(folder / spec["file"]), int(spec["input"]["height"]),
                                      int(spec["input"]["width"]), tuple(spec["classes"]),
                                      float(spec["input"].get("crop_ratio", CROP_RATIO)))
        fusion = meta.get("fusion") or {}
        chosen = image_model or fusion.get("image_model")
        if chosen is not None and chosen not in images:
            raise PageTypeModelError(f"{meta_path}: image model {chosen!r} is not there (have {sorted(images)})")
        weight = float(fusion.get("weight", 0.5)) if chosen == fusion.get("image_model") else 0.5
        return cls(images.get(chosen) if chosen else None, dom, weight, meta, images, cls.version_of(folder))

    @property
    def other_margin(self) -> float:
        """How much likelier than article and list "other" must be to be chosen (``meta.json`` dom.other_margin)."""
        return float((self.meta.get("dom") or {}).get("other_margin", 0.0))

    @property
    def list_route_threshold(self) -> float:
        """p(list) from which a list page goes to the list extractor (``meta.json``, section ``route``)."""
        return float((self.meta.get("route") or {}).get("min_list_probability", 0.5))

    def dom_probabilities(self, root: html.HtmlElement, url: str | None,
                          blocks: Sequence[Block] | None = None) -> np.ndarray:
        """Return the DOM/URL model's probabilities over ``CLASSES``."""
        from extraction.pagetype.features import dom_features

        x = dom_features(root, url, blocks)[None].astype(np.float32)
        outputs = self.dom.run(None, {self.dom.get_inputs()[0].name: x})
        probs = next(o for o in outputs if isinstance(o, np.ndarray) and o.dtype.kind == "f")
        return np.asarray(probs[0], dtype=np.float64)

    def classify(self, root: html.HtmlElement, url: str | None = None,
                 screenshot: bytes | np.ndarray | None = None,
                 blocks: Sequence[Block] | None = None) -> PageTypeDecision:
        """Type one page; the screenshot (PNG bytes or grey array), when there is one, joins the DOM."""
        dom = self.dom_probabilities(root, url, blocks)
        image = None
        if screenshot is not None and self.image is not None:
            image = self.image.probabilities(screenshot)
        if image is not None:
            probs, source = fuse(image, dom, self.fusion_weight), "fusion"
        else:
            probs, source = dom, "dom"
        best = decide(probs, self.other_margin)
        confidence = float(probs[best])
        if not math.isfinite(confidence):
            raise PageTypeModelError("page-type model returned non-finite probabilities")
        return PageTypeDecision(CLASSES[best], confidence, source, _as_mapping(probs),
                                None if image is None else _as_mapping(image), _as_mapping(dom))


def decide(probs: Sequence[float] | np.ndarray, other_margin: float = 0.0) -> int:
    """Return the index in ``CLASSES`` of the chosen type: article or list, whichever is likelier (article on a
    tie), unless "other" beats both by more than ``other_margin``."""
    return int(decide_all(np.asarray(probs, dtype=np.float64)[None, :3], other_margin)[0])


def decide_all(probs: np.ndarray, other_margin: float = 0.0) -> np.ndarray:
    """``decide`` for each row of an [N, 3] array: an int array of class indices."""
    pair = np.where(probs[:, 0] >= probs[:, 1], 0, 1)
    return np.where(probs[:, 2] > np.maximum(probs[:, 0], probs[:, 1]) + other_margin, 2, pair)


def shared_models(directory: str | Path | None = None) -> PageTypeModels:
    """Return the models of ``directory`` (None or empty: the shipped ``models/pagetype``), loaded
    once per process (``extraction.onnx.shared``)."""
    return shared(PageTypeModels.load, directory, MODELS_DIR)
