"""Web2Text's training data layout (``models/training/train_web2text.py``; needs torch, skipped without it)."""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch", reason="torch is a training extra (make extras)")

from evaluation.datasets import Page
from models.training.train_web2text import WINDOW, Data, load_data, page_f1, pair_labels, standardisation, windows


def _data() -> Data:
    # Three pages: 3 leaves (2 edges), none (a page without text), 2 leaves (1 edge).
    block = np.arange(5 * 2, dtype=np.float32).reshape(5, 2)
    edge = np.asarray([[10.0], [11.0], [12.0]], dtype=np.float32)
    return Data(block_x=block, edge_x=edge, y=np.asarray([1, 0, 1, 0, 1]), chars=np.asarray([5, 1, 5, 2, 2]),
                offsets=np.asarray([0, 3, 3, 5]), edge_offsets=np.asarray([0, 2, 2, 3]),
                groups=np.asarray(["a", "b", "c"]), hash="h")


def test_pages_after_a_page_without_text_get_their_own_edges() -> None:
    data = _data()
    block, edge, y, _ = data.page(2)
    assert block.tolist() == [[6.0, 7.0], [8.0, 9.0]] and y.tolist() == [0, 1]
    assert edge.tolist() == [[12.0]]
    assert data.page(1)[1].shape == (0, 1)


def test_windows_pad_with_ignored_labels() -> None:
    data = _data()
    x, y = windows(data.edge_x, np.asarray([2, 1, 1]), data.edge_offsets, [0, 1, 2])
    assert x.shape == (2, 1, WINDOW) and y.shape == (2, WINDOW)  # the empty page gives no window
    assert y[0, :3].tolist() == [2, 1, -1] and y[1, :2].tolist() == [1, -1]
    assert x[1, 0, 0].item() == 12.0


def test_standardisation_leaves_binary_and_constant_columns() -> None:
    x = np.asarray([[0.0, 1.0, 5.0], [1.0, 3.0, 5.0]], dtype=np.float32)
    mean, std = standardisation(x, [True, False, False])
    assert mean.tolist() == [0.0, 2.0, 5.0] and std.tolist() == [1.0, 1.0, 1.0]


def test_page_f1_weights_by_characters() -> None:
    gold = np.asarray([1, 1, 0])
    chars = np.asarray([10, 30, 60])
    assert page_f1(np.asarray([1, 1, 0]), gold, chars) == 1.0
    assert page_f1(np.asarray([0, 1, 1]), gold, chars) == pytest.approx(2 * 30 / (90 + 40))
    assert page_f1(np.zeros(3, dtype=np.int64), np.zeros(3, dtype=np.int64), chars) == 1.0


def _page(tmp_path: Path, name: str, body: str, gold: str) -> Page:
    path = tmp_path / f"{name}.html.gz"
    path.write_bytes(gzip.compress(f"<html><body>{body}</body></html>".encode()))
    return Page(dataset="test", page_id=name, html_path=path, url=f"http://{name}.test/", gold_text=gold)


def test_load_data_aligns_edges_and_pair_labels_across_a_page_without_text(tmp_path: Path) -> None:
    pages = [_page(tmp_path, "a", "<p>Storm hits the coast</p><p>Home</p><p>Rain falls all day</p>",
                   "Storm hits the coast Rain falls all day"),
             _page(tmp_path, "b", "<img src='x.png'>", ""),
             _page(tmp_path, "c", "<p>Menu</p><p>Council votes on the plan</p>", "Council votes on the plan")]
    data = load_data(pages, use_cache=False)
    assert data.offsets.tolist() == [0, 3, 3, 5] and data.edge_offsets.tolist() == [0, 2, 2, 3]
    assert data.y.tolist() == [1, 0, 1, 0, 1]
    # Page c's one edge joins "Menu" (0) and the article (1): label 2 * 0 + 1.
    assert pair_labels(data).tolist() == [2, 1, 1]
    assert len(data.page(2)[1]) == 1 and len(data.page(1)[1]) == 0
