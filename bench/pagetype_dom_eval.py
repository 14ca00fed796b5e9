"""Held-out evaluation and latency of the shipped DOM/URL page-type model (``models/pagetype/dom.onnx``).

``python -m bench.pagetype_dom_eval [--model-dir DIR] [--out FILE]``. Every page is decoded and
parsed as the crawl does, typed by ``extraction.pagetype.features.dom_features`` plus onnxruntime, one
page at a time (the crawl's case), and compared with the DOM rule of ``extraction.pagetype.rule``
(``page_type_rule``, article or list only). None of these pages trained or selected the model:

* wcxb-dev, held-out fold (``evaluation.folds``): 3-class accuracy; article vs list on the pages
  labelled article or list (article when p_article >= p_list);
* article-vs-nonarticle (eval only): article (the crawl's decision, ``decide``) vs anything else;
* gne-chinese (eval only, pages without URL): article vs list by p_article vs p_list.

The same is also given without URLs (the URL features zeroed: ``dom_features(root, None)`` gives
exactly that). Latency: per page, features + onnxruntime (median, p95), parsing apart. The
grouped-CV results and the ablation come from ``meta.json``. Writes ``bench/results/pagetype-dom.md``.
"""

from __future__ import annotations

import argparse
import json
import logging
import platform
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import onnxruntime as ort

from evaluation.datasets import iter_pages
from evaluation.folds import held_out
from extraction.dom.encoding import decode_html
from extraction.dom.html import parse_html
from extraction.pagetype.features import DOM_FEATURE_VERSION, DOM_FEATURES, URL_FEATURES, dom_features
from extraction.pagetype.models import decide
from extraction.pagetype.rule import page_type_rule

logger = logging.getLogger("bench.pagetype_dom_eval")

REPO = Path(__file__).resolve().parent.parent
MODEL_DIR = REPO / "models" / "pagetype"
CLASSES = ("article", "list", "other")
SETS: tuple[tuple[str, bool], ...] = (("wcxb-dev", True), ("article-vs-nonarticle", False), ("gne-chinese", False))


@dataclass
class Result:
    """One page's label and what the model (with and without URL) and the DOM rule said."""

    dataset: str
    label: str
    probs: npt.NDArray[np.float32]
    probs_no_url: npt.NDArray[np.float32]
    rule: str


def load_model(model_dir: Path) -> tuple[ort.InferenceSession, dict[str, Any]]:
    """Return the ONNX session and the "dom" meta section; raises SystemExit when they do not fit the code."""
    meta = json.loads((model_dir / "meta.json").read_text(encoding="utf-8"))["dom"]
    if meta["features"] != list(DOM_FEATURES) or meta["feature_version"] != DOM_FEATURE_VERSION:
        raise SystemExit(f"{model_dir / 'meta.json'}: features or feature_version differ from pagetype.features")
    if tuple(meta["classes"]) != CLASSES:
        raise SystemExit(f"unexpected classes {meta['classes']}")
    session = ort.InferenceSession(str(model_dir / meta["file"]), providers=["CPUExecutionProvider"])
    return session, meta


