"""``scrapy reextract``: the crawl's flow over its WARC archive, offline: the records the crawl would write today.

    scrapy reextract WARC... [-o OUT.jsonl] [--no-templates] [-s NAME=VALUE ...]

WARC is a file (``.warc``, ``.warc.gz``), a glob or a folder (searched recursively; a crawl writes its files
under ``ARCHIVE_DIR/warc/``). Every capture (:mod:`extraction.warc`), in file order and files in name order,
goes through the crawl's own page handler (:class:`pipelines.process.PageHandler`:
:func:`extraction.process.process`, then the text's fingerprint) with today's models and the template store
(TEMPLATES_STORE) *frozen*: the sites' templates and page-type votes are applied, nothing is learned and a
missing store is not created. No network, and nothing is archived again.

Each record starts from the capture's metadata record, as the spider started it in the crawl (URL found,
canonical URL, site, depth, fetch time and milliseconds, render flags), so its fetch fields are the crawl's,
and ``warc_file`` / ``warc_offset`` / ``warc_length`` name the capture it was read from. As the crawl's state
does across runs, each page (by the crawl state's key) is written once, ``change: "new"``: a later capture of it
(the WARC files of several scheduled runs read together) is written again only when it is an article whose
text changed (``change: "changed"``), never for a hub revisited for its links; a capture the crawl archived twice
(a page whose extraction worker died) is read once; EXPORT_ERROR_ITEMS off leaves errors out. Duplicates are
marked among the records written, in the order read (DEDUP_*; DEDUP_DROP leaves them out): the first read is the
original, where the crawl's was the first exported. With the store the crawl used, frozen, the records equal the
crawl's (tested: ``tests/crawler/commands/test_reextract.py``).

The pages are processed in the crawl's extraction workers (:class:`extraction.workers.PagePool`, EXTRACT_WORKERS,
one per CPU by default; 0 runs them in this process): every core works, and a page over EXTRACT_TIMEOUT seconds
has its worker replaced and its record ``error: "extract_timeout"`` (a dead worker gives ``extract_crashed``),
while the others go on. The records come out in the order read.

Exit status: 0; 1 when every record written failed; 2 when no WARC file or capture was found.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from scrapy.commands import ScrapyCommand
from scrapy.exceptions import UsageError

from crawler.cli import ProjectCommand
from crawler.commands.extract import find_pages, frozen_library, page_queue
from crawler.corpus import feed_records
from crawler.logs import notice
from crawler.progress import Progress
from crawler.sitetypes import StoredHints
from extraction.dedup import DedupConfig, DuplicateIndex, deduplicate, record_fingerprint
from extraction.page import Page
from extraction.record import Record
from extraction.warc import Capture, is_warc, read_captures
from extraction.workers import InOrder, WorkersConfig

logger = logging.getLogger(__name__)

WARC_SUFFIXES = (".warc", ".warc.gz")


class Reextractor:
    """Turns captures into the records the crawl exports: each page once, later fetches of it only when they
    changed, duplicates marked among them. :meth:`prepare` gives a capture's page to process, in the order read;
    :meth:`finish` the processed record as the crawl exported it, or None when the crawl exported none for it: a
    capture archived twice (a page whose worker died), a page read before that was fetched again (a hub revisited
    in a later round; an article rechecked whose text did not change: one whose text changed is ``change:
    "changed"``), an error with EXPORT_ERROR_ITEMS off, a duplicate with DEDUP_DROP."""

    def __init__(self, hints: StoredHints | None, dedup: DedupConfig, export_errors: bool = True) -> None:
        self.hints = hints
        self.dedup = dedup
        self.export_errors = export_errors
        self.index = DuplicateIndex(dedup) if dedup.enabled else None
        self.texts: dict[str, str] = {}  # page key -> text hash of its last record out
        self.captures: set[str] = set()  # capture ids read
        self.skipped: Counter[str] = Counter()

    def prepare(self, capture: Capture) -> tuple[Page, Record, str] | None:
        """Return the page to process, its record as the spider started it and its key; None for a capture read
        before (in the order read)."""
        record = capture.record()
        capture_id = record.crawl.get("capture")
        if capture_id:
            if capture_id in self.captures:
                self._skip("archived_twice")
                return None
            self.captures.add(capture_id)
        page = capture.page()
        key = str(record.crawl.get("url") or record.url or "")
        if self.hints is not None:
            page.site_hint = self.hints.hint(page.site, key or record.canonical_url)
        return page, record, key

    def finish(self, capture: Capture, record: Record, key: str) -> Record | None:
        """Return the processed ``record`` as the crawl exports it, or None (class docstring; in the
        order read: what was written before decides whether it changed or is a duplicate)."""
        if record.error is not None:
            record.crawl.pop("fingerprint", None)
            return record if self.export_errors else self._skip("error")
        fp = record_fingerprint(record, self.dedup)
        before = self.texts.get(key)
        self.texts[key] = fp.text_hash
        if before is not None:
            if capture.metadata.get("refetch") == "revisit" or record.page_type == "list":
                return self._skip("revisit")
            if before == fp.text_hash:
                return self._skip("unchanged")
            record.change = "changed"
        else:
            record.change = "new"
        if self.index is not None and deduplicate(record, key, fp, self.index) is not None and self.dedup.drop:
            return self._skip("duplicate")
        return record

    def _skip(self, reason: str) -> Record | None:
        """Count a capture that gives no record; return None."""
        self.skipped[reason] += 1
        return None


class Command(ProjectCommand, ScrapyCommand):
    """Re-extract the pages of WARC files with the current flow."""

    requires_project = True

    def syntax(self) -> str:
        return "[options] WARC... | --feed FEED.jsonl"

    def short_desc(self) -> str:
        return "Extract the pages of the crawl's WARC files again with today's models and templates, to JSON lines"

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        super().add_options(parser)
        parser.add_argument("-o", "--output", metavar="OUT.jsonl", help="write here instead of stdout")
        parser.add_argument("--feed", metavar="FEED.jsonl", action="append", default=[],
                            help="the WARC files a crawl's feed names (its records' warc_file); repeatable")
        parser.add_argument("--no-templates", action="store_true",
                            help="neither remove the sites' templates nor apply their page-type votes")

    @staticmethod
    def _named(feeds: list[str]) -> list[str]:
        """Return the WARC files the records of ``feeds`` name, in the order first named."""
        named: dict[str, None] = {}
        for feed in feeds:
            try:
                for _, _, record in feed_records(Path(feed)):
                    if record is not None and isinstance(record.get("warc_file"), str):
                        named[record["warc_file"]] = None
            except OSError as exc:
                raise UsageError(f"cannot read --feed {feed}: {exc.strerror or exc}") from None
            if not named:
                raise UsageError(f"--feed {feed} names no WARC file (its records have no warc_file)")
        return list(named)

    def run(self, args: list[str], opts: argparse.Namespace) -> None:
        if not args and not opts.feed:
            raise UsageError("give at least one WARC file or folder, or --feed FEED.jsonl")
        paths = list(dict.fromkeys([*find_pages(args, WARC_SUFFIXES), *self._named(opts.feed)]))
        missing = [path for path in paths if not Path(path).is_file()]
        if missing or not paths:
            print("error: no WARC file (.warc, .warc.gz) at " + " ".join(missing or args), file=sys.stderr)
            self.exitcode = 2
            return
        try:
            others = [path for path in paths if not is_warc(path)]
        except OSError as exc:
            raise UsageError(f"cannot read {exc.filename}: {exc.strerror or exc}") from None
        if others:
            print(f"error: not a WARC file: {', '.join(others)} (a crawl's WARC files are in the folder named like "
                  "its feed, under warc/)", file=sys.stderr)
            self.exitcode = 2
            return
        assert self.settings is not None
        try:
            workers = WorkersConfig.from_settings(self.settings)
        except ValueError as exc:
            raise UsageError(str(exc)) from exc
        library = None if opts.no_templates else frozen_library(self.settings)
        if library is not None:
            logger.info("Templates and page-type votes from %s (frozen)", library.config.store)
        out: IO[str] = sys.stdout
        if opts.output:  # before the workers start: an output that cannot be written is a usage error
            try:
                out = open(opts.output, "w", encoding="utf-8")  # noqa: SIM115
            except OSError as exc:
                raise UsageError(f"cannot write {opts.output}: {exc.strerror or exc}") from exc
        queue: InOrder[tuple[int, Capture, str]] = page_queue(self.settings, workers, library)
        reextractor = Reextractor(None if opts.no_templates else StoredHints(self.settings),
                                  DedupConfig.from_settings(self.settings),
                                  self.settings.getbool("EXPORT_ERROR_ITEMS", True))
        pages = failed = written = unreadable = 0
        finished = False
        try:
            with Progress(sum(Path(path).stat().st_size for path in paths), "Re-extracting", unit="B") as progress:
                done = 0  # bytes of the captures done, over every file

                def write(done_pages: Iterator[tuple[tuple[int, Capture, str], Record | None]]) -> None:
                    nonlocal pages, failed, written, done
                    for (end, capture, key), processed in done_pages:
                        pages += 1
                        record = None if processed is None else reextractor.finish(capture, processed, key)
                        if record is not None:
                            failed += record.error is not None
                            written += 1
                            out.write(record.json_line() + "\n")
                        progress.update(end - done, pages=pages, written=written, failed=failed)
                        done = end

                offset = 0  # bytes of the files before this one
                for path in paths:
                    try:
                        for capture in read_captures(path):
                            # Progress by the files' compressed bytes: a capture ends where the next begins.
                            end = offset + capture.location.offset
                            # A capture read before has no page and gives no record; it keeps its place.
                            page, record, key = reextractor.prepare(capture) or (None, None, "")
                            write(queue.add((end, capture, key), page, record))
                    except OSError as exc:  # unreadable (permissions, a disk error): the other files go on
                        logger.error("WARC file %s cannot be read: %s", path, exc.strerror or exc)
                        unreadable += 1
                    write(queue.drain())
                    offset += Path(path).stat().st_size
                    progress.update(offset - done)
                    done = offset
            finished = True
        finally:
            if out is not sys.stdout:
                out.close()
            queue.close(finished)
        skipped = ", ".join(f"{reason} {count}" for reason, count in sorted(reextractor.skipped.items()))
        notice(logger, "Re-extracted %d captures of %d WARC files: %d records written, %d of them failed%s", pages,
                    len(paths), written, failed, f"; not written: {skipped}" if skipped else "")
        if not pages:
            print("error: no capture found in " + " ".join(args), file=sys.stderr)
        self.exitcode = 2 if not pages else 1 if unreadable or (written and failed == written) else 0
