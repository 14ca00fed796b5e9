"""The article gate: is this record an article's text? The decision a news corpus keeps its records by.

The page type (:mod:`extraction.pagetype.models`) decides from the page alone, before anything is extracted,
and fails on pages unlike its training sites: link-heavy portals of 2008, Chinese portals, web-archive copies.
The gate decides last, from what the record knows once the flow has run and no page-level model sees:

* **text**: the extracted text's shape: its length (Latin-equivalent characters, CJK counted as
  ``CJK_CHAR_WEIGHT``), paragraphs and their length, the share in long paragraphs and in paragraphs that end
  like a sentence, short lines, digits, repeated lines;
* **blocks**: what the block classifier kept: blocks, the share of kept text inside links (``block_stats``);
* **metadata**: a headline found (and where: JSON-LD, microdata, ``<h1>``; or only the ``<title>``), a publish
  date (declared, in a byline, in the URL, or htmldate's guess), authors, description, section, tags, image;
* **entries**: the list entries the list extractor found (pages typed list);
* **page type**: the page-level model's probabilities (``page_type_probabilities``) and the site's evidence
  when it overrode them (``page_type_source`` "site");
* **url**: the page-type model's URL features (:func:`extraction.pagetype.features.url_features`) on the
  page's original URL: a web archive's copy (``/web/<timestamp>/<original URL>``) is read as its original;
* **archive**: whether the URL is a web archive's copy and whether the page carries an archive's toolbar
  (flag ``archive_chrome``, :func:`has_archive_chrome`).

:func:`gate_features` computes them from the record's exported fields alone (a JSON record as the crawl writes
it, or the :class:`~extraction.record.Record` itself), so that training reads the same values from a replayed
crawl's feed. The model (``models/gate/``: scikit-learn's HistGradientBoostingClassifier exported to ONNX,
trained by ``models/training/train_gate.py``) gives the probability that the record is an article's text;
the record is an article when it reaches the model's ``threshold`` (``meta.json``, chosen in the training's
site-grouped cross-validation). The flow (:mod:`extraction.process`) writes the probability as
``article_probability`` and makes the record's page type agree with the gate (``page_type_source`` "gate"
where it changed it).

No inline script or style body is read (the labelled sets have them emptied; see the datasets' READMEs), nor
the page's HTML beyond the archive toolbar's marker.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from extraction.onnx import ModelError, meta_version, read_meta, session, shared
from extraction.pagetype.features import CJK_CHAR_WEIGHT, URL_FEATURES, url_features
from extraction.paths import MODELS_DIR

GATE_DIR = MODELS_DIR / "gate"
TRAIN_COMMAND = "make train-gate"
# Bump when a feature's definition or the order of GATE_FEATURES changes (meta.json records it).
GATE_FEATURE_VERSION = 1
ARCHIVE_CHROME_FLAG = "archive_chrome"

TEXT_FEATURES: tuple[str, ...] = (
    "text_chars_log",  # log1p(Latin-equivalent characters of the text)
    "paragraphs_log",  # log1p(non-empty lines)
    "paragraph_chars_log",  # log1p(their mean Latin-equivalent characters)
    "longest_paragraph_log",
    "long_paragraph_share",  # characters in lines of >= LONG_PARAGRAPH_CHARS / characters
    "sentence_share",  # characters in lines that end like a sentence / characters
    "short_line_share",  # lines under SHORT_LINE_CHARS / lines
    "sentences_per_1000",  # sentence ends per 1000 Latin-equivalent characters
    "digit_share",  # digits / characters (list pages: times, dates, counts)
    "repeated_line_share",  # lines that occur more than once / lines ("Read more", bylines of teasers)
    "cjk_share",  # CJK characters / characters
)
BLOCK_FEATURES: tuple[str, ...] = (
    "blocks_log",  # log1p(blocks of the page)
    "blocks_kept_log",
    "kept_link_share",  # characters inside links / characters of the kept blocks
    "block_fallback",  # the block classifier kept nothing sure and fell back
    "fulltext",  # no block classifier ran (the full visible text)
)
META_FEATURES: tuple[str, ...] = (
    "title_chars_log",
    "title_headline",  # the title came from a headline: JSON-LD, microdata, an <h1> or <h2>
    "date_declared",  # a publish date declared by the page: JSON-LD, microdata, a meta tag, a <time>
    "date_byline",  # read in the lines around the headline
    "date_url",  # in the URL
    "date_guessed",  # htmldate's guess, a feed's date, or the modified date
    "authors",  # log1p(authors found)
    "description",
    "section",
    "tags_log",
    "image",
)
ENTRY_FEATURES: tuple[str, ...] = (
    "entries_log",  # log1p(list entries found; 0 when the list extractor did not run)
    "entry_title_chars_log",  # log1p(their mean title length)
)
PAGETYPE_FEATURES: tuple[str, ...] = (
    "p_article", "p_list", "p_other",  # the page-level model's probabilities
    "site_article", "site_list", "site_other",  # the site's evidence overrode the page-level model
)
ARCHIVE_FEATURES: tuple[str, ...] = (
    "archived_url",  # the URL is a web archive's copy
    "archive_chrome",  # the page carries a web archive's toolbar
)
FEATURE_GROUPS: dict[str, tuple[str, ...]] = {
    "text": TEXT_FEATURES, "blocks": BLOCK_FEATURES, "metadata": META_FEATURES, "entries": ENTRY_FEATURES,
    "pagetype": PAGETYPE_FEATURES, "url": URL_FEATURES, "archive": ARCHIVE_FEATURES,
}
GATE_FEATURES: tuple[str, ...] = tuple(name for group in FEATURE_GROUPS.values() for name in group)

# A paragraph of running text (the page-type features' LONG_PARAGRAPH_CHARS); a line under SHORT_LINE_CHARS is a
# menu item, a teaser's headline, a caption or a dateline.
LONG_PARAGRAPH_CHARS = 150
SHORT_LINE_CHARS = 40
HEADLINE_SOURCES = frozenset({"json-ld", "microdata", "h1", "h2"})
DECLARED_DATE_SOURCES = frozenset({"json-ld", "microdata", "meta", "time"})
BYLINE_DATE_SOURCES = frozenset({"byline", "text"})
GUESSED_DATE_SOURCES = frozenset({"htmldate", "listing", "modified"})

_CJK_RE = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")
_SENTENCE_END_RE = re.compile(r"[.!?\u3002\uff01\uff1f\u2026\"\u201d\u300d\u300f)\uff09]$")
_SENTENCE_RE = re.compile(r"[.!?\u3002\uff01\uff1f](?:\s|$|[\"\u201d\u300d])")
_DIGIT_RE = re.compile(r"\d")
# A web archive's copy: /web/<timestamp>[<modifier>_]/<original URL> (the Wayback Machine, and archives that
# copy its scheme).
ARCHIVED_RE = re.compile(r"^https?://[^/]+/web/\d{4,14}[a-z_]*/(?P<original>(?:https?:/?/?)?[^/?#]+\.[^/?#]+.*)$",
                         re.IGNORECASE)
# The markers of a web archive's toolbar in a page's HTML (the Wayback Machine's since 2005).
_ARCHIVE_CHROME_RE = re.compile(r"BEGIN WAYBACK TOOLBAR INSERT|id=[\"']?wm-ipp", re.IGNORECASE)
ARCHIVE_TOOLBAR_ID = "wm-ipp"  # the toolbar's element (a page given as a parsed tree)
ARCHIVE_CHROME_SCAN = 200_000  # characters of the HTML read for the marker (the toolbar opens the body)


def original_url(url: str | None) -> str | None:
    """Return the original URL of a web archive's copy (``/web/<timestamp>/<original>``), else ``url``."""
    if not url:
        return url
    match = ARCHIVED_RE.match(url.strip())
    if not match:
        return url
    original = match.group("original")
    if not re.match(r"^https?://", original, re.IGNORECASE):  # "http:/host" (one slash) or a bare host
        original = "http://" + re.sub(r"^https?:/*", "", original, flags=re.IGNORECASE)
    return original


