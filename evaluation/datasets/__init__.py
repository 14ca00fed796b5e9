"""Readers for the ground-truth datasets in ``DATASETS_DIR`` (default ``../shared/datasets``).

Every reader yields :class:`Page` records that point at the gzip-compressed HTML in place;
nothing is copied. ``iter_pages(name)`` dispatches by folder name::

    for page in iter_pages("cleaneval", split="dev"):
        html = page.html_bytes()

Options per dataset: ``cleaneval`` takes ``split`` ("dev"/"final") and
``include_unlabelled``; ``dragnet`` takes ``split`` ("training"/"test"); ``msv-big5`` takes
``subsets`` (any of "big5-05", "big5-09", "big5-13", "big5-17", "chaos-all").
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from evaluation.datasets.base import (
    ARTICLE,
    LIST,
    NONARTICLE,
    OTHER,
    DatasetNotFound,
    Page,
    dataset_path,
    datasets_dir,
)
from evaluation.datasets.chinese_wced import read_chinese_wced
from evaluation.datasets.cleaneval import read_cleaneval, read_cleanportaleval
from evaluation.datasets.dragnet import read_dragnet
from evaluation.datasets.extractor_suites import read_readability, read_trafilatura_eval
from evaluation.datasets.l3s import read_l3s
from evaluation.datasets.msv_big5 import read_msv_big5
from evaluation.datasets.news_pages import read_frontpage_archive, read_fundus, read_gerapy, read_newspaper4k
from evaluation.datasets.page_types import read_article_vs_nonarticle, read_gne
from evaluation.datasets.wcxb import read_wcxb

Reader = Callable[..., Iterator[Page]]

READERS: dict[str, Reader] = {
    "wcxb-dev": read_wcxb,
    "cleaneval": read_cleaneval,
    "cleanportaleval": read_cleanportaleval,
    "dragnet": read_dragnet,
    "l3s-gn1": read_l3s,
    "msv-big5": read_msv_big5,
    "trafilatura-eval": read_trafilatura_eval,
    "mozilla-readability": read_readability,
    "chinese-wced-dev": read_chinese_wced,
    "gne-chinese": read_gne,
    "article-vs-nonarticle": read_article_vs_nonarticle,
    "frontpage-archive-de": read_frontpage_archive,
    "gerapy-zh": read_gerapy,
    "fundus-articles": read_fundus,
    "newspaper4k-pages": read_newspaper4k,
}

DATASET_NAMES: tuple[str, ...] = tuple(READERS)


def iter_pages(name: str, root: Path | None = None, **options: Any) -> Iterator[Page]:
    """Return an iterator over the pages of dataset ``name`` (a folder under ``root`` or ``datasets_dir()``).

    Raises KeyError for an unknown name and DatasetNotFound when the folder is missing.
    """
    try:
        reader = READERS[name]
    except KeyError:
        raise KeyError(f"unknown dataset {name!r}; known: {', '.join(DATASET_NAMES)}") from None
    folder = dataset_path(name, root)
    return reader(folder, **options)


__all__ = [
    "ARTICLE",
    "DATASET_NAMES",
    "LIST",
    "NONARTICLE",
    "OTHER",
    "READERS",
    "DatasetNotFound",
    "Page",
    "dataset_path",
    "datasets_dir",
    "iter_pages",
]
