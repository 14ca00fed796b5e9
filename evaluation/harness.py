"""Evaluation harness: our methods and the field's baselines on the same labelled pages.

Pure (no Scrapy): ``scrapy evaluate`` is a thin wrapper around :func:`evaluate_dataset`.

The metric follows the dataset (each is the one its authors published, see ``metrics``):

- ``cleaneval``, ``cleanportaleval``, ``l3s-gn1``, ``dragnet``, ``mozilla-readability``:
  the article-body shingle metric over word tokens (group ``all``);
- ``chinese-wced-dev``: the same shingle metric twice, word tokens (``word``) and jieba
  tokens (``jieba``);
- ``wcxb-dev``: WCXB's bag-of-words F1, macro-averaged, over all pages (``all``) and
  separately over ``article`` and ``list`` (listing + collection) pages;
- ``trafilatura-eval``: trafilatura's snippet metric (micro P/R/F1 plus accuracy).

Every page is read and decoded once; then each candidate runs on that same text, timed with
``time.perf_counter`` around the candidate call only (a method's time includes its own
``parse_html``; each candidate first runs once, untimed, on the first page and on a short page with
Chinese text (``WARM_UP_PAGE``), so lazy loads such as jieba's dictionary or a model are not
charged to one page: start-up is not in pages/s). The ``parse-only`` row times
decode + ``parse_html``: the floor that any method built on our parser pays. A candidate that
raises on a page scores "" for it and the error is counted. Pages without ground truth for the
metric (no gold text, or no snippet) are skipped before any candidate runs and counted as
``skipped``.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from evaluation.datasets import ARTICLE, LIST, Page, iter_pages
from evaluation.metrics import (
    PRF,
    bow_prf,
    corpus_prf,
    jieba_tokens,
    macro_prf,
    shingle_counts,
    snippet_counts,
    snippet_prf,
    word_tokens,
)
from extraction.dom.encoding import decode_html
from extraction.dom.html import parse_html

# Metric kinds.
SHINGLE = "shingle"  # article-body shingle metric, word tokens
SHINGLE_ZH = "shingle-zh"  # shingle metric, word tokens and jieba tokens
BOW = "bow"  # WCXB bag-of-words macro F1, overall / article / list
SNIPPETS = "snippets"  # trafilatura's snippet metric

METRIC_BY_DATASET: dict[str, str] = {
    "cleaneval": SHINGLE,
    "cleanportaleval": SHINGLE,
    "l3s-gn1": SHINGLE,
    "dragnet": SHINGLE,
    "mozilla-readability": SHINGLE,
    "chinese-wced-dev": SHINGLE_ZH,
    "wcxb-dev": BOW,
    "trafilatura-eval": SNIPPETS,
}
# Score groups (table column groups) per metric kind.
GROUPS: dict[str, tuple[str, ...]] = {
    SHINGLE: ("all",),
    SHINGLE_ZH: ("word", "jieba"),
    BOW: ("all", ARTICLE, LIST),
    SNIPPETS: ("all",),
}
DEFAULT_SPLITS: dict[str, str] = {"dragnet": "test"}
PARSE_ONLY = "parse-only"

Extractor = Callable[[str, "str | None"], str]
Progress = Callable[[int, int], None]


def metric_for(dataset: str) -> str:
    """Return the metric kind of a dataset; raises ValueError for one without a text metric."""
    try:
        return METRIC_BY_DATASET[dataset]
    except KeyError:
        raise ValueError(
            f"no extraction metric for dataset {dataset!r}; evaluable: {', '.join(METRIC_BY_DATASET)}"
        ) from None


FAVOR_SEPARATOR = "@"  # "pipeline@precision": the default flow with the block model's thresholds of a favor


def favor_methods() -> list[str]:
    """Return the candidate names of the default flow with ``BLOCKS_FAVOR`` other than balanced."""
    from extraction.blockclf.classifier import BALANCED, FAVORS

    return [f"pipeline{FAVOR_SEPARATOR}{favor}" for favor in FAVORS if favor != BALANCED]


def method_candidate(name: str) -> Extractor:
    """Return an extractor that runs our method ``name`` (via ``extraction.methods.extract``), or for
    ``pipeline@FAVOR`` the default flow as a crawl with ``BLOCKS_FAVOR=FAVOR`` runs it."""
    if FAVOR_SEPARATOR in name:
        return _favored_pipeline(name.split(FAVOR_SEPARATOR, 1)[1])
    from extraction.methods import extract

    def run(html: str, url: str | None) -> str:
        return extract(html, name, url).text

    return run


def _favored_pipeline(favor: str) -> Extractor:
    from extraction.dom.html import parse_html
    from extraction.process import extract_pipeline

    def run(html: str, url: str | None) -> str:
        return extract_pipeline(parse_html(html), url, favor).text

    return run


@dataclass
class CandidateResult:
    """One candidate's scores (by group) and cost over the evaluated pages."""

    name: str
    kind: str  # "method" | "baseline" | "floor"
    pages: int = 0
    errors: int = 0
    error_examples: list[str] = field(default_factory=list)
    seconds: float = 0.0
    scores: dict[str, dict[str, float]] = field(default_factory=dict)

    @property
    def pages_per_s(self) -> float:
        return self.pages / self.seconds if self.seconds > 0 else 0.0

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["pages_per_s"] = self.pages_per_s
        return data