def has_archive_chrome(html_text: str) -> bool:
    """Return True when a page's HTML carries a web archive's toolbar (in its first ``ARCHIVE_CHROME_SCAN``
    characters and, for a page longer than that, in as many at its end)."""
    if _ARCHIVE_CHROME_RE.search(html_text, 0, ARCHIVE_CHROME_SCAN):
        return True
    return len(html_text) > ARCHIVE_CHROME_SCAN and bool(
        _ARCHIVE_CHROME_RE.search(html_text, len(html_text) - ARCHIVE_CHROME_SCAN))


def _log(value: float) -> float:
    return math.log1p(max(value, 0.0))


def _share(part: float, whole: float) -> float:
    return min(part / whole, 1.0) if whole > 0 else 0.0


def _field(record: Any, name: str) -> Any:
    return record.get(name) if isinstance(record, Mapping) else getattr(record, name, None)


def _text_features(text: str) -> list[float]:
    lines = [" ".join(line.split()) for line in text.split("\n")]
    lines = [line for line in lines if line]
    if not lines:
        return [0.0] * len(TEXT_FEATURES)
    chars = sum(len(line) for line in lines)
    cjk = len(_CJK_RE.findall(text))
    weight = 1.0 + (CJK_CHAR_WEIGHT - 1.0) * _share(cjk, chars)
    latin = [weight * len(line) for line in lines]
    total = sum(latin)
    long_chars = sum(len(line) for line, size in zip(lines, latin, strict=True) if size >= LONG_PARAGRAPH_CHARS)
    sentence_chars = sum(len(line) for line in lines if _SENTENCE_END_RE.search(line))
    short = sum(1 for size in latin if size < SHORT_LINE_CHARS)
    sentences = len(_SENTENCE_RE.findall(text))
    counts = Counter(lines)
    repeated = sum(n for line, n in counts.items() if n > 1)
    return [_log(total), _log(len(lines)), _log(total / len(lines)), _log(max(latin)), _share(long_chars, chars),
            _share(sentence_chars, chars), _share(short, len(lines)), 1000.0 * sentences / max(total, 1.0),
            _share(len(_DIGIT_RE.findall(text)), chars), _share(repeated, len(lines)), _share(cjk, chars)]


