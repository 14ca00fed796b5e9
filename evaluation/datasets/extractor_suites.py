"""Test suites shipped with extractors: ``trafilatura-eval`` and ``mozilla-readability``.

trafilatura-eval: ``evaldata.json`` maps each URL to ``{"file": "<name>.html", "with": [...], "without": [...]}``
plus, for most pages, title/author/date/comments/license/region/tags metadata. There is no
gold text and no language field (upstream's docs give the language mix only in aggregate),
so ``gold_text`` and ``lang`` are None; the snippets are the ground truth. 36 keys are not
URLs but ``hard::<file>`` (35) or ``recall::<file>`` (1): those pages get ``url`` None and
the tag in ``extra["category"]``.

mozilla-readability: each ``test-pages/<name>/`` holds ``source.html.gz``, ``expected.html.gz`` (Readability.js's
own output, not a human label) and ``expected-metadata.json`` (title, byline, dir, lang,
excerpt, siteName, publishedTime, readerable). ``gold_text`` is the visible text of
``expected.html``, one block-level element per line. The pages carry no URL.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator
from pathlib import Path

from evaluation.datasets.base import Page, gz_path, require_dir, require_file
from evaluation.datasets.textutil import html_to_text, url_site

METADATA_KEYS = (
    "title", "author", "date", "comments", "license", "region", "tags", "description", "categories", "sitename",
)


def read_trafilatura_eval(folder: Path) -> Iterator[Page]:
    """Yield the pages in ``evaldata.json`` order; page ids are the file names less ``.html``."""
    html_dir = require_dir(folder / "html")
    data = json.loads(require_file(folder / "evaldata.json").read_text(encoding="utf-8"))
    for key, record in data.items():
        name = str(record["file"])
        url: str | None = key if "://" in key else None
        extra = {field: record[field] for field in METADATA_KEYS if record.get(field) is not None}
        if url is None:
            extra["category"] = key.partition("::")[0]
        yield Page(
            dataset="trafilatura-eval",
            page_id=name.removesuffix(".html"),
            html_path=gz_path(html_dir, name),
            url=url,
            gold_text=None,
            with_snippets=tuple(record.get("with") or ()),
            without_snippets=tuple(record.get("without") or ()),
            site=url_site(url),
            extra=extra,
        )


def read_readability(folder: Path) -> Iterator[Page]:
    """Yield one page per test folder, in name order; page ids are the folder names."""
    pages_dir = require_dir(folder / "test-pages")
    for page_dir in sorted(path for path in pages_dir.iterdir() if path.is_dir()):
        expected = page_dir / "expected.html.gz"
        gold = html_to_text(gzip.decompress(expected.read_bytes())) if expected.is_file() else None
        meta_path = page_dir / "expected-metadata.json"
        metadata = json.loads(meta_path.read_text(encoding="utf-8")) if meta_path.is_file() else {}
        lang = metadata.get("lang")
        yield Page(
            dataset="mozilla-readability",
            page_id=page_dir.name,
            html_path=page_dir / "source.html.gz",
            url=None,
            gold_text=gold or None,
            lang=lang if isinstance(lang, str) and lang else None,
            extra={"readerable": metadata.get("readerable"), "metadata": metadata},
        )
