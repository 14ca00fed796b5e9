"""Dragnet reader (``dragnet``): 1,381 pages, official split ``training.txt`` / ``test.txt``.

Gold files put reader comments after a separator line, nominally ``!@#$%^&*()  COMMENTS``;
about a dozen files mistype it (``!@ $%^&*()``, ``!!@#$%^&*()``, a tab before COMMENTS ...),
so any line of those punctuation characters followed by ``COMMENTS`` counts. ``gold_text``
is the part before it (the article), ``extra["comments"]`` the part after (or "").
The split files lack a final newline, and their ids (``R76``, ``T5``, ``302``) are the file
stems of ``input/<id>.html.gz`` and ``GoldStandard/<id>.txt``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from evaluation.datasets.base import Page, require_dir, require_file
from evaluation.datasets.textutil import decode_text

DRAGNET_SPLITS = ("training", "test")

_COMMENTS_RE = re.compile(r"^[ \t]*[!@#$%^&*()][!@#$%^&*() \t]{4,}COMMENTS[ \t]*$", re.MULTILINE)


def split_comments(text: str) -> tuple[str, str]:
    """Return ``(main, comments)``: the gold text before and after the COMMENTS separator line."""
    match = _COMMENTS_RE.search(text)
    if match is None:
        return text.strip(), ""
    return text[: match.start()].strip(), text[match.end() :].strip()


def read_split_ids(folder: Path, split: str) -> list[str]:
    """Return the page ids listed in ``<split>.txt`` in file order."""
    path = require_file(folder / f"{split}.txt")
    return [line.strip() for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def read_dragnet(folder: Path, split: str | None = None) -> Iterator[Page]:
    """Yield Dragnet pages of ``split`` ("training", "test" or both, training first)."""
    splits = DRAGNET_SPLITS if split is None else (split,)
    input_dir = require_dir(folder / "input")
    gold_dir = require_dir(folder / "GoldStandard")
    for name in splits:
        if name not in DRAGNET_SPLITS:
            raise ValueError(f"unknown Dragnet split {name!r}; expected one of {DRAGNET_SPLITS}")
        for page_id in read_split_ids(folder, name):
            gold_path = gold_dir / f"{page_id}.txt"
            main: str | None = None
            comments = ""
            if gold_path.is_file():
                main, comments = split_comments(decode_text(gold_path.read_bytes()))
            yield Page(
                dataset="dragnet",
                page_id=page_id,
                html_path=input_dir / f"{page_id}.html.gz",
                url=None,
                gold_text=main or None,
                lang="en",
                split=name,
                extra={"comments": comments},
            )
