"""Where a crawl's outputs go: each run's files named like its feed, the crawl state beside its site list.

A run of ``scrapy crawl news_sites`` writes, for the feed ``corpus/2026-12-01T06-00-00+00-00.jsonl``:

- the feed itself (``-o``/``-O``/FEEDS; without one, DEFAULT_FEED_URI: ``output/news_sites-<time>.jsonl``);
- its folder, named like it without ``.jsonl``: ``corpus/2026-12-01T06-00-00+00-00/``, holding the run's WARC
  files (``warc/``; ARCHIVE_DIR, when set, is the folder instead);
- its report beside it: ``corpus/2026-12-01T06-00-00+00-00.report.html`` (REPORT_FILE, when set, instead).

So a run's WARC files are found from its feed, and runs never share a WARC folder. A feed that is no local file
(``-o -``, an S3 URI) names nothing: the run's files are named ``output/news_sites-<time>``. ``%(time)s`` and
``%(name)s`` in a feed URI are filled in once, here, so the feed and its companions carry the same time.

The crawl state (CRAWL_STATE_STORE, when unset) belongs to the site list, not to the checkout: ``my-sites.yaml``
keeps its state in ``my-sites.state/`` beside it, so two site lists never share their seen URLs or duplicate
index. A site list bundled with the project (``sites/``) keeps it under ``output/<name>.state/`` instead; and the
bundled demo, which ``scrapy crawl`` serves on a new free port each run (its URLs last one run), keeps a state of
the run, in the run's folder (``state/``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from extraction.paths import REPO_ROOT

BUNDLED_SITES = REPO_ROOT / "sites"
OUTPUT_DIR = Path("output")  # the default feed's folder (DEFAULT_FEED_URI), relative to the working directory
FEED_SUFFIXES = (".jsonl.gz", ".jsonl", ".jl", ".json", ".gz")
_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")


def feed_time(moment: datetime | None = None) -> str:
    """Return ``%(time)s`` as Scrapy's feed exports write it: UTC to the second, ``:`` as ``-``."""
    return (moment or datetime.now(UTC)).astimezone(UTC).replace(microsecond=0).isoformat().replace(":", "-")


def local_path(uri: str) -> Path | None:
    """Return the file a feed URI names on this machine, None for stdout, a remote feed or one with other
    placeholders (``%(batch_id)d``: a file per batch)."""
    if "%(" in uri:
        return None
    if uri.lower().startswith("file://"):
        return Path(uri[len("file://"):])
    if uri in ("-", "stdout:") or (_SCHEME.match(uri) and not re.match(r"^[a-zA-Z]:[\\/]", uri)):
        return None
    return Path(uri)


def stem(path: Path) -> Path:
    """Return a feed's path without its feed suffix: what the run's folder and report are named."""
    name = path.name
    for suffix in FEED_SUFFIXES:
        if name.lower().endswith(suffix) and len(name) > len(suffix):
            return path.with_name(name[: -len(suffix)])
    return path.with_name(name + ".run")  # a feed without a suffix: its folder cannot have its very name


def fill_feed_uris(feeds: dict[Any, dict[str, Any]], name: str, time: str,
                   worker: str = "") -> dict[str, dict[str, Any]]:
    """Return FEEDS with ``%(name)s``, ``%(time)s`` and ``%(worker)s`` (this worker's name, crawler/leases.py)
    filled in; other placeholders are left to Scrapy."""
    return {str(uri).replace("%(name)s", name).replace("%(time)s", time).replace("%(worker)s", worker or "worker"):
            dict(options or {})
            for uri, options in feeds.items()}


@dataclass(frozen=True)
class CrawlOutputs:
    """The files of one run (see the module docstring)."""

    time: str  # the run's %(time)s
    feed: Path | None  # the first local feed file, None when no feed is a local file
    base: Path  # the run's files are named after it: base/, base.report.html

    @classmethod
    def of(cls, feeds: dict[str, dict[str, Any]], name: str, time: str) -> CrawlOutputs:
        """Return the outputs of a run whose FEEDS (filled in) are ``feeds``."""
        for uri in feeds:
            path = local_path(uri)
            if path is not None:
                return cls(time, path, stem(path))
        return cls(time, None, OUTPUT_DIR / f"{name}-{time}")

    @property
    def folder(self) -> Path:
        """The run's folder (WARC files under ``warc/``; the demo's per-run state under ``state/``)."""
        return self.base

    @property
    def report(self) -> Path:
        return self.base.with_name(self.base.name + ".report.html")


def state_location(sites_file: str | Path, run: CrawlOutputs | None = None) -> str:
    """Return where a crawl of ``sites_file`` keeps its state when CRAWL_STATE_STORE is unset: beside the list
    (``my-sites.state``), under ``output/`` for a list bundled with the project, in the run's folder for a run
    whose sites last one run (``run``: the demo served by the crawl command)."""
    if run is not None:
        return str(run.folder / "state")
    path = Path(sites_file)
    name = path.name.rsplit(".", 1)[0] if "." in path.name else path.name
    try:
        bundled = path.resolve().is_relative_to(BUNDLED_SITES.resolve())
    except OSError:
        bundled = False
    return str((OUTPUT_DIR if bundled else path.parent) / f"{name}.state")