@dataclass
class EvalResult:
    """The whole run: dataset, metric, page counts and one entry per candidate (in run order)."""

    dataset: str
    metric: str
    split: str | None
    limit: int | None
    pages: int  # pages evaluated (with ground truth)
    skipped: int  # pages without ground truth for the metric
    groups: tuple[str, ...]
    group_pages: dict[str, int]
    candidates: list[CandidateResult]

    def to_dict(self) -> dict[str, Any]:
        return {
            "dataset": self.dataset,
            "metric": self.metric,
            "split": self.split,
            "limit": self.limit,
            "pages": self.pages,
            "skipped": self.skipped,
            "groups": list(self.groups),
            "group_pages": self.group_pages,
            "candidates": [c.to_dict() for c in self.candidates],
        }


def has_ground_truth(page: Page, metric: str) -> bool:
    """Return whether the page can be scored by the metric."""
    if metric == SNIPPETS:
        return bool(page.with_snippets or page.without_snippets)
    return page.gold_text is not None


def page_groups(page: Page, metric: str) -> list[str]:
    """Return the score groups a page counts in."""
    if metric == BOW:
        return ["all"] + ([page.page_type] if page.page_type in (ARTICLE, LIST) else [])
    return list(GROUPS[metric])


class _Scorer:
    """Per-page score records of one candidate, summarised by group at the end."""

    def __init__(self, metric: str) -> None:
        self.metric = metric
        self.records: dict[str, list[Any]] = {group: [] for group in GROUPS[metric]}

    def add(self, page: Page, text: str) -> None:
        metric = self.metric
        if metric == SHINGLE:
            self.records["all"].append(shingle_counts(text, page.gold_text, word_tokens))
        elif metric == SHINGLE_ZH:
            self.records["word"].append(shingle_counts(text, page.gold_text, word_tokens))
            self.records["jieba"].append(shingle_counts(text, page.gold_text, jieba_tokens))
        elif metric == BOW:
            score = bow_prf(text, page.gold_text)
            for group in page_groups(page, metric):
                self.records[group].append(score)
        else:
            self.records["all"].append(snippet_counts(text, page.with_snippets, page.without_snippets))

    def summary(self) -> dict[str, dict[str, float]]:
        out: dict[str, dict[str, float]] = {}
        for group, records in self.records.items():
            if records:
                out[group] = summarise(self.metric, records)
        return out


def summarise(metric: str, records: Sequence[Any]) -> dict[str, float]:
    """Return P, R, F1 (and snippet accuracy) of one group's per-page records under ``metric``."""
    if metric in (SHINGLE, SHINGLE_ZH):
        return _prf_dict(corpus_prf(records))
    if metric == BOW:
        return _prf_dict(macro_prf(records))
    scores = snippet_prf(records)
    return {"precision": scores.precision, "recall": scores.recall, "f1": scores.f1,
            "accuracy": scores.accuracy, "pages": float(len(records))}


# Resamples of the pages for the 95% intervals; the same resamples for every candidate (paired).
BOOTSTRAP_SAMPLES = 1000
BOOTSTRAP_SEED = 0


def bootstrap_intervals(results: Sequence[CandidateResult], scorers: Sequence[_Scorer], metric: str,
                        samples: int = BOOTSTRAP_SAMPLES, seed: int = BOOTSTRAP_SEED) -> None:
    """Add 95% bootstrap intervals to the results' scores, in place.

    Pages are resampled with replacement ``samples`` times (the same resamples for every candidate:
    a paired bootstrap); each resample's F1 is the metric's own corpus F1. Every candidate gets
    ``f1_low`` / ``f1_high`` per group; the first ``method`` candidate is the reference, and every
    other candidate gets ``diff_low`` / ``diff_high``: the interval of the reference's F1 minus its
    own. An interval that holds 0 is a tie.
    """
    reference = next((i for i, r in enumerate(results) if r.kind == "method"), None)
    for group in GROUPS[metric]:
        sizes = {len(scorer.records[group]) for scorer in scorers}
        if len(sizes) != 1 or (size := sizes.pop()) < 2:
            continue
        rng = np.random.default_rng(seed)
        draws = rng.integers(0, size, size=(samples, size))
        f1s = []
        for scorer in scorers:
            records = scorer.records[group]
            f1s.append(np.array([summarise(metric, [records[i] for i in row])["f1"] for row in draws]))
        for index, (result, values) in enumerate(zip(results, f1s, strict=True)):
            scores = result.scores.setdefault(group, {})
            scores["f1_low"], scores["f1_high"] = (float(v) for v in np.percentile(values, [2.5, 97.5]))
            if reference is not None and index != reference:
                diff = f1s[reference] - values
                scores["diff_low"], scores["diff_high"] = (float(v) for v in np.percentile(diff, [2.5, 97.5]))