def _block_features(record: Any) -> list[float]:
    stats = _field(record, "block_stats") or {}
    kept_chars = float(stats.get("kept_chars", 0) or 0)
    return [_log(float(stats.get("blocks", 0) or 0)), _log(float(stats.get("blocks_kept", 0) or 0)),
            _share(float(stats.get("kept_link_chars", 0) or 0), kept_chars), float(bool(stats.get("fallback"))),
            float(_field(record, "extraction_method") in ("fulltext", None))]


def _meta_features(record: Any) -> list[float]:
    sources = _field(record, "metadata_sources") or {}
    title = str(_field(record, "title") or "")
    date_source = sources.get("date_published") if _field(record, "date_published") else None
    return [_log(len(title)), float(sources.get("title") in HEADLINE_SOURCES),
            float(date_source in DECLARED_DATE_SOURCES), float(date_source in BYLINE_DATE_SOURCES),
            float(date_source == "url"), float(date_source in GUESSED_DATE_SOURCES),
            _log(len(_field(record, "authors") or ())), float(bool(_field(record, "description"))),
            float(bool(_field(record, "section"))), _log(len(_field(record, "tags") or ())),
            float(bool(_field(record, "image")))]


def _entry_features(record: Any) -> list[float]:
    entries = _field(record, "entries") or []
    if not entries:
        return [0.0, 0.0]
    titles = [len(str(entry.get("title") or "")) for entry in entries if isinstance(entry, Mapping)]
    return [_log(len(entries)), _log(sum(titles) / len(titles)) if titles else 0.0]


