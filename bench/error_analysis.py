"""Error analysis of the default extraction: what it keeps wrongly and drops wrongly, by class.

``python -m bench.error_analysis [--datasets cleaneval wcxb-dev dragnet l3s-gn1] [--out FILE.md]``.

On the held-out pages of each set (``evaluation.folds.held_out_pages``: the held-out fold of the
training sets, Dragnet's test split, all of the evaluation-only sets) every paragraph of the page
(``extraction.dom.blocks``) is a unit. A unit is **gold** when one LCS alignment of all the page's
paragraphs to the gold text matches at least half of its tokens (``evaluation.labels.label_texts``,
the labels the models train on) and **kept** when the default flow (``extraction.process`` without
templates, as ``scrapy evaluate`` runs it) keeps it. Kept and not gold is a false positive, gold and
not kept a false negative. Each error is put in one class by its block's element, the element's
ancestors (tag, ``class``, ``id``) and its text, first match wins:

comments, related (related/recommended/more links), caption (figcaption, photo credits),
byline/dateline (author, date, "By ...", a date alone), newsletter (subscribe, sign up),
share (social buttons), navigation (nav, menu, header, footer, breadcrumbs), advertising,
heading (a paragraph of an h1-h6), table or list (inside table/ul/ol/dl), link-heavy (at least
half of its characters in links), other.

Reported per set and over all: error characters per class (false positives and negatives apart),
the share of all error characters, and examples; per WCXB page type too. Counting characters
weights each error by what it costs the corpus.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from lxml import html

from evaluation.datasets import Page as DatasetPage
from evaluation.folds import held_out_pages
from evaluation.labels import label_texts
from extraction.blockclf.classifier import shared_models
from extraction.dom.blocks import Block, page_blocks
from extraction.page import Page
from extraction.process import Context, process

DATASETS = ("cleaneval", "wcxb-dev", "dragnet", "l3s-gn1")
EXAMPLES = 3  # per class and kind
_CLASS_RULES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("comments", re.compile(r"comment|disqus|respond|reply|replies|discussion|talkback", re.I)),
    ("related", re.compile(r"related|recommend|more-?stor|read-?more|also|popular|trending|most-?read|"
                           r"outbrain|taboola|teaser|promo", re.I)),
    ("caption", re.compile(r"caption|credit|photo|figure|gallery|image|media", re.I)),
    ("byline/dateline", re.compile(r"byline|author|dateline|date|time|posted|published|meta", re.I)),
    ("newsletter", re.compile(r"newsletter|subscri|sign-?up|signup|optin|opt-in|email", re.I)),
    ("share", re.compile(r"share|social|sharing|follow|facebook|twitter|tweet|whatsapp|print", re.I)),
    ("navigation", re.compile(r"\bnav|menu|breadcrumb|header|footer|masthead|topbar|sidebar|widget", re.I)),
    ("advertising", re.compile(r"\bad\b|ads\b|advert|sponsor|banner|dfp|gpt", re.I)),
)
_BYLINE_TEXT = re.compile(r"^(by|von|par|por|作者|记者|来源|编辑|责任编辑)\b|^\W*(posted|published|updated)\b", re.I)
_DATE_TEXT = re.compile(r"^\W*(\d{1,4}[./-]\d{1,2}[./-]\d{1,4}|\d{4}年\d{1,2}月|"
                        r"(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.? \d{1,2},? \d{4})", re.I)
_HEADINGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})
_TABLES = frozenset({"table", "tr", "td", "th", "ul", "ol", "li", "dl", "dt", "dd"})
ANCESTORS = 6  # how far up the classes and ids are read


def _context(element: html.HtmlElement) -> tuple[str, list[str]]:
    """Return the classes and ids of the element and its nearest ancestors, and their tags."""
    words, tags = [], []
    node: html.HtmlElement | None = element
    for _ in range(ANCESTORS):
        if node is None or not isinstance(node.tag, str):
            break
        tags.append(node.tag)
        words.append(f"{node.get('class') or ''} {node.get('id') or ''} {node.get('role') or ''}")
        node = node.getparent()
    return " ".join(words), tags


def error_class(block: Block, text: str, link_chars: int, chars: int) -> str:
    """Return the class of an error unit (module docstring)."""
    attributes, tags = _context(block.element)
    if tags and tags[0] in ("nav", "header", "footer"):
        return "navigation"
    if "figcaption" in tags:
        return "caption"
    for name, pattern in _CLASS_RULES:
        if pattern.search(attributes):
            return name
    if _BYLINE_TEXT.search(text) or (_DATE_TEXT.search(text) and chars < 60):
        return "byline/dateline"
    if any(heading in _HEADINGS for heading in _paragraph_tags(block, text)):
        return "heading"
    if set(tags) & _TABLES:
        return "table or list"
    if chars and link_chars >= 0.5 * chars:
        return "link-heavy"
    return "other"


def _paragraph_tags(block: Block, text: str) -> set[str]:
    """Return the tags of the block's elements whose text is ``text`` (the paragraph's own element)."""
    found = set()
    for element in block.element.iter("h1", "h2", "h3", "h4", "h5", "h6"):
        if " ".join(element.text_content().split()) == text:
            found.add(element.tag)
    return found


@dataclass
class Tally:
    """Error characters and examples per class, for false positives and false negatives."""

    chars: dict[str, Counter[str]] = field(default_factory=lambda: {"fp": Counter(), "fn": Counter()})
    units: dict[str, Counter[str]] = field(default_factory=lambda: {"fp": Counter(), "fn": Counter()})
    examples: dict[tuple[str, str], list[str]] = field(default_factory=lambda: defaultdict(list))
    gold_chars: int = 0
    kept_chars: int = 0
    pages: int = 0

    def add(self, kind: str, name: str, chars: int, example: str) -> None:
        self.chars[kind][name] += chars
        self.units[kind][name] += 1
        if len(self.examples[kind, name]) < EXAMPLES and chars >= 20:
            self.examples[kind, name].append(example)

    def merge(self, other: Tally) -> None:
        for kind in ("fp", "fn"):
            self.chars[kind].update(other.chars[kind])
            self.units[kind].update(other.units[kind])
        for key, found in other.examples.items():
            room = EXAMPLES - len(self.examples[key])
            self.examples[key].extend(found[:max(room, 0)])
        self.gold_chars += other.gold_chars
        self.kept_chars += other.kept_chars
        self.pages += other.pages


def analyse_page(page: DatasetPage, context: Context, tally: Tally) -> None:
    """Add one page's errors to ``tally``."""
    gold = page.gold_text
    if not gold:
        return
    record = process(Page(page.html_bytes(), page.url, "text/html"), context)
    if record.error:
        return
    tree = Page(page.html_bytes(), page.url, "text/html").tree
    blocks = page_blocks(tree)
    units = [(block, paragraph) for block in blocks for paragraph in block.paragraphs]
    labels = label_texts([paragraph.text for _, paragraph in units], gold)
    kept_lines = Counter(line for line in record.text.split("\n") if line)
    tally.pages += 1
    for (block, paragraph), is_gold in zip(units, labels, strict=True):
        kept = kept_lines[paragraph.text] > 0
        if kept:
            kept_lines[paragraph.text] -= 1
            tally.kept_chars += paragraph.chars
        if is_gold:
            tally.gold_chars += paragraph.chars
        if kept == is_gold:
            continue
        kind = "fp" if kept else "fn"
        name = error_class(block, paragraph.text, paragraph.link_chars, paragraph.chars)
        tally.add(kind, name, paragraph.chars, f"{page.dataset}/{page.page_id}: {paragraph.text[:110]}")