# Run once by every candidate before the timed pages, with the first page: Chinese text, so that
# lazy start-up work for it (jieba's dictionary, 0.7 s) is not charged to whichever page has some first.
WARM_UP_PAGE = ("<html><head><title>Warm-up</title></head><body><div><p>The council approved the budget on "
                "Tuesday after a long debate.</p><p>市议会周二经过长时间辩论后批准了预算，"
                "学校和道路将获得更多资金。</p></div></body></html>")


def _prf_dict(prf: PRF) -> dict[str, float]:
    return {"precision": prf.precision, "recall": prf.recall, "f1": prf.f1, "pages": float(prf.pages)}


def _read(page: Page) -> tuple[str, float]:
    """Return the page's decoded HTML and the seconds decoding took (reading the file excluded)."""
    data = page.html_bytes()
    start = time.perf_counter()
    text = decode_html(data).text
    return text, time.perf_counter() - start


def evaluate(
    pages: Iterable[Page],
    dataset: str,
    candidates: Sequence[tuple[str, str, Extractor]],
    *,
    split: str | None = None,
    limit: int | None = None,
    progress: Progress | None = None,
    progress_every: int = 100,
    parse_floor: bool = True,
) -> EvalResult:
    """Run every candidate ``(name, kind, extractor)`` on the same pages and score them.

    ``limit`` keeps the first N pages that have ground truth. ``progress(done, total)`` is
    called every ``progress_every`` pages and after the last one.
    """
    metric = metric_for(dataset)
    scored: list[Page] = []
    skipped = 0
    for page in pages:
        if limit is not None and len(scored) >= limit:
            break
        if has_ground_truth(page, metric):
            scored.append(page)
        else:
            skipped += 1
    results = [CandidateResult(name, kind) for name, kind, _ in candidates]
    scorers = [_Scorer(metric) for _ in candidates]
    floor = CandidateResult(PARSE_ONLY, "floor")
    group_pages = {group: 0 for group in GROUPS[metric]}
    total = len(scored)
    if scored:
        warm_html, _ = _read(scored[0])
        for _name, _kind, extractor in candidates:
            for html_text, url in ((warm_html, scored[0].url), (WARM_UP_PAGE, None)):
                with contextlib.suppress(Exception):  # the timed run counts and reports this page's error
                    extractor(html_text, url)
    for done, page in enumerate(scored, start=1):
        html, decode_seconds = _read(page)
        for group in page_groups(page, metric):
            group_pages[group] += 1
        if parse_floor:
            start = time.perf_counter()
            parse_html(html)
            floor.seconds += decode_seconds + time.perf_counter() - start
            floor.pages += 1
        for (_name, _kind, extractor), result, scorer in zip(candidates, results, scorers, strict=True):
            start = time.perf_counter()
            try:
                text = extractor(html, page.url) or ""
            except Exception as exc:  # a failing candidate scores "" on this page, never stops the run
                text = ""
                result.errors += 1
                if len(result.error_examples) < 5:
                    result.error_examples.append(f"{page.page_id}: {type(exc).__name__}: {exc}"[:300])
            result.seconds += time.perf_counter() - start
            result.pages += 1
            scorer.add(page, text)
        if progress is not None and (done % progress_every == 0 or done == total):
            progress(done, total)
    for result, scorer in zip(results, scorers, strict=True):
        if total:
            result.scores = scorer.summary()
    if total:
        bootstrap_intervals(results, scorers, metric)
    if parse_floor:
        results.append(floor)
    return EvalResult(dataset, metric, split, limit, total, skipped, GROUPS[metric], group_pages, results)


def resolve_split(dataset: str, split: str | None) -> str | None:
    """Return the split to read: the given one, else the dataset's default (dragnet: test)."""
    return split if split is not None else DEFAULT_SPLITS.get(dataset)


