"""``scrapy corpus``: the text corpus of a crawl's JSONL feeds, each page once.

    scrapy corpus FEED.jsonl|FOLDER... [-o CORPUS.jsonl] [--page-types article] [--lang zh,en]
                  [--since DATE] [--min-chars N] [--duplicates near|exact|keep] [--fields url,title,text]

Reads the feeds of one or many runs (a folder: its ``*.jsonl`` and ``*.jsonl.gz`` files in name order) and writes
the records a text corpus keeps (:mod:`crawler.corpus`): no error items, no page without text, the page types asked
for (default: articles), no duplicates the crawl marked nor copies of an earlier record's text, the same or near
(``--duplicates``), and of a page exported more than once (an article whose text changed) its last version. Lines
are written as the crawl wrote them, or with only ``--fields``. ``-o`` is written through a temporary file renamed
at the end (default: standard output). The summary on standard error says what was left out and why, and of the
duplicates, how many copy pages in no feed given (pages a crawl sharing the crawl state fetched first). Exit status
2 when a feed cannot be read, is no feed of crawl records, or an option is wrong; 1 when the feeds hold no record
or none is kept.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from pathlib import Path

from scrapy.commands import ScrapyCommand
from scrapy.exceptions import UsageError

from crawler.cli import ProjectCommand
from crawler.corpus import DUPLICATE_MODES, NEAR, Filters, feed_paths, select, write_corpus
from crawler.files import replace_atomically
from crawler.progress import Progress
from extraction.dedup import DedupConfig
from extraction.record import schema

logger = logging.getLogger(__name__)


class Command(ProjectCommand, ScrapyCommand):
    """Write the text corpus of a crawl's JSONL feeds."""

    requires_project = True
    requires_crawler_process = False

    def syntax(self) -> str:
        return "[options] FEED.jsonl|FOLDER..."

    def short_desc(self) -> str:
        return "Write the text corpus of a crawl's JSONL feeds: articles, each page once, no errors or duplicates"

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        super().add_options(parser)
        parser.add_argument("-o", "--output", metavar="CORPUS.jsonl", help="default: standard output")
        parser.add_argument("--page-types", metavar="TYPES", default=None,
                            help="comma-separated page types to keep: article, list, other, or all (default: article)")
        parser.add_argument("--lang", metavar="LANGS", default=None,
                            help="comma-separated languages to keep, primary subtags (zh keeps zh-Hans and zh-Hant)")
        parser.add_argument("--since", metavar="DATE", default=None,
                            help="leave out records published before this ISO 8601 date or time (undated are kept)")
        parser.add_argument("--min-chars", metavar="N", type=int, default=0, help="leave out texts shorter than N")
        parser.add_argument("--duplicates", choices=DUPLICATE_MODES, default=NEAR,
                            help="near (default): leave out the records the crawl marked duplicate_of and the copies "
                                 "of an earlier record's text, the same or near (MinHash, with the crawl's "
                                 "DEDUP_THRESHOLD and its other DEDUP_* values); exact: the same text only (faster); "
                                 "keep: keep them all")
        parser.add_argument("--fields", metavar="NAMES", default=None,
                            help="comma-separated record fields to write, in this order (default: the whole record)")

    def run(self, args: list[str], opts: argparse.Namespace) -> None:
        if not args:
            raise UsageError("give at least one JSONL feed or folder of feeds")
        known = schema()["properties"]
        fields = [name.strip() for name in (opts.fields or "").split(",") if name.strip()]
        unknown = [name for name in fields if name not in known]
        try:
            if unknown:
                raise ValueError(f"--fields: unknown field(s) {', '.join(unknown)}; the record's fields are "
                                 f"{', '.join(known)}")
            filters = Filters.parse(opts.page_types, opts.lang, opts.duplicates, opts.min_chars, opts.since)
            dedup = DedupConfig.from_settings(self.settings)
            output = Path(opts.output) if opts.output else None
            if output is not None and output.is_dir():
                raise ValueError(f"-o {output} is a folder")
            if output is not None and not output.absolute().parent.is_dir():
                raise ValueError(f"-o {output}: there is no folder {output.absolute().parent}")
            feeds = feed_paths(args, output)
            if not feeds:
                raise ValueError(f"no .jsonl feed in {' '.join(args)}")
            size = sum(path.stat().st_size for path in feeds)
        except (OSError, ValueError) as exc:
            print(f"error: {exc}", file=sys.stderr)
            self.exitcode = 2
            return
        try:
            with Progress(size, "Reading records", unit="B") as progress:
                selection = select(feeds, filters, progress.update)
        except OSError as exc:
            print(f"error: cannot read the feeds: {exc}", file=sys.stderr)
            self.exitcode = 2
            return
        for why in selection.cut:
            logger.warning("%s: its records up to there are read", why)
        if selection.no_records:
            print(f"error: not a JSONL feed of the crawl (no line is a crawl record): "
                  f"{', '.join(selection.no_records)}", file=sys.stderr)
            self.exitcode = 2
            return
        if not selection.records:
            junk = f" ({selection.unreadable:,} lines that are no JSON record)" if selection.unreadable else ""
            print(f"error: no record in {' '.join(args)}{junk}", file=sys.stderr)
            self.exitcode = 1
            return
        if not selection.chosen:  # records, none kept: -o is left as it was
            print(selection.summary(), file=sys.stderr)
            print(f"error: nothing kept of the feeds' records{f'; {output} is left as it was' if output else ''}",
                  file=sys.stderr)
            self.exitcode = 1
            return
        try:
            if output is None:
                write_corpus(feeds, selection, sys.stdout.buffer, fields, duplicates=filters.duplicates, dedup=dedup)
                sys.stdout.flush()
            else:
                with Progress(size, "Writing the corpus", unit="B") as progress:
                    replace_atomically(output, lambda out: write_corpus(feeds, selection, out, fields, progress.update,
                                                                        filters.duplicates, dedup))
        except BrokenPipeError:  # the reader stopped (``| head``): not this command's failure
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # the exit's flush would raise again
            self.exitcode = 0
            return
        except OSError as exc:  # no half corpus is left (crawler.files.replace_atomically)
            if exc.filename is not None and Path(exc.filename) in feeds:  # a feed gone since the first pass
                print(f"error: cannot read {exc.filename} again: {exc.strerror or exc}", file=sys.stderr)
            else:  # a full disk, an unwritable place
                print(f"error: cannot write the corpus{f' to {output}' if output else ''}: {exc.strerror or exc}",
                      file=sys.stderr)
            self.exitcode = 2
            return
        print(selection.summary() + (f" Written to {output}." if output else ""), file=sys.stderr)
        self.exitcode = 0 if selection.kept else 1
