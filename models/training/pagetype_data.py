"""Screenshots of labelled pages for the page-type CNN, rendered offline and cached outside the repo.

Sources: the page-type labels of three datasets (``wcxb-dev``, ``article-vs-nonarticle``,
``gne-chinese``, variant "offline": their saved HTML, no external CSS or images) and the demo
sites (``demo.content.build_sites``), rendered twice: variant "styled" (their CSS is inline) and
variant "unstyled" (styles stripped; measures what missing CSS costs). Every page is rendered by
``crawler.render.offline`` (no network) and the cache keeps the grayscale top crop of each
screenshot plus one manifest line per page::

    python -m models.training.pagetype_data render                     # all sources, resumable
    python -m models.training.pagetype_data render --datasets demo --limit 20
    python -m models.training.pagetype_data render --retry-failed       # render failed pages again

The cache is ``$PAGETYPE_CACHE`` or ``~/.cache/news-crawler/pagetype``: ``manifest.jsonl`` and
``crops/<dataset>/<variant>/*.png``. A manifest line holds the record (key, dataset, page_id, site,
fold, label, lang, url, variant), ``render_url`` (where the page was opened: its URL, else the one
it declares, else one on the site its links name; see ``render_url``), ``png`` (crop path relative
to the cache, null on failure), ``page_height`` (document height in CSS px), ``width``/``height``
(of the crop), ``flags`` (from ``RenderedPage``) and ``error``. Nothing here is imported at crawl
time.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import os
import re
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from PIL import Image

from crawler.render.offline import OfflineRenderConfig, RenderedPage, render_html
from crawler.render.saved_url import page_url
from demo.content import build_sites
from evaluation.datasets import Page, iter_pages
from evaluation.folds import fold_of, site_of
from extraction.dom.encoding import decode_html
from extraction.pagetype.models import load_gray

logger = logging.getLogger(__name__)

CACHE_ENV = "PAGETYPE_CACHE"
MANIFEST_NAME = "manifest.jsonl"
CROPS_DIR = "crops"
# Rows kept per column of width: inference crops at most the top 2x width of a screenshot, so a
# 3x crop loses nothing and leaves room for crop augmentation; it also keeps the cache small.
CROP_ROWS_PER_WIDTH = 3.0
DATASETS: tuple[str, ...] = ("wcxb-dev", "article-vs-nonarticle", "gne-chinese")
DEMO = "demo"
SOURCES: tuple[str, ...] = (*DATASETS, DEMO)
OFFLINE, STYLED, UNSTYLED = "offline", "styled", "unstyled"
# Demo pages are opened under this origin; their paths carry the site prefix (/en/, /zh/).
DEMO_ORIGIN = "http://demo.invalid"
PROGRESS_EVERY = 50  # pages between progress lines
RECORD_FIELDS = ("key", "dataset", "page_id", "site", "fold", "label", "lang", "url", "variant")


@dataclass(frozen=True)
class Source:
    """A page to render: its manifest record, how to get its HTML text, and whether to strip styles."""

    record: dict[str, Any]
    load_html: Callable[[], str]
    strip_styles: bool = False


def default_cache() -> Path:
    """Return the cache folder: ``$PAGETYPE_CACHE`` if set, else ``~/.cache/news-crawler/pagetype``."""
    env = os.environ.get(CACHE_ENV)
    if env:
        return Path(env).expanduser()
    return Path.home() / ".cache" / "news-crawler" / "pagetype"


def page_key(dataset: str, variant: str, page_id: str) -> str:
    """Return the key of one rendering: ``<dataset>/<variant>/<page_id>``."""
    return f"{dataset}/{variant}/{page_id}"


def _record(dataset: str, page_id: str, site: str, label: str | None, lang: str | None, url: str | None,
            variant: str) -> dict[str, Any]:
    return {
        "key": page_key(dataset, variant, page_id),
        "dataset": dataset,
        "page_id": page_id,
        "site": site,
        "fold": fold_of(site),
        "label": label,
        "lang": lang,
        "url": url,
        "variant": variant,
    }


def _dataset_loader(page: Page) -> Callable[[], str]:
    return lambda: decode_html(page.html_bytes()).text


def _constant(text: str) -> Callable[[], str]:
    return lambda: text


def _dataset_sources(name: str) -> Iterator[Source]:
    for page in iter_pages(name):
        record = _record(name, page.page_id, site_of(page), page.page_type, page.lang, page.url, OFFLINE)
        yield Source(record, _dataset_loader(page))


def _demo_sources() -> Iterator[Source]:
    sites = build_sites()
    for variant, strip in ((STYLED, False), (UNSTYLED, True)):
        for site in sites:
            for path, demo_page in sorted(site.pages.items()):
                record = _record(DEMO, f"{site.name}{path}", site.name, demo_page.page_type, site.lang,
                                 DEMO_ORIGIN + demo_page.path, variant)
                yield Source(record, _constant(demo_page.html), strip)


def iter_sources(sources: Iterable[str] = SOURCES) -> Iterator[Source]:
    """Yield every page to render of the named sources (dataset names and/or ``"demo"``), in order.

    Raises KeyError for an unknown name and DatasetNotFound when a dataset folder is missing.
    """
    for name in sources:
        if name == DEMO:
            yield from _demo_sources()
        elif name in DATASETS:
            yield from _dataset_sources(name)
        else:
            raise KeyError(f"unknown page-type source {name!r}; known: {', '.join(SOURCES)}")


def labelled_sources(sources: Iterable[str] = SOURCES) -> Iterator[dict[str, Any]]:
    """Yield the record of every page to render: key, dataset, page_id, site, fold, label, lang, url, variant."""
    for source in iter_sources(sources):
        yield dict(source.record)


def render_url(record: dict[str, Any], html: str) -> str | None:
    """Return the URL a page is opened at (``crawler.render.saved_url.page_url``)."""
    return page_url(str(record["page_id"]), html, record.get("url"))


def crop_path(record: dict[str, Any]) -> str:
    """Return the crop's path relative to the cache: ``crops/<dataset>/<variant>/<page id>-<hash>.png``."""
    digest = hashlib.sha1(record["key"].encode("utf-8")).hexdigest()[:10]
    stem = re.sub(r"[^A-Za-z0-9._-]+", "_", str(record["page_id"]))[-80:].strip("._") or "page"
    return f"{CROPS_DIR}/{record['dataset']}/{record['variant']}/{stem}-{digest}.png"


