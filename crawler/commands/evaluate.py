"""``scrapy evaluate``: our extraction methods and the field's baselines on a labelled dataset.

    scrapy evaluate --dataset NAME [--method m1,m2] [--baselines trafilatura,readability,...]
                    [--limit N] [--split S] [--out-dir output/evaluate]

Every candidate runs on the same pages (read and decoded once) and is timed on its own; the
metric follows the dataset (see ``evaluation.harness``). Prints a Markdown table (P, R, F1,
pages/s, errors, plus the ``parse-only`` floor) and writes
``<out-dir>/eval-<dataset>[-<split>].json`` and ``.md``. Default methods: every registered
method; default baselines: none (they need ``make extras``). Exit status 2 for a missing
dataset folder or baseline package, 0 otherwise.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import sys
from pathlib import Path

from scrapy.commands import ScrapyCommand
from scrapy.exceptions import UsageError

from crawler.cli import ProjectCommand
from crawler.logs import notice
from crawler.outputs import OUTPUT_DIR
from crawler.progress import Progress
from extraction.methods import method_names

logger = logging.getLogger(__name__)

PROGRESS_EVERY = 100  # pages between progress lines in the log


def _names(value: str | None) -> list[str]:
    return [name.strip() for name in (value or "").split(",") if name.strip()]


def output_stem(dataset: str, split: str | None) -> str:
    """Return ``eval-<dataset>[-<split>]``."""
    return f"eval-{dataset}" + (f"-{split}" if split else "")


class Command(ProjectCommand, ScrapyCommand):
    """Score extraction methods and baselines on one labelled dataset."""

    requires_project = True

    def syntax(self) -> str:
        return "--dataset NAME [options]"

    def short_desc(self) -> str:
        return "Evaluate extraction methods and baselines on a labelled dataset (Markdown + JSON)"

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        # The evaluation package loads here and in run() only: Scrapy imports every command module
        # at start-up, and a crawl must not load evaluation code.
        from evaluation.baselines import baseline_names
        from evaluation.harness import METRIC_BY_DATASET

        super().add_options(parser)
        parser.add_argument("--dataset", help=f"dataset name, one of {', '.join(METRIC_BY_DATASET)}")
        parser.add_argument("--method", help="comma-separated methods (default every registered method); "
                                             "pipeline@precision and pipeline@recall: the default flow with "
                                             "BLOCKS_FAVOR=precision or recall")
        parser.add_argument("--baselines", default="",
                            help=f"comma-separated baselines, none by default, from {', '.join(baseline_names())}")
        parser.add_argument("--limit", type=int, help="evaluate only the first N pages with ground truth")
        parser.add_argument("--split", help="dataset split (cleaneval dev or final; dragnet training or test, "
                                            "default test; held-out = the pages no shipped model trained on)")
        parser.add_argument("--out-dir", default=str(OUTPUT_DIR / "evaluate"),
                            help="where the .json/.md go (default output/evaluate; the project's published tables "
                                 "are bench/results, written only when named)")

    def run(self, args: list[str], opts: argparse.Namespace) -> None:
        from evaluation.baselines import BaselineUnavailable
        from evaluation.datasets import DatasetNotFound
        from evaluation.harness import METRIC_BY_DATASET, evaluate_dataset, favor_methods, markdown_table, resolve_split

        if args:
            raise UsageError(f"unexpected arguments: {' '.join(args)}")
        if not opts.dataset:
            raise UsageError("give --dataset NAME")
        if opts.dataset not in METRIC_BY_DATASET:
            raise UsageError(f"no extraction metric for dataset {opts.dataset!r}; "
                             f"known: {', '.join(METRIC_BY_DATASET)}")
        if opts.limit is not None and opts.limit < 1:
            raise UsageError("--limit must be at least 1")
        known = method_names()
        methods = _names(opts.method) or known
        known = [*known, *favor_methods()]
        unknown = [m for m in methods if m not in known]
        if unknown:
            raise UsageError(f"unknown --method {', '.join(unknown)}; known: {', '.join(known)}")
        baselines = _names(opts.baselines)

        bars = contextlib.ExitStack()  # the bar is made at the first page, when the number of pages is known
        bar: list[Progress] = []

        def progress(done: int, total: int) -> None:
            if not bar:
                bar.append(bars.enter_context(Progress(total, f"Evaluating {opts.dataset}")))
            bar[0].update(done - bar[0].done)

        try:
            with bars:
                result = evaluate_dataset(opts.dataset, methods, baselines, split=opts.split, limit=opts.limit,
                                          progress=progress, progress_every=1)
        except (BaselineUnavailable, DatasetNotFound) as exc:
            print(f"error: {exc}", file=sys.stderr)
            self.exitcode = 2
            return
        except ValueError as exc:  # e.g. an unknown split
            print(f"error: {exc}", file=sys.stderr)
            self.exitcode = 2
            return
        table = markdown_table(result)
        print(table)
        out_dir = Path(opts.out_dir)
        out_dir.mkdir(parents=True, exist_ok=True)
        stem = output_stem(opts.dataset, resolve_split(opts.dataset, opts.split))
        (out_dir / f"{stem}.json").write_text(json.dumps(result.to_dict(), indent=2, ensure_ascii=False) + "\n",
                                              encoding="utf-8")
        (out_dir / f"{stem}.md").write_text(table, encoding="utf-8")
        notice(logger, "Wrote %s and %s", out_dir / f"{stem}.json", out_dir / f"{stem}.md")
        self.exitcode = 0
