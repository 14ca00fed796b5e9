"""``scrapy state``: inspect the crawl state of scheduled crawls, or make a site start over.

    scrapy state list [--sites FILE | --store PATH]
    scrapy state show URL [--sites FILE | --store PATH]
    scrapy state forget SITE [--sites FILE | --store PATH]
    scrapy state copy --to postgresql://... [--sites FILE | --store PATH] [--templates PATH]

The state (:mod:`templates_db.state`) is a crawl's: the one of the site list ``--sites`` names (``my-sites.state/``
beside ``my-sites.yaml``, :func:`crawler.outputs.state_location`; default NEWS_SITES_FILE), or CRAWL_STATE_STORE
when set, or a PostgreSQL database (``postgresql://...``, shared by several workers: docs/distributed.md);
``--store`` names one for this run.

* ``list``: one line per site: its round (and whether the last one finished), pages done, queued
  and failed, records exported, duplicates; on a shared state also the worker crawling it now
  (``owner``), how long ago it claimed the site (``lease``) and last renewed the lease (``renewed``),
  in the database's clock.
* ``show URL``: everything stored of a URL (an alias shows the page it names) as JSON: status,
  times, HTTP status, validators, hashes, page type, canonical URL, aliases, and the record it
  produced without its text.
* ``forget SITE``: deletes the site's pages, queue, hubs, aliases and fingerprints; its next crawl
  is a first one (every page fetched and exported again).
* ``copy --to URI``: copies an SQLite crawl state (``--store``, default as above) and the SQLite
  template store (``--templates``, default TEMPLATES_STORE) into the PostgreSQL database ``URI``, in
  one transaction each; the database must hold neither yet. Then point every worker's
  CRAWL_STATE_STORE and TEMPLATES_STORE at ``URI``.

Reading actions never create a state (a zero-length file counts as none and is left so). Exit status: 0 done;
1 for an unknown URL or site; 2 when the state is unusable (corrupt, locked, newer schema, unreachable) or a copy
cannot be made.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from scrapy.commands import ScrapyCommand
from scrapy.exceptions import UsageError

from crawler.cli import ProjectCommand
from crawler.commands.templates import format_table, iso_time
from crawler.progress import Progress
from crawler.state import CrawlStateConfig
from templates_db.copy import CopyError, copy_store, rows_to_copy
from templates_db.postgres import PostgresDatabase, display_uri, is_postgres, schema_exists
from templates_db.sqlite import DatabaseError, SQLiteDatabase, database_exists
from templates_db.state import CrawlState, CrawlStateError, LeaseInfo, SQLiteCrawlState, open_state, state_path
from templates_db.store import SQLiteTemplateStore, store_exists, store_path

ACTIONS = ("list", "show", "forget", "copy")


def age(seconds: float | None) -> str:
    """Return a duration the way ``list`` shows it: 42s, 5m, 3h, 2d; "-" for None."""
    if seconds is None:
        return "-"
    seconds = max(0.0, seconds)
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds / size:.0f}{unit}"
    return f"{seconds:.0f}s"


def list_lines(state: CrawlState) -> list[str]:
    """Return the ``list`` table: one row per site (with its lease on a shared state)."""
    leases: dict[str, LeaseInfo] = state.leases()
    rows = []
    for site, counts in sorted(state.summary().items()):
        number, completed = counts.get("round", 0), counts.get("completed_round", 0)
        row = [site, f"{number}{'' if completed >= number else ' (unfinished)'}", str(counts.get("done", 0)),
               str(counts.get("queued", 0)), str(counts.get("failed", 0)), str(counts.get("exported", 0)),
               str(counts.get("duplicates", 0))]
        if leases:
            lease = leases.get(site)
            held = lease is not None and lease.owner is not None
            row += [lease.owner or "-" if lease else "-", age(lease.claimed_age) if held and lease else "-",
                    age(lease.renewed_age) if held and lease else "-"]
        rows.append(row)
    if not rows:
        return ["No sites in the crawl state."]
    header = ["site", "round", "done", "queued", "failed", "exported", "duplicates"]
    return format_table(header + (["owner", "lease", "renewed"] if leases else []), rows)


class Command(ProjectCommand, ScrapyCommand):
    """List, show or forget what the crawl state holds."""

    requires_project = True
    requires_crawler_process = False

    def syntax(self) -> str:
        return "ACTION [--store PATH] [URL | SITE] | copy --to URI [--store PATH] [--templates PATH]"

    def short_desc(self) -> str:
        return "List the crawl state's sites, show what it holds of a URL, forget a site, or copy it to PostgreSQL"

    def long_desc(self) -> str:
        return (
            "Inspect the crawl state of scheduled crawls: a site list's own (--sites FILE: my-sites.state beside "
            "my-sites.yaml), or CRAWL_STATE_STORE, or --store PATH. ACTION is one of list, show, forget. "
            "'list' prints one line per site: round (unfinished when its last run was killed or stopped), pages "
            "done, queued, failed, records exported, duplicates. "
            "'show URL' prints everything stored of the URL as JSON. "
            "'forget SITE' deletes the site from the state: its next crawl fetches and exports every page again. "
            "On a shared PostgreSQL state 'list' also shows each site's owner (the worker crawling it), how long ago "
            "it was claimed and last renewed. 'copy --to postgresql://...' copies the SQLite crawl state and the "
            "SQLite template store (--templates, default TEMPLATES_STORE) into that empty database, for workers on "
            "several machines (docs/distributed.md). "
            "Exit status 1 for an unknown URL or site, 2 for an unusable state or a copy that cannot be made."
        )

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        super().add_options(parser)
        parser.add_argument("--sites", metavar="FILE", help="the site list whose crawl state this is (default: the "
                                                            "NEWS_SITES_FILE setting)")
        parser.add_argument("--store", metavar="PATH", help="crawl state (folder, .sqlite3 file or postgresql:// URI) "
                                                            "instead of the site list's or CRAWL_STATE_STORE")
        parser.add_argument("--to", metavar="URI", help="copy: the PostgreSQL database to copy into")
        parser.add_argument("--templates", metavar="PATH", help="copy: the SQLite template store to copy as well "
                                                                "(default TEMPLATES_STORE)")

    def run(self, args: list[str], opts: argparse.Namespace) -> None:
        if not args or args[0] not in ACTIONS:
            raise UsageError(f"give an ACTION: {', '.join(ACTIONS)}")
        action, rest = args[0], args[1:]
        if len(rest) != (0 if action in ("list", "copy") else 1):
            raise UsageError(f"{action} takes {'no argument' if action in ('list', 'copy') else 'one argument'}")
        if (opts.to or opts.templates) and action != "copy":
            raise UsageError("--to and --templates are options of copy")
        assert self.settings is not None
        try:
            config = CrawlStateConfig.from_settings(self.settings)
        except ValueError as exc:
            raise UsageError(str(exc)) from exc
        if opts.store and opts.sites:
            raise UsageError("give --sites or --store, not both")
        location = opts.store or config.location(opts.sites or self.settings.get("NEWS_SITES_FILE"),
                                                 self.settings.get("TEMPLATES_STORE", ""))
        if action == "copy":
            if not opts.to or not is_postgres(opts.to):
                raise UsageError("copy needs --to postgresql://USER@HOST/DATABASE")
            self.exitcode = self._copy(location, opts.templates or self.settings.get("TEMPLATES_STORE", ""), opts.to,
                                       config.timeout)
            return
        try:
            path = state_path(location)
            if path is not None and not database_exists(path):  # a zero-length file is none yet: left as it is
                print(f"No crawl state at {path}.")
                self.exitcode = 0 if action == "list" else 1
                return
            if path is None and not schema_exists(location, "crawl_state"):  # a database without one yet
                print(f"No crawl state at {display_uri(location)}.")
                self.exitcode = 0 if action == "list" else 1
                return
            state = open_state(location, config.timeout)
        except DatabaseError as exc:
            print(f"error: {exc}", file=sys.stderr)
            self.exitcode = 2
            return
        try:
            self.exitcode = self._act(state, action, rest)
        except CrawlStateError as exc:
            print(f"error: {exc}", file=sys.stderr)
            self.exitcode = 2
        finally:
            state.close()

    @staticmethod
    def _copy(state_location: str, templates_location: str, uri: str, timeout: float) -> int:
        """Copy the SQLite crawl state and template store into ``uri``; return the exit status."""
        from templates_db.pgstate import PostgresCrawlState
        from templates_db.store import PostgresTemplateStore

        jobs: list[tuple[str, type[SQLiteDatabase], type[PostgresDatabase], Any]] = []
        state_file = state_path(state_location) if not is_postgres(state_location) else None
        if state_file is None:
            print(f"error: copy reads an SQLite crawl state, not {state_location}", file=sys.stderr)
            return 2
        if database_exists(state_file):
            jobs.append(("crawl state", SQLiteCrawlState, PostgresCrawlState, state_file))
        templates_file = store_path(templates_location) if templates_location and not is_postgres(
            templates_location) else None
        if templates_file is not None and store_exists(templates_location):
            jobs.append(("template store", SQLiteTemplateStore, PostgresTemplateStore, templates_file))
        if not jobs:
            print(f"error: nothing to copy: no crawl state at {state_file} and no template store at "
                  f"{templates_location or '(TEMPLATES_STORE unset)'}", file=sys.stderr)
            return 2
        for what, source_class, target_class, path in jobs:
            try:
                source = source_class(path, timeout)
                try:
                    target = target_class(uri, timeout)
                    try:
                        with Progress(rows_to_copy(source), f"Copying the {what}", unit="row") as progress:
                            copied = copy_store(source, target, progress.update)
                    finally:
                        target.close()
                finally:
                    source.close()
            except (DatabaseError, CopyError) as exc:
                print(f"error: {exc}", file=sys.stderr)
                return 2
            print(f"Copied the {what} {path} into {target.location}: "
                  + ", ".join(f"{table} {rows}" for table, rows in copied.items() if rows))
        print(f"Point every worker at it: -s CRAWL_STATE_STORE={uri} -s TEMPLATES_STORE={uri} (docs/distributed.md)")
        return 0

    @staticmethod
    def _act(state: CrawlState, action: str, rest: list[str]) -> int:
        if action == "list":
            print("\n".join(list_lines(state)))
            return 0
        if action == "show":
            page = state.page(rest[0])
            if page is None:
                print(f"{rest[0]} is not in the crawl state (give the canonical URL the crawl requested)",
                      file=sys.stderr)
                return 1
            for key in ("first_seen", "last_seen", "fetched_at"):
                page[key] = iso_time(page[key])
            print(json.dumps(page, ensure_ascii=False, indent=1, default=str))
            return 0
        deleted = state.forget(rest[0])
        if not deleted:
            print(f"no site {rest[0]!r} in the crawl state; sites: {', '.join(sorted(state.summary())) or 'none'}",
                  file=sys.stderr)
            return 1
        print(f"Forgot {deleted} page(s) of {rest[0]}: its next crawl starts from scratch.")
        return 0