def probabilities(session: ort.InferenceSession, x: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    """Return the model's [N, 3] probabilities of ``x``."""
    return np.asarray(session.run(["probabilities"], {"features": x})[0], dtype=np.float32)


def evaluate(session: ort.InferenceSession) -> tuple[list[Result], list[float], list[float]]:
    """Return the results of every held-out page, and per page the ms of parsing and of features + model."""
    url_columns = [DOM_FEATURES.index(name) for name in URL_FEATURES]
    results: list[Result] = []
    parse_ms: list[float] = []
    model_ms: list[float] = []
    for dataset, fold_only in SETS:
        for page in iter_pages(dataset):
            if not page.page_type or (fold_only and not held_out(page)):
                continue
            body = page.html_bytes()
            started = time.perf_counter()
            root = parse_html(decode_html(body).text)
            parsed = time.perf_counter()
            x = dom_features(root, page.url).reshape(1, -1)
            probs = probabilities(session, x)[0]
            done = time.perf_counter()
            parse_ms.append(1000 * (parsed - started))
            model_ms.append(1000 * (done - parsed))
            x[:, url_columns] = 0.0
            results.append(Result(dataset, page.page_type, probs, probabilities(session, x)[0], page_type_rule(root)))
        logger.info("%s: %d pages", dataset, sum(r.dataset == dataset for r in results))
    return results, parse_ms, model_ms


def confusion(pairs: Sequence[tuple[str, str]], rows: Sequence[str], columns: Sequence[str]) -> list[list[int]]:
    """Return counts of (true, predicted) pairs: rows = true labels, columns = predictions."""
    matrix = [[0] * len(columns) for _ in rows]
    for truth, guess in pairs:
        matrix[rows.index(truth)][columns.index(guess)] += 1
    return matrix


def table(matrix: list[list[int]], rows: Sequence[str], columns: Sequence[str]) -> list[str]:
    """Return a confusion matrix as markdown lines."""
    lines = ["| true \\ predicted | " + " | ".join(columns) + " |", "|---" * (len(columns) + 1) + "|"]
    lines += [f"| {row} | " + " | ".join(str(n) for n in counts) + " |"
              for row, counts in zip(rows, matrix, strict=True)]
    return lines


def accuracy(pairs: Sequence[tuple[str, str]]) -> float:
    """Return the share of pairs whose prediction equals the label."""
    return sum(a == b for a, b in pairs) / len(pairs) if pairs else float("nan")


def decided_label(probs: npt.NDArray[np.float32], margin: float) -> str:
    """Return the type the crawl gives (``extraction.pagetype.models.decide``: "other" only by ``margin``)."""
    return CLASSES[decide(probs, margin)]


def article_or_list(probs: npt.NDArray[np.float32]) -> str:
    """Return "article" when p_article >= p_list, else "list"."""
    return "article" if probs[0] >= probs[1] else "list"


def tasks(results: list[Result], no_url: bool,
          margin: float) -> list[tuple[str, list[tuple[str, str]], list[str], list[str]]]:
    """Return (name, pairs, row labels, column labels) of each held-out task (``margin``: for "other")."""
    def probs(r: Result) -> npt.NDArray[np.float32]:
        return r.probs_no_url if no_url else r.probs

    wcxb = [r for r in results if r.dataset == "wcxb-dev"]
    avn = [r for r in results if r.dataset == "article-vs-nonarticle"]
    gne = [r for r in results if r.dataset == "gne-chinese"]
    binary = ["article", "nonarticle"]
    return [
        ("wcxb-dev held-out fold, 3 classes", [(r.label, decided_label(probs(r), margin)) for r in wcxb],
         list(CLASSES), list(CLASSES)),
        ("wcxb-dev held-out fold, article vs list (p_article vs p_list)",
         [(r.label, article_or_list(probs(r))) for r in wcxb if r.label in ("article", "list")],
         ["article", "list"], ["article", "list"]),
        ("article-vs-nonarticle, article vs the rest",
         [(r.label, "article" if decided_label(probs(r), margin) == "article" else "nonarticle") for r in avn],
         binary, binary),
        ("gne-chinese, article vs list (p_article vs p_list)", [(r.label, article_or_list(probs(r))) for r in gne],
         ["article", "list"], ["article", "list"]),
    ]


def rule_tasks(results: list[Result]) -> list[tuple[str, float, int]]:
    """Return (task, accuracy, pages) of the pipeline's DOM rule on the two-class tasks."""
    wcxb = [(r.label, r.rule) for r in results if r.dataset == "wcxb-dev" and r.label in ("article", "list")]
    avn = [(r.label, "article" if r.rule == "article" else "nonarticle")
           for r in results if r.dataset == "article-vs-nonarticle"]
    gne = [(r.label, r.rule) for r in results if r.dataset == "gne-chinese"]
    return [("wcxb-dev held-out, article vs list", accuracy(wcxb), len(wcxb)),
            ("article-vs-nonarticle", accuracy(avn), len(avn)),
            ("gne-chinese, article vs list", accuracy(gne), len(gne))]


def percentile(values: Sequence[float], q: float) -> float:
    """Return the q-quantile (0..1) of ``values``."""
    return float(np.quantile(np.asarray(values), q)) if values else float("nan")


def _shown(path: Path) -> Path:
    """Return ``path`` relative to the repository when it lies inside it (a ``--model-dir`` may not)."""
    return path.relative_to(REPO) if path.is_relative_to(REPO) else path


def report(results: list[Result], parse_ms: list[float], model_ms: list[float], meta: dict[str, Any],
           model_path: Path) -> str:
    """Return the markdown report."""
    cv = meta["cv"]
    lines = [
        "# DOM/URL page-type model (article / list / other)",
        "",
        f"`python -m bench.pagetype_dom_eval`; model `{_shown(model_path)}` "
        f"({model_path.stat().st_size:,} bytes), {meta['model']['family']} {json.dumps(meta['model']['params'])}, "
        f"{len(DOM_FEATURES)} features (version {DOM_FEATURE_VERSION}); trained on {meta['training_data']['pages']} "
        f"pages in {meta['training_data']['groups']} site groups (wcxb-dev training folds + demo sites), "
        f"{platform.python_implementation()} {platform.python_version()}, onnxruntime {ort.__version__}.",
        "",
        "## Grouped CV (training pages, GroupKFold(5) by site; from meta.json)",
        "",
        f"Macro-F1 {cv['macro_f1']:.3f} (+- {cv['macro_f1_fold_std']:.3f} over folds), 3-class accuracy "
        f"{cv['accuracy']:.3f}, article vs list {cv['article_vs_list_accuracy']:.3f}; without URL: macro-F1 "
        f"{cv['no_url']['macro_f1']:.3f}, article vs list {cv['no_url']['article_vs_list_accuracy']:.3f}.",
        "",
        *table(cv["confusion"]["matrix"], list(CLASSES), list(CLASSES)),
        "",
        "Best grid point per family (macro-F1 / article-vs-list accuracy, pages with URL):",
        "",
        "| family | params | macro-F1 | article vs list | macro-F1 without URL |",
        "|---|---|---|---|---|",
    ]
    best: dict[str, dict[str, Any]] = {}
    for row in cv["grid"]:
        if row["family"] not in best or row["macro_f1"] > best[row["family"]]["macro_f1"]:
            best[row["family"]] = row
    lines += [f"| {row['family']} | {json.dumps(row['params'])} | {row['macro_f1']:.3f} | "
              f"{row['article_vs_list_accuracy']:.3f} | {row['no_url']['macro_f1']:.3f} |" for row in best.values()]
    augmentation = meta["augmentation"]
    other = "without" if augmentation["augment_no_url"] else "with"
    shipped, alternative = augmentation["as_shipped"], augmentation["without_no_url_copies"]
    lines += [
        "",
        f"Training copies without URL ({'on' if augmentation['augment_no_url'] else 'off'} as shipped): "
        f"macro-F1 with URL {shipped['url']['macro_f1']:.3f}, without URL {shipped['no_url']['macro_f1']:.3f}; "
        f"{other} them {alternative['url']['macro_f1']:.3f} and {alternative['no_url']['macro_f1']:.3f}.",
    ]
    for name, title, module in (("chrome", "Chrome-injected", "pagetype_chrome"),
                                ("short", "Short-article", "pagetype_short"),
                                ("wire", "Wire-style", "pagetype_wire")):
        bare = augmentation.get(f"without_{name}_copies")
        if bare is None:
            continue
        lines += [
            "",
            f"{title} training copies (`models/training/{module}.py`, "
            f"{'on' if augmentation.get(f'augment_{name}') else 'off'} as shipped): macro-F1 with URL "
            f"{shipped['url']['macro_f1']:.3f} (without the copies {bare['url']['macro_f1']:.3f}), article vs list "
            f"{shipped['url']['article_vs_list_accuracy']:.3f} ({bare['url']['article_vs_list_accuracy']:.3f}); "
            f"chinese-wced-dev's Chinese portal articles (out of fold) typed article "
            f"{shipped['chinese_wced_articles']:.3f} ({bare['chinese_wced_articles']:.3f}).",
        ]
    lines += [
        "",
        "Ablation, each group left out (grouped CV, same model; URL group: see \"without URL\" above):",
        "",
        "| left out | macro-F1 | change | article vs list | change |",
        "|---|---|---|---|---|",
    ]
    for name, row in meta["ablation"].items():
        lines.append(f"| {name} | {row['macro_f1']:.3f} | {row['macro_f1'] - cv['macro_f1']:+.3f} | "
                     f"{row['article_vs_list_accuracy']:.3f} | "
                     f"{row['article_vs_list_accuracy'] - cv['article_vs_list_accuracy']:+.3f} |")
    for no_url in (False, True):
        lines += ["", f"## Held-out pages{' without URL (URL features zeroed)' if no_url else ''}", ""]
        for name, pairs, rows, columns in tasks(results, no_url, float(meta.get("other_margin", 0.0))):
            lines += [f"**{name}**: accuracy {accuracy(pairs):.3f} on {len(pairs)} pages", "",
                      *table(confusion(pairs, rows, columns), rows, columns), ""]
    lines += ["## The pipeline's DOM rule on the same pages (`extraction.pagetype.rule.page_type_rule`)", "",
              "| task | pages | accuracy |", "|---|---|---|"]
    lines += [f"| {name} | {count} | {value:.3f} |" for name, value, count in rule_tasks(results)]
    lines += [
        "", "## Latency per page (one page per call, as in the crawl)", "",
        "| step | median ms | p95 ms |", "|---|---|---|",
        f"| features + onnxruntime | {statistics.median(model_ms):.2f} | {percentile(model_ms, 0.95):.2f} |",
        f"| decode + parse (not part of the model) | {statistics.median(parse_ms):.2f} | "
        f"{percentile(parse_ms, 0.95):.2f} |",
        "", f"{len(model_ms)} pages; 2 shared CPU cores.", "",
    ]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Evaluate the model and write the report; return the exit status."""
    parser = argparse.ArgumentParser(prog="python -m bench.pagetype_dom_eval",
                                     description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--model-dir", type=Path, default=MODEL_DIR, help=f"dom.onnx + meta.json (default {MODEL_DIR})")
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results" / "pagetype-dom.md")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s", stream=sys.stderr)
    session, meta = load_model(args.model_dir)
    results, parse_ms, model_ms = evaluate(session)
    text = report(results, parse_ms, model_ms, meta, args.model_dir / meta["file"])
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text, encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
