"""Checks on full-page screenshots: size, blankness and the repeated-top glitch.

The glitch (puppeteer#1576, seen here with several pages rendering at once): Chromium's
full-page capture sometimes paints the top viewport again further down the image. We look
for the top band reappearing, row for row, lower in the picture.
"""

from __future__ import annotations

import io

import numpy as np
from PIL import Image

# Share of the compared rows that must be identical to call a band a repeat of the top.
# 0.98 tolerates a caret or an animated pixel; a legitimate page never repeats a whole
# viewport-tall band this exactly (checked on the demo sites and by hand on dataset pages).
REPEAT_ROW_SHARE = 0.98
# Fewest rows compared before a repeat is trusted (a short tail at the bottom is ignored).
MIN_COMPARED_ROWS = 120
# Grey levels; a screenshot with fewer distinct levels than this is considered blank.
BLANK_MAX_LEVELS = 2


def png_size(png: bytes) -> tuple[int, int]:
    """Return (width, height) of a PNG without decoding its pixels."""
    with Image.open(io.BytesIO(png)) as image:
        if image.format != "PNG":
            raise ValueError(f"not a PNG image: {image.format}")
        return image.size


def is_blank(gray: np.ndarray) -> bool:
    """Return True when the image is (nearly) one flat colour."""
    return gray.size == 0 or len(np.unique(gray[:: max(1, gray.shape[0] // 400)])) <= BLANK_MAX_LEVELS


def repeated_top_offset(gray: np.ndarray, band: int) -> int | None:
    """Return the row where the top ``band`` rows repeat further down, or None.

    A row of the top band that is not flat and occurs only once in the band is the
    signature; wherever it occurs again below, the band placed there is compared with
    the top band row by row.
    """
    height = gray.shape[0]
    band = min(band, height // 2)
    if band < MIN_COMPARED_ROWS:
        return None
    rows = gray[:, ::4].astype(np.uint64)
    weights = np.random.default_rng(1576).integers(1, 2**31, size=rows.shape[1], dtype=np.uint64)
    hashes = rows @ weights
    flat = rows.max(axis=1) == rows.min(axis=1)
    top = hashes[:band]
    values, counts = np.unique(top, return_counts=True)
    unique_in_band = set(values[counts == 1].tolist())
    signature = next(
        (r for r in range(band) if not flat[r] and int(top[r]) in unique_in_band), None
    )
    if signature is None:
        return None
    for hit in np.flatnonzero(hashes[band:] == hashes[signature]) + band:
        offset = int(hit) - signature
        compared = min(band, height - offset)
        if compared < MIN_COMPARED_ROWS:
            continue
        same = np.count_nonzero(hashes[offset : offset + compared] == top[:compared])
        if same >= REPEAT_ROW_SHARE * compared:
            return offset
    return None
