"""WCXB development set reader (``wcxb-dev``): ``html/NNNN.html.gz`` + ``ground-truth/NNNN.json``.

``gold_text`` is ``ground_truth.main_content`` (paragraphs split by blank lines); 21 pages
have an empty or missing main content and get None. ``_internal.page_type.primary`` maps to
``page_type``: article -> "article", listing/collection -> "list", the rest (forum, product,
service, documentation) -> "other"; the upstream type is kept in ``extra["wcxb_type"]``.
Five pages have no URL (0551, 4129, 4281, 4314, 4547). Ids run from 0001 to 4xxx with gaps.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from evaluation.datasets.base import ARTICLE, LIST, OTHER, Page, require_dir
from evaluation.datasets.textutil import normalise_newlines, url_site

PAGE_TYPES = {"article": ARTICLE, "listing": LIST, "collection": LIST}


def wcxb_page_type(primary: str | None) -> str | None:
    """Return the common page type for a WCXB primary type ("article", "list", "other"), None if unknown."""
    if not primary:
        return None
    return PAGE_TYPES.get(primary, OTHER)


def _snippets(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list):
        return ()
    return tuple(item for item in value if isinstance(item, str) and item)


def read_wcxb(folder: Path) -> Iterator[Page]:
    """Yield the WCXB dev pages in id order; page ids are the four-digit file stems."""
    html_dir = require_dir(folder / "html")
    truth_dir = require_dir(folder / "ground-truth")
    for truth_path in sorted(truth_dir.glob("*.json")):
        page_id = truth_path.stem
        record = json.loads(truth_path.read_text(encoding="utf-8"))
        truth = record.get("ground_truth") or {}
        internal = (record.get("_internal") or {}).get("page_type") or {}
        primary = internal.get("primary")
        url = record.get("url") or truth.get("url") or None
        content = normalise_newlines(truth.get("main_content") or "").strip()
        yield Page(
            dataset="wcxb-dev",
            page_id=page_id,
            html_path=html_dir / f"{page_id}.html.gz",
            url=url,
            gold_text=content or None,
            with_snippets=_snippets(truth.get("with")),
            without_snippets=_snippets(truth.get("without")),
            page_type=wcxb_page_type(primary),
            lang="en",
            site=url_site(url),
            extra={
                "wcxb_type": primary,
                "type_confidence": internal.get("confidence"),
                "title": truth.get("title"),
                "author": truth.get("author"),
                "publish_date": truth.get("publish_date"),
            },
        )
