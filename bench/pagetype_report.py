"""Page-type models (paper 000) on held-out sites: fit the fusion weight, score, time.

    python -m bench.pagetype_report [--cache DIR] [--no-fit] [--latency-pages N]

Reads the predictions the trainers left in the screenshot cache (``cnn_predictions_*.jsonl``,
``dom_predictions.jsonl``), fits the fusion weight on the validation sites (wcxb-dev fold
``VAL_FOLD``: the image model's validation predictions beside the DOM model's out-of-fold ones),
writes it to ``models/pagetype/meta.json`` (section ``fusion``), then scores LeNet-5, the ResNet,
the DOM model and the fusion on pages of sites no model trained on:

- wcxb-dev, held-out fold: article vs list (listing + collection), and all three types;
- gne-chinese: article vs list (Chinese);
- article-vs-nonarticle: article vs non-article (its non-articles are section fronts, video and
  recipe pages: "list" or "other" both count as non-article).

Article vs list: the class with the larger of p(article), p(list) (LeNet-5 has only these two).
Latency: per page, from the screenshot PNG / parsed page to the decision, median and p95 over
``--latency-pages`` held-out pages, one thread. Writes ``bench/results/pagetype.md`` and ``.json``.
"""

from __future__ import annotations

import argparse
import json
import logging
import statistics
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import numpy as np

from extraction.pagetype.models import CLASSES, MODELS_DIR, PageTypeModels, fuse, load_gray
from models.training.pagetype_data import default_cache, read_manifest
from models.training.pagetype_meta import read_meta, update_meta

logger = logging.getLogger("pagetype_report")
REPO = Path(__file__).resolve().parents[1]
IMAGE_MODELS = ("lenet5", "resnet")
FUSION_GRID = [round(w, 2) for w in np.linspace(0.0, 1.0, 21)]
Key = tuple[str, str]


def _read_predictions(path: Path, variant: str | None = None) -> dict[str, dict[Key, dict[str, Any]]]:
    """split -> (dataset, page_id) -> record (probs as a 3-vector over CLASSES)."""
    out: dict[str, dict[Key, dict[str, Any]]] = defaultdict(dict)
    if not path.exists():
        return out
    for line in path.read_text(encoding="utf-8").split("\n"):
        if not line.strip():
            continue
        record = json.loads(line)
        if variant is not None and record.get("variant") not in (None, variant, "offline"):
            continue
        probs = np.asarray(record["probs"], dtype=np.float64)
        if len(probs) == 2:  # lenet5: article, list
            probs = np.array([probs[0], probs[1], 0.0])
        record["probs"] = probs
        out[record["split"]][(record["dataset"], record["page_id"])] = record
    return out


def fit_fusion(image_val: dict[Key, dict[str, Any]], dom_oof: dict[Key, dict[str, Any]]) -> dict[str, Any]:
    """Choose w in p ~ p_img^w p_dom^(1-w) by log-loss on the validation pages (ties: accuracy)."""
    keys = [k for k in image_val if k in dom_oof and image_val[k].get("informative", True)]
    y = np.array([CLASSES.index(image_val[k]["label"]) for k in keys])
    img = np.stack([image_val[k]["probs"] for k in keys])
    dom = np.stack([dom_oof[k]["probs"] for k in keys])
    rows = []
    for w in FUSION_GRID:
        p = fuse(img, dom, w)
        rows.append({"weight": w, "log_loss": float(-np.mean(np.log(np.clip(p[np.arange(len(y)), y], 1e-9, 1)))),
                     "accuracy": float(np.mean(p.argmax(1) == y))})
    best = min(rows, key=lambda r: (round(r["log_loss"], 4), -r["accuracy"]))
    return {"weight": best["weight"], "validation_pages": len(keys), "validation_log_loss": round(best["log_loss"], 4),
            "validation_accuracy": round(best["accuracy"], 4),
            "grid": [{k: round(v, 4) for k, v in r.items()} for r in rows]}


