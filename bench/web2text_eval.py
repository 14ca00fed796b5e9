"""Web2Text (``--method web2text``), the SVM pipeline, both together (``svm-web2text``) and trafilatura
on the held-out sets, one core.

``python -m bench.web2text_eval [--out-dir DIR] [--limit N] [--no-pin] [--methods m1,m2]``
(``make bench-web2text``).

For each held-out set of the SVM issue (``scrapy evaluate --split held-out``: CleanEval final,
WCXB-dev articles, chinese-wced-dev, L3S-GN1, Dragnet test; pages of sites no shipped model
trained on) one ``evaluation.harness.evaluate_dataset`` run scores every candidate on the
same decoded pages with the dataset's own metric, each call timed alone (parsing included).
The process is pinned to one CPU core (``os.sched_setaffinity``) and onnxruntime runs one thread,
so pages/s is one-core throughput; the ratio to trafilatura is taken within each run.

Results: ``<out-dir>/web2text.md`` and ``web2text.json`` (also printed).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import logging
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from evaluation.harness import HELD_OUT, EvalResult, evaluate_dataset

logger = logging.getLogger("bench.web2text_eval")

# (dataset, score group shown, label)
SETS: tuple[tuple[str, str, str], ...] = (
    ("cleaneval", "all", "CleanEval final, held-out fold"),
    ("wcxb-dev", "article", "WCXB-dev held-out fold, articles"),
    ("chinese-wced-dev", "jieba", "chinese-wced-dev held-out fold (jieba tokens)"),
    ("l3s-gn1", "all", "L3S-GN1"),
    ("dragnet", "all", "Dragnet test"),
)
METHODS = ("pipeline", "web2text", "svm-web2text")
BASELINES = ("trafilatura",)
OUT_DIR = Path(__file__).resolve().parent / "results"


def pin_to_one_core() -> int | None:
    """Pin this process to the first CPU it may use; return that CPU (None where unsupported)."""
    if not hasattr(os, "sched_setaffinity"):
        return None
    cpu = min(os.sched_getaffinity(0))
    os.sched_setaffinity(0, {cpu})
    return cpu


def summarise(results: Sequence[tuple[str, str, str, EvalResult]], candidates: Sequence[str]) -> dict[str, Any]:
    """Return per set the shown group's F1 and pages/s per candidate, and the totals."""
    rows = []
    seconds = dict.fromkeys(candidates, 0.0)
    pages = dict.fromkeys(candidates, 0)
    for dataset, group, label, result in results:
        by_name = {c.name: c for c in result.candidates}
        row: dict[str, Any] = {"dataset": dataset, "label": label, "group": group,
                               "pages": result.group_pages.get(group, result.pages)}
        for name in candidates:
            candidate = by_name[name]
            row[name] = {"f1": candidate.scores[group]["f1"], "precision": candidate.scores[group]["precision"],
                         "recall": candidate.scores[group]["recall"], "pages_per_s": candidate.pages_per_s,
                         "errors": candidate.errors}
            seconds[name] += candidate.seconds
            pages[name] += candidate.pages
        rows.append(row)
    mean_f1 = {name: sum(row[name]["f1"] for row in rows) / len(rows) for name in candidates}
    throughput = {name: pages[name] / seconds[name] if seconds[name] else 0.0 for name in candidates}
    return {"rows": rows, "mean_f1": mean_f1, "pages_per_s": throughput, "pages": pages}


def markdown(summary: dict[str, Any], candidates: Sequence[str], cpu: int | None) -> str:
    """Return the report: F1 per set and candidate, mean F1, one-core pages/s and the ratio to trafilatura."""
    lines = [f"Held-out F1 (each set's own metric; WCXB bag-of-words on its article pages, chinese-wced-dev "
             f"shingles of jieba tokens) and one-core throughput, {dt.date.today().isoformat()}, "
             f"{'pinned to CPU ' + str(cpu) if cpu is not None else 'not pinned'}.", "",
             "| set (pages) | " + " | ".join(candidates) + " |", "|---|" + "---:|" * len(candidates)]
    for row in summary["rows"]:
        best = max(row[name]["f1"] for name in candidates)
        cells = [(f"**{row[name]['f1']:.3f}**" if row[name]["f1"] == best else f"{row[name]['f1']:.3f}")
                 for name in candidates]
        lines.append(f"| {row['label']} ({row['pages']}) | " + " | ".join(cells) + " |")
    lines.append("| **mean F1** | " + " | ".join(f"{summary['mean_f1'][name]:.3f}" for name in candidates) + " |")
    lines.append("| pages/s, all sets (one core) | "
                 + " | ".join(f"{summary['pages_per_s'][name]:.1f}" for name in candidates) + " |")
    if "trafilatura" in candidates:
        base = summary["pages_per_s"]["trafilatura"]
        lines.append("| ratio to trafilatura | " + " | ".join(
            f"{summary['pages_per_s'][name] / base:.2f}" if base else "—" for name in candidates) + " |")
    lines += ["", "Pages/s per set:", "", "| set | " + " | ".join(candidates) + " |",
              "|---|" + "---:|" * len(candidates)]
    for row in summary["rows"]:
        speeds = " | ".join(f"{row[name]['pages_per_s']:.1f}" for name in candidates)
        lines.append(f"| {row['label']} | {speeds} |")
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out-dir", type=Path, default=OUT_DIR)
    parser.add_argument("--limit", type=int, default=None, help="pages per set (default all)")
    parser.add_argument("--methods", default=",".join(METHODS), help="our methods, comma-separated")
    parser.add_argument("--no-pin", action="store_true", help="do not pin the process to one CPU core")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s", stream=sys.stderr)
    cpu = None if args.no_pin else pin_to_one_core()
    methods = tuple(name for name in args.methods.split(",") if name)
    candidates = methods + BASELINES
    results = []
    for dataset, group, label in SETS:
        logger.info("evaluating %s (held-out) with %s", dataset, ", ".join(candidates))
        result = evaluate_dataset(dataset, methods, BASELINES, split=HELD_OUT, limit=args.limit)
        results.append((dataset, group, label, result))
    summary = summarise(results, candidates)
    report = markdown(summary, candidates, cpu)
    args.out_dir.mkdir(parents=True, exist_ok=True)
    (args.out_dir / "web2text.md").write_text(report, encoding="utf-8")
    payload = {"date": dt.date.today().isoformat(), "cpu": cpu, "summary": summary,
               "runs": [result.to_dict() for *_, result in results]}
    (args.out_dir / "web2text.json").write_text(json.dumps(payload, indent=1) + "\n", encoding="utf-8")
    print(report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
