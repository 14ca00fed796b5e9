"""News metadata (``extraction.metadata``, through the default flow) against gold, beside trafilatura and htmldate.

``python -m bench.metadata_eval [--sets wcxb-dev chinese-wced-dev mozilla-readability demo] [--out FILE.md]
[--no-newsplease]``

Every page runs through ``extraction.process.process`` (the crawl's flow without templates, as
``scrapy extract`` runs it) and through trafilatura's ``extract_metadata``, htmldate's
``find_date`` (``original_date=True``) and news-please's ``from_html`` (its own environment, ``make
newsplease``; ``--no-newsplease`` without it) on the same decoded HTML, in one run. Measured per set,
over the pages whose gold has the field:

* **date**: the publish date right to the day (the gold's day, read with the same date parser);
* **author**: token F1 of the names (lower-cased words; Chinese characters one token each), the
  mean over pages; a page with no author found scores 0;
* **title**: exact match after normalisation (lower case, punctuation and spaces collapsed);
* **language**: the primary subtag (``zh-Hans`` counts as ``zh``) against the gold (WCXB: English;
  chinese-wced-dev: Chinese; mozilla-readability: its ``lang`` where given), ours only.

Nothing in ``extraction.metadata`` is trained, so every page is unseen; its rules were written while
reading errors on wcxb-dev's first 250 pages and on chinese-wced-dev, so ``wcxb-dev-held-out`` (the
fold the block models never trained on) is reported apart, and its articles alone
(``wcxb-dev-held-out-articles``: the pages a news corpus holds). The sets are the ones with gold
metadata: wcxb-dev (title, author, publish_date), chinese-wced-dev (author, date),
mozilla-readability (title, byline) and the demo sites' articles (the generator's headline, author
and publication time). 95% intervals: Wilson's for the accuracies, 1000 bootstrap resamples for
the author F1. Results: ``bench/results/metadata.md``.

Each publish date of ours that misses the gold's day is classed (``date_miss_kind``), to tell what a better
reader could still get from what the gold cannot be matched on: **absent** (the gold's day is written
nowhere in the page's HTML, in any of ``day_forms``: no reader of the page finds it); **modified** (the
gold's day is the page's own modified date, JSON-LD ``dateModified`` or a ``*modified_time`` /
``*updated_time`` meta tag, and the page declares another day as its publish date, ``datePublished``,
``*published_time`` or ``dateCreated``: the gold took the last update for the publish date); **none** (we
found no date, the gold's is in the page); **other** (we found another date of the page). The ceiling is the share of
pages a reader could get right without taking a modified date for the publish date: all but the absent and
modified misses.
"""

from __future__ import annotations

import argparse
import calendar
import logging
import math
import re
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from evaluation.folds import held_out_pages
from evaluation.harness import load_pages
from extraction.dom.encoding import decode_html
from extraction.dom.html import parse_html
from extraction.metadata.dates import parse_date
from extraction.page import Page
from extraction.process import Context, process
from extraction.title import normal

# wcxb-dev-held-out-articles: the held-out fold's news and blog articles, what a news corpus holds.
SETS = ("wcxb-dev", "wcxb-dev-held-out", "wcxb-dev-held-out-articles", "chinese-wced-dev", "mozilla-readability",
        "demo")
FIELDS = ("date", "author", "title", "lang")
DATE_MISSES = ("absent", "modified", "none", "other")  # date_miss_kind
MISS_EXAMPLES = 8  # page keys listed per kind of date miss
PROVIDES = {"newscorpus": FIELDS, "trafilatura": ("date", "author", "title"), "htmldate": ("date",),
            "news-please": FIELDS}
OUT = Path(__file__).parent / "results" / "metadata.md"
SEED = 0
RESAMPLES = 1000


@dataclass
class Gold:
    key: str
    html: bytes
    url: str | None
    content_type: str | None = None
    date: str | None = None
    author: str | None = None
    title: str | None = None
    lang: str | None = None


@dataclass
class Scores:
    values: dict[str, list[float]] = field(default_factory=dict)  # field -> one score per page with gold

    def add(self, name: str, value: float) -> None:
        self.values.setdefault(name, []).append(value)


