"""Readers of the news page-type sets with ``labels.jsonl``: ``frontpage-archive-de``, ``gerapy-zh``,
``fundus-articles``, ``newspaper4k-pages``.

Each folder's ``labels.jsonl`` gives one line per page: ``file`` (stored with ``.gz``), ``url``, ``label``
("article", "list", "other") and ``sub_label``. A page a line marks ``duplicate_of`` another (byte-identical:
web.de's three 404 pages, newspaper4k's two cleveland.com copies) is read once, as its first copy: the
READMEs ask for it. ``extra`` holds ``sub_label`` and, where the set has them, ``year`` (frontpage-archive-de:
the fetch; fundus-articles: the crawl date), ``country`` (fundus-articles) and the upstream split.

fundus-articles also has gold: ``gold.jsonl``'s ``body`` (the summary paragraphs, then each section's headline
and paragraphs, joined by blank lines: what a reader of the article reads under its title) is the page's gold
text, and its ``title``, ``authors`` and ``date_published`` are in ``extra["gold"]`` for the metadata
benchmark. gerapy-zh's pages mostly carry no URL in ``url``; the page's own canonical link (``page_canonical``)
is used where it is absolute (``//host/...`` gets ``https:``).

The pages' inline script and style bodies and SVG path data were emptied upstream (each README, "Normalisation").
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from evaluation.datasets.base import ARTICLE, LIST, OTHER, Page, require_file
from evaluation.datasets.textutil import url_site

LABELS = {"article": ARTICLE, "list": LIST, "other": OTHER}


def _labels(folder: Path) -> Iterator[dict[str, Any]]:
    """Yield the rows of ``labels.jsonl`` that are no duplicate of an earlier page."""
    with require_file(folder / "labels.jsonl").open(encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                row = json.loads(line)
                if not row.get("duplicate_of"):
                    yield row


def _year(value: Any) -> int | None:
    text = str(value or "")
    return int(text[:4]) if text[:4].isdigit() else None


def _absolute(url: Any) -> str | None:
    text = str(url or "").strip()
    if text.startswith("//"):
        text = "https:" + text
    return text if text.startswith(("http://", "https://")) else None


def _page(dataset: str, folder: Path, row: dict[str, Any], url: str | None, **extra: Any) -> Page:
    file = str(row["file"])
    return Page(
        dataset=dataset,
        page_id=file.removesuffix(".gz").removesuffix(".html").removeprefix("html/"),
        html_path=folder / file,
        url=url,
        gold_text=extra.pop("gold_text", None),
        page_type=LABELS.get(str(row.get("label"))),
        lang=row.get("lang") or None,
        site=row.get("site") or url_site(url),
        extra={"sub_label": row.get("sub_label"), **extra},
    )


def read_frontpage_archive(folder: Path) -> Iterator[Page]:
    """Yield frontpage-archive-de's pages (home and section fronts: list; legal and blocked pages: other)."""
    for row in _labels(folder):
        yield _page("frontpage-archive-de", folder, row, row.get("url"), year=_year(row.get("fetched")))


def read_gerapy(folder: Path) -> Iterator[Page]:
    """Yield gerapy-zh's pages (list and detail pages of Chinese portals and English tech sites)."""
    for row in _labels(folder):
        url = _absolute(row.get("url")) or _absolute(row.get("page_canonical"))
        yield _page("gerapy-zh", folder, row, url, upstream_split=row.get("upstream_split"))


def read_fundus(folder: Path) -> Iterator[Page]:
    """Yield fundus-articles' pages (every one an article) with their gold body, title, authors and date."""
    gold: dict[str, dict[str, Any]] = {}
    with require_file(folder / "gold.jsonl").open(encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                entry = json.loads(line)
                gold[str(entry["file"])] = entry
    for row in _labels(folder):
        entry = gold.get(str(row["file"]), {})
        body = str(entry.get("body") or "").strip() or None
        fields = {name: entry.get(name) for name in ("title", "authors", "date_published")}
        page = _page("fundus-articles", folder, row, row.get("url"), gold_text=body, year=_year(row.get("date")),
                     country=row.get("country"), publisher=row.get("publisher"), gold=fields)
        yield page


def read_newspaper4k(folder: Path) -> Iterator[Page]:
    """Yield newspaper4k-pages' pages (articles, three home pages, a redirect stub and an RSS feed)."""
    for row in _labels(folder):
        yield _page("newspaper4k-pages", folder, row, _absolute(row.get("url")))
