"""Page-type sets without gold text: ``gne-chinese`` and ``article-vs-nonarticle``.

gne-chinese: GNE's test pages, ``tests/<site>/<n>.html.gz`` (articles) and
``test_list_page/<site>/<n>.html.gz`` (list pages). No gold: ``result.txt`` upstream is
GNE's own output for 20 of them, not a label, and is not read.

article-vs-nonarticle: pages of 10 (+2) news sites. ``manifest.json`` lists
``{"path", "site", "label", "url", "bytes"}`` per page; the stored file is ``path`` + ``.gz``
(file names are the base64 of the URL, decoded in ``url``). Labels: ``article`` -> "article";
``not_article`` -> "nonarticle" (upstream does not say the non-articles are list pages: they
mix section fronts, video, episode and recipe pages), kept apart from "list".
``not_articles/`` has two sites with no articles: foodnetwork, reddit.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

from evaluation.datasets.base import ARTICLE, LIST, NONARTICLE, Page, gz_path, require_dir, require_file
from evaluation.datasets.textutil import url_site

GNE_FOLDERS = {"tests": ARTICLE, "test_list_page": LIST}
LABELS = {"article": ARTICLE, "not_article": NONARTICLE}


def read_gne(folder: Path) -> Iterator[Page]:
    """Yield the GNE pages, articles first; page ids are "tests/<site>/<n>" or "test_list_page/<site>/<n>"."""
    for top, page_type in GNE_FOLDERS.items():
        top_dir = require_dir(folder / top)
        for html_path in sorted(top_dir.glob("*/*.html.gz")):
            site = html_path.parent.name
            stem = html_path.name.removesuffix(".html.gz")
            yield Page(
                dataset="gne-chinese",
                page_id=f"{top}/{site}/{stem}",
                html_path=html_path,
                url=None,
                gold_text=None,
                page_type=page_type,
                lang="zh",
                site=site,
            )


def read_article_vs_nonarticle(folder: Path) -> Iterator[Page]:
    """Yield the pages in manifest order; page ids are the manifest paths less ``.html``."""
    manifest = json.loads(require_file(folder / "manifest.json").read_text(encoding="utf-8"))
    for entry in manifest:
        path = str(entry["path"])
        url = entry.get("url") or None
        label = str(entry.get("label") or "")
        yield Page(
            dataset="article-vs-nonarticle",
            page_id=path.removesuffix(".html"),
            html_path=gz_path(folder, path),
            url=url,
            gold_text=None,
            page_type=LABELS.get(label),
            lang="en",
            site=entry.get("site") or url_site(url),
            extra={"label": label, "host": url_site(url)},
        )