def normal_title(text: str | None) -> str:
    return normal(text or "")


def author_tokens(text: str | None) -> list[str]:
    return re.findall(r"[\u4e00-\u9fff]|[^\W\d_]+", (text or "").lower())


def token_f1(predicted: str | None, gold: str) -> float:
    ours, theirs = author_tokens(predicted), author_tokens(gold)
    if not ours or not theirs:
        return 0.0
    common = sum(min(ours.count(t), theirs.count(t)) for t in set(ours))
    if not common:
        return 0.0
    precision, recall = common / len(ours), common / len(theirs)
    return 2 * precision * recall / (precision + recall)


def gold_pages(name: str) -> Iterator[Gold]:
    """Yield the pages of a set with their gold metadata."""
    if name == "demo":
        from demo.content import build_sites

        for site in build_sites():
            for demo_page in site.pages.values():
                if demo_page.page_type == "article":
                    yield Gold(f"demo{demo_page.path}", demo_page.body_bytes, "http://127.0.0.1:8000" + demo_page.path,
                               f"text/html; charset={demo_page.encoding}", demo_page.published, demo_page.author,
                               demo_page.title, site.lang)
        return
    pages = held_out_pages("wcxb-dev") if name.startswith("wcxb-dev-held-out") else load_pages(name)
    for page in pages:
        if name == "wcxb-dev-held-out-articles" and page.page_type != "article":
            continue
        extra: dict[str, Any] = dict(page.extra)
        if name.startswith("wcxb-dev"):
            yield Gold(f"{name}/{page.page_id}", page.html_bytes(), page.url, None, extra.get("publish_date"),
                       extra.get("author"), extra.get("title"), "en")
        elif name == "chinese-wced-dev":
            yield Gold(f"{name}/{page.page_id}", page.html_bytes(), page.url, None, extra.get("date"),
                       extra.get("author"), None, "zh")
        elif name == "mozilla-readability":
            meta = extra.get("metadata") or {}
            yield Gold(f"{name}/{page.page_id}", page.html_bytes(), page.url, None, meta.get("publishedTime"),
                       meta.get("byline"), meta.get("title"), meta.get("lang"))


def ours() -> Callable[[Gold], dict[str, str | None]]:
    from extraction.blockclf.classifier import shared_models as block_models
    from extraction.pagetype.models import shared_models as page_models
    from extraction.title import shared_model as title_model

    context = Context(page_models(), block_models(), title_model=title_model())

    def run(gold: Gold) -> dict[str, str | None]:
        record = process(Page(gold.html, gold.url, gold.content_type), context)
        return {"date": record.date_published, "author": ", ".join(record.authors) or None, "title": record.title,
                "lang": record.lang, "src": str(record.metadata_sources)}

    return run


def trafilatura_candidate() -> Callable[[Gold], dict[str, str | None]]:
    from trafilatura.metadata import extract_metadata

    def run(gold: Gold) -> dict[str, str | None]:
        tree = parse_html(decode_html(gold.html, gold.content_type).text)
        document = extract_metadata(tree, default_url=gold.url)
        return {"date": document.date, "author": document.author, "title": document.title, "lang": None}

    return run


def htmldate_candidate() -> Callable[[Gold], dict[str, str | None]]:
    from htmldate import find_date

    def run(gold: Gold) -> dict[str, str | None]:
        tree = parse_html(decode_html(gold.html, gold.content_type).text)
        return {"date": find_date(tree, url=gold.url, original_date=True), "author": None, "title": None,
                "lang": None}

    return run


def newsplease_candidate() -> Callable[[Gold], dict[str, str | None]]:
    """news-please's ``from_html`` on the same decoded HTML, in its own environment (``make newsplease``)."""
    from evaluation.baselines import NEWSPLEASE, PeerWorker

    worker = PeerWorker(NEWSPLEASE)
    worker.start()

    def run(gold: Gold) -> dict[str, str | None]:
        answer = worker.read(decode_html(gold.html, gold.content_type).text, gold.url)
        return {"date": answer["date_publish"], "author": ", ".join(answer["authors"]) or None,
                "title": answer["title"], "lang": answer.get("language")}

    return run