def _confusion(truth: list[str], pred: list[str], labels: list[str]) -> dict[str, Any]:
    counts = Counter(zip(truth, pred, strict=True))
    correct = sum(counts[(t, t)] for t in labels)
    return {"n": len(truth), "accuracy": correct / len(truth) if truth else None, "labels": labels,
            "matrix": [[counts[(t, p)] for p in labels] for t in labels]}


def score(preds: dict[Key, np.ndarray], truth: dict[Key, str]) -> dict[str, Any]:
    """The held-out tasks for one model's predictions (keys missing from ``preds`` are skipped)."""
    tasks: dict[str, Any] = {}
    groups: dict[str, list[Key]] = defaultdict(list)
    for key in truth:
        if key in preds:
            groups[key[0]].append(key)
    al_truth: list[str] = []
    al_pred: list[str] = []
    for dataset in ("wcxb-dev", "gne-chinese"):
        keys = [k for k in groups[dataset] if truth[k] in ("article", "list")]
        t = [truth[k] for k in keys]
        p = ["article" if preds[k][0] >= preds[k][1] else "list" for k in keys]
        tasks[f"{dataset}: article vs list"] = _confusion(t, p, ["article", "list"])
        al_truth += t
        al_pred += p
    tasks["wcxb-dev + gne-chinese: article vs list"] = _confusion(al_truth, al_pred, ["article", "list"])
    keys = groups["wcxb-dev"]
    if any(preds[k][2] > 0 for k in keys):
        tasks["wcxb-dev: three types"] = _confusion([truth[k] for k in keys],
                                                    [CLASSES[int(np.argmax(preds[k]))] for k in keys], list(CLASSES))
    keys = groups["article-vs-nonarticle"]
    tasks["article-vs-nonarticle: article vs non-article"] = _confusion(
        [truth[k] for k in keys],
        ["article" if int(np.argmax(preds[k])) == 0 else "nonarticle" for k in keys], ["article", "nonarticle"])
    return tasks


def latency(cache: Path, pages: int) -> dict[str, dict[str, float]]:
    """Per-page decision time (ms) of each model on held-out pages, from PNG / HTML."""
    from evaluation.datasets import iter_pages
    from extraction.dom.encoding import decode_html
    from extraction.dom.html import parse_html

    models = PageTypeModels.load(MODELS_DIR)
    records = [r for r in read_manifest(cache) if r["dataset"] == "article-vs-nonarticle" and r.get("png")][:pages]
    wanted = {r["page_id"] for r in records}
    html_by_id = {p.page_id: (p.html_bytes(), p.url) for p in iter_pages("article-vs-nonarticle")
                  if p.page_id in wanted}
    times: dict[str, list[float]] = defaultdict(list)
    for record in records:
        png = (cache / record["png"]).read_bytes()
        raw, url = html_by_id[record["page_id"]]
        start = time.perf_counter()
        root = parse_html(decode_html(raw).text)
        parsed = time.perf_counter()
        for name in IMAGE_MODELS:
            if name in models.images:
                t0 = time.perf_counter()
                models.images[name].probabilities(load_gray(png))
                times[name].append((time.perf_counter() - t0) * 1e3)
        t0 = time.perf_counter()
        models.classify(root, url)
        times["dom"].append((time.perf_counter() - t0) * 1e3)
        t0 = time.perf_counter()
        models.classify(root, url, load_gray(png))
        times["fusion"].append((time.perf_counter() - t0) * 1e3)
        times["parse"].append((parsed - start) * 1e3)
    return {name: {"median_ms": statistics.median(v), "p95_ms": float(np.percentile(v, 95)), "pages": len(v)}
            for name, v in times.items()}


