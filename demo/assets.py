"""Binary assets built in code: PNG images, a minimal PDF, seeded random bytes.

Generated rather than stored so the repository holds no binary files and the
server needs no external resources.
"""

from __future__ import annotations

import random
import struct
import zlib
from collections.abc import Callable
from functools import cache

Pixel = tuple[int, int, int]


def png_bytes(width: int, height: int, pixel: Callable[[int, int], Pixel]) -> bytes:
    """Return a valid 8-bit RGB PNG whose pixel (x, y) colour is ``pixel(x, y)``."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    rows = bytearray()
    for y in range(height):
        rows.append(0)  # filter type "None" for every scanline
        for x in range(width):
            rows.extend(pixel(x, y))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(bytes(rows), 9))
            + chunk(b"IEND", b""))


def _photo_pixel(x: int, y: int) -> Pixel:
    """A dusk skyline over water, as a stand-in news photo."""
    if y > 100:  # water with gentle ripples
        return (30, 70 + (y % 7) * 4, 110)
    skyline = 40 + (37 * (x // 16) % 45)
    if y > skyline:
        return (40, 40, 60) if (x // 4 + y // 6) % 5 else (250, 220, 120)  # lit windows
    return (250 - y, 170 - y, 90 + y // 2)


def _banner_pixel(x: int, y: int) -> Pixel:
    """A red-to-orange banner with a light band, a stand-in legacy advertisement image."""
    if 16 <= y <= 23:
        return (255, 240, 220)
    return (200, 40 + x // 2, 40)


@cache
def static_assets() -> dict[str, tuple[str, bytes]]:
    """Return the server's static files: path -> (content type, bytes)."""
    return {
        "/static/photo.png": ("image/png", png_bytes(240, 135, _photo_pixel)),
        "/static/banner.png": ("image/png", png_bytes(130, 40, _banner_pixel)),
        "/favicon.ico": ("image/png", png_bytes(16, 16, lambda x, y: (19, 49, 92))),
    }


@cache
def small_png() -> bytes:
    """Return a small valid PNG (32x32 gradient) for the /bad/image.png case."""
    return png_bytes(32, 32, lambda x, y: (x * 8, y * 8, 128))


@cache
def minimal_pdf() -> bytes:
    """Return a minimal but valid one-page PDF with a correct xref table."""
    stream = b"BT /F1 24 Tf 72 720 Td (Demo PDF: not an HTML page) Tj ET"
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % off for off in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


@cache
def random_bytes(size: int = 65536, seed: int = 2026) -> bytes:
    """Return ``size`` seeded pseudo-random bytes (same seed, same bytes)."""
    return random.Random(seed).randbytes(size)
