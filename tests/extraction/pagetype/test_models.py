"""Page type (paper 000): preprocessing, ONNX parity, fusion, the shipped models on hand-made pages."""

from __future__ import annotations

import io

import numpy as np
import pytest
from PIL import Image

from extraction.dom.html import parse_html
from extraction.pagetype.models import (
    CLASSES,
    CROP_RATIO,
    MODELS_DIR,
    PageTypeModels,
    fuse,
    load_gray,
    parity_inputs,
    prepare_screenshot,
    top_crop,
)
from models.training.pagetype_data import top_crop as cache_crop
from models.training.pagetype_meta import read_meta

HAVE_MODELS = (MODELS_DIR / "meta.json").exists()
needs_models = pytest.mark.skipif(not HAVE_MODELS, reason="models/pagetype/meta.json absent (train first)")


def _screenshot(height: int, width: int = 1280) -> bytes:
    """A fake page: coloured header, grey text lines, a dark block lower down."""
    rng = np.random.default_rng(height)
    image = np.full((height, width, 3), 255, dtype=np.uint8)
    image[:90] = (20, 60, 160)
    for top in range(140, height - 20, 28):
        image[top:top + 12, 100:100 + int(rng.integers(300, 1000))] = (90, 90, 90)
    image[min(height - 1, 1500):min(height, 1800), 200:800] = (200, 30, 30)
    buffer = io.BytesIO()
    Image.fromarray(image, "RGB").save(buffer, format="PNG")
    return buffer.getvalue()


def _png_bytes(image: Image.Image) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()


def test_top_crop_keeps_two_widths_and_pads_short_pages_white():
    tall = np.zeros((5000, 100), dtype=np.uint8)
    assert top_crop(tall).shape == (round(CROP_RATIO * 100), 100)
    short = np.zeros((50, 100), dtype=np.uint8)
    cropped = top_crop(short)
    assert cropped.shape == (200, 100)
    assert (cropped[:50] == 0).all() and (cropped[50:] == 255).all()
    with pytest.raises(ValueError):
        top_crop(np.zeros((10, 0), dtype=np.uint8))


def test_prepare_screenshot_is_grey_inverted_and_sized():
    x = prepare_screenshot(_screenshot(3000), 448, 224)
    assert x.shape == (1, 448, 224) and x.dtype == np.float32
    assert x.min() >= 0.0 and x.max() <= 1.0
    assert x[0, 300, 5] == 0.0  # white page margin -> 0 (no ink)
    assert x[0, 5, 5] > 0.5  # dark header -> ink
    white = prepare_screenshot(np.full((3000, 1280), 255, dtype=np.uint8), 224, 224)
    assert not white.any()


@pytest.mark.parametrize("height", [600, 2560, 3000, 8192])
def test_training_cache_and_live_screenshot_give_the_same_input(height):
    """Training reads the cached grey top crop (PNG); the crawl passes the full RGB screenshot."""
    live = _screenshot(height)
    cached = load_gray(_png_bytes(cache_crop(live)))
    for size in ((224, 224), (448, 224)):
        assert np.array_equal(prepare_screenshot(live, *size), prepare_screenshot(cached, *size))


def test_fusion_weights_and_normalises():
    image = np.array([0.9, 0.05, 0.05])
    dom = np.array([0.2, 0.7, 0.1])
    assert np.allclose(fuse(image, dom, 1.0), image)
    assert np.allclose(fuse(image, dom, 0.0), dom)
    both = fuse(image, dom, 0.5)
    assert np.isclose(both.sum(), 1.0)
    expected = np.sqrt(image * dom) / np.sqrt(image * dom).sum()
    assert np.allclose(both, expected)
    batch = fuse(np.stack([image, dom]), np.stack([dom, image]), 0.5)
    assert batch.shape == (2, 3) and np.allclose(batch.sum(axis=1), 1.0)


@needs_models
@pytest.mark.parametrize("name", ["lenet5", "resnet"])
def test_onnx_matches_torch_on_the_parity_inputs(name):
    """The trainer stored torch's outputs on ``parity_inputs``; the shipped ONNX must reproduce them."""
    meta = read_meta()[name]
    models = PageTypeModels.load(MODELS_DIR)
    model = models.images[name]
    x = parity_inputs(meta["input"]["height"], meta["input"]["width"])
    onnx = model.session.run(None, {model.session.get_inputs()[0].name: x})[0]
    assert np.abs(onnx - np.asarray(meta["parity"]["fixture_torch_probs"])).max() < 1e-4
    assert meta["parity"]["validation_max_abs"] < 1e-4
    assert tuple(meta["classes"]) == (("article", "list") if name == "lenet5" else CLASSES)


LIST_PAGE = ("<html><head><title>World news</title></head><body>"
             "<nav><a href='/'>Home</a> <a href='/world'>World</a></nav>"
             "<h1>World</h1><ul>" + "".join(
                 f"<li><a href='/world/2026/05/{i:02d}/story-about-topic-number-{i}.html'>Government announces new "
                 f"measures on topic number {i} after long debate</a><p>Short teaser {i}.</p></li>" for i in range(25))
             + "</ul><footer>(c) 2026 News</footer></body></html>")
ARTICLE_PAGE = ("<html><head><title>Council approves budget</title><meta property='og:type' content='article'>"
                "</head><body><nav><a href='/'>Home</a> <a href='/city'>City</a></nav><article><h1>Council approves"
                " budget</h1>" + "".join(
                    f"<p>Paragraph {i} of the story tells at length what the council decided and why it matters to "
                    f"residents, with quotes from officials and numbers from the budget documents. {'More. ' * 20}</p>"
                    for i in range(8)) + "</article><footer>(c) 2026 News</footer></body></html>")


@needs_models
def test_dom_model_types_hand_made_pages():
    models = PageTypeModels.load(MODELS_DIR)
    listed = models.classify(parse_html(LIST_PAGE), "https://news.example.com/world/")
    article = models.classify(parse_html(ARTICLE_PAGE),
                              "https://news.example.com/city/2026/05/10/council-approves-budget.html")
    assert (listed.page_type, listed.source) == ("list", "dom")
    assert (article.page_type, article.source) == ("article", "dom")
    assert 0.5 < listed.confidence <= 1.0 and 0.5 < article.confidence <= 1.0
    assert set(listed.probabilities) == set(CLASSES)
    assert np.isclose(sum(listed.probabilities.values()), 1.0, atol=1e-4)


@needs_models
def test_screenshot_joins_the_dom_in_a_fusion():
    models = PageTypeModels.load(MODELS_DIR)
    decision = models.classify(parse_html(ARTICLE_PAGE), None, _screenshot(3000))
    assert decision.source == "fusion"
    assert decision.image_probabilities is not None and decision.dom_probabilities is not None
    expected = fuse(np.array([decision.image_probabilities[c] for c in CLASSES]),
                    np.array([decision.dom_probabilities[c] for c in CLASSES]), models.fusion_weight)
    assert np.allclose([decision.probabilities[c] for c in CLASSES], expected, atol=1e-4)
