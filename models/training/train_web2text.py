"""Train Web2Text's unary and pairwise CNNs (paper 002) and export them to ONNX: ``make train-web2text``.

Data: the article pages of the "train" sets (``evaluation.folds.training_pages``: CleanEval dev
and final, WCXB-dev articles, Chinese-WCED articles; the held-out fold never), each turned into
its CDOM leaves and their features by the crawl's own code (``extraction.web2text``). Leaf labels
come from the gold text by the alignment every model here uses (``evaluation.labels``: a leaf is
content when at least half of its tokens align to the gold); a pair's label is ``2 * l_i + l_i+1``.
WCXB's non-article pages are left out, as for the SVM (they hurt it; ``--with-non-articles``
puts them in). The sites of fold ``VAL_FOLD`` are the validation set (early stopping, the
decoding weight): no site is in training and validation at once.

Networks (section 3.4): five 1-D convolutions over the leaf sequence, filters (50, 50, 50, 10, 2)
for the unary and (50, 50, 50, 10, 4) for the pairwise network, kernels (1, 1, 3, 3, 3), stride 1,
zero padding that keeps the length, ReLU and dropout 0.2 between layers, softmax output;
cross-entropy loss, L2 regularisation 1e-4 (Adam's ``weight_decay``, which adds the L2 gradient).
Sequences are cut into windows of ``WINDOW`` leaves (the receptive field is 7 leaves, so only the
window edges lose context); padding is masked out of the loss. The epoch with the lowest
validation loss is kept for each network.

Decoding: the pairwise potentials' exponent in the Viterbi score and the unary potentials'
content threshold (``extraction.web2text.viterbi``), chosen together on the validation pages
from ``WEIGHTS`` x ``THRESHOLDS`` by the mean per-page F1 of content characters, decoded exactly
as at crawl time (``extraction.web2text.model.decode``, its fallback for pages left empty included).

Outputs (``models/web2text/``): ``unary.onnx``, ``pairwise.onnx`` (opset 17, softmax inside) and
``meta.json``: features and their version, standardisation, architecture, data hash, training
history, validation scores per weight, the ONNX vs torch difference on the first 4,096 rows, and
torch's outputs on fixed inputs (``parity``) so that tests check the ONNX files without torch.
Features are cached as ``.npz`` under ``$NEWSCORPUS_CACHE`` (``~/.cache/newscorpus``), keyed by
the data hash, ``FEATURE_VERSION`` and a digest of the parsing, CDOM, feature and labelling code
and the stop-word lists.
"""

from __future__ import annotations

import argparse
import copy
import datetime
import hashlib
import json
import logging
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import torch
from torch import nn

from evaluation import labels as labels_module
from evaluation.datasets import ARTICLE, Page
from evaluation.folds import data_hash, fold_of, site_of, training_pages
from evaluation.labels import label_texts
from extraction.blockclf import features as block_features_module
from extraction.dom import html as html_module
from extraction.dom import text as fulltext_module
from extraction.dom.encoding import decode_html
from extraction.dom.html import parse_html
from extraction.web2text import cdom as cdom_module
from extraction.web2text import features as w2t_features
from extraction.web2text.cdom import collapse
from extraction.web2text.features import BINARY_BLOCK, BINARY_EDGE, BLOCK_FEATURES, EDGE_FEATURES, FEATURE_VERSION
from extraction.web2text.model import INPUT_NAME, MODEL_DIR, OUTPUT_NAME, PAIRWISE_FILE, UNARY_FILE, decode
from models.training.block_data import cache_dir
from models.training.onnx_export import WithSoftmax

logger = logging.getLogger("train_web2text")

META_VERSION = 1
CACHE_FORMAT = 2  # bump when the cached arrays change
SEED = 0
VAL_FOLD = 3  # the validation sites, as for the page-type models
WINDOW = 256
BATCH = 32
EPOCHS = 40
LEARNING_RATE = 1e-3
L2 = 1e-4
DROPOUT = 0.2
KERNELS = (1, 1, 3, 3, 3)
UNARY_FILTERS = (50, 50, 50, 10, 2)
PAIRWISE_FILTERS = (50, 50, 50, 10, 4)
WEIGHTS = (0.0, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0)
# The paper's decoding has no threshold (0.5). A search over thresholds ran to the edge of each
# grid tried (0.3, then 0.2, then 0.1) on a surface flat to +-0.003 and at 0.1 kept footers and
# copyright lines: not worth it (models/training/README.md).
THRESHOLDS = (0.5,)
PARITY_LENGTH = 12
PROGRESS_EVERY = 200

