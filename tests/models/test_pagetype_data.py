"""The page-type screenshot cache: crops, manifest lines, reading the manifest back."""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
from PIL import Image

from crawler.render.offline import RenderedPage
from models.training.pagetype_data import CROP_ROWS_PER_WIDTH, manifest_entry, read_manifest, top_crop


def _png(height: int, width: int = 100) -> bytes:
    buffer = io.BytesIO()
    Image.fromarray(np.full((height, width, 3), 128, dtype=np.uint8), "RGB").save(buffer, format="PNG")
    return buffer.getvalue()


def _record(key: str) -> dict[str, object]:
    return {"key": key, "dataset": "wcxb-dev", "page_id": key, "site": "example.com", "fold": 2,
            "label": "list", "lang": "en", "url": None, "variant": "offline"}


def test_top_crop_is_grey_and_at_most_three_widths():
    tall = top_crop(_png(1000))
    assert tall.mode == "L" and tall.size == (100, int(CROP_ROWS_PER_WIDTH * 100))
    assert top_crop(_png(120)).size == (100, 120)  # shorter pages are kept whole (padding comes later)


def test_manifest_entry_writes_the_crop_and_failures_have_none(tmp_path: Path):
    good = manifest_entry(tmp_path, _record("a"), RenderedPage("a", _png(500), 500), "http://x.test/a")
    assert (tmp_path / good["png"]).exists() and (good["width"], good["height"]) == (100, 300)
    assert good["render_url"] == "http://x.test/a" and good["error"] is None
    failed = manifest_entry(tmp_path, _record("b"), RenderedPage("b", None, None, "timeout: over 80 s"), None)
    assert failed["png"] is None and failed["error"].startswith("timeout")


def test_read_manifest_keeps_the_last_line_per_key_and_skips_broken_lines(tmp_path: Path):
    lines = [json.dumps({"key": "a", "error": "timeout"}), "{not json", json.dumps({"key": "b", "error": None}),
             json.dumps({"key": "a", "error": None}), ""]
    (tmp_path / "manifest.jsonl").write_text("\n".join(lines), encoding="utf-8")
    entries = {e["key"]: e for e in read_manifest(tmp_path)}
    assert set(entries) == {"a", "b"} and entries["a"]["error"] is None
    assert read_manifest(tmp_path / "missing") == []
