"""What template cleaning does to one msv-big5 page, for ``bench.templates_msv``: token shares and their causes.

Big9 pages are loaded once (``load_pages``) with their leaves and token bags; ``Shares`` counts
gold and non-gold tokens before and after cleaning; ``loo_templates`` learns the leave-one-out
templates of a page; ``residual_noise`` says why non-gold text stayed and ``attribute_loss`` which
removed leaves cost gold text.
"""

from __future__ import annotations

import copy
import re
import sys
import tempfile
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from lxml import etree, html

from evaluation.datasets import iter_pages
from evaluation.datasets.msv_big5 import BIG5_SUBSETS
from evaluation.metrics import PageCounts, corpus_prf, word_tokens
from extraction import templates as algo
from extraction.dom.encoding import decode_html
from extraction.dom.html import parse_html
from extraction.dom.text import INVISIBLE_TAGS, document_body, is_hidden, visible_text
from extraction.templates import BatchCache, Decision, GuardRule, Leaf, Template, TemplateSet, leaf_tags
from templates_db.library import TemplateLibrary, TemplatesConfig
from templates_db.store import open_store

DATASET = "msv-big5"
# CJK scripts: \w+ makes whole clauses of them, so their tokens are single characters here.
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af"
_CJK_RE = re.compile(f"[{_CJK}]")
_CJK_SPLIT_RE = re.compile(f"[{_CJK}]|[^{_CJK}]+")


def tokens(text: str | None) -> list[str]:
    """Return the ``\\w+`` tokens of ``text``, CJK runs split into single characters."""
    out: list[str] = []
    for token in word_tokens(text):
        out.extend(_CJK_SPLIT_RE.findall(token) if _CJK_RE.search(token) else (token,))
    return out


@dataclass
class LoadedPage:
    """A Big9 page parsed once: the pristine tree (copied before any change), leaves, token bags."""

    page_id: str
    site: str
    year: int
    root: html.HtmlElement
    pairs: list[tuple[str, str]]
    gold: Counter[str]
    gold_tokens: str  # gold tokens joined by spaces, with spaces around (contiguity checks)
    gold_text: str
    visible: Counter[str]


def load_pages(limit_sites: int | None, root: Path | None) -> list[LoadedPage]:
    """Return the Big9 pages of msv-big5 in reader order (subset, then sorted file name)."""
    raw = [p for p in iter_pages(DATASET, root, subsets=list(BIG5_SUBSETS)) if p.site and p.gold_text]
    sites = sorted({p.site for p in raw if p.site})
    keep = set(sites[:limit_sites] if limit_sites else sites)
    pages: list[LoadedPage] = []
    for page in raw:
        if page.site not in keep:
            continue
        tree = parse_html(decode_html(page.html_bytes()).text)
        gold = tokens(page.gold_text)
        pages.append(LoadedPage(page.page_id, str(page.site), int(page.extra["year"]), tree,
                                [(leaf.tag, leaf.text) for leaf in leaf_tags(tree)], Counter(gold),
                                f" {' '.join(gold)} ", page.gold_text or "", Counter(tokens(visible_text(tree)))))
    return pages


@dataclass
class Shares:
    """Token counts (micro sums over pages) of gold and non-gold text before and after cleaning."""

    pages: int = 0
    gold_before: int = 0
    gold_after: int = 0
    nongold_before: int = 0
    nongold_after: int = 0

    def add_page(self, page: LoadedPage, after: Counter[str]) -> None:
        """Count one page: ``after`` is the token bag of its visible text after cleaning."""
        gold_before = sum((page.visible & page.gold).values())
        gold_after = sum((after & page.gold).values())
        self.pages += 1
        self.gold_before += gold_before
        self.gold_after += gold_after
        self.nongold_before += sum(page.visible.values()) - gold_before
        self.nongold_after += sum(after.values()) - gold_after

    def merge(self, other: Shares) -> None:
        """Add another aggregate's counts to this one."""
        for name in ("pages", "gold_before", "gold_after", "nongold_before", "nongold_after"):
            setattr(self, name, getattr(self, name) + getattr(other, name))

    @property
    def gold_removed(self) -> float:
        """Return the share of gold tokens present before that cleaning removed."""
        return 1 - self.gold_after / self.gold_before if self.gold_before else 0.0

    @property
    def nongold_removed(self) -> float:
        """Return the share of non-gold tokens present before that cleaning removed."""
        return 1 - self.nongold_after / self.nongold_before if self.nongold_before else 0.0

    def as_dict(self) -> dict[str, Any]:
        """Return the counts and both shares."""
        return {**asdict(self), "gold_removed": self.gold_removed, "nongold_removed": self.nongold_removed}


class NoGuard(GuardRule):
    """A guard that keeps nothing (diagnostic: what the guard saves)."""

    def keeps(self, leaf: Leaf, template: Template, title: str | None = None) -> str | None:
        """Return None: every matched leaf goes."""
        return None


def loo_templates(group: list[LoadedPage], index: int) -> tuple[TemplateSet, BatchCache]:
    """Return the templates one batch of the other pages of ``group`` promotes (share = frequency/pages)
    and that batch's cache."""
    cache = BatchCache()
    for other, page in enumerate(group):
        if other != index:
            cache.add_page(page.pairs)
    templates = TemplateSet([Template(number, tag, text, frequency / cache.pages) for number, (tag, text, frequency)
                             in enumerate(cache.candidates(algo.MIN_FREQUENCY))])
    return templates, cache


