"""The common page model for ground-truth datasets and where the datasets live.

Datasets are read in place from ``DATASETS_DIR`` (default ``<repo>/../shared/datasets``);
nothing from them is ever copied into the repository. Every HTML file there is stored
gzip-compressed under its original name plus ``.gz``.
"""

from __future__ import annotations

import gzip
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from extraction.paths import REPO_ROOT

ENV_VAR = "DATASETS_DIR"

# page_type values shared by every reader.
ARTICLE = "article"
LIST = "list"
OTHER = "other"
NONARTICLE = "nonarticle"


class DatasetNotFound(FileNotFoundError):
    """A dataset folder (or the datasets directory itself) is not on disk."""


@dataclass(frozen=True)
class Page:
    """One labelled web page of a dataset; ``html_path`` is the gzip-compressed HTML."""

    dataset: str
    page_id: str
    html_path: Path
    url: str | None
    gold_text: str | None
    with_snippets: tuple[str, ...] = ()
    without_snippets: tuple[str, ...] = ()
    page_type: str | None = None
    lang: str | None = None
    site: str | None = None
    split: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict, hash=False)

    def html_bytes(self) -> bytes:
        """Return the page's raw (decompressed, undecoded) HTML bytes."""
        return gzip.decompress(self.html_path.read_bytes())


def repo_root() -> Path:
    """Return the repository root: the parent of the ``extraction`` package."""
    return REPO_ROOT


def datasets_dir() -> Path:
    """Return the datasets directory: ``$DATASETS_DIR`` if set, else ``<repo>/../shared/datasets``."""
    env = os.environ.get(ENV_VAR)
    if env:
        return Path(env)
    return repo_root().parent / "shared" / "datasets"


def dataset_path(name: str, root: Path | None = None) -> Path:
    """Return the folder of dataset ``name`` under ``root``; raises DatasetNotFound if absent."""
    base = datasets_dir() if root is None else Path(root)
    folder = base / name
    if not folder.is_dir():
        raise DatasetNotFound(f"dataset {name!r} not found: no folder {folder} (set {ENV_VAR} to relocate)")
    return folder


def require_file(path: Path) -> Path:
    """Return ``path`` if it is an existing file; raises DatasetNotFound naming it otherwise."""
    if not path.is_file():
        raise DatasetNotFound(f"expected dataset file is missing: {path}")
    return path


def gz_path(folder: Path, upstream_name: str) -> Path:
    """Return the stored path of an HTML file that upstream lists as ``upstream_name`` (adds ``.gz``)."""
    return folder / f"{upstream_name}.gz"


def require_dir(path: Path) -> Path:
    """Return ``path`` if it is an existing directory; raises DatasetNotFound naming it otherwise."""
    if not path.is_dir():
        raise DatasetNotFound(f"expected dataset folder is missing: {path}")
    return path