def top_crop(png: bytes) -> Image.Image:
    """Return the grayscale ("L") top of a screenshot: at most ``CROP_ROWS_PER_WIDTH`` x width rows."""
    gray = load_gray(png)
    rows = min(gray.shape[0], int(CROP_ROWS_PER_WIDTH * gray.shape[1]))
    return Image.fromarray(gray[:rows], mode="L")


def manifest_entry(cache: Path, record: dict[str, Any], result: RenderedPage, opened_at: str | None) -> dict[str, Any]:
    """Write the crop of ``result`` under ``cache`` (when there is a screenshot) and return its manifest line.

    ``opened_at`` is the URL the page was rendered at (``render_url``), kept as "render_url".
    """
    entry = {field: record[field] for field in RECORD_FIELDS}
    entry.update(render_url=opened_at, png=None, page_height=result.page_height, width=None, height=None,
                 flags=list(result.flags), error=result.error)
    if result.png is not None and result.error is None:
        crop = top_crop(result.png)
        relative = crop_path(record)
        target = cache / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_suffix(".tmp")
        crop.save(tmp, format="PNG")
        os.replace(tmp, target)
        entry.update(png=relative, width=crop.width, height=crop.height)
    return entry


def read_manifest(cache: Path) -> list[dict[str, Any]]:
    """Return the manifest's entries, one per key (the last line written for a key wins).

    A line that does not parse (a write cut short) is skipped with a warning.
    """
    path = Path(cache) / MANIFEST_NAME
    if not path.exists():
        return []
    entries: dict[str, dict[str, Any]] = {}
    with path.open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                entry = json.loads(line)
                entries[entry["key"]] = entry
            except (json.JSONDecodeError, KeyError, TypeError):
                logger.warning("%s line %d is not a manifest entry: skipped", path, number)
    return list(entries.values())


class _Progress:
    """Counts results and logs a line every PROGRESS_EVERY pages with the rate and the ETA."""

    def __init__(self, total: int) -> None:
        self.total = total
        self.done = 0
        self.failed = 0
        self.started = time.monotonic()
        self.by_outcome: Counter[tuple[str, str, str, str]] = Counter()

    def add(self, entry: dict[str, Any]) -> None:
        self.done += 1
        outcome = "failed" if entry["error"] else "rendered"
        self.failed += outcome == "failed"
        self.by_outcome[(outcome, entry["dataset"], entry["variant"], str(entry["label"]))] += 1
        if self.done % PROGRESS_EVERY == 0 or self.done == self.total:
            rate = self.done / max(time.monotonic() - self.started, 1e-9)
            eta = (self.total - self.done) / rate if rate else 0.0
            logger.info("%d/%d pages (%d failed), %.2f pages/s, ETA %.0f s", self.done, self.total,
                        self.failed, rate, eta)

    @property
    def rate(self) -> float:
        return self.done / max(time.monotonic() - self.started, 1e-9)


