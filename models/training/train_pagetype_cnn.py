"""Train the screenshot page-type CNNs (paper 000) and export them to ONNX.

    python -m models.training.train_pagetype_cnn [--model lenet5|resnet|all] [--cache DIR]

Data: the screenshot cache written by ``python -m models.training.pagetype_data render``
(outside the repository). Shipped models train only on the sets the datasets README marks
"train": wcxb-dev pages outside the held-out fold, plus the demo sites (ours; styled and
unstyled renders). Sites of fold ``VAL_FOLD`` are the validation sites (epoch choice, fusion
weight); fold ``HELD_OUT_FOLD`` and the page-type sets article-vs-nonarticle and gne-chinese are
never trained on: they are the held-out test (``bench/pagetype_report.py``).

Models:
- ``lenet5``: exactly paper 000's LeNet-5: 224x224x1, conv 6@3x3, max-pool 2, ReLU, conv 16@3x3,
  max-pool 2, ReLU, flatten (46,656), dense 120, 84, 2 (ReLU between dense layers; the paper
  names none), softmax; article vs list only, as in the paper.
- ``resnet``: ours, a small residual network trained from scratch (no pretrained weights can be
  downloaded here): 448x224x1 input (twice the pixels), stem conv 7x7/4 + max-pool, four stages
  of two basic blocks (16, 32, 64, 128 channels) down to a 7x4 grid, flattened (keeps where
  things are on the page), dropout 0.2, dense 3 (article, list, other).

Training: AdamW (lr 1e-3, weight decay 1e-4, cosine schedule), batch 32, class-weighted cross
entropy (inverse frequency), seeded. Augmentation, applied to the model input on the fly: random
scale 0.9-1.1 and shift (up to 6% across, 8% down: pages start at different heights), contrast
and brightness jitter. The offline pages render without their external CSS; the demo pages are
rendered both styled and unstyled and both renders train. The epoch with the best balanced
accuracy on the validation sites is exported (``torch.onnx.export``, opset 17, softmax inside),
with the ONNX vs torch difference on the validation inputs and on ``parity_inputs`` recorded in
``models/pagetype/meta.json``.
"""

from __future__ import annotations

import argparse
import copy
import json
import logging
import time
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from evaluation.folds import HELD_OUT_FOLD
from extraction.pagetype.models import (
    CLASSES,
    CROP_RATIO,
    MIN_INK_SHARE,
    ink_share,
    load_gray,
    parity_inputs,
    prepare_screenshot,
)
from models.training.onnx_export import WithSoftmax
from models.training.pagetype_data import default_cache, read_manifest
from models.training.pagetype_meta import PAGETYPE_DIR, update_meta

logger = logging.getLogger("train_pagetype_cnn")

SEED = 0
VAL_FOLD = 3  # validation sites: chosen before any model was trained (fold sizes only)
TRAIN_DATASETS = ("wcxb-dev", "demo")
SPECS: dict[str, dict[str, Any]] = {
    "lenet5": {"height": 224, "width": 224, "classes": ("article", "list"), "epochs": 20},
    "resnet": {"height": 448, "width": 224, "classes": CLASSES, "epochs": 20},
}


class LeNet5(nn.Module):
    """Paper 000's LeNet-5 (224x224 grey, two classes)."""

    def __init__(self, classes: int = 2) -> None:
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 6, 3), nn.MaxPool2d(2), nn.ReLU(),
            nn.Conv2d(6, 16, 3), nn.MaxPool2d(2), nn.ReLU(),
        )
        self.classifier = nn.Sequential(
            nn.Flatten(), nn.Linear(16 * 54 * 54, 120), nn.ReLU(), nn.Linear(120, 84), nn.ReLU(),
            nn.Linear(84, classes),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.classifier(self.features(x))


class BasicBlock(nn.Module):
    def __init__(self, cin: int, cout: int, stride: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.short = (nn.Sequential() if stride == 1 and cin == cout else
                      nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout)))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = F.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        return F.relu(y + self.short(x))


