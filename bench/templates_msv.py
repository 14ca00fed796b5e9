"""Template library (paper 004) on msv-big5: what it removes, what it does to F1, how it follows layout drift.

``python -m bench.templates_msv [--limit-sites N] [--out-dir DIR]``. msv-big5's Big9 part has 10 pages
of each of 9 news sites in 2005, 2009, 2013 and 2017; the site of a page is inferred by the reader.

a. Removal shares (leave-one-out): each page is cleaned with templates learned, as one batch, from
   the other 9 pages of its site and year (an in-memory ``BatchCache``; candidates with frequency
   >= ``MIN_FREQUENCY`` become templates with share frequency/9, which is what
   ``TemplateLibrary.finish()`` stores; cross-checked against the real library on one page per
   cell). Token multisets of the visible text before and after are compared with the gold text.
b. Extraction F1 (the article-body shingle metric over ``\\w+`` tokens) of ``fulltext``,
   ``cetd-tpc`` and ``svm`` (the shipped block classifier: paper 004's ablation, templates + SVM
   vs SVM alone) on each page as is and after the same leave-one-out cleaning.
c. Layout drift: per site, a ``TemplateLibrary`` on a fresh temporary store (default config) fed the
   site's 40 pages in chronological order; each page is cleaned with the library's templates of
   the moment before it is observed. Compared with a frozen library learned from 2005 only.

Everything uses the library's current behaviour: units are ``leaf_tags``' leaves and sentences, and
the default ``GuardRule`` (running text, long unique text, the page's title); a "no guard" run of the
same templates shows what the guard saves. Results go to ``<out-dir>/templates-msv.md`` and ``.json``
(written by :mod:`bench.templates_report`); the per-page measurements are in :mod:`bench.templates_measures`.
"""

from __future__ import annotations

import argparse
import copy
import datetime as dt
import logging
import platform
import shlex
import sys
import tempfile
import time
from collections import Counter, defaultdict
from dataclasses import asdict
from pathlib import Path
from typing import Any

from bench.templates_measures import (
    DATASET,
    RESIDUAL_CATEGORIES,
    LoadedPage,
    NoGuard,
    Offender,
    Shares,
    attribute_loss,
    f1_dict,
    group_pages,
    in_gold,
    library_templates,
    load_pages,
    loo_templates,
    residual_noise,
    tokens,
)
from bench.templates_report import dump_json, markdown
from evaluation.datasets import dataset_path
from evaluation.datasets.msv_big5 import BIG5_SUBSETS
from evaluation.metrics import PageCounts, shingle_counts
from extraction import templates as algo
from extraction.dom.text import visible_text
from extraction.methods import extract_tree
from extraction.templates import GuardRule, denoise
from templates_db.library import TemplateLibrary, TemplatesConfig
from templates_db.store import open_store

logger = logging.getLogger("bench.templates_msv")

REPO = Path(__file__).resolve().parent.parent
METHODS = ("fulltext", "cetd-tpc", "svm")  # svm: the ablation of paper 004 (templates + SVM vs SVM alone)
# Acceptance targets of the template stage (issue brief): gold text removed, noise removed.
GOLD_REMOVED_MAX = 0.01
NONGOLD_REMOVED_AIM = 0.50
TOP_OFFENDERS = 20
GOLD_EXAMPLES = 10
RESIDUAL_EXAMPLES = 8
# The reasons GuardRule.keeps() gives (extraction.templates, module docstring "Guard"), in report order.
GUARD_REASONS = ("running_text", "long_unique", "page_title")


