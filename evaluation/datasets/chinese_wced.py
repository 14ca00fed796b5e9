"""Chinese web content extraction set reader (``chinese-wced-dev``): gold text, author, date.

Layout: ``original/<uuid>.html.gz`` with ``cleaned/``, ``author/``, ``date/``
``<uuid>.txt`` beside it (all UTF-8 here; GB18030 is the first fallback all the same).
Unknown author/date are written ``UNKNOWN`` (or left empty) upstream and read as None.
Several authors are separated by spaces. The URL comes from ``<link rel=canonical>`` /
``og:url`` when the page has one (4 of 35).
"""

from __future__ import annotations

import gzip
from collections.abc import Iterator
from pathlib import Path

from evaluation.datasets.base import ARTICLE, Page, require_dir
from evaluation.datasets.textutil import CHINESE_FALLBACKS, decode_text, sniff_url, url_site


def _read_optional(path: Path) -> str | None:
    if not path.is_file():
        return None
    text = decode_text(path.read_bytes(), CHINESE_FALLBACKS).strip()
    return None if not text or text.upper() == "UNKNOWN" else text


def read_chinese_wced(folder: Path) -> Iterator[Page]:
    """Yield the chinese-wced-dev pages; page ids are the file uuids."""
    original = require_dir(folder / "original")
    for html_path in sorted(original.glob("*.html.gz")):
        uuid = html_path.name.removesuffix(".html.gz")
        url = sniff_url(gzip.decompress(html_path.read_bytes()))
        yield Page(
            dataset="chinese-wced-dev",
            page_id=uuid,
            html_path=html_path,
            url=url,
            gold_text=_read_optional(folder / "cleaned" / f"{uuid}.txt"),
            page_type=ARTICLE,
            lang="zh",
            site=url_site(url),
            extra={
                "author": _read_optional(folder / "author" / f"{uuid}.txt"),
                "date": _read_optional(folder / "date" / f"{uuid}.txt"),
            },
        )