class SmallResNet(nn.Module):
    """Ours: a small residual network for 448x224 screenshots, trained from scratch."""

    def __init__(self, classes: int = 3, widths: tuple[int, ...] = (16, 32, 64, 128)) -> None:
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(1, widths[0], 7, 4, 3, bias=False), nn.BatchNorm2d(widths[0]),
                                  nn.ReLU(), nn.MaxPool2d(2))
        layers: list[nn.Module] = []
        cin = widths[0]
        for i, width in enumerate(widths):
            layers += [BasicBlock(cin, width, 1 if i == 0 else 2), BasicBlock(width, width, 1)]
            cin = width
        self.stages = nn.Sequential(*layers)
        self.head = nn.Sequential(nn.Flatten(), nn.Dropout(0.2), nn.Linear(cin * 7 * 4, classes))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.stages(self.stem(x)))


def build(name: str) -> nn.Module:
    classes = len(SPECS[name]["classes"])
    return LeNet5(classes) if name == "lenet5" else SmallResNet(classes)


def split_of(record: dict[str, Any]) -> str:
    """"train"/"val" for the training sets' pages (demo always trains), "test" for held-out ones."""
    if record["dataset"] == "demo":
        return "train"
    if record["dataset"] in TRAIN_DATASETS and record["fold"] != HELD_OUT_FOLD:
        return "val" if record["fold"] == VAL_FOLD else "train"
    return "test"


def record_informative(cache: Path, record: dict[str, Any]) -> bool:
    gray = load_gray((cache / record["png"]).read_bytes())
    return ink_share(prepare_screenshot(gray, 448, 224, CROP_RATIO)) >= MIN_INK_SHARE


def load_split(cache: Path, name: str) -> dict[str, Any]:
    """Inputs (uint8, model size) and labels per split: train, val, and every held-out record."""
    spec = SPECS[name]
    classes = spec["classes"]
    records = [r for r in read_manifest(cache) if not r.get("error") and r.get("png")]
    out: dict[str, Any] = {"train": [], "val": [], "test": []}
    blank = 0
    for record in records:
        label = record["label"]
        if split_of(record) != "test" and not record_informative(cache, record):
            blank += 1  # a (nearly) blank render teaches nothing; inference ignores such screenshots too
            continue
        if record["dataset"] == "demo" or (record["dataset"] in TRAIN_DATASETS and record["fold"] != HELD_OUT_FOLD):
            if label not in classes:
                continue  # lenet5: article vs list only
            split = "val" if record["dataset"] != "demo" and record["fold"] == VAL_FOLD else "train"
        else:
            split = "test"  # wcxb-dev's held-out fold, article-vs-nonarticle, gne-chinese
        out[split].append(record)
    logger.info("%s: %d blank training/validation renders left out (ink share < %.2f)", name, blank, MIN_INK_SHARE)
    arrays: dict[str, Any] = {}
    for split, chosen in out.items():
        images = np.empty((len(chosen), spec["height"], spec["width"]), dtype=np.uint8)
        for i, record in enumerate(chosen):
            gray = load_gray((cache / record["png"]).read_bytes())
            x = prepare_screenshot(gray, spec["height"], spec["width"], CROP_RATIO)[0]
            images[i] = np.round(x * 255.0).astype(np.uint8)
        labels = np.array([classes.index(r["label"]) if r["label"] in classes else -1 for r in chosen],
                          dtype=np.int64)
        arrays[split] = {"x": images, "y": labels, "records": chosen}
        logger.info("%s %s: %d images %s", name, split, len(chosen), dict(Counter(r["label"] for r in chosen)))
    return arrays


