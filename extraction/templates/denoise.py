"""Template cleaning (paper 004): remove a page's leaves that match its site's templates, under a guard.

The guard's three rules and where their thresholds come from are in the package docstring
(:mod:`extraction.templates`, "Guard").
"""

from __future__ import annotations

from dataclasses import dataclass, field

from lxml import html
from rapidfuzz import fuzz

from extraction.dom.preprocess import remove_keep_tail
from extraction.templates.learn import Template, TemplateSet
from extraction.templates.leaves import WORD_RE, Leaf, leaf_tags

# Ours, guard rule 2: long leaves need a site-wide template to be removed.
GUARD_MIN_CHARS = 80
GUARD_MIN_SHARE = 0.5
# Ours, guard rule 3: the page's headline (a leaf this long, found in <title> at this score).
TITLE_GUARD_MIN_CHARS = 20
TITLE_GUARD_SCORE = 90.0


def in_running_text(element: html.HtmlElement) -> bool:
    """Return True when the element's parent has text of its own (a letter or digit) around it."""
    parent = element.getparent()
    if parent is None:
        return False
    if parent.text and WORD_RE.search(parent.text):
        return True
    return any(child.tail and WORD_RE.search(child.tail) for child in parent)


@dataclass(frozen=True)
class GuardRule:
    """What template cleaning never removes (module docstring, "Guard")."""

    min_chars: int = GUARD_MIN_CHARS
    min_share: float = GUARD_MIN_SHARE
    title_min_chars: int = TITLE_GUARD_MIN_CHARS
    title_score: float = TITLE_GUARD_SCORE

    def keeps(self, leaf: Leaf, template: Template, title: str | None = None) -> str | None:
        """Return why the guard keeps this matched leaf, else None.

        Reasons: "running_text", "long_unique", "page_title" (``title``: the page's <title>).
        """
        if in_running_text(leaf.element):
            return "running_text"
        if len(leaf.text) >= self.min_chars and template.share < self.min_share:
            return "long_unique"
        if (title and len(leaf.text) >= self.title_min_chars
                and fuzz.partial_ratio(leaf.text, title, score_cutoff=self.title_score)):
            return "page_title"
        return None


@dataclass(frozen=True)
class Decision:
    """A leaf matched by a template and the guard's verdict (``reason`` None: removed)."""

    leaf: Leaf
    template: Template
    reason: str | None


@dataclass
class DenoiseResult:
    """What template cleaning did to one page."""

    removed_nodes: int = 0
    removed_chars: int = 0
    kept: dict[str, int] = field(default_factory=dict)  # guard reason -> matched leaves kept
    matched: set[int] = field(default_factory=set)  # ids of the templates found on the page
    decisions: list[Decision] = field(default_factory=list)  # every matched leaf, in document order

    def as_dict(self) -> dict[str, int]:
        """Return the JSON-friendly summary recorded in the item."""
        return {"removed_nodes": self.removed_nodes, "removed_chars": self.removed_chars,
                "kept_by_guard": sum(self.kept.values()), "templates_matched": len(self.matched)}


def denoise(root: html.HtmlElement, templates: TemplateSet, guard: GuardRule | None = None,
            leaves: list[Leaf] | None = None) -> DenoiseResult:
    """Remove from ``root`` (in place) every leaf tag matching a template, unless the guard keeps it.

    ``leaves``: ``leaf_tags(root)`` when the caller already has them (the crawl's middleware).
    """
    guard = guard or GuardRule()
    result = DenoiseResult()
    if not templates:
        return result
    titles = root.xpath("//title")
    title = " ".join(titles[0].text_content().split()) if titles else None
    doomed: list[Leaf] = []
    for leaf, template in templates.matches(leaf_tags(root) if leaves is None else leaves):
        result.matched.add(template.id)
        reason = guard.keeps(leaf, template, title)
        result.decisions.append(Decision(leaf, template, reason))
        if reason is not None:
            result.kept[reason] = result.kept.get(reason, 0) + 1
        else:
            doomed.append(leaf)
    gone: set[html.HtmlElement] = set()
    for leaf in doomed:  # removed after matching so running-text checks see the original page
        element = leaf.element
        if gone and any(ancestor in gone for ancestor in element.iterancestors()):
            continue  # inside a sentence removed as a whole
        gone.add(element)
        if element.tail and not element.tail[0].isspace():
            element.tail = " " + element.tail  # "a<span>x</span>b" must not become "ab"
        remove_keep_tail(element)
        result.removed_nodes += 1
        result.removed_chars += len(leaf.text)
    return result