FloatArray = npt.NDArray[np.float32]


@dataclass(frozen=True)
class Data:
    """Leaf and edge rows of a set of pages; page ``p`` owns leaves ``offsets[p]:offsets[p+1]`` and
    edges ``edge_offsets[p]:edge_offsets[p+1]`` (n - 1 of them for n leaves, none for a page without text)."""

    block_x: FloatArray  # (leaves, 128)
    edge_x: FloatArray  # (edges, 25)
    y: npt.NDArray[np.int64]  # (leaves,) 1 content
    chars: npt.NDArray[np.int64]  # (leaves,) characters of the leaf
    offsets: npt.NDArray[np.int64]  # (pages + 1,)
    edge_offsets: npt.NDArray[np.int64]  # (pages + 1,)
    groups: npt.NDArray[np.str_]
    hash: str

    def page(self, p: int) -> tuple[FloatArray, FloatArray, npt.NDArray[np.int64], npt.NDArray[np.int64]]:
        """Return the block rows, edge rows, labels and leaf characters of page ``p``."""
        a, b = int(self.offsets[p]), int(self.offsets[p + 1])
        edges = self.edge_x[int(self.edge_offsets[p]):int(self.edge_offsets[p + 1])]
        return self.block_x[a:b], edges, self.y[a:b], self.chars[a:b]


def page_rows(page: Page) -> tuple[FloatArray, FloatArray, list[bool], list[int]]:
    """Return the raw block and edge features, labels and leaf characters of one page."""
    tree = collapse(parse_html(decode_html(page.html_bytes()).text))
    block, edge = w2t_features.page_features(tree)
    return block, edge, label_texts(tree.texts, page.gold_text), [len(text) for text in tree.texts]


def _code_digest() -> str:
    """Return a short digest of what makes the rows (parsing, CDOM, features, word lists, labels): the cache key."""
    digest = hashlib.sha256()
    for module in (html_module, fulltext_module, block_features_module, cdom_module, w2t_features, labels_module):
        digest.update(Path(str(module.__file__)).read_bytes())
    for name in w2t_features.STOP_WORD_FILES:
        digest.update((block_features_module.DATA_DIR / name).read_bytes())
    return digest.hexdigest()[:12]


def load_data(pages: Sequence[Page], use_cache: bool = True) -> Data:
    """Return the rows of ``pages``, from the ``.npz`` cache when it holds them."""
    hash_ = data_hash(pages)
    path = cache_dir() / f"web2text-{hash_[:20]}-f{FEATURE_VERSION}-c{_code_digest()}-v{CACHE_FORMAT}.npz"
    if use_cache and path.is_file():
        with np.load(path, allow_pickle=False) as arrays:
            data = Data(**{name: arrays[name] for name in arrays.files if name != "hash"}, hash=str(arrays["hash"]))
        if data.block_x.shape[1] == len(BLOCK_FEATURES) and len(data.groups) == len(pages):
            logger.info("features: %d pages, %d leaves from %s", len(pages), len(data.y), path)
            return data
    started = time.monotonic()
    blocks, edges, labels, chars, offsets, edge_offsets = [], [], [], [], [0], [0]
    for index, page in enumerate(pages):
        block, edge, y, c = page_rows(page)
        blocks.append(block)
        edges.append(edge)
        labels.extend(y)
        chars.extend(c)
        offsets.append(offsets[-1] + len(y))
        edge_offsets.append(edge_offsets[-1] + len(edge))
        if (index + 1) % PROGRESS_EVERY == 0 or index + 1 == len(pages):
            logger.info("features: %d/%d pages, %d leaves, %.0f s", index + 1, len(pages), offsets[-1],
                        time.monotonic() - started)
    data = Data(block_x=np.concatenate(blocks), edge_x=np.concatenate(edges), y=np.asarray(labels, dtype=np.int64),
                chars=np.asarray(chars, dtype=np.int64), offsets=np.asarray(offsets, dtype=np.int64),
                edge_offsets=np.asarray(edge_offsets, dtype=np.int64),
                groups=np.asarray([site_of(page) for page in pages], dtype=np.str_), hash=hash_)
    if use_cache:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(path.name + ".part.npz")
        np.savez_compressed(partial, **{name: getattr(data, name) for name in Data.__dataclass_fields__})
        partial.replace(path)
    return data


