"""The page's headline, chosen among its title candidates by a learned model (``models/title/``).

A page names itself several times: its ``<h1>`` elements, the ``<title>`` and each of its parts between
separators ("Headline | Section | Site"), OpenGraph and Twitter titles, the JSON-LD headline, a microdata
``headline``, its first ``<h2>`` elements. Which one is the headline differs by site and page type: an
article's ``<h1>`` most often, a product's ``<h1>`` or its ``<title>`` without the shop's name, a
documentation page's first part of the ``<title>``. :func:`title_candidates` collects them (the same text
from several places is one candidate with several sources); :func:`candidate_features` describes each:
where it appears, its place among the ``<title>``'s parts, its length, how much it shares with the other
candidates and with the URL's words, whether it is the site's name; the model
(scikit-learn's HistGradientBoostingClassifier, exported to ONNX, ``models/training/train_title.py``)
gives each candidate a probability of being the headline, and the likeliest that is not the site's
name wins, when its probability reaches the model's ``min_probability`` (chosen in the training's
cross-validation).

With ``TITLE_ENABLED`` off, when the ``metadata`` functions are called without a model, or when the
model is sure of no candidate, the rule of ``extraction.metadata.fields.choose_title`` decides.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import urlsplit

import numpy as np
import numpy.typing as npt

from extraction.dom.html import TITLE_MAX_CHARS
from extraction.onnx import ModelError, meta_version, read_meta, session, shared
from extraction.paths import MODELS_DIR

TITLE_DIR = MODELS_DIR / "title"
TRAIN_COMMAND = "make train-title"
FEATURE_VERSION = "1"
H1S = 3  # <h1> elements read, in document order
H2S = 2  # <h2> elements read
# Where a candidate's text appears ("og": og:title, else dc.title or <meta name=title>); the record's metadata
# source of each (``extraction.metadata.fields.SOURCES``).
PLACES: tuple[str, ...] = ("h1_0", "h1_1", "h1_2", "title", "title_part", "og", "twitter", "jsonld", "microdata",
                           "h2_0", "h2_1")
RECORD_SOURCE = {"h1": "h1", "h2": "h2", "title": "meta", "og": "meta", "twitter": "meta", "jsonld": "json-ld",
                 "microdata": "microdata"}
SOURCE_ORDER = ("h1", "json-ld", "microdata", "meta", "h2")  # the source named when a text is in several places
FEATURES: tuple[str, ...] = (
    *(f"in_{place}" for place in PLACES), "places", "part_index", "parts", "last_part",
    "words", "chars", "h1s", "max_jaccard", "mean_jaccard", "max_containment", "inside_others", "is_site_name",
    "has_separator", "upper_share", "has_digit", "order", "url_share_of_words", "url_share_of_url",
)

# Between the parts of a <title>: "Headline | Section | Site", "Headline - Site", "新闻标题_频道_网站"; "_" only
# between words, not inside an identifier ("ngx_http_rewrite_module"); "-" without spaces between Chinese
# characters ("新闻标题-新华网").
SEPARATORS_RE = re.compile(r"\s+[|\-–—:·•»]\s+|\s*[|｜]\s*|\s*(?:(?<![A-Za-z0-9])_|_(?![A-Za-z0-9]))\s*|"
                           r"\s+::\s+|\s*－\s*|\s*—\s*|(?<=[\u4e00-\u9fff])-+(?=[\u4e00-\u9fff])")
_SEPARATOR_CHARS_RE = re.compile(r"[|\-–—:·•»«｜]")
_TOKEN_RE = re.compile(r"[\u4e00-\u9fff]|[^\W_]+")
_URL_WORD_RE = re.compile(r"[^\W\d_]+")


def normal(text: str) -> str:
    """Return ``text`` lower-cased, punctuation as spaces, whitespace squeezed: how titles are compared."""
    return " ".join(re.sub(r"[^\w\s]", " ", text.lower()).split())


def tokens(text: str) -> set[str]:
    """Return the words of ``text``, lower-cased (each Chinese character a word)."""
    return set(_TOKEN_RE.findall(text.lower()))


@dataclass
class Candidate:
    """One text that may be the headline, and where the page has it."""

    text: str
    places: set[str] = field(default_factory=set)
    part_index: int = 0  # 1-based place among the <title>'s parts (0: not a part)
    parts: int = 0  # the <title>'s parts
    key: str = field(init=False)  # the text as titles are compared (:func:`normal`)

    def __post_init__(self) -> None:
        self.key = normal(self.text)

    @property
    def source(self) -> str:
        """The record's metadata source: the first of ``SOURCE_ORDER`` among its places."""
        sources = {RECORD_SOURCE[place.split("_")[0]] for place in self.places}
        return next(source for source in SOURCE_ORDER if source in sources)


def title_candidates(h1s: list[str], h2s: list[str], page_title: str | None, og: str | None, twitter: str | None,
                     jsonld: str | None, microdata: str | None) -> list[Candidate]:
    """Return the distinct candidates (by :func:`normal` text) in the order they are met."""
    found: dict[str, Candidate] = {}

    def add(text: str | None, place: str, part_index: int = 0, parts: int = 0) -> None:
        candidate = Candidate(" ".join((text or "").split()))
        if not candidate.key or len(candidate.text) > TITLE_MAX_CHARS:
            return
        candidate = found.setdefault(candidate.key, candidate)
        candidate.places.add(place)
        if part_index:
            candidate.part_index, candidate.parts = part_index, parts

    for index, text in enumerate(h1s[:H1S]):
        add(text, f"h1_{index}")
    for index, text in enumerate(h2s[:H2S]):
        add(text, f"h2_{index}")
    if page_title:
        add(page_title, "title")
        parts = [part.strip() for part in SEPARATORS_RE.split(page_title) if part and part.strip()]
        if len(parts) > 1:
            for index, part in enumerate(parts, start=1):
                add(part, "title_part", index, len(parts))
    add(og, "og")
    add(twitter, "twitter")
    add(jsonld, "jsonld")
    add(microdata, "microdata")
    return list(found.values())