def run_loo(pages: list[LoadedPage]) -> dict[str, Any]:
    """Parts a and b: leave-one-out removal shares, guard decisions and F1 with/without the stage."""
    guard, no_guard = GuardRule(), NoGuard()
    cells: dict[str, Any] = {}
    overall, overall_unguarded = Shares(), Shares()
    by_year: dict[int, Shares] = defaultdict(Shares)
    by_year_unguarded: dict[int, Shares] = defaultdict(Shares)
    guard_total: Counter[str] = Counter()
    residual: Counter[str] = Counter()
    residual_texts: Counter[tuple[str, str, str]] = Counter()
    offenders: dict[tuple[str, str, str], Offender] = {}
    kept_by_guard: dict[tuple[str, str, str, str], list[Any]] = {}
    f1_records: dict[tuple[str, str, str], list[PageCounts]] = defaultdict(list)  # (method, variant, year)
    per_page: list[dict[str, Any]] = []
    crosscheck: dict[str, Any] = {"cells": 0, "identical": 0, "differences": []}
    for (site, year), group in group_pages(pages).items():
        cell, cell_unguarded = Shares(), Shares()
        cell_guard: Counter[str] = Counter({"matched": 0, "removed": 0, "removed_nodes": 0,
                                       **{f"kept/{r}": 0 for r in GUARD_REASONS}})
        cell_residual: Counter[str] = Counter()
        template_counts: list[int] = []
        match_rates: list[float] = []
        expected_rates: list[float] = []
        for index, page in enumerate(group):
            templates, cache = loo_templates(group, index)
            template_counts.append(len(templates))
            if index == 0:
                stored = library_templates(group, index)
                mine = {(t.tag, t.text, round(t.share, 9)) for t in templates.templates}
                crosscheck["cells"] += 1
                if stored == mine:
                    crosscheck["identical"] += 1
                else:
                    crosscheck["differences"].append({"cell": f"{site} {year}", "only_library": len(stored - mine),
                                                      "only_bench": len(mine - stored)})
            work = copy.deepcopy(page.root)
            result = denoise(work, templates, guard)
            planned = result.decisions
            removed = [d for d in planned if d.reason is None]
            assert result.removed_nodes <= len(removed), (page.page_id, result.removed_nodes, len(removed))
            after = Counter(tokens(visible_text(work)))
            kept_elements = {d.leaf.element for d in planned if d.reason is not None}
            page_residual = residual_noise(work, page, cache, kept_elements)
            for (category, text), count in page_residual.items():
                residual[category] += count
                cell_residual[category] += count
                residual_texts[(category, site, text)] += count
            if templates:
                match_rates.append(templates.match_rate(result.matched))
                expected_rates.append(templates.expected_rate)
            page_shares = Shares()
            page_shares.add_page(page, after)
            cell.merge(page_shares)
            attribute_loss(page, page.visible, after, removed, offenders)
            cell_guard["matched"] += len(planned)
            cell_guard["removed"] += len(removed)
            cell_guard["removed_nodes"] += result.removed_nodes
            for decision in planned:
                if decision.reason is not None:
                    cell_guard[f"kept/{decision.reason}"] += 1
                    key = (site, decision.reason, decision.leaf.tag, decision.leaf.text)
                    entry = kept_by_guard.setdefault(key, [0, in_gold(page, decision.leaf.text), page.page_id])
                    entry[0] += 1
            unguarded = copy.deepcopy(page.root)
            denoise(unguarded, templates, no_guard)
            cell_unguarded.add_page(page, Counter(tokens(visible_text(unguarded))))
            scores: dict[str, float] = {}
            for method in METHODS:
                plain = shingle_counts(extract_tree(copy.deepcopy(page.root), method).text, page.gold_text)
                cleaned = shingle_counts(extract_tree(copy.deepcopy(work), method).text, page.gold_text)
                for variant, counts in (("as_is", plain), ("denoised", cleaned)):
                    f1_records[(method, variant, str(year))].append(counts)
                    f1_records[(method, variant, "all")].append(counts)
                    scores[f"{method}/{variant}/f1"] = _page_f1(counts)
            per_page.append({"page": page.page_id, "site": site, "year": year, "templates": len(templates),
                             **page_shares.as_dict(), "removed_nodes": result.removed_nodes,
                             "kept": dict(result.kept), **scores})
        overall.merge(cell)
        overall_unguarded.merge(cell_unguarded)
        by_year[year].merge(cell)
        by_year_unguarded[year].merge(cell_unguarded)
        guard_total.update(cell_guard)
        cells[f"{site} {year}"] = {"site": site, "year": year, **cell.as_dict(),
                                   "templates_mean": sum(template_counts) / len(template_counts),
                                   "guard": dict(cell_guard), "unguarded": cell_unguarded.as_dict(),
                                   "residual_nongold": dict(cell_residual),
                                   "match_rate": _mean(match_rates), "expected_rate": _mean(expected_rates)}
        logger.info("a/b %s %d: %d pages, %.1f templates, gold removed %.2f%%, non-gold removed %.1f%%",
                    site, year, cell.pages, sum(template_counts) / len(template_counts), 100 * cell.gold_removed,
                    100 * cell.nongold_removed)
    top = sorted(offenders.values(), key=lambda o: (-o.gold_tokens_lost, o.site, o.text))
    examples = [o for o in top if o.in_gold_pages][:GOLD_EXAMPLES]
    kept = sorted(kept_by_guard.items(), key=lambda item: (-item[1][0] * len(tokens(item[0][3])), item[0]))
    f1 = {method: {year: {variant: f1_dict(f1_records[(method, variant, year)]) for variant in ("as_is", "denoised")}
                   for year in [*sorted({str(y) for _, y in group_pages(pages)}), "all"]}
          for method in METHODS}
    return {"cells": cells, "by_year": {str(y): s.as_dict() for y, s in sorted(by_year.items())},
            "by_year_unguarded": {str(y): s.as_dict() for y, s in sorted(by_year_unguarded.items())},
            "overall": overall.as_dict(), "overall_unguarded": overall_unguarded.as_dict(),
            "guard": dict(guard_total), "residual_nongold": {c: residual[c] for c in RESIDUAL_CATEGORIES},
            "residual_top": {c: [{"site": site, "text": text, "tokens": n} for (_, site, text), n in
                                 sorted(((k, v) for k, v in residual_texts.items() if k[0] == c),
                                        key=lambda kv: (-kv[1], kv[0]))[:RESIDUAL_EXAMPLES]]
                             for c in RESIDUAL_CATEGORIES},
            "top_offenders": [asdict(o) for o in top[:TOP_OFFENDERS]],
            "gold_examples": [asdict(o) for o in examples],
            "kept_by_guard_top": [{"site": k[0], "reason": k[1], "tag": k[2], "text": k[3], "pages": v[0],
                                   "in_gold": v[1], "example": v[2]} for k, v in kept[:TOP_OFFENDERS]],
            "f1": f1, "crosscheck": crosscheck, "pages": per_page}


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _page_f1(counts: PageCounts) -> float:
    precision, recall = counts.precision, counts.recall
    return 2 * precision * recall / (precision + recall) if precision + recall else 0.0


