"""Site evidence for the page type: what a crawl learns about a whole site.

A crawl sees a site, not single pages. A news site's articles share a few URL shapes
(``/2024/05/10/slug.html``, ``/news/world-asia-48395241``), its feeds and news sitemaps list them, and
its list pages link them as entries; its list pages have shapes of their own (``/news/``,
``/politics``). :class:`SiteTypes` keeps, per site and URL shape (:func:`url_shapes`), votes for
article, list and other, and types a page by its shape once the votes agree (:meth:`SiteTypes.hint`):
the page-level model (:mod:`extraction.pagetype.models`) is then overridden, with
``page_type_source`` "site" in the record.

Votes (:meth:`SiteTypes.observe`):

- the page-level model's own decision on a page, when its probability is at least
  ``VOTE_CONFIDENCE``: one vote for that type. Always the page-level decision, never the site's
  override, so the evidence never feeds on itself;
- a page found in a feed or in a news sitemap: ``LISTED_WEIGHT`` article votes;
- each entry of a page typed list (the list extractor's headline links): ``ENTRY_WEIGHT`` article
  votes for the entry URL's shape (entries can be other lists, so they count for less).

A shape is sure when its votes have at least ``MIN_VOTES`` and one type's smoothed share
``(votes + 0.5) / (total + 1.5)`` reaches ``SURE_SHARE``: nine agreeing votes, or 19 of 20. The
fine shape (path words kept) is asked first; when it has too few votes, the coarse one (every word a
``W``). A fine shape with enough votes that disagree is not sure, and the coarse one is not asked:
the page-level model decides.

Scrapy-free: the crawl's glue (``crawler/sitetypes.py``) feeds it and stores the votes in the
template library's store (``templates_db``), beside the site's templates.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from urllib.parse import parse_qsl, unquote, urlsplit

TYPES: tuple[str, ...] = ("article", "list", "other")
VOTE_CONFIDENCE = 0.8  # the page-level model's probability from which its decision is a vote
LISTED_WEIGHT = 1.0  # article votes of a page found in a feed or a news sitemap
ENTRY_WEIGHT = 0.25  # article votes per entry of a list page
MIN_VOTES = 5.0
SURE_SHARE = 0.9
MAX_SHAPES = 2_000  # shapes kept per site (the most voted); a site of random paths does not grow without end

_SLUG_RE = re.compile(r"^(?=.*[^\W\d_])[\w%]+(?:[-_][\w%]+){2,}$")
_WORD_RE = re.compile(r"^[^\W\d_]{1,24}$")
_PAGE_EXTENSIONS = frozenset({"html", "htm", "shtml", "php", "asp", "aspx", "jsp", "cms"})


def _segment(segment: str, coarse: bool) -> str:
    if segment.isdigit():
        return f"D{len(segment)}" if len(segment) <= 4 else "D+"
    if _SLUG_RE.match(segment):
        return "S"
    if _WORD_RE.match(segment):
        return "W" if coarse else segment.lower()
    if any(c.isdigit() for c in segment):
        return "M"
    return "W" if coarse else "X"


def url_shapes(url: str) -> tuple[str, str] | None:
    """Return the fine and the coarse shape of ``url``'s path and query keys, or None for an unparsable URL.

    Per path segment: digits become ``D<length>`` (``D+`` from 5), a slug of three or more words ``S``,
    a word itself (fine) or ``W`` (coarse), anything else with digits ``M``; a page extension is kept,
    a trailing slash marked, and the query's keys (not values) sorted: ``/2024/05/harbor-vote.html`` is
    ``D4/D2/S.html``, ``/news/world-asia-48395241`` is ``news/S`` (coarse ``W/S``),
    ``/article?id=12`` is ``article?id``.
    """
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return None
    path = unquote(parts.path)
    segments = [segment for segment in path.split("/") if segment]
    extension = ""
    if segments and "." in segments[-1]:
        stem, _, ext = segments[-1].rpartition(".")
        if ext.lower() in _PAGE_EXTENSIONS and stem:
            segments[-1], extension = stem, "." + ext.lower()
    slash = "/" if segments and path.endswith("/") else ""
    keys = sorted({key for key, _ in parse_qsl(parts.query, keep_blank_values=True)})
    query = "?" + "&".join(keys) if keys else ""
    shapes = tuple("/".join(_segment(segment, coarse) for segment in segments) + extension + slash + query
                   for coarse in (False, True))
    return shapes[0], shapes[1]


@dataclass(frozen=True)
class SiteHint:
    """The site's type for a page: the type, its smoothed share of the votes, the votes and the shape."""

    page_type: str
    share: float
    votes: float
    shape: str