def library_templates(group: list[LoadedPage], index: int) -> set[tuple[str, str, float]]:
    """Return (tag, text, share) of what a real TemplateLibrary stores for the same 9 pages (finish())."""
    with tempfile.TemporaryDirectory(prefix="templates-msv-") as folder:
        library = TemplateLibrary(open_store(Path(folder)), TemplatesConfig(store=folder))
        for other, page in enumerate(group):
            if other != index:
                library.observe("site", copy.deepcopy(page.root))
        library.finish("site")
        found = {(t.tag, t.text, round(t.share, 9)) for t in library.templates("site").templates}
        library.close()
    return found


def in_gold(page: LoadedPage, text: str) -> bool:
    """Return True when the leaf's tokens occur contiguously in the gold text."""
    leaf = tokens(text)
    return bool(leaf) and f" {' '.join(leaf)} " in page.gold_tokens


RESIDUAL_CATEGORIES = ("outside_leaves", "unique_to_page", "on_1_2_other_pages", "kept_by_guard", "long_leaf",
                       "other")


def residual_noise(root: html.HtmlElement, page: LoadedPage, cache: BatchCache,
                   kept: set[html.HtmlElement]) -> Counter[tuple[str, str]]:
    """Return, by (category, normalised text), the tokens of a cleaned page's non-gold visible text pieces.

    A piece is a unit's text (a leaf or a sentence, as ``leaf_tags`` finds them, long ones included)
    or a text/tail outside any unit ("outside_leaves"); it counts as gold when its tokens occur
    contiguously in the gold text. Units are classed by why no template removed them: longer than
    MAX_TEMPLATE_CHARS ("long_leaf"), kept by the guard, else on how many of the other pages of the
    batch a close unit is.
    """
    out: Counter[tuple[str, str]] = Counter()
    # Units of the cleaned page, long ones too; holding the elements keeps their proxies (the keys) alive.
    units = {leaf.element: leaf.text for leaf in leaf_tags(root, max_chars=sys.maxsize, limit=sys.maxsize)}

    def add(category: str, text: str) -> None:
        found = tokens(text)
        if found and f" {' '.join(found)} " not in page.gold_tokens:
            out[(category, algo.normalise_text(text))] += len(found)

    def unit_category(element: html.HtmlElement, text: str) -> str:
        if len(text) > algo.MAX_TEMPLATE_CHARS:
            return "long_leaf"
        if element in kept:
            return "kept_by_guard"
        entry = cache.index.find(element.tag, text)
        frequency = 0 if entry is None else cache.frequency[entry]
        if frequency == 0:
            return "unique_to_page"
        return "on_1_2_other_pages" if frequency < algo.MIN_FREQUENCY else "other"

    top = document_body(root)
    skip = inside_unit = 0
    for event, element in etree.iterwalk(top, events=("start", "end")):
        if not isinstance(element.tag, str):
            continue
        if event == "start":
            if skip or inside_unit:
                skip, inside_unit = skip + bool(skip), inside_unit + bool(inside_unit)
                continue
            if element.tag in INVISIBLE_TAGS or is_hidden(element):
                skip = 1
                continue
            text = units.get(element)
            if text is not None:  # the outermost unit: a sentence takes its inline leaves along
                add(unit_category(element, text), text)
                inside_unit = 1
                continue
            if element.text:
                add("outside_leaves", element.text)
            continue
        if skip:
            skip -= 1
            if skip:
                continue
        elif inside_unit:
            inside_unit -= 1
            if inside_unit:
                continue
        if element is not top and element.tail:
            add("outside_leaves", element.tail)
    return out


@dataclass
class Offender:
    """A leaf text whose removal cost gold tokens, summed over the pages where it was removed."""

    site: str
    tag: str
    text: str
    template: str
    share: float
    pages: int = 0
    gold_tokens_lost: int = 0
    in_gold_pages: int = 0
    examples: list[str] = field(default_factory=list)


def attribute_loss(page: LoadedPage, before: Counter[str], after: Counter[str], removed: list[Decision],
                   offenders: dict[tuple[str, str, str], Offender]) -> None:
    """Charge the gold tokens lost on the page to the removed leaves, in document order."""
    lost = (before & page.gold) - (after & page.gold)
    for decision in removed:
        if not lost:
            return
        take = Counter(tokens(decision.leaf.text)) & lost
        if not take:
            continue
        lost -= take
        key = (page.site, decision.leaf.tag, decision.leaf.text)
        offender = offenders.get(key)
        if offender is None:
            offender = offenders[key] = Offender(page.site, decision.leaf.tag, decision.leaf.text,
                                                 decision.template.text, decision.template.share)
        offender.pages += 1
        offender.gold_tokens_lost += sum(take.values())
        if in_gold(page, decision.leaf.text):
            offender.in_gold_pages += 1
        if len(offender.examples) < 3:
            offender.examples.append(page.page_id)


def f1_dict(records: Iterable[PageCounts]) -> dict[str, float]:
    """Return corpus precision, recall, F1 and pages of per-page shingle counts."""
    prf = corpus_prf(records)
    return {"precision": prf.precision, "recall": prf.recall, "f1": prf.f1, "pages": prf.pages}


def group_pages(pages: list[LoadedPage]) -> dict[tuple[str, int], list[LoadedPage]]:
    """Return the pages by (site, year), in reader order."""
    groups: dict[tuple[str, int], list[LoadedPage]] = defaultdict(list)
    for page in pages:
        groups[(page.site, page.year)].append(page)
    return dict(sorted(groups.items()))
