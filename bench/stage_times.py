"""Where the default extraction's time goes, stage by stage, beside trafilatura's ``extract`` on the same pages.

``python -m bench.stage_times [--sets trafilatura-eval cleaneval ...] [--pages N] [--out FILE.md]``

Each set's evaluation pages (its held-out fold, as ``scrapy evaluate --split held-out`` reads them) are read
and decoded once. Then, one core, start-up excluded (each candidate first runs once, untimed, on the first
page), the default runs through ``extraction.methods.extract`` as the harness times it, with the functions of
its path wrapped in timers (``STAGES``), and trafilatura's ``extract`` runs on the same text.

A stage's time is inclusive: "text" holds "text: block features". The wrappers cost about a microsecond a
call, and the stages wrapped are called a few times a page, so the total is the harness's within noise.

The table's last lines are the arithmetic of issue 14's speed goal (twice trafilatura's pages/s): its
budget (half trafilatura's time a page) against the **floor**, the stages whose time is spent outside our
Python code, in libraries that any version of the page's path calls as it does (lxml's parse, onnxruntime's
runs, py3langid). What is left of the budget is what every Python walk of the page (page-type features,
segmentation, block features, metadata, list entries, tidying) would have to fit in together.

Results: ``bench/results/stage_times.md``.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import statistics
import time
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evaluation.harness import _read, load_pages, resolve_split
from extraction.methods import extract

SETS = ("trafilatura-eval", "cleaneval", "l3s-gn1", "dragnet", "wcxb-dev", "chinese-wced-dev")
OUT = Path(__file__).parent / "results" / "stage_times.md"


@dataclass(frozen=True)
class Stage:
    """A timed stage: ``target`` is ``module:attribute`` or ``module:Class.attribute``, the name the path
    looks the function up by; ``floor``: its time is spent in a library, not in our Python walks."""

    label: str
    target: str
    floor: bool = False


STAGES = (
    Stage("parse (lxml)", "extraction.methods:parse_html", floor=True),
    Stage("page type", "extraction.pagetype.models:PageTypeModels.classify"),
    Stage("page type: DOM features", "extraction.pagetype.features:dom_features"),
    Stage("segmentation (page_blocks)", "extraction.process:page_blocks"),
    Stage("list entries", "extraction.process:list_page_entries"),
    Stage("metadata", "extraction.process:page_metadata"),
    Stage("text", "extraction.process:classify"),
    Stage("text: block features", "extraction.blockclf.classifier:block_features"),
    Stage("text: context features", "extraction.blockclf.classifier:context_features"),
    Stage("ONNX runs (onnxruntime)", "onnxruntime:InferenceSession.run", floor=True),
    Stage("language (py3langid)", "extraction.process:identify_language", floor=True),
    Stage("mojibake repair and tidying", "extraction.process:_repair"),
    Stage("mojibake repair and tidying", "extraction.process:_tidy"),
)


def _owner(target: str) -> tuple[Any, str]:
    """Return the object holding ``target``'s function and the function's name there."""
    module, _, name = target.partition(":")
    owner: Any = importlib.import_module(module)
    *classes, attribute = name.split(".")
    for part in classes:
        owner = getattr(owner, part)
    return owner, attribute


@contextlib.contextmanager
def timed(stages: Sequence[Stage], seconds: dict[str, float]) -> Iterator[None]:
    """Wrap each stage's function so that its calls add their time to ``seconds[label]``; restored on exit."""
    saved: list[tuple[Any, str, Any]] = []  # owner, name, what its own namespace held (None: inherited)

    def wrapper(function: Callable[..., Any], label: str) -> Callable[..., Any]:
        def timed_call(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                seconds[label] += time.perf_counter() - start
        return timed_call

    try:
        for stage in stages:
            owner, attribute = _owner(stage.target)
            saved.append((owner, attribute, vars(owner).get(attribute)))
            setattr(owner, attribute, wrapper(getattr(owner, attribute), stage.label))
        yield
    finally:
        for owner, attribute, own in reversed(saved):
            if own is None:  # a method a class inherits: the base's is read again
                delattr(owner, attribute)
            else:
                setattr(owner, attribute, own)


@dataclass
class SetTimes:
    """Milliseconds a page: the default's stages and total, trafilatura's ``extract``."""

    name: str
    pages: int
    total: float
    stages: dict[str, float]
    trafilatura: float

    @property
    def floor(self) -> float:
        labels = {stage.label for stage in STAGES if stage.floor}
        return sum(ms for label, ms in self.stages.items() if label in labels)


def _per_page(run: Callable[[str, str | None], Any], pages: Sequence[tuple[str, str | None]]) -> float:
    """Return the milliseconds a page of ``run`` over ``pages``."""
    start = time.perf_counter()
    for html, url in pages:
        run(html, url)
    return 1000 * (time.perf_counter() - start) / len(pages)


def measure(name: str, limit: int | None = None, rounds: int = 3) -> SetTimes:
    """Time the default's stages and trafilatura on the set's evaluation pages; the run of the median total
    of ``rounds`` is reported, beside trafilatura's median."""
    import trafilatura  # an extra (``make extras``): the bench's only use of it

    pages = [(_read(page)[0], page.url) for page in load_pages(name, resolve_split(name, "held-out"))]
    pages = pages[:limit] if limit else pages
    if not pages:
        raise SystemExit(f"{name}: no pages (is DATASETS_DIR set?)")

    def ours(html: str, url: str | None) -> None:
        extract(html, "pipeline", url)

    def theirs(html: str, url: str | None) -> None:
        trafilatura.extract(html, url=url)

    ours(*pages[0])  # models and lazy loads before the timers
    theirs(*pages[0])
    runs: list[tuple[float, dict[str, float]]] = []
    trafilatura_ms = []
    for _ in range(rounds):
        seconds: dict[str, float] = defaultdict(float)
        with timed(STAGES, seconds):
            total = _per_page(ours, pages)
        runs.append((total, {label: 1000 * value / len(pages) for label, value in seconds.items()}))
        trafilatura_ms.append(_per_page(theirs, pages))
    total, stages = sorted(runs, key=lambda run: run[0])[len(runs) // 2]
    return SetTimes(name, len(pages), total, stages, statistics.median(trafilatura_ms))


def markdown(results: Sequence[SetTimes]) -> str:
    """Return the report: one column per set, ms a page."""
    labels = list(dict.fromkeys(stage.label for stage in STAGES))
    floor_labels = {stage.label for stage in STAGES if stage.floor}
    head = "| ms a page | " + " | ".join(f"{r.name} ({r.pages})" for r in results) + " |"
    lines = [head, "|---|" + "---:|" * len(results)]
    for label in labels:
        mark = " (floor)" if label in floor_labels else ""
        lines.append(f"| {label}{mark} | " + " | ".join(f"{r.stages.get(label, 0.0):.2f}" for r in results) + " |")
    rows = [
        ("**default, total**", lambda r: r.total),
        ("**trafilatura `extract`**", lambda r: r.trafilatura),
        ("default / trafilatura pages/s", lambda r: r.trafilatura / r.total),
        ("budget for 2x (trafilatura / 2)", lambda r: r.trafilatura / 2),
        ("floor (parse, ONNX, py3langid)", lambda r: r.floor),
        ("left of the budget for our Python walks", lambda r: r.trafilatura / 2 - r.floor),
        ("our Python walks now (total - floor)", lambda r: r.total - r.floor),
    ]
    for label, value in rows:
        lines.append(f"| {label} | " + " | ".join(f"{value(r):.2f}" for r in results) + " |")
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sets", nargs="+", default=list(SETS), metavar="SET")
    parser.add_argument("--pages", type=int, default=None, help="at most this many pages a set (default: all)")
    parser.add_argument("--rounds", type=int, default=3, help="runs a set; the median run is reported")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    if args.rounds < 1 or (args.pages is not None and args.pages < 1):
        parser.error("--rounds and --pages must be 1 or more")
    results = []
    for name in args.sets:
        results.append(measure(name, args.pages, args.rounds))
        print(f"{name}: {results[-1].total:.2f} ms a page, trafilatura {results[-1].trafilatura:.2f}", flush=True)
    report = markdown(results)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(f"# Stage times (`python -m bench.stage_times`, {time.strftime('%Y-%m-%d')})\n\n"
                        + report)
    print(report)


if __name__ == "__main__":
    main()
