"""CleanEval 2007 (``cleaneval``) and CleanPortalEval (``cleanportaleval``) readers.

Both use the CleanEval gold format: an optional first line ``URL: ...``, then text whose
paragraphs start with a marker ``<p>`` (paragraph), ``<h>`` (heading) or ``<l>`` (list item);
paragraphs are hard-wrapped. ``gold_text`` has the markers removed and one paragraph per
line; ``extra["blocks"]`` gives the marker of each line ("p", "h", "l", or "" for text
outside any marker). HTML entities in the gold (CleanPortalEval writes ``&#039;``) are
unescaped. The input HTML starts with a ``<text id="URL" ...>`` wrapper line, which gives
the URL where the gold lacks one (233 CleanEval gold files do). Gold files holding only
the URL line (7 in CleanEval, 1 in CleanPortalEval) give ``gold_text`` None.
"""

from __future__ import annotations

import gzip
import html
import re
from collections.abc import Iterator
from pathlib import Path

from evaluation.datasets.base import Page, require_dir
from evaluation.datasets.textutil import decode_text, url_site

CLEANEVAL_SPLITS = ("dev", "final")

_MARKER_RE = re.compile(r"<([phl])>", re.IGNORECASE)
_URL_LINE_RE = re.compile(r"\A\s*URL:\s*(\S+)[^\n]*\n?")
_TEXT_ID_RE = re.compile(rb"""<text\s+id\s*=\s*"([^"]*)\"""", re.IGNORECASE)


def parse_gold(raw: str) -> tuple[str | None, str, tuple[str, ...]]:
    """Return ``(url, text, blocks)`` for CleanEval gold: URL line split off, one paragraph per line."""
    url: str | None = None
    match = _URL_LINE_RE.match(raw)
    if match:
        url = match.group(1)
        raw = raw[match.end() :]
    lines: list[str] = []
    kinds: list[str] = []
    pieces = _MARKER_RE.split(raw)
    # pieces: [text before the first marker, marker, text, marker, text, ...]
    segments = [("", pieces[0])] + [(pieces[i].lower(), pieces[i + 1]) for i in range(1, len(pieces), 2)]
    for kind, segment in segments:
        # Blank lines also end a paragraph; continuation text after one keeps no marker.
        for number, chunk in enumerate(re.split(r"\n\s*\n", segment)):
            text = " ".join(html.unescape(chunk).split())
            if text:
                lines.append(text)
                kinds.append(kind if number == 0 else "")
    return url, "\n".join(lines), tuple(kinds)


def input_url(html_path: Path) -> str | None:
    """Return the URL in the ``<text id="...">`` wrapper that starts a CleanEval input file, or None."""
    with gzip.open(html_path, "rb") as handle:
        head = handle.read(4096)
    match = _TEXT_ID_RE.search(head)
    if match is None:
        return None
    return match.group(1).decode("utf-8", "replace").strip() or None


def _pages(dataset: str, folder: Path, split: str | None, prefix: str, include_unlabelled: bool) -> Iterator[Page]:
    input_dir = folder / "input"
    gold_dir = folder / "GoldStandard"
    require_dir(input_dir)
    for html_path in sorted(input_dir.glob("*.gz"), key=_natural_key):
        stem = html_path.name.removesuffix(".gz").rsplit(".", 1)[0]
        gold_path = gold_dir / f"{stem}.txt"
        url: str | None = None
        gold: str | None = None
        blocks: tuple[str, ...] = ()
        if gold_path.is_file():
            url, text, blocks = parse_gold(decode_text(gold_path.read_bytes()))
            gold = text or None
        elif not include_unlabelled:
            continue
        url = url or input_url(html_path)
        yield Page(
            dataset=dataset,
            page_id=f"{prefix}{stem}",
            html_path=html_path,
            url=url,
            gold_text=gold,
            site=url_site(url),
            split=split,
            extra={"blocks": blocks},
        )


def _natural_key(path: Path) -> tuple[int, str]:
    stem = path.name.split(".", 1)[0]
    return (int(stem), "") if stem.isdigit() else (1 << 30, path.name)


def read_cleaneval(folder: Path, split: str | None = None, include_unlabelled: bool = False) -> Iterator[Page]:
    """Yield CleanEval pages (``split`` "dev", "final" or both); page ids are "dev/12", "final/103".

    Only pages with gold are yielded unless ``include_unlabelled`` (59 final inputs have none).
    """
    splits = CLEANEVAL_SPLITS if split is None else (split,)
    for name in splits:
        if name not in CLEANEVAL_SPLITS:
            raise ValueError(f"unknown CleanEval split {name!r}; expected one of {CLEANEVAL_SPLITS}")
        yield from _pages("cleaneval", folder / f"cleaneval-{name}", name, f"{name}/", include_unlabelled)


def read_cleanportaleval(folder: Path) -> Iterator[Page]:
    """Yield the CleanPortalEval pages; page ids are file stems such as "bbc.co.uk_news_01"."""
    yield from _pages("cleanportaleval", folder, None, "", False)
