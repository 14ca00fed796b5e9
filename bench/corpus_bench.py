"""What `scrapy corpus` keeps of a crawl of real pages: articles kept, list and other pages let in, text F1.

``python -m bench.corpus_bench [--out bench/results/corpus-gate] [--sets NAME ...] [--limit N] [--no-peer]
[--keep DIR]``. The labelled pages of ``SETS`` (the held-out sites of every set that may train,
``evaluation.folds.held_out``, and every page of the eval-only sets; Dragnet: its test split) are replayed at
their original URLs (``evaluation.replay``: one site per original site, its sitemap the start point) and
crawled once over plain HTTP with the project's default settings (the template store, the crawl state and the
page type's site evidence start empty in a temporary folder). Then ``scrapy corpus`` runs on the feed once per
``VARIANTS`` entry, as a user runs it: the default on the feed (the article gate's decision), and the default on
the same feed with each record's page type the page-level model's (``page_level_feed``: what the default kept
before the gate; the gate runs last and changes no text, so that feed is what a crawl with the gate off writes).

Per set, and per year (slice) where the set has them: the share of its article pages whose record is in the
corpus, the share of its list pages and of its other pages (article-vs-nonarticle's non-articles among them)
that are, with Wilson's 95% intervals; why the articles left out were (no record, error, empty, gate or page
type, duplicate, copy of an earlier text); and the text F1 of the kept articles that have gold (the harness's
metric: shingles, jieba shingles for Chinese, WCXB's bag of words) with a 95% bootstrap interval, beside
trafilatura's F1 on the same pages (same bytes, decoded as the harness does) and the paired interval of the
difference. A page is labelled by its set's reader; Dragnet's pages carry no page-type label and count as
articles (news and blog posts from RSS feeds, each with a main-content gold). Writes ``<out>.md`` and
``<out>.json``; see docs/corpus-gate.md.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import json
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from bench.dedup_report import wilson
from crawler.corpus import Filters
from evaluation.datasets import datasets_dir
from evaluation.folds import held_out
from evaluation.harness import BOW, SHINGLE, SHINGLE_ZH, metric_for, summarise
from evaluation.metrics import bow_prf, jieba_tokens, shingle_counts, word_tokens
from evaluation.replay import ReplayPage, replay_crawl, replay_pages

REPO = Path(__file__).resolve().parent.parent
# (dataset, guess URLs for pages without one): the sets with page-type labels (or, Dragnet, all articles).
SETS: tuple[tuple[str, bool], ...] = (
    ("wcxb-dev", False), ("chinese-wced-dev", True), ("frontpage-archive-de", False), ("gerapy-zh", True),
    ("fundus-articles", False), ("newspaper4k-pages", True),
    ("l3s-gn1", False), ("gne-chinese", True), ("article-vs-nonarticle", False), ("msv-big5", False),
    ("dragnet", False),
)
SET_NAMES: tuple[str, ...] = tuple(name for name, _ in SETS)
ASSUMED_LABELS = {"dragnet": "article"}  # sets without page-type labels whose pages are all of one type
# The harness's metric per set, and the sets it does not score (msv-big5: plain gold text; fundus: its body).
METRICS = {"msv-big5": SHINGLE, "fundus-articles": SHINGLE}
# The F1 group reported per metric: articles of WCXB, jieba tokens for Chinese.
F1_GROUP = {SHINGLE: "all", SHINGLE_ZH: "jieba", BOW: "article"}
# (name, scrapy corpus options, feed): the crawl's feed as written, and the same feed with each record's page type
# the page-level model's (``page_level_feed``: what the default kept before the article gate).
VARIANTS: tuple[tuple[str, tuple[str, ...], str], ...] = (("default", (), "gate"),
                                                          ("page-level model alone", (), "page-level"))
LABELS = ("article", "list", "other")
RESAMPLES = 1000
SEED = 0


def log(message: str) -> None:
    """Print a progress line to stderr."""
    print(message, file=sys.stderr, flush=True)


def label(page: ReplayPage) -> str | None:
    """Return the page's label: article, list or other (article-vs-nonarticle's non-articles are other)."""
    source = page.source
    assert source is not None
    kind = source.page_type or ASSUMED_LABELS.get(page.dataset)
    return "other" if kind == "nonarticle" else kind


def slice_of(page: ReplayPage) -> str | None:
    """Return the page's slice within its set: msv-big5's subset, else the year a set records, else None."""
    source = page.source
    assert source is not None
    if page.dataset == "msv-big5":
        return str(source.extra.get("subset"))
    year = source.extra.get("year")
    return str(year) if year else None


def metric(dataset: str) -> str | None:
    """Return the text metric of a set, None for one without gold text."""
    if dataset in METRICS:
        return METRICS[dataset]
    try:
        return metric_for(dataset)
    except ValueError:
        return None


def corpus_pages(sets: Sequence[str] = SET_NAMES, limit: int | None = None) -> list[ReplayPage]:
    """Return the labelled, held-out pages of ``sets`` that the replay can serve (at most ``limit`` a set)."""
    pages: list[ReplayPage] = []
    guess = dict(SETS)
    for name in sets:
        if not (datasets_dir() / name).is_dir():
            log(f"{name}: not in {datasets_dir()}, left out")
            continue
        kept = 0
        for page in replay_pages([name], guess_urls=guess.get(name, False), archive_urls=True):
            source = page.source
            if source is None or not held_out(source) or label(page) is None:
                continue
            if name == "dragnet" and source.split != "test":
                continue
            pages.append(page)
            kept += 1
            if limit is not None and kept >= limit:
                break
    return pages


def run_corpus(feed: Path, work: Path, name: str, options: Sequence[str]) -> tuple[set[str], str]:
    """Run ``scrapy corpus`` on ``feed`` with ``options``; return the URLs of the records it kept and its summary."""
    out = work / f"corpus-{len(list(work.glob('corpus-*.jsonl')))}.jsonl"
    command = [sys.executable, "-m", "scrapy", "corpus", str(feed), "-o", str(out), "--fields", "url", *options]
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, stdin=subprocess.DEVNULL, check=False)
    summary = done.stderr.strip().splitlines()[-1] if done.stderr.strip() else ""
    if done.returncode not in (0, 1):
        raise RuntimeError(f"scrapy corpus ({name}) failed: {done.stderr[-2000:]}")
    urls = {json.loads(line)["url"] for line in out.read_text(encoding="utf-8").splitlines() if line.strip()} \
        if out.exists() else set()
    return urls, summary


def page_level_type(record: dict[str, Any]) -> Any:
    """Return the page type the page-level model gave a record, before the article gate changed it.

    The gate runs last and changes nothing but ``page_type`` (and its confidence and source): where it changed
    the type (``page_type_source`` "gate"), a record it typed article was typed list or other by the page-level
    step (the likelier of them in ``page_type_probabilities``), and a record it typed list or other was typed
    article.
    """
    if record.get("page_type_source") != "gate":
        return record.get("page_type")
    if record.get("page_type") != "article":
        return "article"
    probabilities = record.get("page_type_probabilities") or {}
    return "other" if probabilities.get("other", 0.0) > probabilities.get("list", 0.0) else "list"


def page_level_feed(feed: Path, out: Path) -> Path:
    """Write ``feed`` to ``out`` with each record's page type the page-level model's (``page_level_type``) and
    no article probability: the feed a crawl with ``PAGETYPE_GATE=False`` writes, text and all."""
    with feed.open(encoding="utf-8") as source, out.open("w", encoding="utf-8") as sink:
        for line in source:
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if record.get("page_type_source") == "gate":
                record["page_type"] = page_level_type(record)
                record["page_type_source"] = "dom"
            record["article_probability"] = None
            sink.write(json.dumps(record, ensure_ascii=False) + "\n")
    return out


def compare_feeds(gate: Path, gate_off: Path) -> dict[str, int]:
    """Compare the feed of a crawl with the article gate and one of the same pages with ``PAGETYPE_GATE=False``:
    the URLs in both, those whose text, title or publish date differ, and those whose page type with the gate
    off differs from the page-level type recovered from the gated record (``page_level_type``)."""
    def read(path: Path) -> dict[str, dict[str, Any]]:
        records = {}
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                with contextlib.suppress(ValueError):
                    record = json.loads(line)
                    records[str(record.get("url"))] = record
        return records

    with_gate, without = read(gate), read(gate_off)
    both = sorted(set(with_gate) & set(without))
    out = {"urls_with_gate": len(with_gate), "urls_gate_off": len(without), "urls_in_both": len(both)}
    for name in ("text", "title", "date_published"):
        out[f"{name}_differs"] = sum(with_gate[url].get(name) != without[url].get(name) for url in both)
    out["page_type_differs"] = sum(page_level_type(with_gate[url]) != without[url].get("page_type") for url in both)
    return out


def extract_shares(pages: Sequence[ReplayPage]) -> dict[str, dict[str, dict[str, list[int]]]]:
    """Return per set ``{"gate"|"page-level": {label: [typed article, pages]}}`` of ``pages`` run through the
    default flow one by one (``extraction.process.process`` as ``scrapy extract`` runs it: no template store,
    no crawl state, no site evidence), the article gate's page type beside the page-level model's
    (``page_level_type``). What tests/extraction/test_gate_heldout.py pins; the crawl's figures are the bench's."""
    from scrapy.utils.project import get_project_settings

    from extraction.page import Page
    from extraction.process import Context, process

    settings = get_project_settings()
    settings.set("PAGETYPE_GATE", True)  # the gate is measured (off by default)
    context = Context.from_settings(settings)
    out: dict[str, dict[str, dict[str, list[int]]]] = defaultdict(
        lambda: {"gate": defaultdict(lambda: [0, 0]), "page-level": defaultdict(lambda: [0, 0])})
    for page in pages:
        kind = label(page)
        assert kind is not None
        record = json.loads(process(Page(page.body, page.url), context).json_line())
        for variant, typed in (("gate", record.get("page_type")), ("page-level", page_level_type(record))):
            cell = out[page.dataset][variant][kind]
            cell[0] += int(typed == "article")
            cell[1] += 1
    return {name: {variant: dict(cells) for variant, cells in variants.items()} for name, variants in out.items()}


def left_out_reason(record: dict[str, Any] | None, filters: Filters) -> str:
    """Return why an article's record is not in the corpus: no record, one of ``Filters.reason``'s, or a copy."""
    if record is None:
        return "no_record"
    return filters.reason(record) or "copy"


@dataclass
class Cell:
    """Counts of one set (or slice) under one variant."""

    pages: Counter[str] = field(default_factory=Counter)  # label -> pages
    kept: Counter[str] = field(default_factory=Counter)  # label -> pages whose record is in the corpus
    article_left_out: Counter[str] = field(default_factory=Counter)  # reason -> articles left out

    def as_dict(self) -> dict[str, Any]:
        return {"pages": dict(self.pages), "kept": dict(self.kept), "article_left_out": dict(self.article_left_out)}


def _records_of(metric_name: str, text: str, gold: str) -> Any:
    if metric_name == BOW:
        return bow_prf(text, gold)
    tokens = jieba_tokens if metric_name == SHINGLE_ZH else word_tokens
    return shingle_counts(text, gold, tokens)


def f1_with_interval(metric_name: str, ours: list[Any], theirs: list[Any] | None,
                     rng_seed: int = SEED) -> dict[str, float]:
    """Return our F1 with its 95% bootstrap interval, the peer's, and the paired interval of ours minus theirs."""
    out = {"pages": float(len(ours)), "f1": summarise(metric_name, ours)["f1"]}
    if theirs is not None:
        out["peer_f1"] = summarise(metric_name, theirs)["f1"]
    if len(ours) < 2:
        return out
    rng = np.random.default_rng(rng_seed)
    mine, diffs = [], []
    for _ in range(RESAMPLES):
        index = rng.integers(0, len(ours), len(ours))
        a = summarise(metric_name, [ours[i] for i in index])["f1"]
        mine.append(a)
        if theirs is not None:
            diffs.append(a - summarise(metric_name, [theirs[i] for i in index])["f1"])
    out["f1_low"], out["f1_high"] = float(np.percentile(mine, 2.5)), float(np.percentile(mine, 97.5))
    if diffs:
        out["diff_low"], out["diff_high"] = float(np.percentile(diffs, 2.5)), float(np.percentile(diffs, 97.5))
    return out


