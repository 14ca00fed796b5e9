"""Page types in a crawl of real pages: the page-level model alone, and with the site's evidence.

``python -m bench.pagetype_crawl [--out bench/results/pagetype-crawl] [--timeout S]``. The labelled pages
of sets no page-type model trained on (article-vs-nonarticle: 10 news sites; msv-big5: 9 sites x 4
years of articles; gne-chinese: Chinese portals, URLs guessed from their links as the offline renderer
does; the wcxb-dev held-out fold; l3s-gn1: news articles) are replayed at their original URLs
(``evaluation.replay``: one site per original host, its sitemap the start point) and crawled over plain
HTTP with the project's settings three times:

1. ``page``: ``PAGETYPE_SITE_ENABLED=False``, the page-level (DOM/URL) model alone;
2. ``site, first run``: the site evidence on, from an empty template store;
3. ``site, next run``: again, with the store the first run left, frozen (``TEMPLATES_LEARN=False``): every
   page typed with the votes of its whole site, what a scheduled crawl's later runs see of new pages
   of known shapes (a re-crawl that also voted would count each page twice).

The crawl state is off (each run is a full crawl). Per set: the share of article pages typed article,
of list pages typed list, of article-vs-nonarticle's non-articles typed list or other, and the pages the
site evidence overrode (right and wrong). Writes ``<out>.md`` and ``<out>.json``; see bench/README.md.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from bench.replay_bench import crawl_command, log
from evaluation.datasets import datasets_dir
from evaluation.folds import held_out
from evaluation.replay import ReplayPage, ReplayServer, replay_pages, write_site_list

REPO = Path(__file__).resolve().parent.parent
# (dataset, guess URLs for pages without one, only the held-out fold)
SETS: tuple[tuple[str, bool, bool], ...] = (("article-vs-nonarticle", False, False), ("msv-big5", False, False),
                                            ("gne-chinese", True, False), ("wcxb-dev", False, True),
                                            ("l3s-gn1", False, False))
RUNS: tuple[tuple[str, bool, bool], ...] = (("page", False, False), ("site, first run", True, False),
                                            ("site, next run", True, True))  # (name, site evidence, frozen store)


def labelled_pages() -> list[ReplayPage]:
    """Return the replayed pages of ``SETS`` that have a page-type label."""
    pages: list[ReplayPage] = []
    for name, guess, fold_only in SETS:
        if not (datasets_dir() / name).is_dir():
            log(f"{name}: not in {datasets_dir()}, left out")
            continue
        for page in replay_pages([name], guess_urls=guess):
            source = page.source
            if source is None or not source.page_type or (fold_only and not held_out(source)):
                continue
            pages.append(page)
    return pages


def truth(page: ReplayPage) -> str:
    """Return the page's label: article, list, other or nonarticle (article-vs-nonarticle's other pages)."""
    assert page.source is not None
    return str(page.source.page_type)


def crawl(pages: list[ReplayPage], work: Path, site_evidence: bool, timeout: float,
          frozen: bool = False) -> list[dict[str, Any]]:
    """Crawl the pages once (plain HTTP) with ``work``'s template store (``frozen``: applied, not learned);
    return the records."""
    write_site_list(pages, work / "sites.yaml", render=False)
    out = work / "out.jsonl"
    out.unlink(missing_ok=True)
    extra = [f"PAGETYPE_SITE_ENABLED={site_evidence}", "CRAWL_STATE_ENABLED=False", "LOG_LEVEL=WARNING",
             f"TEMPLATES_LEARN={not frozen}"]
    env = {key: value for key, value in os.environ.items()
           if key.lower() not in ("http_proxy", "https_proxy", "no_proxy")}
    with ReplayServer(pages) as server:
        env["http_proxy"] = server.proxy_url
        with (work / "crawl.log").open("ab") as crawl_log:
            subprocess.run(crawl_command(work, True, extra), cwd=REPO, env=env, stdout=crawl_log,
                           stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, timeout=timeout, check=False)
    return [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines() if line.strip()] \
        if out.exists() else []


def score(pages: list[ReplayPage], records: list[dict[str, Any]]) -> dict[str, Any]:
    """Return per-set counts: (label, typed) pairs, overrides right and wrong, pages missing."""
    by_url = {record.get("url"): record for record in records}  # the URL requested (canonical_url: the page's own)
    sets: dict[str, dict[str, Any]] = defaultdict(lambda: {"pairs": Counter(), "override_right": 0,
                                                           "override_wrong": 0, "missing": 0})
    for page in pages:
        entry = sets[page.dataset]
        record = by_url.get(page.url)
        if record is None or record.get("error") or not record.get("page_type"):
            entry["missing"] += 1
            continue
        label, typed = truth(page), record["page_type"]
        entry["pairs"][f"{label}->{typed}"] += 1
        if record.get("page_type_source") == "site":
            right = typed == label or (label == "nonarticle" and typed != "article")
            entry["override_right" if right else "override_wrong"] += 1
    return {name: {**entry, "pairs": dict(entry["pairs"])} for name, entry in sets.items()}


def shares(pairs: dict[str, int]) -> dict[str, tuple[int, int]]:
    """Return (right, pages) for article pages typed article, list typed list, non-articles typed list or other."""
    out: dict[str, tuple[int, int]] = {}
    for label in ("article", "list", "nonarticle"):
        pages = sum(n for key, n in pairs.items() if key.startswith(label + "->"))
        if not pages:
            continue
        if label == "nonarticle":
            right = pages - pairs.get("nonarticle->article", 0)
        else:
            right = pairs.get(f"{label}->{label}", 0)
        out[label] = (right, pages)
    return out


def report(results: dict[str, dict[str, Any]], pages: list[ReplayPage], seconds: dict[str, float]) -> str:
    """Return the markdown report."""
    sites = len({page.site_key for page in pages})
    lines = [
        "# Page types in a crawl of real pages (`python -m bench.pagetype_crawl`)", "",
        f"{len(pages)} labelled pages of {sites} sites, replayed at their original URLs and crawled over plain "
        "HTTP (no screenshot: the DOM/URL model is the page-level model), three full crawls: the page-level "
        "model alone, the site evidence from an empty store, and again with the store the first run left, frozen. "
        "No page-type model trained on these sets (wcxb-dev: its held-out fold only).", "",
        "| set | pages | run | article typed article | list typed list | non-article typed list/other "
        "| site overrides right / wrong |",
        "|---|---:|---|---:|---:|---:|---:|",
    ]
    for dataset in sorted({page.dataset for page in pages}):
        count = sum(page.dataset == dataset for page in pages)
        for run, result in results.items():
            entry = result.get(dataset)
            if entry is None:
                continue
            cells = []
            got = shares(entry["pairs"])
            for label in ("article", "list", "nonarticle"):
                right, total = got.get(label, (0, 0))
                cells.append(f"{100 * right / total:.1f}% ({right}/{total})" if total else "")
            lines.append(f"| {dataset} | {count} | {run} | " + " | ".join(cells)
                         + f" | {entry['override_right']} / {entry['override_wrong']} |")
    lines += ["", "Crawl time per run: " + ", ".join(f"{run} {s:.0f} s" for run, s in seconds.items()) + "."]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.pagetype_crawl", description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results" / "pagetype-crawl",
                        help="report path without extension (default bench/results/pagetype-crawl)")
    parser.add_argument("--timeout", type=float, default=1800.0, help="seconds per crawl (default 1800)")
    args = parser.parse_args(argv)
    pages = labelled_pages()
    if not pages:
        print(f"error: no labelled page under {datasets_dir()}", file=sys.stderr)
        return 2
    log(f"{len(pages)} pages: " + ", ".join(f"{k} {v}" for k, v in Counter(p.dataset for p in pages).items()))
    results: dict[str, dict[str, Any]] = {}
    seconds: dict[str, float] = {}
    work = Path(tempfile.mkdtemp(prefix="pagetype-crawl-"))
    try:
        for run, site_evidence, frozen in RUNS:
            if not frozen:
                shutil.rmtree(work / "templates_db", ignore_errors=True)
            started = time.monotonic()
            records = crawl(pages, work, site_evidence, args.timeout, frozen)
            seconds[run] = time.monotonic() - started
            results[run] = score(pages, records)
            log(f"{run}: {len(records)} records in {seconds[run]:.0f} s")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.with_suffix(".json").write_text(json.dumps({"runs": results, "seconds": seconds,
                                                         "pages": len(pages)}, indent=1) + "\n", encoding="utf-8")
    args.out.with_suffix(".md").write_text(report(results, pages, seconds), encoding="utf-8")
    print(report(results, pages, seconds))
    return 0


if __name__ == "__main__":
    sys.exit(main())
