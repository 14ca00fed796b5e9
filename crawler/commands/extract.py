"""``scrapy extract``: run an extraction method over saved pages, offline.

    scrapy extract PATH... [-o OUT.jsonl] [--method NAME] [--url URL]

PATH may be a file (``.html``, ``.htm``, either with ``.gz``; the crawl's archived
``html/*.html.gz`` included), a glob or a folder (searched recursively for such files).
One JSON line per page: ``path`` (as given or as found under a given folder), ``url``,
``method``, ``page_type``, ``title``, ``text``, ``entries`` (list pages), ``encoding``, and
``error`` (null, or why the page failed). A failing page never stops the run; the exit status
is 0 unless every page failed (1), or no page was found (2).
"""

from __future__ import annotations

import argparse
import glob
import gzip
import json
import logging
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from scrapy.commands import ScrapyCommand
from scrapy.exceptions import UsageError

from extraction.encoding import decode_html
from extraction.methods import extract, method_names

logger = logging.getLogger(__name__)

PAGE_SUFFIXES = (".html", ".htm", ".html.gz", ".htm.gz")
PROGRESS_EVERY = 100  # pages between progress lines in the log


def find_pages(arguments: list[str]) -> Iterator[str]:
    """Yield page paths for files, globs and folders, in the order given (folders sorted)."""
    for argument in arguments:
        matches = sorted(glob.glob(argument, recursive=True)) if glob.has_magic(argument) else [argument]
        for match in matches:
            path = Path(match)
            if path.is_dir():
                yield from sorted(str(p) for p in path.rglob("*")
                                  if p.is_file() and p.name.lower().endswith(PAGE_SUFFIXES))
            else:
                yield match


def read_page(path: str) -> tuple[str, str]:
    """Return (HTML text, encoding) of a saved page, gunzipping ``.gz`` files."""
    data = Path(path).read_bytes()
    if path.lower().endswith(".gz") or data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    decoded = decode_html(data)
    return decoded.text, decoded.encoding


def extract_file(path: str, method: str, url: str | None) -> dict[str, Any]:
    """Return the JSON record for one page; failures give a record with ``error``."""
    record: dict[str, Any] = {"path": path, "url": url, "method": method, "page_type": None,
                              "title": None, "text": "", "entries": [], "encoding": None, "error": None}
    try:
        html, record["encoding"] = read_page(path)
        result = extract(html, method, url)
    except Exception as exc:  # one bad page must not stop a batch: it is reported in its line
        record["error"] = f"{type(exc).__name__}: {exc}"
        logger.warning("Could not extract %s: %s", path, record["error"])
        return record
    record.update(page_type=result.page_type, title=result.title, text=result.text,
                  entries=[{"text": e.text, "url": e.url} for e in result.entries])
    return record


class Command(ScrapyCommand):
    """Extract text from saved HTML pages with one method (``--method``)."""

    requires_project = True
    default_settings = {"LOG_LEVEL": "INFO"}

    def syntax(self) -> str:
        return "[options] PATH..."

    def short_desc(self) -> str:
        return "Extract clean text from saved pages (files, globs, folders) to JSON lines"

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        super().add_options(parser)
        parser.add_argument("-o", "--output", metavar="OUT.jsonl", help="write here instead of stdout")
        parser.add_argument("--method", default="fulltext",
                            help=f"extraction method: {', '.join(method_names())} (default: fulltext)")
        parser.add_argument("--url", help="the pages' URL (one page), used to resolve links")

    def run(self, args: list[str], opts: argparse.Namespace) -> None:
        if not args:
            raise UsageError("give at least one PATH")
        if opts.method not in method_names():
            raise UsageError(f"unknown --method {opts.method!r}; known: {', '.join(method_names())}")
        paths = list(find_pages(args))
        if not paths:
            print("error: no .html/.htm(.gz) page found in " + " ".join(args), file=sys.stderr)
            self.exitcode = 2
            return
        failed = 0
        out: IO[str] = open(opts.output, "w", encoding="utf-8") if opts.output else sys.stdout  # noqa: SIM115
        try:
            for done, path in enumerate(paths, start=1):
                record = extract_file(path, opts.method, opts.url)
                failed += record["error"] is not None
                out.write(json.dumps(record, ensure_ascii=False) + "\n")
                if done % PROGRESS_EVERY == 0:
                    logger.info("Extracted %d/%d pages (%d failed)", done, len(paths), failed)
        finally:
            if out is not sys.stdout:
                out.close()
        logger.info("Extracted %d pages with %s: %d failed", len(paths), opts.method, failed)
        self.exitcode = 1 if failed == len(paths) else 0
