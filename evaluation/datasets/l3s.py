"""L3S-GN1 reader (``l3s-gn1``): 621 news articles annotated at text-block level.

``annotated/<uuid>.html.gz`` is the page with every text block wrapped in
``<span class="x-nc-selN">``: 0 not content, 1 headline, 2 full text, 3 supplemental,
4 related content, 5 comments. Spans nest (often a span inside a span of the same label,
sometimes of another label); a text node takes the label of its innermost span, and
neighbouring text of one label forms one block until a block-level element or ``<br>``.
Elements marked ``x-nc-invisible`` were hidden from the assessors and are skipped.
``gold_text`` is the labels 1-3 (main content) in document order, one block per line;
``extra["labels"]`` maps each label name (1-5) to its blocks. Upstream replaced many
non-ASCII punctuation characters (curly quotes, dashes) with ``?`` in the annotated copy.
``url-mapping.txt`` maps ``<urn:uuid:...>`` to the page URL.
"""

from __future__ import annotations

import gzip
import re
from collections.abc import Iterator
from pathlib import Path

from lxml import etree
from lxml import html as lxml_html

from evaluation.datasets.base import Page, gz_path, require_dir, require_file
from evaluation.datasets.textutil import url_site
from extraction.dom.encoding import decode_html
from extraction.dom.text import BLOCK_TAGS

LABEL_NAMES = {1: "headline", 2: "fulltext", 3: "supplemental", 4: "related", 5: "comments"}
MAIN_LABELS = frozenset({1, 2, 3})

_SEL_RE = re.compile(r"\bx-nc-sel(\d)\b")
_SKIP_TAGS = frozenset({"script", "style", "noscript", "head", "title"})


def read_url_mapping(folder: Path) -> dict[str, str]:
    """Return ``{uuid: url}`` from ``url-mapping.txt``."""
    mapping: dict[str, str] = {}
    text = require_file(folder / "url-mapping.txt").read_text(encoding="utf-8")
    for line in text.splitlines():
        key, _, url = line.partition("\t")
        uuid = key.strip().removeprefix("<urn:uuid:").removesuffix(">")
        if uuid and url.strip():
            mapping[uuid] = url.strip()
    return mapping


def labelled_blocks(body: bytes) -> list[tuple[int, str]]:
    """Return the ``(label, text)`` blocks of an annotated page in document order (label 0 left out)."""
    parser = lxml_html.HTMLParser(encoding="utf-8", huge_tree=True, remove_comments=True)
    root = lxml_html.document_fromstring(decode_html(body).text.encode("utf-8"), parser=parser)
    collector = _BlockCollector()
    collector.walk(root, 0)
    blocks: list[tuple[int, str]] = []
    for label, parts in collector.runs:
        text = " ".join("".join(parts).split())
        if text and label:
            blocks.append((label, text))
    return blocks


class _BlockCollector:
    """Groups text nodes into runs of one label; block-level elements and ``<br>`` end a run."""

    def __init__(self) -> None:
        self.runs: list[tuple[int, list[str]]] = []
        self._open = False

    def emit(self, text: str | None, label: int) -> None:
        if not text:
            return
        if not text.strip():
            if self._open:
                self.runs[-1][1].append(" ")
            return
        if self._open and self.runs[-1][0] == label:
            self.runs[-1][1].append(text)
        else:
            self.runs.append((label, [text]))
            self._open = True

    def walk(self, element: etree._Element, label: int) -> None:
        tag = element.tag if isinstance(element.tag, str) else ""
        classes = element.get("class") or ""
        if tag and tag not in _SKIP_TAGS and "x-nc-invisible" not in classes:
            match = _SEL_RE.search(classes) if tag == "span" else None
            inner = int(match.group(1)) if match else label
            boundary = tag in BLOCK_TAGS  # includes br
            if boundary:
                self._open = False
            self.emit(element.text, inner)
            for child in element:
                self.walk(child, inner)
            if boundary:
                self._open = False
        self.emit(element.tail, label)


def read_l3s(folder: Path) -> Iterator[Page]:
    """Yield the L3S-GN1 pages (html_path is the original page); page ids are the file uuids."""
    urls = read_url_mapping(folder)
    original = require_dir(folder / "original")
    annotated = require_dir(folder / "annotated")
    for html_path in sorted(original.glob("*.html.gz")):
        uuid = html_path.name.removesuffix(".html.gz")
        annotated_path = gz_path(annotated, f"{uuid}.html")
        labels: dict[str, tuple[str, ...]] = {name: () for name in LABEL_NAMES.values()}
        gold: str | None = None
        if annotated_path.is_file():
            blocks = labelled_blocks(gzip.decompress(annotated_path.read_bytes()))
            for number, name in LABEL_NAMES.items():
                labels[name] = tuple(text for label, text in blocks if label == number)
            gold = "\n".join(text for label, text in blocks if label in MAIN_LABELS) or None
        url = urls.get(uuid)
        yield Page(
            dataset="l3s-gn1",
            page_id=uuid,
            html_path=html_path,
            url=url,
            gold_text=gold,
            page_type="article",
            lang="en",
            site=url_site(url),
            extra={"labels": labels, "annotated_path": annotated_path},
        )
