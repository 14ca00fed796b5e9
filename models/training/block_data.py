"""Training data of the block and paragraph SVMs: features and labels of the training pages, cached.

Rows come from the same code the crawl runs (``extraction.dom.blocks.page_blocks``,
``extraction.blockclf.features``); labels from the gold text (``evaluation.labels.label_texts``):

* a **block** is content when at least half of its alignment tokens are matched by one LCS
  alignment of all the page's blocks (document order) to the page's gold text;
* a **paragraph** row is made for every paragraph of a block labelled content that has at
  least two paragraphs (the blocks that the paragraph model trims at inference time). Its label
  comes from one alignment of *all* paragraphs of the page to the gold, the same token sequence
  as the block alignment, so a head or tail paragraph cannot take gold tokens that the article
  text needs.

Extraction takes about a minute for the ~1,800 training pages; the arrays are cached as a
NumPy ``.npz`` (no pickles) under ``~/.cache/newscorpus/`` (``NEWSCORPUS_CACHE`` relocates it),
keyed by the data hash, ``FEATURE_VERSION`` and a digest of the labelling code.
"""

from __future__ import annotations

import hashlib
import logging
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt
from lxml import html

from evaluation import labels as labels_module
from evaluation.datasets import ARTICLE, Page
from evaluation.folds import data_hash, site_of
from evaluation.labels import label_texts
from extraction.blockclf.features import BLOCK_FEATURES, FEATURE_VERSION, PARAGRAPH_FEATURES, block_features
from extraction.blockclf.features import paragraph_features as paragraph_feature_rows
from extraction.dom.blocks import page_blocks
from extraction.dom.encoding import decode_html
from extraction.dom.html import parse_html

logger = logging.getLogger(__name__)

CACHE_ENV = "NEWSCORPUS_CACHE"
# Bump when the layout of the cached arrays changes.
CACHE_FORMAT = 1
# Blocks with at least this many paragraphs get paragraph rows (the paragraph model's domain).
MIN_PARAGRAPHS = 2
# Log a progress line every this many pages.
PROGRESS_EVERY = 200

BoolArray = npt.NDArray[np.bool_]
IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float32]


@dataclass(frozen=True)
class TrainingData:
    """Block and paragraph rows of a set of pages, with the page each row comes from."""

    block_x: FloatArray  # (blocks, BLOCK_FEATURES)
    block_y: BoolArray
    block_page: IntArray  # index into the page arrays below
    paragraph_x: FloatArray  # (paragraphs, PARAGRAPH_FEATURES)
    paragraph_y: BoolArray
    paragraph_page: IntArray
    page_keys: npt.NDArray[np.str_]  # "dataset/page_id"
    page_datasets: npt.NDArray[np.str_]
    page_types: npt.NDArray[np.str_]  # "" when the dataset has no page types (CleanEval)
    page_groups: npt.NDArray[np.str_]  # site_of(page): the CV group
    hash: str  # data_hash of the pages

    @property
    def pages(self) -> int:
        """Return the number of pages."""
        return len(self.page_keys)

    def non_article_pages(self) -> BoolArray:
        """Return per page whether it is a typed non-article page (WCXB listing, collection, forum, ...)."""
        return (self.page_types != "") & (self.page_types != ARTICLE)


def cache_dir() -> Path:
    """Return the folder for cached training arrays: ``$NEWSCORPUS_CACHE`` or ``~/.cache/newscorpus``."""
    return Path(os.environ.get(CACHE_ENV) or Path.home() / ".cache" / "newscorpus")


def _code_digest() -> str:
    """Return a short digest of the labelling code: cached labels are stale when it changes."""
    source = Path(labels_module.__file__).read_bytes()
    return hashlib.sha256(source).hexdigest()[:12]


def cache_path(hash_: str) -> Path:
    """Return the cache file of the pages with data hash ``hash_``."""
    name = f"blocks-{hash_[:20]}-f{FEATURE_VERSION}-l{_code_digest()}-c{CACHE_FORMAT}.npz"
    return cache_dir() / name


def page_rows(page: Page) -> tuple[FloatArray, BoolArray, FloatArray, BoolArray]:
    """Return ``(block features, block labels, paragraph features, paragraph labels)`` of one page."""
    return html_rows(parse_html(decode_html(page.html_bytes()).text), page.gold_text)