def augment(x: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    """Random scale/shift (affine, white fill) and contrast/brightness jitter, per image."""
    n = x.shape[0]
    scale = 0.9 + 0.2 * torch.rand(n, generator=generator)
    shift_x = (torch.rand(n, generator=generator) - 0.5) * 0.12
    shift_y = -torch.rand(n, generator=generator) * 0.16  # content moves down (a taller header)
    theta = torch.zeros(n, 2, 3)
    theta[:, 0, 0] = 1 / scale
    theta[:, 1, 1] = 1 / scale
    theta[:, 0, 2] = shift_x
    theta[:, 1, 2] = shift_y
    grid = F.affine_grid(theta, list(x.shape), align_corners=False)
    out = F.grid_sample(x, grid, padding_mode="zeros", align_corners=False)  # 0 = white (inverted)
    contrast = 0.8 + 0.4 * torch.rand(n, 1, 1, 1, generator=generator)
    bright = (torch.rand(n, 1, 1, 1, generator=generator) - 0.5) * 0.1
    return (out * contrast + bright).clamp(0.0, 1.0)


def to_tensor(images: np.ndarray) -> torch.Tensor:
    return torch.from_numpy(images.astype(np.float32) / 255.0)[:, None]


def predict(model: nn.Module, images: np.ndarray, batch: int = 64) -> np.ndarray:
    model.eval()
    outs = []
    with torch.no_grad():
        for start in range(0, len(images), batch):
            outs.append(torch.softmax(model(to_tensor(images[start:start + batch])), dim=1).numpy())
    return np.concatenate(outs) if outs else np.zeros((0, 0), dtype=np.float32)


def balanced_accuracy(y: np.ndarray, pred: np.ndarray) -> float:
    recalls = [float(np.mean(pred[y == c] == c)) for c in np.unique(y)]
    return float(np.mean(recalls)) if recalls else 0.0


def train(name: str, data: dict[str, Any], epochs: int, seed: int) -> tuple[nn.Module, list[dict[str, float]]]:
    torch.manual_seed(seed)
    generator = torch.Generator().manual_seed(seed)
    model = build(name)
    x_train, y_train = data["train"]["x"], data["train"]["y"]
    counts = np.bincount(y_train, minlength=len(SPECS[name]["classes"])).astype(np.float64)
    weights = torch.tensor(counts.sum() / np.maximum(counts, 1) / len(counts), dtype=torch.float32)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=1e-4)
    steps = epochs * int(np.ceil(len(x_train) / 32))
    scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=1e-3, total_steps=steps, pct_start=0.15)
    history: list[dict[str, float]] = []
    best: tuple[float, int, dict[str, Any]] = (-1.0, -1, {})
    rng = np.random.default_rng(seed)
    for epoch in range(1, epochs + 1):
        model.train()
        start = time.perf_counter()
        order = rng.permutation(len(x_train))
        total = 0.0
        for i in range(0, len(order), 32):
            idx = order[i:i + 32]
            xb = augment(to_tensor(x_train[idx]), generator)
            loss = F.cross_entropy(model(xb), torch.from_numpy(y_train[idx]), weight=weights)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            scheduler.step()
            total += loss.item() * len(idx)
        probs = predict(model, data["val"]["x"])
        val_y = data["val"]["y"]
        val_pred = probs.argmax(1)
        row = {"epoch": epoch, "loss": total / len(order), "val_accuracy": float(np.mean(val_pred == val_y)),
               "val_balanced_accuracy": balanced_accuracy(val_y, val_pred), "seconds": time.perf_counter() - start}
        history.append(row)
        logger.info("%s epoch %d/%d: loss %.4f, val acc %.3f, balanced %.3f (%.0f s)", name, epoch, epochs,
                    row["loss"], row["val_accuracy"], row["val_balanced_accuracy"], row["seconds"])
        if row["val_balanced_accuracy"] > best[0]:
            best = (row["val_balanced_accuracy"], epoch, copy.deepcopy(model.state_dict()))
    model.load_state_dict(best[2])
    logger.info("%s: epoch %d kept (val balanced accuracy %.3f)", name, best[1], best[0])
    return model, history


def export(name: str, model: nn.Module, path: Path) -> None:
    spec = SPECS[name]
    wrapped = WithSoftmax(model).eval()
    example = torch.zeros(1, 1, spec["height"], spec["width"])
    torch.onnx.export(wrapped, (example,), str(path), input_names=["image"], output_names=["probs"],
                      dynamic_axes={"image": {0: "n"}, "probs": {0: "n"}}, opset_version=17, dynamo=False)


def onnx_probs(path: Path, x: np.ndarray) -> np.ndarray:
    import onnxruntime as ort

    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    return np.asarray(session.run(None, {"image": x.astype(np.float32)})[0])