def _sure(votes: list[float]) -> tuple[str, float] | None:
    total = sum(votes)
    if total < MIN_VOTES:
        return None
    best = max(range(len(TYPES)), key=lambda k: votes[k])
    share = (votes[best] + 0.5) / (total + 1.5)
    return (TYPES[best], share) if share >= SURE_SHARE else None


class SiteTypes:
    """Votes per site and URL shape (see the module docstring); ``load`` fills a site's from a store."""

    def __init__(self) -> None:
        self.votes: dict[str, dict[str, list[float]]] = {}
        self.pending: dict[str, dict[str, list[float]]] = {}  # added since the last ``take_pending``

    def load(self, site: str, stored: Mapping[str, Iterable[float]]) -> None:
        """Add a site's stored votes (shape -> votes per ``TYPES``) under the ones in memory."""
        table = self.votes.setdefault(site, {})
        for shape, votes in stored.items():
            row = table.setdefault(shape, [0.0] * len(TYPES))
            for k, value in enumerate(votes):
                row[k] += float(value)

    def loaded(self, site: str) -> bool:
        """Whether the site has votes in memory (``load`` was called, or it voted)."""
        return site in self.votes

    def _add(self, site: str, shape: str, kind: str, weight: float) -> None:
        k = TYPES.index(kind)
        for table in (self.votes, self.pending):
            row = table.setdefault(site, {}).setdefault(shape, [0.0] * len(TYPES))
            row[k] += weight
        site_votes = self.votes[site]
        if len(site_votes) > MAX_SHAPES:  # drop the least voted shape
            del site_votes[min(site_votes, key=lambda s: sum(site_votes[s]))]

    def vote(self, site: str, url: str, kind: str, weight: float = 1.0) -> None:
        """Add ``weight`` votes for ``kind`` to both shapes of ``url``."""
        shapes = url_shapes(url)
        if shapes is None or kind not in TYPES or weight <= 0:
            return
        fine, coarse = shapes
        self._add(site, "f:" + fine, kind, weight)
        self._add(site, "c:" + coarse, kind, weight)

    def observe(self, site: str, url: str, page_type: str | None, confidence: float | None, listed: bool = False,
                entries: Iterable[str] = ()) -> int:
        """Add the votes of one processed page (see the module docstring); return how many were cast."""
        cast = 0
        if page_type is not None and confidence is not None and confidence >= VOTE_CONFIDENCE:
            self.vote(site, url, page_type)
            cast += 1
            if page_type == "list":
                for entry in entries:
                    self.vote(site, entry, "article", ENTRY_WEIGHT)
                    cast += 1
        if listed:
            self.vote(site, url, "article", LISTED_WEIGHT)
            cast += 1
        return cast

    def hint(self, site: str, url: str) -> SiteHint | None:
        """Return the site's type for ``url`` when its shape's votes are sure, else None."""
        table = self.votes.get(site)
        shapes = url_shapes(url) if table else None
        if not table or shapes is None:
            return None
        for prefix, shape in zip(("f:", "c:"), shapes, strict=True):
            votes = table.get(prefix + shape)
            if votes is None or sum(votes) < MIN_VOTES:
                continue
            sure = _sure(votes)
            if sure is None:
                return None  # enough votes, no agreement: the page-level model decides
            return SiteHint(sure[0], round(sure[1], 4), round(sum(votes), 2), prefix + shape)
        return None

    def take_pending(self) -> dict[str, dict[str, list[float]]]:
        """Return the votes added since the last call (site -> shape -> votes) and forget them."""
        pending, self.pending = self.pending, {}
        return pending
