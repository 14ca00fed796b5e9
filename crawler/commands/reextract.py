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
and ``warc_file`` / ``warc_offset`` / ``warc_length`` name the capture it was read from. Duplicates are marked
among the records of this run, in the order read (DEDUP_*; DEDUP_DROP leaves them out); ``change`` is "new", as
in a crawl without a crawl state (every record new to the corpus written). With the store the crawl used, frozen,
the records equal the crawl's (tested: ``tests/crawler/commands/test_reextract.py``).

Exit status: 0; 1 when every page failed; 2 when no WARC file or capture was found.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from pathlib import Path
from typing import IO

from scrapy.commands import ScrapyCommand
from scrapy.exceptions import UsageError

from crawler.commands.extract import find_pages, frozen_library
from crawler.progress import Progress
from crawler.sitetypes import StoredHints
from extraction.dedup import DedupConfig, DuplicateIndex, Fingerprint, deduplicate, fingerprint
from extraction.onnx import ModelError
from extraction.process import Context
from extraction.record import Record
from extraction.warc import Capture, read_captures
from pipelines.process import PageHandler

logger = logging.getLogger(__name__)

WARC_SUFFIXES = (".warc", ".warc.gz")


class Reextractor:
    """Turns captures into records with the crawl's handler, marking duplicates among them."""

    def __init__(self, handler: PageHandler, hints: StoredHints | None, dedup: DedupConfig) -> None:
        self.handler = handler
        self.hints = hints
        self.dedup = dedup
        self.index = DuplicateIndex(dedup) if dedup.enabled else None

    def record(self, capture: Capture) -> Record:
        """Return the record of one capture."""
        record = capture.record()
        page = capture.page()
        if self.hints is not None:
            page.site_hint = self.hints.hint(page.site, record.crawl.get("url") or record.canonical_url)
        record = self.handler(page, record)
        record.change = "new"
        made = record.crawl.pop("fingerprint", None)
        if self.index is not None and record.error is None:
            fp = Fingerprint(*made) if made is not None else fingerprint(record.text, self.dedup)
            deduplicate(record, str(record.crawl.get("url") or record.url or ""), fp, self.index)
        return record


class Command(ScrapyCommand):
    """Re-extract the pages of WARC files with the current flow."""

    requires_project = True
    default_settings = {"LOG_LEVEL": "INFO"}

    def syntax(self) -> str:
        return "[options] WARC..."

    def short_desc(self) -> str:
        return "Extract the pages of the crawl's WARC files again with today's models and templates, to JSON lines"

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        super().add_options(parser)
        parser.add_argument("-o", "--output", metavar="OUT.jsonl", help="write here instead of stdout")
        parser.add_argument("--no-templates", action="store_true",
                            help="neither remove the sites' templates nor apply their page-type votes")

    def run(self, args: list[str], opts: argparse.Namespace) -> None:
        if not args:
            raise UsageError("give at least one WARC file or folder")
        paths = list(find_pages(args, WARC_SUFFIXES))
        missing = [path for path in paths if not Path(path).is_file()]
        if missing or not paths:
            print("error: no WARC file (.warc, .warc.gz) at " + " ".join(missing or args), file=sys.stderr)
            self.exitcode = 2
            return
        assert self.settings is not None
        library = None if opts.no_templates else frozen_library(self.settings)
        if library is not None:
            logger.info("Templates and page-type votes from %s (frozen)", library.config.store)
        try:
            context = Context.from_settings(self.settings, templates=library)
        except ModelError as exc:
            raise UsageError(f"models unusable: {exc}") from exc
        dedup = DedupConfig.from_settings(self.settings)
        reextractor = Reextractor(PageHandler(context, None), None if opts.no_templates else StoredHints(self.settings),
                                  dedup)
        pages = failed = dropped = 0
        out: IO[str] = open(opts.output, "w", encoding="utf-8") if opts.output else sys.stdout  # noqa: SIM115
        try:
            with Progress(sum(Path(path).stat().st_size for path in paths), "Re-extracting", unit="B") as progress:
                for path in paths:
                    done_in_file = 0
                    for capture in read_captures(path):
                        record = reextractor.record(capture)
                        pages += 1
                        failed += record.error is not None
                        if record.duplicate_of is not None and dedup.drop:
                            dropped += 1
                        else:
                            out.write(json.dumps(record.as_dict(), ensure_ascii=False) + "\n")
                        # Progress by the file's compressed bytes: a capture ends where the next begins.
                        progress.update(capture.location.offset - done_in_file, pages=pages, failed=failed)
                        done_in_file = capture.location.offset
                    progress.update(Path(path).stat().st_size - done_in_file)
        finally:
            if out is not sys.stdout:
                out.close()
            if library is not None:
                library.close()
        logger.info("Re-extracted %d pages from %d WARC files: %d failed%s", pages, len(paths), failed,
                    f", {dropped} duplicates left out" if dropped else "")
        if not pages:
            print("error: no capture found in " + " ".join(args), file=sys.stderr)
        self.exitcode = 2 if not pages else 1 if failed == pages else 0
