"""The field's main-text extractors, run side by side with ours in the evaluation harness.

Each baseline is a function ``(html: str, url: str | None) -> str`` (the main text), its
package imported on first use only, so importing this module costs nothing and the crawl
never needs them. Names::

    trafilatura   trafilatura.extract with its defaults (no favor_precision/recall), no comments;
                  trafilatura-precision / trafilatura-recall: with favor_precision / favor_recall;
                  trafilatura-metadata: bare_extraction with with_metadata=True, its text (the same
                  text as trafilatura's, timed with the title, author, date ... a record of ours carries)
    readability   readability-lxml Document(html).summary(html_partial=True), made text with
                  our own visible_text (one line per block)
    justext       jusText with the English stoplist. jusText ships no Chinese stoplist, so on
                  Chinese pages it finds (almost) nothing: read its Chinese scores with that in mind
    boilerpy3     boilerpy3's ArticleExtractor
    goose3        goose3's cleaned_text

The packages come from ``requirements-extras.txt`` (``make extras``); a missing one raises
:class:`BaselineUnavailable` on ``load_baseline(name)``.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

Baseline = Callable[[str, "str | None"], str]

INSTALL_HINT = "pip install -r requirements-extras.txt (make extras)"


class BaselineUnavailable(RuntimeError):
    """A baseline's package is not installed (or the name is unknown)."""


def _import(module: str, baseline: str) -> Any:
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise BaselineUnavailable(
            f"baseline {baseline!r} needs the Python package {module.split('.')[0]!r}, which cannot be "
            f"imported ({exc}); install it with: {INSTALL_HINT}"
        ) from exc


def _trafilatura(**options: bool) -> Baseline:
    trafilatura = _import("trafilatura", "trafilatura")

    def run(html: str, url: str | None) -> str:
        return trafilatura.extract(html, url=url, include_comments=False, **options) or ""

    return run


def _trafilatura_metadata() -> Baseline:
    trafilatura = _import("trafilatura", "trafilatura-metadata")

    def run(html: str, url: str | None) -> str:
        document = trafilatura.bare_extraction(html, url=url, include_comments=False, with_metadata=True)
        return (document.text if document is not None else None) or ""

    return run


def _readability() -> Baseline:
    readability = _import("readability", "readability")
    from extraction.dom.html import parse_html
    from extraction.dom.text import visible_text

    def run(html: str, url: str | None) -> str:
        summary = readability.Document(html, url=url).summary(html_partial=True)
        return visible_text(parse_html(summary))

    return run


def _justext() -> Baseline:
    justext = _import("justext", "justext")
    stoplist = justext.get_stoplist("English")  # no Chinese stoplist exists in jusText

    def run(html: str, url: str | None) -> str:
        paragraphs = justext.justext(html.encode("utf-8"), stoplist, encoding="utf-8")
        return "\n".join(p.text for p in paragraphs if not p.is_boilerplate)

    return run


def _boilerpy3() -> Baseline:
    extractors = _import("boilerpy3.extractors", "boilerpy3")

    def run(html: str, url: str | None) -> str:
        # A fresh extractor per page; on unparsable input it raises, which the harness counts.
        return extractors.ArticleExtractor(raise_on_failure=True).get_content(html) or ""

    return run


def _goose3() -> Baseline:
    goose3 = _import("goose3", "goose3")
    goose = goose3.Goose()

    def run(html: str, url: str | None) -> str:
        return goose.extract(raw_html=html, url=url).cleaned_text or ""

    return run


BASELINES: dict[str, Callable[[], Baseline]] = {
    "trafilatura": _trafilatura,
    "trafilatura-precision": lambda: _trafilatura(favor_precision=True),
    "trafilatura-recall": lambda: _trafilatura(favor_recall=True),
    "trafilatura-metadata": _trafilatura_metadata,
    "readability": _readability,
    "justext": _justext,
    "boilerpy3": _boilerpy3,
    "goose3": _goose3,
}


def baseline_names() -> list[str]:
    """Return the known baseline names, in their fixed order."""
    return list(BASELINES)


def load_baseline(name: str) -> Baseline:
    """Return the extractor function of baseline ``name``.

    Raises BaselineUnavailable for an unknown name or when its package is not installed.
    """
    try:
        factory = BASELINES[name]
    except KeyError:
        raise BaselineUnavailable(f"unknown baseline {name!r}; known: {', '.join(BASELINES)}") from None
    return factory()