def run_model(name: str, cache: Path, epochs: int, seed: int, out_dir: Path) -> dict[str, Any]:
    start = time.perf_counter()
    spec = SPECS[name]
    data = load_split(cache, name)
    model, history = train(name, data, epochs, seed)
    path = PAGETYPE_DIR / f"{name}.onnx"
    export(name, model, path)
    val_x = to_tensor(data["val"]["x"]).numpy()
    torch_val = predict(model, data["val"]["x"])
    parity_val = float(np.abs(onnx_probs(path, val_x) - torch_val).max()) if len(val_x) else 0.0
    fixture = parity_inputs(spec["height"], spec["width"])
    model.eval()
    with torch.no_grad():
        torch_fixture = torch.softmax(model(torch.from_numpy(fixture)), dim=1).numpy()
    parity_fixture = float(np.abs(onnx_probs(path, fixture) - torch_fixture).max())
    logger.info("%s: ONNX vs torch max |diff| %.2e on %d validation inputs, %.2e on the parity inputs",
                name, parity_val, len(val_x), parity_fixture)
    # Predictions for the fusion fit and the report (outside the repository).
    lines = []
    for split in ("val", "test"):
        probs = predict(model, data[split]["x"])
        for record, p, x in zip(data[split]["records"], probs, data[split]["x"], strict=True):
            informative = ink_share(x.astype(np.float32)[None] / 255.0) >= MIN_INK_SHARE
            lines.append(json.dumps({"informative": informative, "dataset": record["dataset"],
                                     "page_id": record["page_id"],
                                     "variant": record.get("variant"), "site": record["site"],
                                     "label": record["label"], "split": "val" if split == "val" else "held-out",
                                     "probs": [round(float(v), 6) for v in p]}))
    (out_dir / f"cnn_predictions_{name}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    best = max(history, key=lambda row: row["val_balanced_accuracy"])
    meta = {
        "file": path.name, "architecture": "LeNet-5 (paper 000)" if name == "lenet5" else "small ResNet (ours)",
        "classes": list(spec["classes"]),
        "input": {"height": spec["height"], "width": spec["width"], "crop_ratio": CROP_RATIO, "channels": 1,
                  "preprocess": "extraction.pagetype.models.prepare_screenshot"},
        "parameters": int(sum(p.numel() for p in model.parameters())),
        "size_bytes": path.stat().st_size,
        "train_images": len(data["train"]["x"]), "val_images": len(data["val"]["x"]),
        "train_labels": dict(Counter(r["label"] for r in data["train"]["records"])),
        "train_datasets": list(TRAIN_DATASETS), "val_fold": VAL_FOLD, "held_out_fold": HELD_OUT_FOLD,
        "epochs": epochs, "best_epoch": best["epoch"], "val_accuracy": round(best["val_accuracy"], 4),
        "val_balanced_accuracy": round(best["val_balanced_accuracy"], 4), "seed": seed,
        "history": [{k: round(v, 4) for k, v in row.items()} for row in history],
        "parity": {"validation_max_abs": parity_val, "fixture_max_abs": parity_fixture,
                   "fixture_torch_probs": [[round(float(v), 7) for v in row] for row in torch_fixture]},
        "torch": torch.__version__, "seconds": round(time.perf_counter() - start, 1),
    }
    update_meta(name, meta)
    return meta


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", choices=[*SPECS, "all"], default="all")
    parser.add_argument("--cache", type=Path, default=None, help="screenshot cache (default: $PAGETYPE_CACHE "
                        "or ~/.cache/news-crawler/pagetype)")
    parser.add_argument("--epochs", type=int, default=None, help="default: per model (30)")
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--threads", type=int, default=None, help="torch CPU threads (default: torch's)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    if args.threads:
        torch.set_num_threads(args.threads)
    cache = args.cache or default_cache()
    PAGETYPE_DIR.mkdir(parents=True, exist_ok=True)
    for name in SPECS if args.model == "all" else [args.model]:
        meta = run_model(name, cache, args.epochs or SPECS[name]["epochs"], args.seed, cache)
        logger.info("%s: val accuracy %.3f (balanced %.3f) at epoch %d; %s, %d parameters, %.1f MB, %.0f s", name,
                    meta["val_accuracy"], meta["val_balanced_accuracy"], meta["best_epoch"], meta["file"],
                    meta["parameters"], meta["size_bytes"] / 1e6, meta["seconds"])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
