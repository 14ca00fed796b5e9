"""Title, authors and publish date on fundus-articles, by country, beside trafilatura and Fundus itself.

``python -m bench.metadata_fundus [--out bench/results/metadata-fundus.md] [--no-fundus]``

fundus-articles holds 258 articles of 181 publishers in 41 countries (2023-2026), each with the gold of its
publisher's hand-written Fundus parser (``gold.jsonl``: title, authors, publishing date). Every page runs
through the default flow (``extraction.process.process`` as ``scrapy extract`` runs it, no templates),
trafilatura's ``extract_metadata`` and, where ``make fundus`` made its environment, Fundus's own parser for the
page's publisher (``evaluation.fundus_worker``: its newest parser version, which for an older page may not be the
version the gold came from), on the same decoded HTML, in one run. Scored as ``bench.metadata_eval`` scores:
the title exact after normalisation, the authors by token F1, the date right to the day. Nothing in the metadata
step is trained on this set (the title chooser trained on wcxb-dev and the demo sites), so every page is unseen;
the article gate trained on part of it, but the gate runs after the metadata and changes none of it. Fundus's
column is its parsers against their own tests' gold: a reference, not a peer measured on unseen pages.
95% intervals: Wilson's for title and date, 1000 bootstrap resamples for the author F1. Countries are fundus's
folders (``uk``, ``ind``, ...); the table lists every country, the intervals only the whole set.
"""

from __future__ import annotations

import argparse
import logging
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

from bench.metadata_eval import Gold, Scores, interval, ours, score, trafilatura_candidate
from evaluation.harness import load_pages

OUT = Path(__file__).parent / "results" / "metadata-fundus.md"
FIELDS = ("title", "author", "date")
Candidate = Callable[[Gold], dict[str, str | None]]


def gold_pages() -> list[tuple[str, Gold]]:
    """Return ``(country, gold)`` for every page of fundus-articles."""
    out = []
    for page in load_pages("fundus-articles"):
        gold = dict(page.extra.get("gold") or {})
        authors = ", ".join(str(name) for name in gold.get("authors") or [] if name)
        out.append((str(page.extra.get("country")), Gold(f"fundus-articles/{page.page_id}", page.html_bytes(),
                                                          page.url, None, gold.get("date_published"), authors or None,
                                                          gold.get("title"), None)))
    return out


def fundus_candidate() -> Candidate:
    """Fundus's parser for the page's publisher, in its own environment (``make fundus``)."""
    from evaluation.baselines import FUNDUS, PeerWorker
    from extraction.dom.encoding import decode_html

    worker = PeerWorker(FUNDUS)
    worker.start()

    def run(gold: Gold) -> dict[str, str | None]:
        answer = worker.read(decode_html(gold.html, gold.content_type).text, gold.url)
        return {"date": answer.get("date_publish"), "author": ", ".join(answer.get("authors") or []) or None,
                "title": answer.get("title"), "lang": None}

    return run


def _cell(values: list[float], name: str, with_interval: bool) -> str:
    if not values:
        return "—"
    mean, low, high = interval(values, name)
    return f"{mean:.3f} [{low:.3f}, {high:.3f}]" if with_interval else f"{mean:.2f}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.metadata_fundus", description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=str(OUT))
    parser.add_argument("--no-fundus", action="store_true", help="leave Fundus out (it needs make fundus)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    candidates: dict[str, Candidate] = {"newscorpus": ours(), "trafilatura": trafilatura_candidate()}
    if not args.no_fundus:
        try:
            candidates["fundus"] = fundus_candidate()
        except Exception as exc:  # no .venv-fundus: the table says so
            print(f"Fundus left out: {exc}", file=sys.stderr)
    pages = gold_pages()
    by_country: dict[str, dict[str, Scores]] = defaultdict(lambda: {name: Scores() for name in candidates})
    total = {name: Scores() for name in candidates}
    failures = dict.fromkeys(candidates, 0)
    for index, (country, gold) in enumerate(pages, start=1):
        for name, run in candidates.items():
            try:
                found = run(gold)
            except Exception as exc:  # a candidate that fails scores nothing on the page
                logging.warning("%s failed on %s: %s", name, gold.key, exc)
                failures[name] += 1
                found = {"date": None, "author": None, "title": None, "lang": None}
            score(gold, found, by_country[country][name])
            score(gold, found, total[name])
        if index % 50 == 0:
            print(f"{index}/{len(pages)} pages", file=sys.stderr)
    names = list(candidates)
    lines = [f"# Metadata on fundus-articles by country (`python -m bench.metadata_fundus`, "
             f"{time.strftime('%Y-%m-%d')})",
             "", " ".join(__doc__.split("\n\n")[1].split()), "",
             "| country | field | pages | " + " | ".join(names) + " |", "|---|---|---:|" + "---:|" * len(names)]
    for name in FIELDS:
        count = len(total["newscorpus"].values.get(name, []))
        lines.append(f"| all | {name} | {count} | "
                     + " | ".join(_cell(total[c].values.get(name, []), name, True) for c in names) + " |")
    lines += ["", "Per country (means; title and date: share right, authors: token F1):", "",
              "| country | pages | " + " | ".join(f"{field} {c}" for field in FIELDS for c in names) + " |",
              "|---|---:|" + "---:|" * (len(FIELDS) * len(names))]
    counts: defaultdict[str, int] = defaultdict(int)
    for country, _ in pages:
        counts[country] += 1
    for country in sorted(by_country, key=lambda c: (-counts[c], c)):
        scores = by_country[country]
        lines.append(f"| {country} | {counts[country]} | " + " | ".join(
            _cell(scores[c].values.get(field, []), field, False) for field in FIELDS for c in names) + " |")
    lines += ["", "Failures (a page a candidate raised on, scored as nothing found): "
              + ", ".join(f"{name} {n}" for name, n in failures.items()) + "."]
    if "fundus" not in candidates:
        lines += ["", "Fundus was not run here (no `.venv-fundus`: `make fundus`)."]
    Path(args.out).write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
