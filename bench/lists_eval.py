"""List-page extraction (``extraction.lists``) against trafilatura and paper 000's list algorithm.

``python -m bench.lists_eval [--out-dir DIR]``. Two measurements:

* **WCXB-dev held-out list pages** (``evaluation.folds.held_out_pages``, WCXB types listing and
  collection, gold present): bag-of-words P/R/F1 macro over pages (``evaluation.metrics.bow_prf`` /
  ``macro_prf``, what ``scrapy evaluate`` scores WCXB with), per WCXB type and together, and pages/s
  of each candidate timed around the call on the decoded HTML (parsing included: trafilatura parses
  for itself), with one untimed warm-up page;
* **demo sites' list pages** (``demo.content.build_sites``): entry recall and precision of the
  entries' URL paths against ``DemoPage.links`` (micro over pages) and how many pages list them in
  exactly the expected order.

Results: ``<out-dir>/lists-wcxb.md`` (also printed).
"""

from __future__ import annotations

import argparse
import datetime as dt
import time
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlsplit

from evaluation.baselines import load_baseline
from evaluation.folds import held_out_pages
from evaluation.metrics import PRF, bow_prf, macro_prf
from extraction.dom.encoding import decode_html
from extraction.dom.html import parse_html
from extraction.iawce import extract_list
from extraction.lists import extract_list_page

Candidate = Callable[[str, "str | None"], str]
GROUPS = ("listing", "collection", "all")


def candidates() -> dict[str, Candidate]:
    """Return the compared extractors by name: ours, trafilatura (project defaults), iawce-list."""
    return {
        "list (ours)": lambda text, url: extract_list_page(parse_html(text), url).text,
        "trafilatura": load_baseline("trafilatura"),
        "iawce-list": lambda text, url: extract_list(parse_html(text), url).text,
    }


def wcxb_rows() -> tuple[list[str], dict[str, int]]:
    """Return the Markdown rows of the WCXB held-out list-page table and the page counts per group."""
    pages = [(page, decode_html(page.html_bytes()).text) for page in held_out_pages("wcxb-dev")
             if page.page_type == "list" and page.gold_text]
    counts = {"listing": 0, "collection": 0, "all": len(pages)}
    for page, _ in pages:
        counts[page.extra["wcxb_type"]] += 1
    rows = []
    for name, run in candidates().items():
        if pages:
            run(pages[0][1], pages[0][0].url)  # warm-up: lazy imports and caches are not charged
        scores: dict[str, list[PRF]] = {group: [] for group in GROUPS}
        seconds = 0.0
        for page, text in pages:
            start = time.perf_counter()
            output = run(text, page.url)
            seconds += time.perf_counter() - start
            score = bow_prf(output, page.gold_text)
            scores["all"].append(score)
            scores[page.extra["wcxb_type"]].append(score)
        cells = []
        for group in GROUPS:
            prf = macro_prf(scores[group]) if scores[group] else PRF(0.0, 0.0, 0.0, 0)
            cells += [f"{prf.f1:.3f}", f"{prf.precision:.3f}", f"{prf.recall:.3f}"]
        rate = len(pages) / seconds if seconds else 0.0
        rows.append(f"| {name} | " + " | ".join(cells) + f" | {rate:.1f} |")
    return rows, counts


def demo_rows() -> list[str]:
    """Return the Markdown rows of the demo-site entry table (one per site, then the total)."""
    from demo.content import build_sites

    rows = []
    totals = [0, 0, 0, 0, 0]  # pages, exact order, hits, found, expected
    for site in build_sites():
        counts = [0, 0, 0, 0, 0]
        for path, page in sorted(site.pages.items()):
            if page.page_type != "list":
                continue
            found = [urlsplit(entry.url or "").path
                     for entry in extract_list_page(parse_html(page.html), f"http://127.0.0.1{path}").entries]
            expected = list(page.links)
            counts[0] += 1
            counts[1] += found == expected
            counts[2] += len(set(found) & set(expected))
            counts[3] += len(found)
            counts[4] += len(expected)
        totals = [a + b for a, b in zip(totals, counts, strict=True)]
        rows.append(_demo_row(site.name, counts))
    rows.append(_demo_row("all", totals))
    return rows


def _demo_row(name: str, counts: list[int]) -> str:
    pages, exact, hits, found, expected = counts
    recall = hits / expected if expected else 0.0
    precision = hits / found if found else 0.0
    return f"| {name} | {pages} | {expected} | {found} | {recall:.3f} | {precision:.3f} | {exact}/{pages} |"


def report() -> str:
    """Run both measurements and return the Markdown report."""
    rows, counts = wcxb_rows()
    lines = [
        f"# List pages: ours vs trafilatura vs iawce-list ({dt.date.today().isoformat()})",
        "",
        "`python -m bench.lists_eval`. WCXB-dev held-out fold (evaluation/folds.py), list pages with gold: "
        f"listing {counts['listing']}, collection {counts['collection']}, all {counts['all']}. Metric: WCXB "
        "lower-cased `\\w+` bag-of-words, macro over pages (the `scrapy evaluate` metric). pages/s: decoded "
        "HTML in, text out (parse included), one process, this machine.",
        "",
        "| candidate | F1 listing | P listing | R listing | F1 collection | P collection | R collection "
        "| F1 all | P all | R all | pages/s |",
        "|---|" + "---:|" * 10,
        *rows,
        "",
        "Demo sites' list pages (home and section pages): entry URL paths vs `DemoPage.links`.",
        "",
        "| site | pages | expected entries | found | recall | precision | exact order |",
        "|---|---:|---:|---:|---:|---:|---:|",
        *demo_rows(),
        "",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out-dir", type=Path, default=Path(__file__).parent / "results")
    args = parser.parse_args(argv)
    text = report()
    args.out_dir.mkdir(parents=True, exist_ok=True)
    (args.out_dir / "lists-wcxb.md").write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