# --- c. layout drift ---------------------------------------------------------------------------


def clean_and_score(library: TemplateLibrary, site: str, page: LoadedPage) -> Shares:
    """Return the shares of one page cleaned (a copy) with the library's current templates."""
    work = copy.deepcopy(page.root)
    library.denoise(site, work)
    shares = Shares()
    shares.add_page(page, Counter(tokens(visible_text(work))))
    return shares


def run_drift(pages: list[LoadedPage]) -> dict[str, Any]:
    """Part c: adaptive library (default config) vs a library frozen after 2005, per site."""
    by_site: dict[str, list[LoadedPage]] = defaultdict(list)
    for page in sorted(pages, key=lambda p: (p.year, p.page_id)):
        by_site[page.site].append(page)
    records: list[dict[str, Any]] = []
    firings: list[dict[str, Any]] = []
    events: dict[str, list[str]] = {}
    first_year = min(p.year for p in pages)
    with tempfile.TemporaryDirectory(prefix="templates-msv-drift-") as folder:
        for site, site_pages in sorted(by_site.items()):
            adaptive = TemplateLibrary(open_store(Path(folder) / site / "adaptive"),
                                       TemplatesConfig(store=str(Path(folder) / site / "adaptive")))
            learner = TemplateLibrary(open_store(Path(folder) / site / "frozen"),
                                      TemplatesConfig(store=str(Path(folder) / site / "frozen")))
            for page in site_pages:
                if page.year == first_year:
                    learner.observe(site, page.root)
            assert learner.store is not None
            frozen = TemplateLibrary(learner.store, TemplatesConfig(store="frozen", learn=False))
            for number, page in enumerate(site_pages, 1):
                record: dict[str, Any] = {"site": site, "page": page.page_id, "index": number, "year": page.year}
                for name, library in (("adaptive", adaptive), ("frozen", frozen)):
                    shares = clean_and_score(library, site, page)
                    observation = library.observe(site, page.root)
                    record[name] = {**shares.as_dict(), "templates": observation.templates,
                                    "matched": observation.matched, "drift": observation.drift,
                                    "promoted": observation.promoted,
                                    "match_rate": observation.match_rate if observation.templates else None}
                if record["adaptive"]["drift"]:
                    firings.append({"site": site, "index": number, "year": page.year, "page": page.page_id,
                                    "templates": record["adaptive"]["templates"]})
                    logger.info("c %s: drift at page %d (%d, %s)", site, number, page.year, page.page_id)
                records.append(record)
            assert adaptive.store is not None
            events[site] = [f"{kind}: {detail}" for _, kind, detail in adaptive.store.events(site)]
            final = len(adaptive.templates(site))
            adaptive.close()
            learner.close()
            logger.info("c %s: %d pages, %d drift events, %d templates at the end", site, len(site_pages),
                        len(events[site]), final)
    summary: dict[str, dict[str, Any]] = {}
    for year in sorted({r["year"] for r in records}):
        row: dict[str, Any] = {}
        for name in ("adaptive", "frozen"):
            year_records = [r[name] for r in records if r["year"] == year]
            rates = [r["match_rate"] for r in year_records if r["match_rate"] is not None]
            shares = Shares()
            for r in year_records:
                for key in ("pages", "gold_before", "gold_after", "nongold_before", "nongold_after"):
                    setattr(shares, key, getattr(shares, key) + r[key])
            row[name] = {"match_rate": sum(rates) / len(rates) if rates else None, "pages_with_templates": len(rates),
                         "templates_mean": sum(r["templates"] for r in year_records) / len(year_records),
                         **shares.as_dict()}
        summary[str(year)] = row
    return {"per_year": summary, "firings": firings, "events": events, "pages": records}