HELD_OUT = "held-out"  # split name: the pages no shipped model trained on (evaluation.folds)


def load_pages(dataset: str, split: str | None = None, root: Any = None) -> Iterator[Page]:
    """Return the dataset's pages (of ``split`` where the dataset has splits; "held-out": see folds)."""
    if split == HELD_OUT:
        from evaluation.folds import held_out_pages

        return held_out_pages(dataset, root)
    options: dict[str, Any] = {}
    if split is not None:
        options["split"] = split
    return iter_pages(dataset, root, **options)


def evaluate_dataset(
    dataset: str,
    methods: Sequence[str],
    baselines: Sequence[str] = (),
    *,
    split: str | None = None,
    limit: int | None = None,
    root: Any = None,
    progress: Progress | None = None,
    progress_every: int = 100,
) -> EvalResult:
    """Evaluate our ``methods`` and the named ``baselines`` on ``dataset`` (``progress`` as :func:`evaluate`).

    Raises BaselineUnavailable (before reading any page) when a baseline is not installed,
    DatasetNotFound when the dataset folder is missing, ValueError for a dataset without metric.
    """
    from evaluation.baselines import load_baseline

    metric_for(dataset)
    candidates: list[tuple[str, str, Extractor]] = [(m, "method", method_candidate(m)) for m in methods]
    candidates += [(b, "baseline", load_baseline(b)) for b in baselines]
    split = resolve_split(dataset, split)
    pages = load_pages(dataset, split, root)
    return evaluate(pages, dataset, candidates, split=split, limit=limit, progress=progress,
                    progress_every=progress_every)


# --- report -----------------------------------------------------------------------------------


def _fmt(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


def markdown_table(result: EvalResult) -> str:
    """Return the result as a Markdown table: P/R/F1 per group, pages/s and errors per candidate."""
    snippets = result.metric == SNIPPETS
    metrics = ("precision", "recall", "f1", "accuracy") if snippets else ("precision", "recall", "f1")
    short = {"precision": "P", "recall": "R", "f1": "F1", "accuracy": "Acc"}
    multi = len(result.groups) > 1
    header = ["candidate"]
    for group in result.groups:
        for metric in metrics:
            header.append(f"{short[metric]} {group}" if multi else short[metric])
    header += ["pages/s", "errors"]
    lines = [
        f"**{result.dataset}**" + (f" ({result.split})" if result.split else "")
        + f": metric {result.metric}, {result.pages} pages"
        + (f" (limit {result.limit})" if result.limit is not None else "")
        + (f", {result.skipped} skipped without ground truth" if result.skipped else "")
        + ("; pages per group: " + ", ".join(f"{g} {result.group_pages.get(g, 0)}" for g in result.groups)
           if multi else ""),
        "",
        "| " + " | ".join(header) + " |",
        "|" + "|".join(["---"] + ["---:"] * (len(header) - 1)) + "|",
    ]
    for candidate in result.candidates:
        row = [candidate.name]
        for group in result.groups:
            scores = candidate.scores.get(group)
            for metric in metrics:
                row.append(_fmt(scores.get(metric) if scores else None))
        row += [f"{candidate.pages_per_s:.1f}", "—" if candidate.kind == "floor" else str(candidate.errors)]
        lines.append("| " + " | ".join(row) + " |")
    lines += _interval_lines(result)
    return "\n".join(lines) + "\n"


def _interval_lines(result: EvalResult) -> list[str]:
    """Return the 95% bootstrap intervals of F1 and of the reference's lead over each other candidate."""
    reference = next((c for c in result.candidates if c.kind == "method"), None)
    rows = []
    for group in result.groups:
        for candidate in result.candidates:
            scores = candidate.scores.get(group) or {}
            if "f1_low" not in scores:
                continue
            lead = "—"
            if "diff_low" in scores and reference is not None:
                low, high = scores["diff_low"], scores["diff_high"]
                verdict = "tie" if low <= 0 <= high else ("ahead" if low > 0 else "behind")
                lead = f"{(reference.scores[group]['f1'] - scores['f1']):+.3f} [{low:+.3f}, {high:+.3f}] {verdict}"
            rows.append(f"| {group} | {candidate.name} | {scores['f1']:.3f} [{scores['f1_low']:.3f}, "
                        f"{scores['f1_high']:.3f}] | {lead} |")
    if not rows or reference is None:
        return []
    return ["", f"95% bootstrap intervals ({BOOTSTRAP_SAMPLES} paired resamples of the pages); lead = "
            f"{reference.name}'s F1 minus the candidate's (\"tie\" when its interval holds 0):", "",
            "| group | candidate | F1 [95% interval] | lead of " + reference.name + " |", "|---|---|---|---|", *rows]
