from __future__ import annotations

import io

import numpy as np
import pytest
from PIL import Image

from crawler.render.screenshots import is_blank, png_size, repeated_top_offset
from extraction.pagetype.models import load_gray

VIEWPORT = 800


def _page_like(height: int, seed: int = 0) -> np.ndarray:
    """A page-like picture: white background with dark 'text lines' at random positions."""
    rng = np.random.default_rng(seed)
    image = np.full((height, 320), 255, dtype=np.uint8)
    for top in range(10, height - 20, 24):
        width = int(rng.integers(60, 300))
        image[top : top + 12, 10 : 10 + width] = rng.integers(0, 120, size=(12, width))
    return image


def _png(gray: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    Image.fromarray(gray).save(buffer, format="PNG")
    return buffer.getvalue()


def test_clean_page_has_no_repeat() -> None:
    assert repeated_top_offset(_page_like(4000), VIEWPORT) is None


@pytest.mark.parametrize("offset", [VIEWPORT, 2 * VIEWPORT, 1234])
def test_repeated_top_is_found(offset: int) -> None:
    image = _page_like(4000)
    image[offset : offset + VIEWPORT] = image[:VIEWPORT]
    assert repeated_top_offset(image, VIEWPORT) == offset


def test_partial_repeat_at_the_bottom_is_found_when_long_enough() -> None:
    image = _page_like(1100)
    image[VIEWPORT:] = image[: 1100 - VIEWPORT]  # 300 rows repeated
    assert repeated_top_offset(image, VIEWPORT) is not None


def test_repeat_just_under_the_row_share_is_not_a_glitch() -> None:
    image = _page_like(4000)
    image[VIEWPORT : 2 * VIEWPORT] = image[:VIEWPORT]
    # Spoil 5% of the copied rows: below REPEAT_ROW_SHARE (98%), so not the glitch.
    spoiled = np.arange(VIEWPORT + 5, 2 * VIEWPORT, 20)
    image[spoiled, 0] = 7
    assert repeated_top_offset(image, VIEWPORT) is None


def test_periodic_pattern_is_not_a_glitch() -> None:
    tile = _page_like(96, seed=3)
    image = np.tile(tile, (40, 1))  # a legitimately repeating design
    assert repeated_top_offset(image, VIEWPORT) is None


def test_short_or_flat_images() -> None:
    assert repeated_top_offset(_page_like(200), VIEWPORT) is None
    flat = np.full((3000, 320), 255, dtype=np.uint8)
    assert repeated_top_offset(flat, VIEWPORT) is None
    assert is_blank(flat)
    assert not is_blank(_page_like(500))


def test_png_round_trip_and_size() -> None:
    image = _page_like(700)
    png = _png(image)
    assert png_size(png) == (320, 700)
    assert np.array_equal(load_gray(png), image)
    buffer = io.BytesIO()
    Image.fromarray(image).save(buffer, format="JPEG")
    with pytest.raises(ValueError, match="not a PNG"):
        png_size(buffer.getvalue())