def report(tallies: dict[str, Tally], by_type: dict[str, Tally], command: str, seconds: float) -> str:
    """Return the Markdown report."""
    lines = [f"# Error analysis of the default extraction (`{command}`)", "",
             "Units are the page's paragraphs; gold by the LCS alignment the models train on; errors in characters "
             "(false positives: kept but not gold; false negatives: gold but dropped). "
             f"{sum(t.pages for t in tallies.values())} held-out pages, {seconds:.0f} s.", ""]
    total = Tally()
    for tally in tallies.values():
        total.merge(tally)
    for name, tally in [*tallies.items(), ("all sets", total)]:
        lines += _table(name, tally)
    if by_type:
        lines += ["## WCXB-dev held-out by page type", "",
                  "| page type | pages | gold chars | FP chars (share of kept) | FN chars (share of gold) | "
                  "largest FP class | largest FN class |", "|---|---:|---:|---:|---:|---|---|"]
        for page_type, tally in sorted(by_type.items(), key=lambda item: -item[1].pages):
            fp, fn = sum(tally.chars["fp"].values()), sum(tally.chars["fn"].values())
            top_fp = tally.chars["fp"].most_common(1)
            top_fn = tally.chars["fn"].most_common(1)
            kept_share, gold_share = fp / max(tally.kept_chars, 1), fn / max(tally.gold_chars, 1)
            lines.append(f"| {page_type} | {tally.pages} | {tally.gold_chars} | {fp} ({kept_share:.1%}) | "
                         f"{fn} ({gold_share:.1%}) | {top_fp[0][0] if top_fp else '—'} | "
                         f"{top_fn[0][0] if top_fn else '—'} |")
        lines.append("")
    lines += ["## Examples (all sets)", ""]
    for kind, title in (("fp", "kept wrongly"), ("fn", "dropped wrongly")):
        for name, _ in total.chars[kind].most_common():
            for example in total.examples[kind, name]:
                lines.append(f"- {title}, {name}: {example}")
    return "\n".join(lines) + "\n"