def peer_texts(pages: Sequence[ReplayPage]) -> dict[str, str]:
    """Return trafilatura's text of each page with gold, on the bytes decoded as the harness does ({} without it)."""
    from evaluation.baselines import BaselineUnavailable, load_baseline
    from extraction.dom.encoding import decode_html

    try:
        extract = load_baseline("trafilatura")
    except BaselineUnavailable as exc:
        log(f"peer: {exc}")
        return {}
    texts: dict[str, str] = {}
    started = time.monotonic()
    chosen = [page for page in pages if page.gold and label(page) == "article"]
    for done, page in enumerate(chosen, start=1):
        try:
            texts[page.url] = extract(decode_html(page.body).text, page.url)
        except Exception as exc:  # the peer's failure on one page is its empty text
            log(f"peer: trafilatura failed on {page.url}: {exc}")
            texts[page.url] = ""
        if done % 250 == 0 or done == len(chosen):
            log(f"peer: {done}/{len(chosen)} pages ({done / (time.monotonic() - started):.1f}/s)")
    return texts


def score(pages: Sequence[ReplayPage], records: dict[str, dict[str, Any]], kept: set[str], filters: Filters,
          peer: dict[str, str]) -> dict[str, Any]:
    """Return one variant's counts and text F1 per set and per (set, slice)."""
    cells: dict[tuple[str, str | None], Cell] = defaultdict(Cell)
    texts: dict[str, tuple[list[Any], list[Any]]] = defaultdict(lambda: ([], []))
    for page in pages:
        kind = label(page)
        assert kind is not None
        record = records.get(page.url)
        is_kept = page.url in kept
        part = slice_of(page)
        for key in [(page.dataset, None)] + ([(page.dataset, part)] if part else []):
            cell = cells[key]
            cell.pages[kind] += 1
            cell.kept[kind] += is_kept
            if kind == "article" and not is_kept:
                cell.article_left_out[left_out_reason(record, filters)] += 1
        metric_name = metric(page.dataset)
        if kind == "article" and is_kept and metric_name and page.gold and record is not None:
            ours, theirs = texts[page.dataset]
            ours.append(_records_of(metric_name, str(record.get("text") or ""), page.gold))
            theirs.append(_records_of(metric_name, peer.get(page.url, ""), page.gold))
    out: dict[str, Any] = {"cells": {f"{name}|{part or ''}": cell.as_dict() for (name, part), cell in cells.items()},
                           "f1": {}}
    for name, (ours, theirs) in texts.items():
        metric_name = metric(name)
        assert metric_name is not None
        group = F1_GROUP[metric_name]
        # The harness's summarise takes one group's records: BOW's article group is every kept article here.
        out["f1"][name] = {"metric": f"{metric_name}/{group}",
                           **f1_with_interval(metric_name, ours, theirs if peer else None)}
    return out


