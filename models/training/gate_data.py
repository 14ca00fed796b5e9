"""The article gate's training rows: the records of a replayed crawl of the training sites, with their labels.

The gate (:mod:`extraction.gate`) reads a record as the crawl writes it, so its training rows come from the real
path: the labelled pages of every set that may train and has page types (``GATE_SETS``), outside the held-out
fold (``evaluation.folds.held_out``), are replayed at their original URLs (``evaluation.replay``) and crawled
once over plain HTTP with the project's default settings but the gate off (``PAGETYPE_GATE=False``: the record
as the steps before the gate leave it; the template store, crawl state and site evidence start empty). The
feed is cached as gzip-compressed JSON lines under ``$NEWSCORPUS_CACHE/gate`` (default
``~/.cache/newscorpus/gate``), keyed by the pages' bytes and URLs, the versions of the models that make the
record and ``RECORDS_VERSION`` (bump it when the flow changes what it writes).

Each page also enters as an older copy of itself (``models.training.gate_copies``: no declared metadata, half
of them as a web archive's copies), crawled apart and cached the same way.

Labels: article, list, other (wcxb-dev's listing/collection pages are list; its forum, product, service and
documentation pages other; frontpage-archive-de's legal and blocked pages other; newspaper4k-pages' redirect
stub and feed other). Groups: the page's site (``evaluation.folds.site_of``), so that a site's pages (and a
publisher's in fundus-articles and frontpage-archive-de, which share nine) stay in one fold.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import logging
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evaluation.folds import held_out, site_of
from evaluation.replay import ReplayPage, replay_crawl, replay_pages
from models.training.gate_copies import ARCHIVE_HOST, old_copy

logger = logging.getLogger(__name__)

CACHE_ENV = "NEWSCORPUS_CACHE"
RECORDS_VERSION = 1  # bump when the flow's records change in a way the models' versions do not show
# (dataset, guess URLs for pages without one): the sets that may train and carry page types.
GATE_SETS: tuple[tuple[str, bool], ...] = (("wcxb-dev", False), ("chinese-wced-dev", True),
                                           ("frontpage-archive-de", False), ("gerapy-zh", True),
                                           ("fundus-articles", False), ("newspaper4k-pages", True))
LABELS = ("article", "list", "other")
CRAWL_TIMEOUT = 3600.0  # seconds for the training crawl


@dataclass(frozen=True)
class Row:
    """One training page: its replayed page, label, group and the crawl's record (None: no record)."""

    page: ReplayPage
    label: str
    group: str
    record: dict[str, Any] | None
    variant: str = "page"  # "page", or the copy (models.training.gate_copies): "old" or "archived"
    # The page-level model's probabilities to read in place of the record's: out of fold, for the pages that model
    # trained on (models.training.gate_dom_oof); None: the record's.
    page_probabilities: tuple[float, float, float] | None = None

    @property
    def dataset(self) -> str:
        return self.page.dataset


def cache_dir() -> Path:
    """Return ``$NEWSCORPUS_CACHE/gate`` or ``~/.cache/newscorpus/gate``."""
    return Path(os.environ.get(CACHE_ENV) or Path.home() / ".cache" / "newscorpus") / "gate"


def training_pages() -> list[ReplayPage]:
    """Return the labelled pages of ``GATE_SETS`` outside the held-out fold that the replay can serve."""
    pages: list[ReplayPage] = []
    for name, guess in GATE_SETS:
        for page in replay_pages([name], guess_urls=guess):
            if page.source is not None and page.source.page_type in LABELS and not held_out(page.source):
                pages.append(page)
    return pages


def pages_key(pages: list[ReplayPage]) -> str:
    """Return the cache key of a crawl of ``pages``: their URLs and bytes, the flow's model versions,
    ``RECORDS_VERSION``."""
    from scrapy.utils.project import get_project_settings

    from extraction.process import Context

    settings = get_project_settings()
    settings.set("PAGETYPE_GATE", False)
    digest = hashlib.sha256(f"records {RECORDS_VERSION}\n".encode())
    digest.update(json.dumps(Context.pipeline_versions(settings), sort_keys=True).encode())
    for page in sorted(pages, key=lambda p: p.url):
        digest.update(f"{page.url}\t{hashlib.sha256(page.body).hexdigest()}\n".encode())
    return digest.hexdigest()[:16]


def crawl_records(pages: list[ReplayPage], refresh: bool = False) -> dict[str, dict[str, Any]]:
    """Return ``{url: record}`` of a replayed crawl of ``pages`` with the gate off (cached; ``refresh``: crawl
    again)."""
    path = cache_dir() / f"records-{pages_key(pages)}.jsonl.gz"
    if path.exists() and not refresh:
        logger.info("Training records from %s", path)
    else:
        work = Path(tempfile.mkdtemp(prefix="gate-crawl-"))
        try:
            logger.info("Crawling %d training pages through the replay (gate off) in %s", len(pages), work)
            records = replay_crawl(pages, work, {"PAGETYPE_GATE": "False", "LOG_LEVEL": "WARNING"}, CRAWL_TIMEOUT)
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(".tmp")
            with gzip.open(tmp, "wt", encoding="utf-8") as out:
                for record in records:
                    out.write(json.dumps(record, ensure_ascii=False) + "\n")
            os.replace(tmp, path)
        finally:
            shutil.rmtree(work, ignore_errors=True)
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        loaded = [json.loads(line) for line in handle if line.strip()]
    return {str(record.get("url")): record for record in loaded}


def training_rows(refresh: bool = False, copies: bool = True, oof: bool = True) -> list[Row]:
    """Return one row per training page (``training_pages``), its record from the cached crawl, and with
    ``copies`` one per page's older copy (``models.training.gate_copies.old_copy``, crawled apart). With ``oof``,
    the rows of the pages the page-type model trained on carry its out-of-fold probabilities
    (``models.training.gate_dom_oof``)."""
    from models.training.gate_dom_oof import dom_oof

    pages = training_pages()
    records = crawl_records(pages, refresh)
    old = [old_copy(page) for page in pages] if copies else []
    old_records = crawl_records(old, refresh) if copies else {}
    probabilities = dom_oof(old) if oof else {}

    def oof_of(key: tuple[str, str]) -> tuple[float, float, float] | None:
        found = probabilities.get(key)
        return None if found is None else (float(found[0]), float(found[1]), float(found[2]))

    rows = []
    for page in pages:
        assert page.source is not None
        rows.append(Row(page, str(page.source.page_type), site_of(page.source), records.get(page.url),
                        page_probabilities=oof_of((page.dataset, page.key))))
    for page in old:
        assert page.source is not None
        variant = "archived" if page.url.startswith(f"http://{ARCHIVE_HOST}/") else "old"
        rows.append(Row(page, str(page.source.page_type), site_of(page.source), old_records.get(page.url), variant,
                        oof_of((page.dataset, f"{page.key.removesuffix('#old')}#{page.url}"))))
    return rows