def _table(name: str, tally: Tally) -> list[str]:
    fp_total, fn_total = sum(tally.chars["fp"].values()), sum(tally.chars["fn"].values())
    errors = max(fp_total + fn_total, 1)
    lines = [f"## {name}: {tally.pages} pages", "",
             f"Kept {tally.kept_chars} characters, gold {tally.gold_chars}; false positives {fp_total} "
             f"({fp_total / max(tally.kept_chars, 1):.1%} of kept), false negatives {fn_total} "
             f"({fn_total / max(tally.gold_chars, 1):.1%} of gold).", "",
             "| class | FP chars | FP units | FN chars | FN units | share of error chars |",
             "|---|---:|---:|---:|---:|---:|"]
    names = sorted(set(tally.chars["fp"]) | set(tally.chars["fn"]),
                   key=lambda n: -(tally.chars["fp"][n] + tally.chars["fn"][n]))
    for cls in names:
        lines.append(f"| {cls} | {tally.chars['fp'][cls]} | {tally.units['fp'][cls]} | {tally.chars['fn'][cls]} | "
                     f"{tally.units['fn'][cls]} | {(tally.chars['fp'][cls] + tally.chars['fn'][cls]) / errors:.1%} |")
    return [*lines, ""]


def run(datasets: Iterable[str], context: Context) -> tuple[dict[str, Tally], dict[str, Tally]]:
    """Return the tallies per dataset and, for WCXB, per page type."""
    tallies: dict[str, Tally] = {}
    by_type: dict[str, Tally] = defaultdict(Tally)
    for dataset in datasets:
        tally = tallies[dataset] = Tally()
        started = time.monotonic()
        for page in held_out_pages(dataset):
            one = Tally()
            analyse_page(page, context, one)
            tally.merge(one)
            if dataset == "wcxb-dev" and page.page_type:
                by_type[page.page_type].merge(one)
        print(f"{dataset}: {tally.pages} pages in {time.monotonic() - started:.0f} s", file=sys.stderr, flush=True)
    return tallies, by_type


def main(argv: list[str] | None = None) -> int:
    """Run the analysis and write the report; return the exit status."""
    parser = argparse.ArgumentParser(prog="python -m bench.error_analysis", description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", nargs="+", default=list(DATASETS), metavar="NAME")
    parser.add_argument("--out", default="bench/results/errors.md", help="the Markdown report")
    args = parser.parse_args(argv)
    from scrapy.utils.project import get_project_settings

    context = Context.from_settings(get_project_settings())
    shared_models()
    started = time.monotonic()
    tallies, by_type = run(args.datasets, context)
    text = report(tallies, by_type, "python -m bench.error_analysis " + " ".join(argv or sys.argv[1:]),
                  time.monotonic() - started)
    Path(args.out).write_text(text, encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
