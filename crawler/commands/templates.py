"""``scrapy templates``: inspect, export, clear and build the per-site template library.

    scrapy templates list [--store PATH]
    scrapy templates show SITE [--all] [--store PATH]
    scrapy templates export SITE [-o FILE] [--store PATH]
    scrapy templates clear SITE [--store PATH]
    scrapy templates build --site NAME PATH... [--batch-pages N1] [--min-frequency N2] [--store PATH]

The library (paper 004, :mod:`templates_db.library`) keeps, per site, the leaf tags that
recur across its pages (navigation, copyright and "source" lines) in the store named by
TEMPLATES_STORE (a folder holding ``templates.sqlite3``, or a ``.sqlite3`` path); ``--store``
overrides it for one run.

* ``list``: one line per site of the store: site, generation, active templates, retired
  templates, pages and batches learned from, drift events, last update (ISO 8601, UTC).
* ``show SITE``: the site's state, its active templates sorted by frequency (tag, frequency,
  best batch share, hits, text cut to 60 characters) and its drift events; ``--all`` adds the
  retired templates of earlier generations, marked with their generation.
* ``export SITE``: everything stored for the site as JSON (UTF-8, indented) on stdout or to
  ``-o FILE``.
* ``clear SITE``: deletes the site's templates, state, events and parked batches, without a
  prompt, and prints how many templates were deleted.
* ``build --site NAME PATH...``: learns the site's templates offline from saved pages (PATH as
  for ``scrapy extract``: files, globs or folders of ``.html``/``.htm``, optionally ``.gz``).
  Pages are read in sorted path order and learned in batches of TEMPLATES_BATCH_PAGES
  (``--batch-pages``); a tag on at least TEMPLATES_MIN_FREQUENCY pages of a batch
  (``--min-frequency``) becomes a template, and the last, partial batch is promoted at the end
  when it has that many pages (otherwise it is parked for the next build or crawl). An
  existing library is extended. Prints pages read, failed, batches and active templates.

Reading actions never create a store: a missing store (or a zero-length file) has no sites. Exit status: 0 done;
1 when SITE is unknown to the store (the known sites are listed) or ``build`` found or read no
page; 2 when the store is unusable (corrupt file, newer schema). Bad usage is a UsageError.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import logging
import sys
from datetime import UTC, datetime
from typing import IO, Any

from scrapy.commands import ScrapyCommand
from scrapy.exceptions import UsageError

from crawler.cli import ProjectCommand
from crawler.commands.extract import find_pages, read_page
from crawler.logs import notice
from crawler.progress import Progress
from extraction.page import Page
from templates_db.library import TemplateLibrary, TemplatesConfig
from templates_db.store import (
    SiteState,
    StoredTemplate,
    TemplateStore,
    TemplateStoreError,
    open_store,
    store_exists,
)

logger = logging.getLogger(__name__)

ACTIONS = ("list", "show", "export", "clear", "build")
SHOW_TEXT_CHARS = 60  # template texts longer than this are cut in `show`
# Options that only one action takes, with that action (checked so that a misplaced option is not ignored).
_ACTION_OPTIONS = {"all": ("show", "--all"), "output": ("export", "-o/--output"), "site": ("build", "--site"),
                   "batch_pages": ("build", "--batch-pages"), "min_frequency": ("build", "--min-frequency")}


class UnknownSite(Exception):
    """SITE is not in the store; the message lists the known sites."""


def iso_time(timestamp: float | None) -> str:
    """Return a unix time as ISO 8601 in UTC to the second, "-" for None, a value that is no time as it is."""
    if timestamp is None:
        return "-"
    try:
        return datetime.fromtimestamp(timestamp, tz=UTC).isoformat(timespec="seconds")
    except (TypeError, ValueError, OverflowError, OSError):  # a damaged store's text or out-of-range number
        return str(timestamp)


def shorten(text: str, limit: int = SHOW_TEXT_CHARS) -> str:
    """Return ``text`` cut to ``limit`` characters, with "..." when it was cut."""
    return text if len(text) <= limit else text[: limit - 3] + "..."


def format_table(header: list[str], rows: list[list[str]]) -> list[str]:
    """Return the lines of a left-aligned plain-text table (last column not padded)."""
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    return ["  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
            for row in [header, *rows]]


def site_state(store: TemplateStore, site: str) -> SiteState:
    """Return the state of ``site``; raise UnknownSite listing the store's sites when it has none."""
    state = store.site_state(site)
    if state is None:
        known = ", ".join(summary.site for summary in store.sites()) or "none"
        raise UnknownSite(f"site {site!r} is not in the template store {store.location} (known sites: {known})")
    return state