def score(gold: Gold, found: dict[str, str | None], scores: Scores) -> None:
    gold_day = parse_date(gold.date)
    if gold_day:
        scores.add("date", float((parse_date(found["date"]) or "")[:10] == gold_day[:10]))
    if gold.author and gold.author.strip():
        scores.add("author", token_f1(found["author"], gold.author))
    if gold.title and gold.title.strip():
        scores.add("title", float(normal_title(found["title"]) == normal_title(gold.title)))
    if gold.lang:
        predicted = (found["lang"] or "").split("-")[0].lower()
        scores.add("lang", float(predicted == gold.lang.split("-")[0].lower()) if found["lang"] is not None
                   else math.nan)


def day_forms(day: str) -> list[str]:
    """Return regular expressions for the ways a page writes the day ``YYYY-MM-DD``: ISO, slashes, dots and
    compact digits, month names (full or short, either order), numeric with the year last (either order,
    two- or four-digit year) and Chinese."""
    year, month, date_ = (int(part) for part in day.split("-"))
    name, short = calendar.month_name[month], calendar.month_abbr[month]
    return [
        rf"(?<!\d){year}[-/.]0?{month}[-/.]0?{date_}(?!\d)", rf"(?<!\d){year}{month:02d}{date_:02d}",
        rf"\b(?:{name}|{short})\.?\s+0?{date_}(?:st|nd|rd|th)?\b[^<\d]{{0,6}}{year}",
        rf"\b0?{date_}(?:st|nd|rd|th)?\.?\s+(?:{name}|{short})\.?,?\s+{year}",
        rf"(?<![\d/.])0?{month}[/.-]0?{date_}[/.-](?:{year}|{year % 100:02d})(?!\d)",
        rf"(?<![\d/.])0?{date_}[/.-]0?{month}[/.-](?:{year}|{year % 100:02d})(?!\d)",
        rf"{year}\s*年\s*0?{month}\s*月\s*0?{date_}\s*日",
    ]


# The name of a modified date, then its value within the same JSON member or tag.
_MODIFIED_RE = r"(?:dateModified|modified_time|updated_time)[^<>,;]{{0,40}}?{day}"
# The name of a declared publish date, then its day.
_PUBLISHED_RE = re.compile(r"(?:datePublished|published_time|dateCreated)[^<>,;]{0,40}?(\d{4}-\d{2}-\d{2})",
                           re.IGNORECASE)


def date_miss_kind(gold_day: str, ours: str | None, page_html: str) -> str:
    """Return the kind of a missed publish date (module docstring): absent, modified, none or other."""
    if not any(re.search(form, page_html, re.IGNORECASE) for form in day_forms(gold_day)):
        return "absent"
    if re.search(_MODIFIED_RE.format(day=gold_day), page_html, re.IGNORECASE) \
            and any(day != gold_day for day in _PUBLISHED_RE.findall(page_html)):
        return "modified"
    return "other" if ours else "none"


def miss_lines(misses: dict[str, list[tuple[str, str]]]) -> list[str]:
    """Return the report's table of our missed publish dates per set (``misses``: set -> (kind, page key))."""
    lines = ["", "Our missed publish dates by kind (module docstring of `bench/metadata_eval.py`): ceiling = the "
             "share a reader could get right without taking a modified date for the publish date.", "",
             "| set | pages with a gold date | right | " + " | ".join(DATE_MISSES) + " | ceiling |",
             "|---|---:|---:|" + "---:|" * (len(DATE_MISSES) + 1)]
    examples = []
    for name, kinds in misses.items():
        counts = Counter(kind for kind, _key in kinds)
        pages = len(kinds)
        if not pages:
            continue
        ceiling = (pages - counts["absent"] - counts["modified"]) / pages
        lines.append(f"| {name} | {pages} | {counts['right']} ({counts['right'] / pages:.3f}) | "
                     + " | ".join(str(counts[kind]) for kind in DATE_MISSES) + f" | {ceiling:.3f} |")
        for kind in DATE_MISSES:
            keys = [key for found, key in kinds if found == kind]
            if keys:
                shown = ", ".join(keys[:MISS_EXAMPLES]) + (" ..." if len(keys) > MISS_EXAMPLES else "")
                examples.append(f"- {name}, {kind}: {shown}")
    return [*lines, "", *examples]