def main(argv: list[str] | None = None) -> int:
    """Run parts a, b and c; write the report; return the exit status (0)."""
    parser = argparse.ArgumentParser(prog="python -m bench.templates_msv", description=__doc__.split("\n")[0])
    parser.add_argument("--limit-sites", type=int, default=None, help="only the first N sites (sorted by name)")
    parser.add_argument("--out-dir", type=Path, default=REPO / "bench" / "results")
    parser.add_argument("--datasets-dir", type=Path, default=None, help="default: $DATASETS_DIR or ../shared/datasets")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s", stream=sys.stderr)
    logging.getLogger("templates_db.library").setLevel(logging.ERROR)  # batch/drift lines per site: noise here
    start = time.perf_counter()
    pages = load_pages(args.limit_sites, args.datasets_dir)
    logger.info("loaded %d pages of %d sites in %.1f s", len(pages), len({p.site for p in pages}),
                time.perf_counter() - start)
    loo = run_loo(pages)
    drift = run_drift(pages)
    settings = {"batch_pages": algo.BATCH_PAGES, "min_frequency": algo.MIN_FREQUENCY,
                "loo_batch_pages": 9, "guard_min_chars": algo.GUARD_MIN_CHARS,
                "guard_min_share": algo.GUARD_MIN_SHARE, "drift_window": algo.DRIFT_WINDOW,
                "drift_ratio": algo.DRIFT_RATIO, "drift_min_templates": algo.DRIFT_MIN_TEMPLATES,
                "max_template_chars": algo.MAX_TEMPLATE_CHARS, "sentences": True,
                "title_guard_min_chars": algo.TITLE_GUARD_MIN_CHARS, "title_guard_score": algo.TITLE_GUARD_SCORE,
                "guard_reasons": list(GUARD_REASONS), "gold_removed_max": GOLD_REMOVED_MAX,
                "nongold_removed_aim": NONGOLD_REMOVED_AIM, "methods": list(METHODS),
                "f1_metric": "shingle (word tokens, n=4, corpus_prf)", "loo_templates": "in-memory BatchCache"}
    report = {"command": shlex.join(["python", "-m", "bench.templates_msv", *(sys.argv[1:] if argv is None else argv)]),
              "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
              "dataset": DATASET, "dataset_path": str(dataset_path(DATASET, args.datasets_dir)),
              "subsets": list(BIG5_SUBSETS), "pages": len(pages), "sites": len({p.site for p in pages}),
              "python": platform.python_version(), "settings": settings,
              "seconds": time.perf_counter() - start, "loo": loo, "drift": drift}
    args.out_dir.mkdir(parents=True, exist_ok=True)
    (args.out_dir / "templates-msv.json").write_text(dump_json(report) + "\n", encoding="utf-8")
    (args.out_dir / "templates-msv.md").write_text(markdown(report), encoding="utf-8")
    logger.info("overall: gold removed %.2f%%, non-gold removed %.1f%%; drift fired %d times; written %s",
                100 * loo["overall"]["gold_removed"], 100 * loo["overall"]["nongold_removed"],
                len(drift["firings"]), args.out_dir / "templates-msv.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