def _pagetype_features(record: Any) -> list[float]:
    probabilities = _field(record, "page_type_probabilities") or {}
    site = _field(record, "page_type") if _field(record, "page_type_source") == "site" else None
    return [float(probabilities.get("article", 0.0) or 0.0), float(probabilities.get("list", 0.0) or 0.0),
            float(probabilities.get("other", 0.0) or 0.0),
            float(site == "article"), float(site == "list"), float(site == "other")]


def gate_features(record: Any) -> npt.NDArray[np.float32]:
    """Return the ``GATE_FEATURES`` of a record (a JSON record's dict or a ``Record``) as a float32 vector.

    The page type is read as the page-type step left it (``page_type_source`` "site" when the site's evidence
    decided): the flow calls this before the gate changes the record.
    """
    url = _field(record, "url")
    original = original_url(url)
    flags = _field(record, "flags") or ()
    values = [*_text_features(str(_field(record, "text") or "")), *_block_features(record), *_meta_features(record),
              *_entry_features(record), *_pagetype_features(record), *url_features(original),
              float(original != url), float(ARCHIVE_CHROME_FLAG in flags)]
    vector = np.asarray(values, dtype=np.float32)
    return np.nan_to_num(vector, nan=0.0, posinf=0.0, neginf=0.0)


class GateModelError(ModelError):
    """The gate's model is missing, unreadable or does not match this code's features."""


@dataclass
class ArticleGate:
    """The shipped gate: an onnxruntime session, its ``meta.json`` and threshold."""

    session: Any
    meta: dict[str, Any]
    version: str

    @staticmethod
    def version_of(directory: str | Path | None = None) -> str:
        """Return the version the gate of ``directory`` (None or empty: ``models/gate/``) loads with."""
        return meta_version(Path(directory or GATE_DIR))

    @classmethod
    def load(cls, directory: str | Path | None = None) -> ArticleGate:
        """Load and validate the gate of ``directory`` (None or empty: the shipped ``models/gate/``)."""
        folder = Path(directory or GATE_DIR)
        try:
            meta = read_meta(folder, TRAIN_COMMAND)
        except ModelError as exc:
            raise GateModelError(str(exc)) from exc
        where = folder / "meta.json"
        if meta.get("feature_version") != GATE_FEATURE_VERSION or tuple(meta.get("features") or ()) != GATE_FEATURES:
            raise GateModelError(f"{where}: the gate's features (version {meta.get('feature_version')!r}) differ "
                                 f"from this code's ({GATE_FEATURE_VERSION}): retrain with `{TRAIN_COMMAND}`")
        threshold = meta.get("threshold")
        if not isinstance(threshold, (int, float)) or not 0.0 < float(threshold) < 1.0:
            raise GateModelError(f"{where}: threshold {threshold!r} is no probability between 0 and 1")
        try:
            model = session(folder / str(meta.get("file", "model.onnx")))
        except ModelError as exc:
            raise GateModelError(str(exc)) from exc
        return cls(model, meta, cls.version_of(folder))

    @property
    def threshold(self) -> float:
        """The probability from which a record is an article (``meta.json`` "threshold")."""
        return float(self.meta["threshold"])

    def probabilities(self, features: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
        """Return p(article) of each row of an [N, F] feature matrix."""
        outputs = self.session.run(None, {self.session.get_inputs()[0].name: features.astype(np.float32)})
        probabilities = next(o for o in outputs if isinstance(o, np.ndarray) and o.dtype.kind == "f")
        return np.asarray(probabilities[:, 1], dtype=np.float32)

    def probability(self, record: Any) -> float:
        """Return p(article) of one record (see :func:`gate_features`)."""
        return float(self.probabilities(gate_features(record)[None])[0])


def shared_gate(directory: str | Path | None = None) -> ArticleGate:
    """Return the gate of ``directory`` (None or empty: ``models/gate/``), loaded once per process."""
    return shared(ArticleGate.load, directory, GATE_DIR)