def _markdown(result: dict[str, Any]) -> str:
    out = ["# Page type on held-out sites (`python -m bench.pagetype_report`)", "",
           "No model trained on these sites: wcxb-dev's held-out fold, gne-chinese and article-vs-nonarticle are "
           "never trained on (the shipped models train on wcxb-dev's other folds and the demo sites).", ""]
    names = [n for n in ("lenet5", "resnet", "dom", "fusion") if n in result["scores"]]
    tasks = list(next(iter(result["scores"].values())))
    out += ["| task | " + " | ".join(names) + " |", "|---|" + "---:|" * len(names)]
    for task in tasks:
        cells = []
        for name in names:
            cell = result["scores"][name].get(task)
            cells.append("—" if not cell or cell["accuracy"] is None else f"{cell['accuracy']:.1%} ({cell['n']})")
        out.append(f"| {task} | " + " | ".join(cells) + " |")
    out += ["", "## Confusion matrices (rows: truth, columns: prediction)", ""]
    for name in names:
        for task, cell in result["scores"][name].items():
            if not cell["n"]:
                continue
            out.append(f"**{name}, {task}** ({cell['accuracy']:.1%})")
            out += ["", "| | " + " | ".join(cell["labels"]) + " |", "|---|" + "---:|" * len(cell["labels"])]
            out += [f"| {label} | " + " | ".join(str(v) for v in row) + " |"
                    for label, row in zip(cell["labels"], cell["matrix"], strict=True)]
            out.append("")
    fusion = result.get("fusion") or {}
    if fusion:
        out += [f"Fusion weight on the image model: {fusion['weight']} (validation sites, {fusion['validation_pages']} "
                f"pages, log-loss {fusion['validation_log_loss']}, accuracy {fusion['validation_accuracy']:.1%}).", ""]
    if result.get("latency"):
        out += ["## Latency per page (ms, one thread)", "", "| model | median | p95 | pages |", "|---|---:|---:|---:|"]
        out += [f"| {name} | {v['median_ms']:.2f} | {v['p95_ms']:.2f} | {v['pages']} |"
                for name, v in result["latency"].items()]
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cache", type=Path, default=None)
    parser.add_argument("--no-fit", action="store_true", help="keep the fusion weight in meta.json")
    parser.add_argument("--latency-pages", type=int, default=100, help="0: skip the latency run")
    parser.add_argument("--out-dir", type=Path, default=REPO / "bench" / "results")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    cache = args.cache or default_cache()
    dom = _read_predictions(cache / "dom_predictions.jsonl")
    images = {name: _read_predictions(cache / f"cnn_predictions_{name}.jsonl", variant="styled")
              for name in IMAGE_MODELS}
    result: dict[str, Any] = {"scores": {}}
    if not args.no_fit:
        fusion = fit_fusion(images["resnet"]["val"], dom["oof"])
        update_meta("fusion", {"image_model": "resnet", **fusion})
        logger.info("fusion weight %.2f (validation log-loss %.4f)", fusion["weight"], fusion["validation_log_loss"])
    fusion_meta = read_meta().get("fusion") or {}
    result["fusion"] = {k: v for k, v in fusion_meta.items() if k != "grid"}
    truth = {k: r["label"] for k, r in dom["held-out"].items() if k[0] != "demo"}
    for name in IMAGE_MODELS:
        result["scores"][name] = score({k: r["probs"] for k, r in images[name]["held-out"].items()}, truth)
    dom_probs = {k: r["probs"] for k, r in dom["held-out"].items()}
    result["scores"]["dom"] = score(dom_probs, truth)
    weight = float(fusion_meta.get("weight", 0.5))
    # A blank screenshot: the image model abstains and the DOM/URL model decides (as at run time).
    fused = {k: fuse(r["probs"], dom_probs[k], weight) if r.get("informative", True) else dom_probs[k]
             for k, r in images["resnet"]["held-out"].items() if k in dom_probs}
    result["scores"]["fusion"] = score(fused, truth)
    if args.latency_pages:
        result["latency"] = latency(cache, args.latency_pages)
    args.out_dir.mkdir(parents=True, exist_ok=True)
    (args.out_dir / "pagetype.json").write_text(json.dumps(result, indent=2, default=float) + "\n", encoding="utf-8")
    (args.out_dir / "pagetype.md").write_text(_markdown(result), encoding="utf-8")
    for name, tasks in result["scores"].items():
        logger.info("%s: %s", name, "; ".join(f"{t} {c['accuracy']:.3f}" for t, c in tasks.items()
                                               if c["accuracy"] is not None))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
