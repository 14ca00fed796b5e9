"""``scrapy report``: the crawl report (one self-contained HTML page) from a crawl's outputs.

    scrapy report FEED.jsonl... [--stats STATS.json] [--templates STORE] [-o REPORT.html] [--title TITLE]

The records come from the JSONL feeds (several runs of a scheduled crawl give one report; ``.jsonl.gz`` too), the
stats from the crawl's STATS_FILE (optional: without it the report is made from the records alone), the template
counts from the template store (default: the TEMPLATES_STORE setting) and the sampled screenshots from the WARC
files (or screenshot files) the records name. The same page the crawl writes at its end (REPORT_ENABLED).
Default output: the first feed's name with ``.report.html`` for ``.jsonl``. Exit status 2 when a feed or the
stats file cannot be read, 1 when the feeds hold no record.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from pathlib import Path
from typing import Any

from scrapy.commands import ScrapyCommand
from scrapy.exceptions import UsageError

from crawler.cli import ProjectCommand
from crawler.corpus import feed_records
from crawler.progress import Progress
from crawler.report import CrawlSummary, write_report
from crawler.report.summary import finite_number

logger = logging.getLogger(__name__)


def default_output(feed: str) -> Path:
    """Return the report path beside a feed: ``x.jsonl`` (or ``x.jsonl.gz``) -> ``x.report.html``."""
    path = Path(feed)
    stem = path.name.removesuffix(".gz").removesuffix(".jsonl")
    return path.with_name(stem + ".report.html")


class Command(ProjectCommand, ScrapyCommand):
    """Make the crawl report of a crawl's JSONL feeds and stats file."""

    requires_project = True

    def syntax(self) -> str:
        return "[options] FEED.jsonl..."

    def short_desc(self) -> str:
        return "Write the HTML crawl report of a crawl's JSONL feeds, stats file and template store"

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        super().add_options(parser)
        parser.add_argument("-o", "--output", metavar="REPORT.html", help="default: FEED.report.html")
        parser.add_argument("--stats", metavar="STATS.json", help="the crawl's STATS_FILE")
        parser.add_argument("--templates", metavar="STORE", help="the template store (default: TEMPLATES_STORE)")
        parser.add_argument("--title", default=None, help="the report's heading")

    def run(self, args: list[str], opts: argparse.Namespace) -> None:
        if not args:
            raise UsageError("give at least one JSONL feed")
        assert self.settings is not None
        stats: dict[str, Any] | None = None
        try:
            if opts.stats:
                stats = _stats(opts.stats)
            for feed in args:
                if not Path(feed).is_file():
                    raise ValueError(f"{feed} is not a file")
            sizes = [Path(feed).stat().st_size for feed in args]
        except (OSError, ValueError, RecursionError) as exc:
            print(f"error: {exc}", file=sys.stderr)
            self.exitcode = 2
            return
        summary = CrawlSummary()
        bad = 0
        cut: list[str] = []
        with Progress(sum(sizes), "Reading records", unit="B") as progress:
            for feed in args:
                for _, _, record in feed_records(Path(feed), progress.update, cut):
                    if record is None:
                        bad += 1  # a line cut by a killed crawl, or JSON that is no record: another file's line
                    else:
                        summary.add(record)
        for why in cut:
            logger.warning("%s: its records up to there are read", why)
        if bad:
            logger.warning("%d lines of %s are not JSON records: left out", bad, ", ".join(args))
        if not summary.records:
            print("error: no record in " + " ".join(args), file=sys.stderr)
            self.exitcode = 1
            return
        title = opts.title or "Crawl report: " + ", ".join(_shown(Path(feed).name) for feed in args[:3]) + \
            (f" and {len(args) - 3} more" if len(args) > 3 else "")
        output = opts.output or default_output(args[0])
        try:
            path = write_report(output, summary, stats, opts.templates or self.settings.get("TEMPLATES_STORE"), title)
        except OSError as exc:  # a folder, a missing or unwritable place: the records were read, nothing is written
            print(f"error: cannot write the report to {output}: {exc.strerror or exc}", file=sys.stderr)
            self.exitcode = 2
            return
        print(f"Report of {summary.records} records written to {path}")
        self.exitcode = 0


def _shown(name: str) -> str:
    """Return a file name as text (bytes that are no UTF-8 as U+FFFD: the report is written as UTF-8)."""
    return name.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


# Scrapy's stats that are text (the others are counts and seconds, which the report computes with).
TEXT_STATS = ("start_time", "finish_time", "finish_reason")


def _stats(path: str) -> dict[str, Any]:
    """Return the crawl's stats file: a JSON object of numbers (and Scrapy's few texts); other values, another
    tool's or damage, are left out. Raises ValueError naming the file when it is no JSON object."""
    try:
        stats = json.loads(Path(path).read_text(encoding="utf-8"))
    except ValueError as exc:
        raise ValueError(f"{path} is not a JSON stats file: {exc}") from exc
    if not isinstance(stats, dict):
        raise ValueError(f"{path} is not a stats file: a JSON {type(stats).__name__}, not an object")
    return {key: value for key, value in stats.items()
            if finite_number(value) or (key in TEXT_STATS and isinstance(value, str))}
