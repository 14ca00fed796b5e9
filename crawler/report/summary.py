"""What a crawl report says of a crawl's records: counts per site, page types, errors, changes, languages, text,
templates, timings, and a sample of pages to show; made one record at a time, in bounded memory.

The crawl's :class:`~crawler.extensions.CrawlReportExtension` adds each record as it is exported, ``scrapy report``
each line of the JSONL feeds; both then render the same :class:`CrawlSummary` (:mod:`crawler.report.html`).
Nothing grows with the records but the counters per site and value: fetch and render times and text lengths go
into histograms of :data:`BINS_PER_DECADE` bins a decade (:class:`LogHistogram`), fetch times into 10-second
buckets, and the sample keeps at most :data:`SAMPLE_PER_TYPE` records of each page type (reservoir sampling,
seeded: the same crawl gives the same sample), preferring records with a screenshot.
"""

from __future__ import annotations

import math
import random
from collections import Counter, defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

SAMPLE_PER_TYPE = 4  # pages of each type shown with their screenshot and first lines
SAMPLE_TEXT_CHARS = 400  # of a sampled page's text
EMPTY_TEXT_CHARS = 1  # a page with fewer characters of text (after stripping) counts as empty
SEED = 20261125
BINS_PER_DECADE = 10  # of the histograms: a median is known to within 12% (one bin)
DECADES = 8  # values from 1 to 10^8 (ms, characters); smaller ones count in the first bin, larger in the last
TIME_BUCKET_SECONDS = 10  # pages over time


class LogHistogram:
    """Counts of non-negative values in logarithmic bins (:data:`BINS_PER_DECADE` a decade from 1)."""

    def __init__(self) -> None:
        self.counts = [0] * (BINS_PER_DECADE * DECADES + 1)

    def add(self, value: float) -> None:
        """Count ``value``."""
        index = 0 if value < 1 else min(int(BINS_PER_DECADE * math.log10(value)), len(self.counts) - 1)
        self.counts[index] += 1

    @property
    def total(self) -> int:
        """Values counted."""
        return sum(self.counts)

    def edges(self) -> list[float]:
        """Return the bins' edges (one more than the bins)."""
        return [10 ** (k / BINS_PER_DECADE) for k in range(len(self.counts) + 1)]

    def median(self) -> float | None:
        """Return the median to within a bin (the geometric middle of its bin), or None when empty."""
        half, seen = self.total / 2, 0
        for index, count in enumerate(self.counts):
            seen += count
            if count and seen >= half:
                return float(10 ** ((index + 0.5) / BINS_PER_DECADE))
        return None


@dataclass
class SiteSummary:
    """The counts of one site."""

    records: int = 0
    types: Counter[str] = field(default_factory=Counter)
    errors: Counter[str] = field(default_factory=Counter)
    changes: Counter[str] = field(default_factory=Counter)  # new, changed, duplicate
    languages: Counter[str] = field(default_factory=Counter)
    empty: int = 0  # extracted pages (no error) without text
    cleaned: int = 0  # pages whose site templates removed something
    rendered: int = 0

    @property
    def extracted(self) -> int:
        """Records without an error."""
        return self.records - sum(self.errors.values())


@dataclass
class Sampled:
    """A record chosen for the report's sample."""

    url: str
    site: str
    page_type: str
    confidence: float | None
    title: str
    text: str  # the first SAMPLE_TEXT_CHARS characters
    warc_file: str | None
    warc_offset: int | None
    screenshot_file: str | None
    rendered: bool

    @property
    def has_screenshot(self) -> bool:
        """Whether a screenshot can be looked for (a rendered page with an archive)."""
        return self.rendered and bool(self.screenshot_file or self.warc_file)