def candidate_features(candidates: list[Candidate], h1_count: int, site_name: str | None,
                       url: str | None) -> npt.NDArray[np.float32]:
    """Return the ``FEATURES`` of each candidate, float32 [N, len(FEATURES)]."""
    keys = [candidate.key for candidate in candidates]
    words_of = [tokens(key) for key in keys]
    site = normal(site_name) if site_name else None
    url_words = set(_URL_WORD_RE.findall(urlsplit(url).path.lower())) if url else set()
    rows = []
    for index, (candidate, key, words) in enumerate(zip(candidates, keys, words_of, strict=True)):
        others = [other for j, other in enumerate(words_of) if j != index]
        jaccard = [len(words & other) / max(1, len(words | other)) for other in others] or [0.0]
        containment = [len(words & other) / max(1, len(words)) for other in others] or [0.0]
        text = candidate.text
        rows.append([
            *(float(place in candidate.places) for place in PLACES), len(candidate.places), candidate.part_index,
            candidate.parts, float(candidate.parts > 0 and candidate.part_index == candidate.parts),
            len(words), len(key), h1_count, max(jaccard), float(np.mean(jaccard)), max(containment),
            sum(1 for j, other in enumerate(keys) if j != index and key in other), float(site == key),
            float(bool(_SEPARATOR_CHARS_RE.search(text))), sum(c.isupper() for c in text) / max(1, len(text)),
            float(any(c.isdigit() for c in key)), index, len(words & url_words) / max(1, len(words)),
            len(words & url_words) / max(1, len(url_words)),
        ])
    return np.asarray(rows, dtype=np.float32).reshape(len(candidates), len(FEATURES))


class TitleChooser(Protocol):
    """What ``extraction.metadata.fields.page_metadata`` asks of a title model."""

    def choose(self, candidates: list[Candidate], h1_count: int, site_name: str | None,
               url: str | None) -> Candidate | None: ...


class TitleModel:
    """The shipped title chooser: an onnxruntime session and its ``meta.json``."""

    def __init__(self, session: Any, meta: dict[str, Any], version: str) -> None:
        self.session = session
        self.meta = meta
        self.version = version
        self._input = session.get_inputs()[0].name

    @staticmethod
    def version_of(directory: str | Path | None = None) -> str:
        """Return the version the model of ``directory`` (None or empty: ``models/title/``) loads with."""
        return meta_version(Path(directory or TITLE_DIR))

    @classmethod
    def load(cls, directory: str | Path | None = None) -> TitleModel:
        """Load and validate the model of ``directory`` (None or empty: the shipped ``models/title/``)."""
        folder = Path(directory or TITLE_DIR)
        meta = read_meta(folder, TRAIN_COMMAND)
        where = folder / "meta.json"
        if meta.get("feature_version") != FEATURE_VERSION or list(meta.get("features") or ()) != list(FEATURES):
            raise ModelError(f"{where}: the title model's features (version {meta.get('feature_version')!r}) differ "
                             f"from this code's ({FEATURE_VERSION}): retrain with `{TRAIN_COMMAND}`")
        return cls(session(folder / str(meta.get("file", "model.onnx"))), meta, cls.version_of(folder))

    def probabilities(self, features: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
        """Return each candidate's probability of being the headline."""
        outputs = self.session.run(None, {self._input: features})
        probabilities = next(o for o in outputs if isinstance(o, np.ndarray) and o.dtype.kind == "f")
        return np.asarray(probabilities[:, 1], dtype=np.float32)

    @property
    def min_probability(self) -> float:
        """The probability under which the model's pick is left to the rule (``meta.json``)."""
        return float(self.meta.get("min_probability", 0.0))

    def choose(self, candidates: list[Candidate], h1_count: int, site_name: str | None,
               url: str | None) -> Candidate | None:
        """Return the headline among ``candidates``: see :func:`pick`; None when there is no candidate or
        the pick's probability is under ``min_probability``."""
        if not candidates:
            return None
        scores = self.probabilities(candidate_features(candidates, h1_count, site_name, url))
        index = pick(candidates, scores, site_name)
        return candidates[index] if scores[index] >= self.min_probability else None


def pick(candidates: list[Candidate], scores: npt.NDArray[np.float32], site_name: str | None) -> int:
    """Return the index of the likeliest candidate that is not the site's name (of any when all are)."""
    site = normal(site_name) if site_name else None
    allowed = np.asarray([candidate.key != site for candidate in candidates])
    if not allowed.any():
        allowed[:] = True
    return int(np.argmax(np.where(allowed, scores, -1.0)))


def shared_model(directory: str | Path | None = None) -> TitleModel:
    """Return the model of ``directory`` (None or empty: ``models/title/``), loaded once per process."""
    return shared(TitleModel.load, directory, TITLE_DIR)