def interval(values: list[float], field_name: str) -> tuple[float, float, float]:
    """Return (mean, low, high): Wilson's 95% interval for 0/1 scores, a bootstrap one for the F1."""
    data = np.asarray(values, dtype=float)
    n = len(data)
    mean = float(data.mean())
    if field_name != "author":
        z = 1.96
        centre = (mean + z * z / (2 * n)) / (1 + z * z / n)
        half = z * math.sqrt(mean * (1 - mean) / n + z * z / (4 * n * n)) / (1 + z * z / n)
        return mean, centre - half, centre + half
    rng = np.random.default_rng(SEED)
    means = data[rng.integers(0, n, size=(RESAMPLES, n))].mean(axis=1)
    low, high = np.percentile(means, [2.5, 97.5])
    return mean, float(low), float(high)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.metadata_eval", description=__doc__.split("\n\n")[0])
    parser.add_argument("--sets", nargs="+", default=list(SETS), choices=SETS)
    parser.add_argument("--limit", type=int, default=None, help="pages per set (default all)")
    parser.add_argument("--out", default=str(OUT))
    parser.add_argument("--no-newsplease", action="store_true",
                        help="leave news-please out (it needs its environment: make newsplease)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    candidates = {"newscorpus": ours(), "trafilatura": trafilatura_candidate(), "htmldate": htmldate_candidate()}
    if not args.no_newsplease:
        candidates["news-please"] = newsplease_candidate()
    lines = [f"# Metadata against gold (`python -m bench.metadata_eval`, {time.strftime('%Y-%m-%d')})", "",
             " ".join(__doc__.split("\n\n")[2].split()), "",
             "| set | field | pages | " + " | ".join(candidates) + " |",
             "|---|---|---:|" + "---|" * len(candidates)]
    misses: dict[str, list[tuple[str, str]]] = {}
    for name in args.sets:
        results = {candidate: Scores() for candidate in candidates}
        kinds = misses.setdefault(name, [])
        seconds = dict.fromkeys(candidates, 0.0)
        started = time.monotonic()
        for index, gold in enumerate(gold_pages(name)):
            if args.limit is not None and index >= args.limit:
                break
            for candidate, run in candidates.items():
                start = time.perf_counter()
                try:
                    found = run(gold)
                except Exception as exc:  # a candidate that fails scores nothing on the page
                    logging.warning("%s failed on %s: %s", candidate, gold.key, exc)
                    found = {"date": None, "author": None, "title": None, "lang": None}
                seconds[candidate] += time.perf_counter() - start
                score(gold, found, results[candidate])
                if candidate == "newscorpus" and (gold_day := parse_date(gold.date)):
                    right = (parse_date(found["date"]) or "")[:10] == gold_day[:10]
                    kinds.append(("right" if right else date_miss_kind(
                        gold_day[:10], found["date"], decode_html(gold.html, gold.content_type).text), gold.key))
            if (index + 1) % 100 == 0:
                print(f"{name}: {index + 1} pages, {time.monotonic() - started:.0f} s", file=sys.stderr)
        for field_name in FIELDS:
            pages = len(results["newscorpus"].values.get(field_name, []))
            if not pages:
                continue
            cells = []
            for candidate in candidates:
                values = [v for v in results[candidate].values.get(field_name, []) if not math.isnan(v)]
                if field_name not in PROVIDES[candidate] or not values:
                    cells.append("—")
                    continue
                mean, low, high = interval(values, field_name)
                cells.append(f"{mean:.3f} [{low:.3f}, {high:.3f}]")
            lines.append(f"| {name} | {field_name} | {pages} | " + " | ".join(cells) + " |")
        print("\n".join(lines[-len(FIELDS):]), file=sys.stderr)
    lines += ["", "Fields: date = publish date right to the day; author = token F1 (mean over pages); title = exact "
              "after normalisation; lang = primary subtag. Brackets: 95% intervals."]
    lines += miss_lines(misses)
    Path(args.out).write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