def list_lines(store: TemplateStore) -> list[str]:
    """Return the lines of ``list``: a table with one row per site, or a "no sites" message."""
    summaries = store.sites()
    if not summaries:
        return [f"No sites in the template store {store.location}."]
    header = ["site", "generation", "active", "retired", "pages", "batches", "drift", "updated"]
    rows = [[s.site, str(s.generation), str(s.active), str(s.retired), str(s.pages), str(s.batches),
             str(s.drift_events), iso_time(s.updated_at)] for s in summaries]
    return format_table(header, rows)


def show_lines(store: TemplateStore, site: str, include_retired: bool = False) -> list[str]:
    """Return the lines of ``show``: state, templates by frequency, drift events; raises UnknownSite."""
    state = site_state(store, site)
    lines = [
        f"Site {site} (store {store.location})",
        f"  generation {state.generation}, {state.pages} pages in {state.batches} batches, "
        f"{state.drift_events} drift events; created {iso_time(state.created_at)}, "
        f"updated {iso_time(state.updated_at)}",
    ]
    templates = store.templates(site, include_retired=include_retired)
    active = [t for t in templates if t.retired_at is None]
    retired = [t for t in templates if t.retired_at is not None]
    lines.append(f"Active templates ({len(active)})")
    lines += _template_table(active, mark_retired=False) if active else ["  (none)"]
    if include_retired:
        lines.append(f"Retired templates ({len(retired)})")
        lines += _template_table(retired, mark_retired=True) if retired else ["  (none)"]
    events = [event for event in store.events(site) if event[1] == "drift"]
    lines.append(f"Drift events ({len(events)})")
    lines += [f"  {iso_time(at)}  {detail}" for at, _, detail in events] or ["  (none)"]
    return lines


def _template_table(templates: list[StoredTemplate], mark_retired: bool) -> list[str]:
    ordered = sorted(templates, key=lambda t: (-t.frequency, t.id))
    header = ["frequency", "share", "hits", "tag", "text"]
    rows = [[str(t.frequency), f"{t.share:.2f}", str(t.hits), t.tag, shorten(t.text)] for t in ordered]
    if mark_retired:
        header = ["generation", "retired", *header]
        rows = [[str(t.generation), iso_time(t.retired_at), *row] for t, row in zip(ordered, rows, strict=True)]
    return ["  " + line for line in format_table(header, rows)]


@dataclasses.dataclass
class BuildReport:
    """What ``build`` did."""

    pages: int = 0  # pages read and learned from
    failed: int = 0  # pages that could not be read
    batches: int = 0  # batches promoted by this build
    drift_events: int = 0
    active: int = 0  # active templates of the site afterwards
    parked_pages: int = 0  # pages of a last batch too small to promote, parked for later


def build_library(library: TemplateLibrary, site: str, paths: list[str]) -> BuildReport:
    """Learn ``site``'s templates from the pages at ``paths`` (in this order) and return the report."""
    store = library.store
    if store is None:
        raise TemplateStoreError("the template library has no store to build into")
    before = store.site_state(site)
    report = BuildReport()
    with Progress(len(paths), f"Templates {site}") as progress:
        for path in paths:
            try:
                page = Page(read_page(path))
                if page.refusal is not None:
                    raise ValueError(f"not a page: {page.refusal}")
                root = page.tree
            except Exception as exc:  # one bad page must not stop a build: it is counted and logged
                report.failed += 1
                logger.warning("Could not read %s: %s: %s", path, type(exc).__name__, exc)
            else:
                library.observe(site, root)
                report.pages += 1
            progress.update(failed=report.failed)
    library.finish(site)
    report.parked_pages = library.summary().get(site, {}).get("batch_pages", 0)
    after = store.site_state(site)
    if after is not None:
        report.batches = after.batches - (before.batches if before else 0)
        report.drift_events = after.drift_events - (before.drift_events if before else 0)
    report.active = len(store.templates(site))
    return report


