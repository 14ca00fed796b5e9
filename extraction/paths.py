"""Where the library's shipped files live, written once for every module that reads them."""

from __future__ import annotations

from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
TEMPLATES_DIR = REPO_ROOT / "templates_db"  # TEMPLATES_STORE by default, wherever a command runs
MODELS_DIR = REPO_ROOT / "models"  # blocks.onnx, paragraphs.onnx, meta.json; pagetype/ and web2text/ below
DATA_DIR = Path(__file__).resolve().parent / "data"  # word lists of the block features and the clean-up
