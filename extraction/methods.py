"""The extraction methods by stable name, and one entry point that runs any of them.

Each method takes the parsed page and its URL (and, by keyword, its models; without them the
shipped ones) and returns an :class:`Extraction`. ``extraction.process`` runs the ``--method``
of ``scrapy extract`` through :func:`extract_tree`; the evaluation harness runs every method.
Names are stable: ``fulltext``, ``cetd-tpc``, ``iawce-article``, ``iawce-list``, ``list``,
``svm``, ``web2text``, ``svm-web2text`` and ``pipeline`` (the crawl's flow without templates).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from lxml import html as lxml_html

from extraction.dom.html import page_title, parse_html
from extraction.dom.text import visible_text


@dataclass(frozen=True)
class ListEntry:
    """One entry of a list page: its text and the URL it links to (None if no link)."""

    text: str
    url: str | None = None


@dataclass(frozen=True)
class Extraction:
    """What a method extracted from one page."""

    method: str
    text: str  # main text, one block/paragraph per line
    title: str | None = None
    page_type: str | None = None  # article | list | other, when the method decides it
    entries: tuple[ListEntry, ...] = field(default_factory=tuple)  # list pages


# (root, url, **models): methods with models take them as keywords (default: the shipped ones).
Method = Callable[..., Extraction]


def _fulltext(root: lxml_html.HtmlElement, url: str | None) -> Extraction:
    return Extraction(method="fulltext", text=visible_text(root), title=page_title(root))


METHODS: dict[str, Method] = {"fulltext": _fulltext}


def register(name: str, method: Method) -> None:
    """Add a method under a stable name (each algorithm module registers itself)."""
    METHODS[name] = method


def method_names() -> list[str]:
    """Return the names of the available methods, sorted."""
    _load_all()
    return sorted(METHODS)


def extract(html: str, method: str = "fulltext", url: str | None = None) -> Extraction:
    """Return what ``method`` extracts from an HTML text; raises KeyError for an unknown name."""
    return extract_tree(parse_html(html), method, url)


def extract_tree(root: lxml_html.HtmlElement, method: str = "fulltext", url: str | None = None,
                 **models: Any) -> Extraction:
    """Return what ``method`` extracts from a parsed page (which it may modify: pass a copy to keep it).

    ``models``: the method's models by keyword (``extraction.process.Context.from_settings`` loads them
    from the settings' model folders); without them a method uses the shipped models."""
    _load_all()
    if method not in METHODS:
        raise KeyError(f"unknown method {method!r} (known: {', '.join(sorted(METHODS))})")
    return METHODS[method](root, url, **models)


# Algorithm modules register themselves on import; listed here so that every caller sees them.
_ALGORITHM_MODULES: tuple[str, ...] = ("extraction.cetd", "extraction.iawce", "extraction.lists",
                                        "extraction.blockclf.classifier",
                                        "extraction.web2text", "extraction.process")


def _load_all() -> None:
    import importlib

    for module in _ALGORITHM_MODULES:
        importlib.import_module(module)