class Command(ProjectCommand, ScrapyCommand):
    """List, show, export, clear or build the per-site template library."""

    requires_project = True
    requires_crawler_process = False

    def syntax(self) -> str:
        return "ACTION [options] [SITE | PATH...]"

    def short_desc(self) -> str:
        return "List, show, export, clear or build (from saved pages) the per-site template library"

    def long_desc(self) -> str:
        # One paragraph: Scrapy's help formatter rewraps the description (and turns lines ending with a colon
        # into headings).
        return (
            "Manage the per-site template library (paper 004) in the store of TEMPLATES_STORE or --store. "
            "ACTION is one of list, show, export, clear, build. "
            "'list' prints one line per site (generation, active and retired templates, pages, batches, "
            "drift events, last update). "
            "'show SITE' prints the site's state, its active templates by frequency and its drift events; "
            "--all adds retired templates. "
            "'export SITE' writes everything stored for the site as JSON to stdout or -o FILE. "
            "'clear SITE' deletes the site's library without asking and prints how many templates went. "
            "'build --site NAME PATH...' learns the site's templates from saved pages (files, globs, folders, "
            "as scrapy extract reads them) in sorted path order; --batch-pages and --min-frequency override "
            "TEMPLATES_BATCH_PAGES and TEMPLATES_MIN_FREQUENCY. "
            "Exit status 1 for a site unknown to the store or no page to build from, 2 for an unusable store."
        )

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        super().add_options(parser)
        parser.add_argument("--store", metavar="PATH", help="template store (folder or .sqlite3 file) instead "
                                                            "of the TEMPLATES_STORE setting")
        parser.add_argument("--all", action="store_true", help="show: include retired templates")
        parser.add_argument("-o", "--output", metavar="FILE", help="export: write the JSON here instead of stdout")
        parser.add_argument("--site", metavar="NAME", help="build: the site's key in the library")
        parser.add_argument("--batch-pages", type=int, metavar="N1",
                            help="build: pages per batch (default TEMPLATES_BATCH_PAGES)")
        parser.add_argument("--min-frequency", type=int, metavar="N2",
                            help="build: pages of a batch a tag must be on to become a template "
                                 "(default TEMPLATES_MIN_FREQUENCY)")

    def run(self, args: list[str], opts: argparse.Namespace) -> None:
        if not args:
            raise UsageError(f"give an ACTION: {', '.join(ACTIONS)}")
        action, rest = args[0], args[1:]
        if action not in ACTIONS:
            raise UsageError(f"unknown ACTION {action!r}; known: {', '.join(ACTIONS)}")
        unknown_options = [arg for arg in rest if arg.startswith("-") and arg != "-"]
        if unknown_options:
            raise UsageError(f"unknown option(s): {' '.join(unknown_options)}")
        for name, (owner, flag) in _ACTION_OPTIONS.items():
            value = getattr(opts, name)
            if value is not None and value is not False and action != owner:
                raise UsageError(f"{flag} is an option of '{owner}', not of '{action}'")
        config = self._config(opts, action)
        try:
            if action == "list":
                self._expect(rest, 0, "list takes no argument")
                self.exitcode = self._list(config)
            elif action == "build":
                self.exitcode = self._build(config, opts, rest)
            else:
                self._expect(rest, 1, f"{action} takes one SITE")
                self.exitcode = self._site_action(config, action, rest[0], opts)
        except TemplateStoreError as exc:
            print(f"error: {exc}", file=sys.stderr)
            self.exitcode = 2

    @staticmethod
    def _expect(rest: list[str], count: int, message: str) -> None:
        if len(rest) != count:
            raise UsageError(f"{message}, got {len(rest)}: {' '.join(rest)}".rstrip(": "))

    def _config(self, opts: argparse.Namespace, action: str) -> TemplatesConfig:
        assert self.settings is not None
        try:
            config = TemplatesConfig.from_settings(self.settings)
            changes: dict[str, Any] = {}
            if opts.store is not None:
                if not opts.store.strip():
                    raise UsageError("--store needs a non-empty PATH")
                changes["store"] = opts.store
            if action == "build":
                changes["learn"] = True  # an explicit build learns whatever TEMPLATES_LEARN says for crawls
                if opts.batch_pages is not None:
                    changes["batch_pages"] = opts.batch_pages
                if opts.min_frequency is not None:
                    changes["min_frequency"] = opts.min_frequency
            config = dataclasses.replace(config, **changes)
            config.validate()
        except ValueError as exc:
            raise UsageError(f"{exc} (--batch-pages/--min-frequency override these settings)") from exc
        return config

    @staticmethod
    def _open(config: TemplatesConfig) -> TemplateStore:
        return open_store(config.store)

    def _list(self, config: TemplatesConfig) -> int:
        if not store_exists(config.store):
            print(f"No sites: there is no template store at {config.store}.")
            return 0
        store = self._open(config)
        try:
            print("\n".join(list_lines(store)))
        finally:
            store.close()
        return 0

    def _site_action(self, config: TemplatesConfig, action: str, site: str, opts: argparse.Namespace) -> int:
        if not store_exists(config.store):
            print(f"error: site {site!r} is not in the template store: there is no store at {config.store}",
                  file=sys.stderr)
            return 1
        store = self._open(config)
        try:
            if action == "show":
                print("\n".join(show_lines(store, site, include_retired=opts.all)))
            elif action == "export":
                site_state(store, site)
                self._write_json(store.export(site), opts.output)
            else:
                site_state(store, site)
                deleted = store.clear(site)
                print(f"Cleared site {site}: {deleted} templates deleted from {store.location}")
        except UnknownSite as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 1
        finally:
            store.close()
        return 0

    @staticmethod
    def _write_json(data: dict[str, Any], output: str | None) -> None:
        text = json.dumps(data, ensure_ascii=False, indent=2) + "\n"
        if output is None:
            sys.stdout.write(text)
            return
        out: IO[str]
        with open(output, "w", encoding="utf-8") as out:
            out.write(text)
        notice(logger, "Exported to %s", output)

    def _build(self, config: TemplatesConfig, opts: argparse.Namespace, rest: list[str]) -> int:
        if not opts.site or not opts.site.strip():
            raise UsageError("build needs --site NAME")
        if not rest:
            raise UsageError("build needs at least one PATH")
        paths = sorted(set(find_pages(rest)))
        if not paths:
            print("error: no .html/.htm(.gz) page found in " + " ".join(rest), file=sys.stderr)
            return 1
        refused: list[str] = []  # the store's errors: the library logs each and goes on, as a crawl must
        library = TemplateLibrary(self._open(config), config,
                                  lambda key: refused.append(key) if key == "templates/store_error" else None)
        try:
            logger.info("Templates %s: building from %d pages (batches of %d, min frequency %d) into %s",
                        opts.site, len(paths), config.batch_pages, config.min_frequency, config.store)
            report = build_library(library, opts.site, paths)
        finally:
            library.close()
        if refused:  # a read-only or locked store: "built" would be untrue (it said so, and exited 0)
            print(f"error: the template store {config.store} refused {len(refused)} write(s) (above): the build of "
                  f"{opts.site} is not stored, or not whole", file=sys.stderr)
            return 1
        print(f"Built site {opts.site}: {report.pages} pages read, {report.failed} failed, "
              f"{report.batches} batches, {report.active} templates active"
              + (f", {report.drift_events} drift events" if report.drift_events else "")
              + (f"; {report.parked_pages} pages parked (fewer than --min-frequency {config.min_frequency})"
                 if report.parked_pages else ""))
        return 0 if report.pages else 1
