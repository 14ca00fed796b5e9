"""``scrapy state``: inspect the crawl state of scheduled crawls, or make a site start over.

    scrapy state list [--sites FILE | --store PATH]
    scrapy state show URL [--sites FILE | --store PATH]
    scrapy state forget SITE [--sites FILE | --store PATH]

The state (:mod:`templates_db.state`) is a crawl's: the one of the site list ``--sites`` names (``my-sites.state/``
beside ``my-sites.yaml``, :func:`crawler.outputs.state_location`; default NEWS_SITES_FILE), or CRAWL_STATE_STORE
when set; ``--store`` names one for this run.

* ``list``: one line per site: its round (and whether the last one finished), pages done, queued
  and failed, records exported, duplicates.
* ``show URL``: everything stored of a URL (an alias shows the page it names) as JSON: status,
  times, HTTP status, validators, hashes, page type, canonical URL, aliases, and the record it
  produced without its text.
* ``forget SITE``: deletes the site's pages, queue, hubs, aliases and fingerprints; its next crawl
  is a first one (every page fetched and exported again).

Reading actions never create a state (a zero-length file counts as none and is left so). Exit status: 0 done;
1 for an unknown URL or site; 2 when the state is unusable (corrupt, locked, newer schema).
"""

from __future__ import annotations

import argparse
import json
import sys

from scrapy.commands import ScrapyCommand
from scrapy.exceptions import UsageError

from crawler.cli import ProjectCommand
from crawler.commands.templates import format_table, iso_time
from crawler.state import CrawlStateConfig
from templates_db.sqlite import database_exists
from templates_db.state import CrawlState, CrawlStateError, open_state, state_path

ACTIONS = ("list", "show", "forget")


def list_lines(state: CrawlState) -> list[str]:
    """Return the ``list`` table: one row per site."""
    rows = []
    for site, counts in sorted(state.summary().items()):
        number, completed = counts.get("round", 0), counts.get("completed_round", 0)
        rows.append([site, f"{number}{'' if completed >= number else ' (unfinished)'}", str(counts.get("done", 0)),
                     str(counts.get("queued", 0)), str(counts.get("failed", 0)), str(counts.get("exported", 0)),
                     str(counts.get("duplicates", 0))])
    if not rows:
        return ["No sites in the crawl state."]
    return format_table(["site", "round", "done", "queued", "failed", "exported", "duplicates"], rows)


class Command(ProjectCommand, ScrapyCommand):
    """List, show or forget what the crawl state holds."""

    requires_project = True
    requires_crawler_process = False

    def syntax(self) -> str:
        return "ACTION [--store PATH] [URL | SITE]"

    def short_desc(self) -> str:
        return "List the crawl state's sites, show what it holds of a URL, or forget a site"

    def long_desc(self) -> str:
        return (
            "Inspect the crawl state of scheduled crawls: a site list's own (--sites FILE: my-sites.state beside "
            "my-sites.yaml), or CRAWL_STATE_STORE, or --store PATH. ACTION is one of list, show, forget. "
            "'list' prints one line per site: round (unfinished when its last run was killed or stopped), pages "
            "done, queued, failed, records exported, duplicates. "
            "'show URL' prints everything stored of the URL as JSON. "
            "'forget SITE' deletes the site from the state: its next crawl fetches and exports every page again. "
            "Exit status 1 for an unknown URL or site, 2 for an unusable state."
        )

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        super().add_options(parser)
        parser.add_argument("--sites", metavar="FILE", help="the site list whose crawl state this is (default: the "
                                                            "NEWS_SITES_FILE setting)")
        parser.add_argument("--store", metavar="PATH", help="crawl state (folder or .sqlite3 file) instead of "
                                                            "the site list's or CRAWL_STATE_STORE")

    def run(self, args: list[str], opts: argparse.Namespace) -> None:
        if not args or args[0] not in ACTIONS:
            raise UsageError(f"give an ACTION: {', '.join(ACTIONS)}")
        action, rest = args[0], args[1:]
        if len(rest) != (0 if action == "list" else 1):
            raise UsageError(f"{action} takes {'no argument' if action == 'list' else 'one argument'}")
        assert self.settings is not None
        try:
            config = CrawlStateConfig.from_settings(self.settings)
        except ValueError as exc:
            raise UsageError(str(exc)) from exc
        if opts.store and opts.sites:
            raise UsageError("give --sites or --store, not both")
        location = opts.store or config.location(opts.sites or self.settings.get("NEWS_SITES_FILE"))
        try:
            path = state_path(location)
            if path is not None and not database_exists(path):  # a zero-length file is none yet: left as it is
                print(f"No crawl state at {path}.")
                self.exitcode = 0 if action == "list" else 1
                return
            state = open_state(location, config.timeout)
        except CrawlStateError as exc:
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