class CrawlSummary:
    """Adds up a crawl's records (see the module docstring)."""

    def __init__(self) -> None:
        self.sites: dict[str, SiteSummary] = defaultdict(SiteSummary)
        self.fetch_ms = LogHistogram()
        self.render_ms = LogHistogram()
        self.text_chars = LogHistogram()
        self.fetched_at: Counter[int] = Counter()  # pages per TIME_BUCKET_SECONDS bucket of POSIX time
        self._rng = random.Random(SEED)
        self._seen: Counter[str] = Counter()  # records of each type offered to the sample
        self.sample: dict[str, list[Sampled]] = defaultdict(list)

    @property
    def records(self) -> int:
        """Records added."""
        return sum(site.records for site in self.sites.values())

    def total(self, attribute: str) -> Counter[str]:
        """Return one of the sites' counters summed over the sites (``types``, ``errors``, ...)."""
        total: Counter[str] = Counter()
        for site in self.sites.values():
            total.update(getattr(site, attribute))
        return total

    def add(self, record: Mapping[str, Any]) -> None:
        """Count one record (a JSONL line's fields, or a :class:`~extraction.record.Record`'s ``as_dict``)."""
        site = self.sites[str(record.get("site") or "(no site)")]
        site.records += 1
        error = record.get("error")
        if record.get("rendered"):
            site.rendered += 1
        for name, histogram in (("fetch_ms", self.fetch_ms), ("render_ms", self.render_ms)):
            value = _number(record.get(name))
            if value is not None:
                histogram.add(value)
        moment = _timestamp(record.get("fetched_at"))
        if moment is not None:
            self.fetched_at[int(moment // TIME_BUCKET_SECONDS)] += 1
        if error:
            site.errors[str(error)] += 1
            return
        page_type = str(record.get("page_type") or "untyped")
        site.types[page_type] += 1
        if record.get("duplicate_of"):
            site.changes["duplicate"] += 1
        if record.get("change"):
            site.changes[str(record["change"])] += 1
        text = str(record.get("text") or "")
        chars = len(text.strip())
        self.text_chars.add(chars)
        if chars < EMPTY_TEXT_CHARS:
            site.empty += 1
        else:
            site.languages[str(record.get("lang") or "unknown")] += 1
        cleaning = record.get("template_cleaning")
        if isinstance(cleaning, dict) and cleaning.get("removed_nodes"):
            site.cleaned += 1
        self._offer(record, page_type, text)

    def _offer(self, record: Mapping[str, Any], page_type: str, text: str) -> None:
        """Reservoir-sample the record among its type's (a page with a screenshot replaces one without)."""
        chosen = Sampled(url=str(record.get("url") or ""), site=str(record.get("site") or ""), page_type=page_type,
                         confidence=_number(record.get("page_type_confidence")),
                         title=str(record.get("title") or ""), text=text[:SAMPLE_TEXT_CHARS],
                         # Paths and offsets of other types are another tool's or damage: an integer "warc_file"
                         # was opened as a file descriptor (the process's own stdout, then closed).
                         warc_file=_of_type(record.get("warc_file"), str),
                         warc_offset=_of_type(record.get("warc_offset"), int),
                         screenshot_file=_of_type(record.get("screenshot_file"), str),
                         rendered=bool(record.get("rendered")))
        sample = self.sample[page_type]
        if len(sample) < SAMPLE_PER_TYPE:
            sample.append(chosen)
            return
        without = [index for index, item in enumerate(sample) if not item.has_screenshot]
        if chosen.has_screenshot and without:
            sample[without[0]] = chosen
            return
        self._seen[page_type] += 1
        slot = self._rng.randrange(SAMPLE_PER_TYPE + self._seen[page_type])
        if slot < SAMPLE_PER_TYPE and (chosen.has_screenshot or not sample[slot].has_screenshot):
            sample[slot] = chosen


def _of_type(value: Any, kind: type) -> Any:
    """Return ``value`` when it is of ``kind`` (not a bool for int; no NUL in a path), else None."""
    if not isinstance(value, kind) or isinstance(value, bool) or (isinstance(value, str) and "\x00" in value):
        return None
    return value


def finite_number(value: Any) -> bool:
    """Return True for an int or float (not a bool) that is finite, also as a float (JSON's ints have no bound)."""
    if not isinstance(value, int | float) or isinstance(value, bool):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:  # an int past float's range
        return False


def _number(value: Any) -> float | None:
    return float(value) if finite_number(value) else None


def _timestamp(value: Any) -> float | None:
    if not value:
        return None
    try:
        return datetime.fromisoformat(str(value)).timestamp()
    except ValueError:
        return None