def pair_labels(data: Data) -> npt.NDArray[np.int64]:
    """Return the pairwise network's labels, ``2 * l_i + l_i+1`` per edge, aligned with ``data.edge_x``."""
    pairs = [2 * data.y[a:b - 1] + data.y[a + 1:b] for a, b in zip(data.offsets[:-1], data.offsets[1:], strict=True)]
    labels = np.concatenate(pairs).astype(np.int64) if pairs else np.zeros(0, dtype=np.int64)
    if len(labels) != len(data.edge_x):
        raise RuntimeError(f"{len(labels)} pair labels for {len(data.edge_x)} edges: the cache is inconsistent")
    return labels


class SequenceCNN(nn.Module):
    """Paper 002's five-layer 1-D CNN over a sequence: (batch, features, length) -> logits (batch, classes, length)."""

    def __init__(self, in_features: int, filters: Sequence[int], kernels: Sequence[int] = KERNELS,
                 dropout: float = DROPOUT) -> None:
        super().__init__()
        layers: list[nn.Module] = []
        channels = in_features
        for index, (width, kernel) in enumerate(zip(filters, kernels, strict=True)):
            layers.append(nn.Conv1d(channels, width, kernel, padding=kernel // 2))
            if index < len(filters) - 1:
                layers += [nn.ReLU(), nn.Dropout(dropout)]
            channels = width
        self.layers = nn.Sequential(*layers)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.layers(x)


def standardisation(x: FloatArray, binary: Sequence[bool]) -> tuple[FloatArray, FloatArray]:
    """Return per-column mean and standard deviation; binary columns get 0 and 1, constant ones std 1."""
    mean = x.mean(axis=0, dtype=np.float64)
    std = x.std(axis=0, dtype=np.float64)
    mask = np.asarray(binary)
    mean[mask] = 0.0
    std[mask] = 1.0
    std[std < 1e-6] = 1.0
    return mean.astype(np.float32), std.astype(np.float32)


def windows(x: FloatArray, y: npt.NDArray[np.int64], offsets: npt.NDArray[np.int64],
            pages: Sequence[int]) -> tuple[torch.Tensor, torch.Tensor]:
    """Return the pages' sequences cut into ``WINDOW``-long windows: features (w, F, WINDOW) and labels
    (w, WINDOW), -1 where padded; page ``p``'s rows are ``offsets[p]:offsets[p + 1]``."""
    xs: list[FloatArray] = []
    ys: list[npt.NDArray[np.int64]] = []
    for p in pages:
        a, b = int(offsets[p]), int(offsets[p + 1])
        for start in range(a, b, WINDOW):
            end = min(start + WINDOW, b)
            chunk = np.zeros((WINDOW, x.shape[1]), dtype=np.float32)
            chunk[:end - start] = x[start:end]
            labels = np.full(WINDOW, -1, dtype=np.int64)
            labels[:end - start] = y[start:end]
            xs.append(chunk.T)
            ys.append(labels)
    return torch.from_numpy(np.stack(xs)), torch.from_numpy(np.stack(ys))


def train_network(name: str, model: nn.Module, train: tuple[torch.Tensor, torch.Tensor],
                  val: tuple[torch.Tensor, torch.Tensor], epochs: int, seed: int) -> dict[str, Any]:
    """Train ``model`` in place (best validation epoch restored); return its history."""
    torch.manual_seed(seed)
    optimiser = torch.optim.Adam(model.parameters(), lr=LEARNING_RATE, weight_decay=L2)
    loss_fn = nn.CrossEntropyLoss(ignore_index=-1)
    generator = torch.Generator().manual_seed(seed)
    best: tuple[float, int, dict[str, torch.Tensor]] = (float("inf"), -1, {})
    history: list[dict[str, float]] = []
    for epoch in range(epochs):
        model.train()
        order = torch.randperm(len(train[0]), generator=generator)
        total = 0.0
        for start in range(0, len(order), BATCH):
            batch = order[start:start + BATCH]
            optimiser.zero_grad()
            loss = loss_fn(model(train[0][batch]), train[1][batch])
            loss.backward()
            optimiser.step()
            total += loss.item() * len(batch)
        model.eval()
        with torch.no_grad():
            logits = model(val[0])
            val_loss = float(loss_fn(logits, val[1]))
            mask = val[1] >= 0
            accuracy = float((logits.argmax(1)[mask] == val[1][mask]).float().mean())
        history.append({"epoch": epoch + 1, "train_loss": round(total / len(order), 5),
                        "val_loss": round(val_loss, 5), "val_accuracy": round(accuracy, 5)})
        logger.info("%s epoch %d: train loss %.4f, val loss %.4f, val accuracy %.4f", name, epoch + 1,
                    total / len(order), val_loss, accuracy)
        if val_loss < best[0]:
            best = (val_loss, epoch + 1, copy.deepcopy(model.state_dict()))
    model.load_state_dict(best[2])
    model.eval()
    return {"best_epoch": best[1], "best_val_loss": round(best[0], 5), "history": history}


def page_f1(labels: npt.NDArray[np.int64], gold: npt.NDArray[np.int64], chars: npt.NDArray[np.int64]) -> float:
    """Return the F1 of content characters of one page (1.0 when neither has any)."""
    tp = float(chars[(labels == 1) & (gold == 1)].sum())
    predicted = float(chars[labels == 1].sum())
    actual = float(chars[gold == 1].sum())
    if predicted == actual == 0:
        return 1.0
    return 2 * tp / (predicted + actual) if predicted + actual else 0.0


def torch_probs(model: nn.Module, rows: FloatArray) -> FloatArray:
    """Return softmax outputs (n, classes) of ``model`` on standardised rows (n, F)."""
    with torch.no_grad():
        out = torch.softmax(model(torch.from_numpy(np.ascontiguousarray(rows.T[None]))), dim=1)
    return out[0].T.numpy()


def choose_decoding(data: Data, val_pages: Sequence[int], unary: nn.Module, pairwise: nn.Module,
                    scaling: dict[str, FloatArray]) -> tuple[float, float, dict[str, float]]:
    """Return the pairwise weight and content threshold with the best mean per-page F1 on the
    validation pages (ties: the smaller weight, the threshold nearer 0.5), and every score."""
    potentials = []
    for p in val_pages:
        block, edge, y, chars = data.page(p)
        if len(y) == 0:
            continue
        u = torch_probs(unary, (block - scaling["block_mean"]) / scaling["block_std"])
        pw = torch_probs(pairwise, (edge - scaling["edge_mean"]) / scaling["edge_std"]) if len(edge) else \
            np.zeros((0, 4), np.float32)
        potentials.append((u, pw, y, chars))
    scores: dict[str, float] = {}
    for threshold in THRESHOLDS:
        for weight in WEIGHTS:
            f1 = np.mean([page_f1(decode(u, pw, weight, threshold).labels, y, c) for u, pw, y, c in potentials])
            scores[f"threshold {threshold} weight {weight}"] = round(float(f1), 4)
    best = max(((t, w) for t in THRESHOLDS for w in WEIGHTS),
               key=lambda tw: (scores[f"threshold {tw[0]} weight {tw[1]}"], -tw[1], -abs(tw[0] - 0.5)))
    return best[1], best[0], scores


def export(model: nn.Module, in_features: int, path: Path) -> None:
    """Write ``model`` with softmax as ONNX: input (batch, features, sequence), output (batch, classes, sequence)."""
    wrapped = WithSoftmax(model).eval()
    example = torch.zeros(1, in_features, 16)
    torch.onnx.export(wrapped, (example,), str(path), input_names=[INPUT_NAME], output_names=[OUTPUT_NAME],
                      dynamic_axes={INPUT_NAME: {0: "batch", 2: "sequence"}, OUTPUT_NAME: {0: "batch", 2: "sequence"}},
                      opset_version=17, dynamo=False)


def parity_input(features: int, length: int = PARITY_LENGTH) -> FloatArray:
    """Return the fixed standardised input whose torch outputs ``meta.json`` stores (seeded normal values)."""
    return np.random.default_rng(features).standard_normal((length, features)).astype(np.float32)


def onnx_difference(path: Path, model: nn.Module, rows: FloatArray) -> float:
    """Return the largest absolute difference between the ONNX file's and torch's outputs on ``rows``."""
    import onnxruntime as ort

    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    onnx_out = session.run([OUTPUT_NAME], {INPUT_NAME: np.ascontiguousarray(rows.T[None])})[0][0].T
    return float(np.abs(onnx_out - torch_probs(model, rows)).max())


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--epochs", type=int, default=EPOCHS)
    parser.add_argument("--out", type=Path, default=MODEL_DIR, help="output folder (default models/web2text)")
    parser.add_argument("--quick", action="store_true", help="smoke test: 60 pages, 2 epochs, output in the cache")
    parser.add_argument("--with-non-articles", action="store_true", help="train on WCXB's non-article pages too")
    parser.add_argument("--no-cache", action="store_true", help="extract the features again")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    """Train, export and describe both networks; return the exit status."""
    args = parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s", stream=sys.stderr)
    started = time.monotonic()
    pages = [page for page in training_pages() if args.with_non_articles or page.page_type in (None, ARTICLE)]
    if args.quick:
        pages = pages[::max(1, len(pages) // 60)]
        args.epochs = min(args.epochs, 2)
        if args.out == MODEL_DIR:
            args.out = cache_dir() / "web2text-quick"
    data = load_data(pages, use_cache=not args.no_cache)
    val = np.asarray([fold_of(str(group)) == VAL_FOLD for group in data.groups])
    train_pages = [p for p in range(len(pages)) if not val[p]]
    val_pages = [p for p in range(len(pages)) if val[p]]
    leaf_train = np.concatenate([np.arange(data.offsets[p], data.offsets[p + 1]) for p in train_pages])
    edge_train = np.concatenate([np.arange(data.edge_offsets[p], data.edge_offsets[p + 1]) for p in train_pages])
    block_mean, block_std = standardisation(data.block_x[leaf_train], BINARY_BLOCK)
    edge_mean, edge_std = standardisation(data.edge_x[edge_train], BINARY_EDGE)
    scaling = {"block_mean": block_mean, "block_std": block_std, "edge_mean": edge_mean, "edge_std": edge_std}
    block_z = (data.block_x - block_mean) / block_std
    edge_z = (data.edge_x - edge_mean) / edge_std
    pair_y = pair_labels(data)
    logger.info("data: %d pages (%d train, %d validation sites' pages), %d leaves (%.1f%% content), %d edges",
                len(pages), len(train_pages), len(val_pages), len(data.y), 100 * data.y.mean(), len(pair_y))
    results: dict[str, Any] = {}
    models: dict[str, nn.Module] = {}
    for name, x, y, filters, offsets in (("unary", block_z, data.y, UNARY_FILTERS, data.offsets),
                                         ("pairwise", edge_z, pair_y, PAIRWISE_FILTERS, data.edge_offsets)):
        torch.manual_seed(args.seed)
        model = SequenceCNN(x.shape[1], filters)
        results[name] = train_network(name, model, windows(x, y, offsets, train_pages),
                                      windows(x, y, offsets, val_pages), args.epochs, args.seed)
        models[name] = model
    weight, threshold, decoding_scores = choose_decoding(data, val_pages, models["unary"], models["pairwise"],
                                                         scaling)
    logger.info("decoding: pairwise weight %.2f, content threshold %.2f; validation F1 %s", weight, threshold,
                decoding_scores)
    args.out.mkdir(parents=True, exist_ok=True)
    parity: dict[str, Any] = {}
    for name, file, features, z in (("unary", UNARY_FILE, len(BLOCK_FEATURES), block_z),
                                    ("pairwise", PAIRWISE_FILE, len(EDGE_FEATURES), edge_z)):
        path = args.out / file
        export(models[name], features, path)
        sample = z[: min(len(z), 4096)]
        fixed = parity_input(features)
        parity[name] = {"max_abs_difference_first_rows": onnx_difference(path, models[name], sample),
                        "input_seed": features, "length": PARITY_LENGTH,
                        "torch_output": np.round(torch_probs(models[name], fixed), 7).tolist()}
        results[name]["onnx_bytes"] = path.stat().st_size
        results[name]["parameters"] = int(sum(p.numel() for p in models[name].parameters()))
    meta = {
        "version": META_VERSION,
        "created": datetime.date.today().isoformat(),
        "seed": args.seed,
        "quick": bool(args.quick),
        "torch": torch.__version__,
        "feature_version": FEATURE_VERSION,
        "block_features": list(BLOCK_FEATURES),
        "edge_features": list(EDGE_FEATURES),
        "standardisation": {key: value.tolist() for key, value in scaling.items()},
        "architecture": {"kernels": list(KERNELS), "unary_filters": list(UNARY_FILTERS),
                         "pairwise_filters": list(PAIRWISE_FILTERS), "dropout": DROPOUT, "l2": L2,
                         "optimiser": f"Adam lr {LEARNING_RATE}", "batch_windows": BATCH, "window": WINDOW,
                         "epochs": args.epochs},
        "data": {"pages": len(pages), "train_pages": len(train_pages), "validation_pages": len(val_pages),
                 "validation_fold": VAL_FOLD, "leaves": len(data.y), "content_share": round(float(data.y.mean()), 4),
                 "with_non_articles": bool(args.with_non_articles), "data_hash": data.hash},
        "training": results,
        "decoding": {"pairwise_weight": weight, "content_threshold": threshold,
                     "validation_mean_page_f1": decoding_scores},
        "parity": parity,
        "seconds": round(time.monotonic() - started),
    }
    (args.out / "meta.json").write_text(json.dumps(meta, indent=1) + "\n", encoding="utf-8")
    logger.info("wrote %s (%.0f s)", args.out, time.monotonic() - started)
    return 0


if __name__ == "__main__":
    sys.exit(main())
