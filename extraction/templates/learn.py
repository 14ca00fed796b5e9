"""Template learning (paper 004): the batch cache S, the learned templates, and layout drift.

Batches of ``BATCH_PAGES`` pages promote the cached leaves seen on ``MIN_FREQUENCY`` pages or
more; the package docstring (:mod:`extraction.templates`) says why frequency counts pages.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import cached_property

from extraction.templates.leaves import Leaf, TagIndex

# Paper 004, section 3: batch size N1 and promotion threshold N2 ("N1 = 10, N2 = 3 separate
# common noise well": content and personalised noise never exceed frequency 3 in a batch).
BATCH_PAGES = 10
MIN_FREQUENCY = 3
# Ours, layout drift (DriftMonitor): the recent match rate is the mean, over the last
# DRIFT_WINDOW pages (one batch), of the share of the site's core templates found on a page; drift
# is declared when it falls below DRIFT_RATIO x the rate the templates' own batches promise (sites
# with at least DRIFT_MIN_TEMPLATES templates). Measured on msv-big5: docs/evaluation/duplicates-and-templates.md.
DRIFT_WINDOW = 10
DRIFT_RATIO = 0.5
DRIFT_MIN_TEMPLATES = 5
# Core templates: those on at least this share of their batch's pages (the layout's chrome: nav,
# footer). Rarer templates (headlines repeated across list pages, rotating "most read" links) come
# and go with the page type and the news of the day, so a run of list pages after a batch of
# articles is no layout change. All templates count when fewer than DRIFT_MIN_TEMPLATES are core.
DRIFT_CORE_SHARE = 0.8


@dataclass
class BatchCache:
    """The cache S of paper 004 for one site: leaf tags of the current batch with page counts."""

    pages: int = 0
    index: TagIndex = field(default_factory=TagIndex)
    frequency: list[int] = field(default_factory=list)

    def add_page(self, leaves: Iterable[tuple[str, str]]) -> None:
        """Count one page's (tag, text) leaves: each cached tag at most once per page."""
        seen: set[int] = set()
        for tag, text in leaves:
            entry = self.index.find(tag, text)
            if entry is None:
                entry = self.index.add(tag, text)
                self.frequency.append(0)
            if entry not in seen:
                seen.add(entry)
                self.frequency[entry] += 1
        self.pages += 1

    def add_counts(self, pages: int, tags: Iterable[tuple[str, str, int]]) -> None:
        """Merge counts of another cache (a batch parked by an earlier crawl)."""
        for tag, text, count in tags:
            entry = self.index.find(tag, text)
            if entry is None:
                entry = self.index.add(tag, text)
                self.frequency.append(0)
            self.frequency[entry] = min(self.frequency[entry] + count, self.pages + pages)
        self.pages += pages

    def candidates(self, min_frequency: int = MIN_FREQUENCY) -> list[tuple[str, str, int]]:
        """Return (tag, text, frequency) of the cached tags with frequency >= ``min_frequency``."""
        return [(self.index.tags[i], self.index.texts[i], f)
                for i, f in enumerate(self.frequency) if f >= min_frequency]

    def counts(self) -> list[tuple[str, str, int]]:
        """Return every cached (tag, text, frequency), in insertion order."""
        return [(self.index.tags[i], self.index.texts[i], f) for i, f in enumerate(self.frequency)]

    def clear(self) -> None:
        """Empty the cache and start a new batch."""
        self.pages = 0
        self.index = TagIndex()
        self.frequency = []


@dataclass(frozen=True)
class Template:
    """A learned template: store id, tag, text and how widely it was seen (its best batch share)."""

    id: int
    tag: str
    text: str
    share: float = 1.0


class TemplateSet:
    """A site's templates, indexed for matching."""

    def __init__(self, templates: Sequence[Template] = ()) -> None:
        self.templates = list(templates)
        self._index = TagIndex()
        self._entry_to_template: list[int] = []
        for position, template in enumerate(self.templates):
            entry = self._index.add(template.tag, template.text)
            if entry == len(self._entry_to_template):
                self._entry_to_template.append(position)

    def __len__(self) -> int:
        return len(self.templates)

    @cached_property
    def core(self) -> list[Template]:
        """Return the templates the drift monitor watches (see ``DRIFT_CORE_SHARE``)."""
        core = [t for t in self.templates if t.share >= DRIFT_CORE_SHARE]
        return core if len(core) >= DRIFT_MIN_TEMPLATES else self.templates

    @cached_property
    def _core_ids(self) -> frozenset[int]:
        return frozenset(t.id for t in self.core)

    @property
    def expected_rate(self) -> float:
        """Return the share of the core templates a page of their layout is expected to hold."""
        return sum(t.share for t in self.core) / len(self.core) if self.core else 0.0

    def match_rate(self, matched: Collection[int]) -> float:
        """Return the share of the core templates among ``matched`` (template ids found on a page)."""
        return len(self._core_ids.intersection(matched)) / len(self.core) if self.core else 0.0

    def match(self, tag: str, text: str) -> Template | None:
        """Return the template matching a leaf (same tag, close text), else None."""
        entry = self._index.find(tag, text)
        return None if entry is None else self.templates[self._entry_to_template[entry]]

    def matches(self, leaves: Iterable[Leaf]) -> Iterator[tuple[Leaf, Template]]:
        """Yield (leaf, template) for each leaf that matches a template."""
        if not self.templates:
            return
        for leaf in leaves:
            template = self.match(leaf.tag, leaf.text)
            if template is not None:
                yield leaf, template


class DriftMonitor:
    """Layout drift of one site: its recent match rate against the rate its templates promise.

    A page's match rate is the share of the site's templates found on it. Templates were
    promoted from batches in which each was on ``share`` of the pages, so a page of the same
    layout finds on average ``mean(share)`` of them: that is the baseline, known from the
    moment templates exist (no warm-up pages needed). Drift is declared when the mean rate of
    the last ``window`` pages falls below ``ratio`` x the baseline.
    """

    def __init__(self, window: int = DRIFT_WINDOW, ratio: float = DRIFT_RATIO,
                 min_templates: int = DRIFT_MIN_TEMPLATES) -> None:
        self.window = window
        self.ratio = ratio
        self.min_templates = min_templates
        self.recent: deque[float] = deque(maxlen=window)

    def observe(self, matched: Collection[int], templates: TemplateSet) -> bool:
        """Record one page (ids of the templates found on it); return True when drift is detected."""
        if len(templates) < self.min_templates:
            return False
        self.recent.append(templates.match_rate(matched))
        return len(self.recent) == self.window and self.recent_rate < self.ratio * templates.expected_rate

    @property
    def recent_rate(self) -> float:
        """Return the mean match rate over the recent window (0.0 before any page)."""
        return sum(self.recent) / len(self.recent) if self.recent else 0.0

    def reset(self) -> None:
        """Forget the window (a new generation starts)."""
        self.recent.clear()