def html_rows(root: html.HtmlElement, gold: str | None) -> tuple[FloatArray, BoolArray, FloatArray, BoolArray]:
    """Return ``(block features, block labels, paragraph features, paragraph labels)`` of a parsed page."""
    blocks = page_blocks(root)
    block_y = np.asarray(label_texts([block.text for block in blocks], gold), dtype=bool)
    block_x = block_features(blocks, root)
    flat = label_texts([paragraph.text for block in blocks for paragraph in block.paragraphs], gold)
    paragraph_blocks = []
    paragraph_labels: list[bool] = []
    start = 0
    for block, is_content in zip(blocks, block_y, strict=True):
        end = start + len(block.paragraphs)
        if is_content and len(block.paragraphs) >= MIN_PARAGRAPHS:
            paragraph_blocks.append(paragraph_feature_rows(block))
            paragraph_labels.extend(flat[start:end])
        start = end
    if paragraph_blocks:
        paragraph_x = np.concatenate(paragraph_blocks)
    else:
        paragraph_x = np.zeros((0, len(PARAGRAPH_FEATURES)), dtype=np.float32)
    return block_x, block_y, paragraph_x, np.asarray(paragraph_labels, dtype=bool)


def extract(pages: Sequence[Page], hash_: str) -> TrainingData:
    """Return the rows of ``pages`` (computed now; see ``load`` for the cached path)."""
    start = time.monotonic()
    block_x: list[FloatArray] = []
    block_y: list[BoolArray] = []
    block_page: list[IntArray] = []
    paragraph_x: list[FloatArray] = []
    paragraph_y: list[BoolArray] = []
    paragraph_page: list[IntArray] = []
    for index, page in enumerate(pages):
        bx, by, px, py = page_rows(page)
        block_x.append(bx)
        block_y.append(by)
        block_page.append(np.full(len(by), index, dtype=np.int64))
        paragraph_x.append(px)
        paragraph_y.append(py)
        paragraph_page.append(np.full(len(py), index, dtype=np.int64))
        if (index + 1) % PROGRESS_EVERY == 0 or index + 1 == len(pages):
            logger.info("features: %d/%d pages, %d blocks, %d paragraphs, %.0f s", index + 1, len(pages),
                        sum(map(len, block_y)), sum(map(len, paragraph_y)), time.monotonic() - start)
    return TrainingData(
        block_x=np.concatenate(block_x).astype(np.float32),
        block_y=np.concatenate(block_y),
        block_page=np.concatenate(block_page),
        paragraph_x=np.concatenate(paragraph_x).astype(np.float32),
        paragraph_y=np.concatenate(paragraph_y),
        paragraph_page=np.concatenate(paragraph_page),
        page_keys=np.asarray([f"{page.dataset}/{page.page_id}" for page in pages], dtype=np.str_),
        page_datasets=np.asarray([page.dataset for page in pages], dtype=np.str_),
        page_types=np.asarray([page.page_type or "" for page in pages], dtype=np.str_),
        page_groups=np.asarray([site_of(page) for page in pages], dtype=np.str_),
        hash=hash_,
    )


def load(pages: Sequence[Page], use_cache: bool = True) -> TrainingData:
    """Return the rows of ``pages``, from the cache when it holds them, else extracted (and cached)."""
    hash_ = data_hash(pages)
    path = cache_path(hash_)
    if use_cache and path.is_file():
        with np.load(path, allow_pickle=False) as arrays:
            data = TrainingData(**{name: arrays[name] for name in arrays.files if name != "hash"},
                                hash=str(arrays["hash"]))
        if data.block_x.shape[1] == len(BLOCK_FEATURES) and data.pages == len(pages):
            logger.info("features: %d pages, %d blocks, %d paragraphs from cache %s", data.pages,
                        len(data.block_y), len(data.paragraph_y), path)
            return data
        logger.warning("cache %s does not fit the pages or the feature columns: extracting again", path)
    data = extract(pages, hash_)
    if use_cache:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(path.name + ".part.npz")
        np.savez_compressed(partial, **{name: getattr(data, name) for name in TrainingData.__dataclass_fields__})
        partial.replace(path)
        logger.info("features cached in %s", path)
    return data


def sample_blocks(page_of_row: IntArray, pages: IntArray, max_rows: int, per_page: int,
                  rng: np.random.Generator) -> IntArray:
    """Return sorted row indices: pages in ``pages`` taken in a seeded random order, each with at most
    ``per_page`` of its rows (a seeded random choice), until ``max_rows`` rows are taken.

    Sampling by page keeps the CV groups whole and stops one huge page (a thousand link-list
    blocks) from outweighing many ordinary ones.
    """
    order = np.argsort(page_of_row, kind="stable")
    counts = np.bincount(page_of_row, minlength=int(pages.max(initial=0)) + 1)
    starts = np.concatenate([[0], np.cumsum(counts)])
    chosen: list[IntArray] = []
    taken = 0
    for page in rng.permutation(pages):
        rows = order[starts[page]:starts[page + 1]]
        share = min(per_page, max_rows - taken)
        if len(rows) > share:
            rows = rng.choice(rows, size=share, replace=False)
        chosen.append(rows)
        taken += len(rows)
        if taken >= max_rows:
            break
    if not chosen:
        return np.zeros(0, dtype=np.int64)
    return np.sort(np.concatenate(chosen)).astype(np.int64)