def render_missing(
    cache: Path,
    sources: Iterable[str] = SOURCES,
    limit: int | None = None,
    concurrency: int = 4,
    retry_failed: bool = False,
) -> dict[str, Any]:
    """Render the pages not yet in the manifest into ``cache``; returns a summary of this run.

    Pages already rendered are skipped, failed ones too unless ``retry_failed``. Pages are
    rendered in two batches (styles kept, styles stripped), each with its own browser.
    """
    cache.mkdir(parents=True, exist_ok=True)
    known = {entry["key"]: entry for entry in read_manifest(cache)}
    todo = [
        source for source in iter_sources(sources)
        if source.record["key"] not in known or (retry_failed and known[source.record["key"]].get("error"))
    ]
    if limit is not None:
        todo = todo[:limit]
    logger.info("%d pages to render into %s (%d already in the manifest)", len(todo), cache, len(known))
    progress = _Progress(len(todo))
    with (cache / MANIFEST_NAME).open("a", encoding="utf-8") as manifest:
        for strip in (False, True):
            batch = [source for source in todo if source.strip_styles == strip]
            if not batch:
                continue
            config = OfflineRenderConfig(concurrency=concurrency, strip_styles=strip)
            by_key = {source.record["key"]: source for source in batch}
            load_errors: dict[str, str] = {}
            urls: dict[str, str | None] = {}
            for result in render_html(_inputs(batch, load_errors, urls), config):
                if result.key in load_errors:
                    result = RenderedPage(result.key, error=load_errors[result.key])
                elif result.error:
                    logger.warning("%s failed: %s", result.key, result.error)
                entry = manifest_entry(cache, by_key[result.key].record, result, urls.pop(result.key, None))
                manifest.write(json.dumps(entry, ensure_ascii=False) + "\n")
                manifest.flush()
                progress.add(entry)
    return _summary(cache, progress)


def _inputs(
    batch: Sequence[Source], load_errors: dict[str, str], urls: dict[str, str | None]
) -> Iterator[tuple[str, str, str | None]]:
    """Yield (key, html, url) per source, noting each URL in ``urls``; a page whose HTML cannot be
    read is rendered empty and noted in ``load_errors``."""
    for source in batch:
        key = source.record["key"]
        try:
            html = source.load_html()
        except Exception as exc:  # one unreadable file must not end the batch
            logger.warning("Cannot read %s: %s", key, exc)
            load_errors[key] = f"load_failed: {type(exc).__name__}: {exc}"
            html = ""
        urls[key] = render_url(source.record, html)
        yield key, html, urls[key]


def _summary(cache: Path, progress: _Progress) -> dict[str, Any]:
    run: dict[str, dict[str, int]] = {}
    for (outcome, dataset, variant, label), count in sorted(progress.by_outcome.items()):
        bucket = run.setdefault(f"{dataset}/{variant}/{label}", {"rendered": 0, "failed": 0})
        bucket[outcome] += count
    entries = read_manifest(cache)
    flags = Counter(flag for entry in entries for flag in entry.get("flags") or [])
    totals: Counter[str] = Counter("failed" if entry.get("error") else "rendered" for entry in entries)
    size = sum(path.stat().st_size for path in cache.rglob("*") if path.is_file())
    return {
        "cache": str(cache),
        "run": {"pages": progress.done, "failed": progress.failed, "pages_per_s": round(progress.rate, 2),
                "by_source_label": run},
        "manifest": {"pages": len(entries), **totals, "flags": dict(sorted(flags.items())),
                     "bytes_on_disk": size},
    }


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    """Return the parsed command line."""
    parser = argparse.ArgumentParser(prog="python -m models.training.pagetype_data",
                                     description=__doc__.split("\n")[0] if __doc__ else None)
    commands = parser.add_subparsers(dest="command", required=True)
    render = commands.add_parser("render", help="render the pages not yet cached (resumable)")
    render.add_argument("--cache", type=Path, default=None, help=f"cache folder (default: ${CACHE_ENV} or "
                        "~/.cache/news-crawler/pagetype)")
    render.add_argument("--datasets", default=",".join(SOURCES),
                        help=f"comma-separated sources (default: {','.join(SOURCES)})")
    render.add_argument("--limit", type=int, default=None, help="render at most this many pages")
    render.add_argument("--concurrency", type=int, default=4, help="pages rendering at once (default 4)")
    render.add_argument("--retry-failed", action="store_true", help="render pages that failed before again")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    args = parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s", stream=sys.stderr)
    sources = [name.strip() for name in args.datasets.split(",") if name.strip()]
    unknown = [name for name in sources if name not in SOURCES]
    if unknown:
        logger.error("Unknown sources %s; known: %s", ", ".join(unknown), ", ".join(SOURCES))
        return 2
    cache = args.cache or default_cache()
    summary = render_missing(cache, sources, args.limit, args.concurrency, args.retry_failed)
    logger.info("Rendered %d pages (%d failed) at %.2f pages/s", summary["run"]["pages"], summary["run"]["failed"],
                summary["run"]["pages_per_s"])
    for group, counts in summary["run"]["by_source_label"].items():
        logger.info("  %-45s rendered %5d  failed %4d", group, counts["rendered"], counts["failed"])
    print(json.dumps(summary, indent=2, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