def share_cell(hits: int, n: int) -> str:
    """Return "share% (hits/n) [low, high]" or empty for n = 0."""
    if not n:
        return ""
    share, low, high = wilson(hits, n)
    return f"{100 * share:.1f}% ({hits}/{n}) [{100 * low:.1f}, {100 * high:.1f}]"


def _f1_cell(entry: dict[str, float] | None) -> tuple[str, str]:
    if not entry:
        return "", ""
    ours = f"{entry['f1']:.3f}"
    if "f1_low" in entry:
        ours += f" [{entry['f1_low']:.3f}, {entry['f1_high']:.3f}]"
    peer = ""
    if "peer_f1" in entry:
        peer = f"{entry['peer_f1']:.3f}"
        if "diff_low" in entry:
            peer += f" (ours − peer [{entry['diff_low']:+.3f}, {entry['diff_high']:+.3f}])"
    return ours, peer


def report(results: dict[str, Any]) -> str:
    """Return the Markdown report."""
    lines = [
        f"# What `scrapy corpus` keeps of a crawl of real pages (`python -m bench.corpus_bench`, {results['date']})",
        "",
        f"{results['pages']} labelled pages of {results['sites']} sites (the held-out sites of the sets that may "
        "train, every page of the eval-only sets, Dragnet's test split), replayed at their original URLs, crawled "
        "once over plain HTTP with the default settings; then `scrapy corpus` on the feed, per variant (\"page-level "
        "model alone\": the same feed with each record's page type the page-level model's, before the article gate). "
        "Brackets: "
        "95% intervals (Wilson's for shares, 1000 bootstrap resamples for F1; the peer's column gives the paired "
        "interval of our F1 minus trafilatura's on the same kept pages).",
        "",
    ]
    for variant, result in results["variants"].items():
        lines += [f"## `scrapy corpus` {variant}", "", f"Summary: {result['summary']}", "",
                  "| set | slice | articles kept | list pages let in | other pages let in | articles left out, why "
                  "| text F1 of the kept articles | trafilatura F1, same pages |",
                  "|---|---|---:|---:|---:|---|---:|---:|"]
        cells = result["cells"]
        for key in sorted(cells, key=lambda k: (k.split("|")[0], k.split("|")[1] != "", k.split("|")[1])):
            name, part = key.split("|")
            cell = cells[key]
            pages, kept = cell["pages"], cell["kept"]
            why = ", ".join(f"{reason} {n}" for reason, n in sorted(cell["article_left_out"].items()))
            ours, peer = _f1_cell(result["f1"].get(name) if not part else None)
            lines.append(f"| {name} | {part} | {share_cell(kept.get('article', 0), pages.get('article', 0))} "
                         f"| {share_cell(kept.get('list', 0), pages.get('list', 0))} "
                         f"| {share_cell(kept.get('other', 0), pages.get('other', 0))} | {why} | {ours} | {peer} |")
        lines.append("")
    lines += [f"Crawl: {results['crawl_seconds']:.0f} s, {results['records']} records. Sets: "
              + ", ".join(f"{name} {n}" for name, n in results["per_set"].items()) + "."]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None, score_hook: Callable[[dict[str, Any]], None] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.corpus_bench", description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results" / "corpus-gate",
                        help="report path without extension (default bench/results/corpus-gate)")
    parser.add_argument("--sets", nargs="+", default=list(SET_NAMES), metavar="NAME")
    parser.add_argument("--limit", type=int, default=None, help="pages per set at most (a quick look)")
    parser.add_argument("--timeout", type=float, default=3600.0, help="seconds for the crawl (default 3600)")
    parser.add_argument("--no-peer", dest="peer", action="store_false", help="no trafilatura column")
    parser.add_argument("--keep", type=Path, default=None, help="keep the crawl's folder here (feed, corpora, log)")
    parser.add_argument("--feed", type=Path, default=None, help="score this feed of an earlier run (no crawl)")
    parser.add_argument("--compare", nargs=2, type=Path, metavar=("GATE_FEED", "GATE_OFF_FEED"),
                        help="only compare two feeds of the same pages, with and without the gate (compare_feeds)")
    parser.add_argument("--set", dest="settings", action="append", default=[], metavar="NAME=VALUE",
                        help="a crawl setting (repeatable), e.g. PAGETYPE_GATE=False for the crawl without the gate")
    args = parser.parse_args(argv)
    if args.compare:
        print(json.dumps(compare_feeds(*args.compare), indent=1))
        return 0
    pages = corpus_pages(args.sets, args.limit)
    if not pages:
        print(f"error: no labelled page of {' '.join(args.sets)} under {datasets_dir()}", file=sys.stderr)
        return 2
    per_set = Counter(page.dataset for page in pages)
    log(f"{len(pages)} pages: " + ", ".join(f"{k} {v}" for k, v in per_set.items()))
    work = args.keep or Path(tempfile.mkdtemp(prefix="corpus-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        started = time.monotonic()
        if args.feed is None:
            extra = {"LOG_LEVEL": "WARNING", "PAGETYPE_GATE": "True"}  # the gate is measured (off by default)
            for item in args.settings:
                name, sep, value = item.partition("=")
                if not sep or not name:
                    print(f"error: --set {item!r}: give NAME=VALUE", file=sys.stderr)
                    return 2
                extra[name] = value
            records_list = replay_crawl(pages, work, extra, args.timeout)
            feed = work / "out.jsonl"
        else:
            feed = args.feed
            records_list = [json.loads(line) for line in feed.read_text(encoding="utf-8").splitlines() if line.strip()]
        seconds = time.monotonic() - started
        log(f"crawl: {len(records_list)} records in {seconds:.0f} s")
        records = {str(record.get("url")): record for record in records_list}
        peer = peer_texts(pages) if args.peer else {}
        variants: dict[str, Any] = {}
        for name, options, kind in VARIANTS:
            source = feed if kind == "gate" else page_level_feed(feed, work / "page-level.jsonl")
            kept, summary = run_corpus(source, work, name, options)
            page_types = options[options.index("--page-types") + 1] if "--page-types" in options else None
            scored = records if kind == "gate" else {
                url: {**record, "page_type": page_level_type(record)} for url, record in records.items()}
            variants[name] = {"options": list(options), "feed": kind, "summary": summary,
                              **score(pages, scored, kept, Filters.parse(page_types), peer)}
            log(f"{name}: {summary}")
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)
    results = {"date": dt.date.today().isoformat(), "argv": " ".join(sys.argv[1:] if argv is None else argv),
               "pages": len(pages), "sites": len({page.site_key for page in pages}), "records": len(records_list),
               "crawl_seconds": seconds, "per_set": dict(per_set), "variants": variants}
    if score_hook is not None:
        score_hook(results)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.with_suffix(".json").write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    args.out.with_suffix(".md").write_text(report(results), encoding="utf-8")
    print(report(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
