"""``scrapy crawl``, with the site list checked before the engine starts.

Scrapy's own command, plus one step: for the ``news_sites`` spider the site list is
loaded and validated first, and a bad entry ends the command with a one-line error
naming the file, the entry and the field (exit status 2) instead of a traceback.
"""

from __future__ import annotations

import argparse
import sys

from scrapy.commands.crawl import Command as ScrapyCrawlCommand

from crawler.sites import SiteListError, load_site_list

# Stand-in for ${DEMO_URL} while validating: the real address is known once the spider
# starts the demo server.
_PLACEHOLDER_DEMO_URL = "http://127.0.0.1:1"


class Command(ScrapyCrawlCommand):
    """Run a spider; validate the site list first when it is ``news_sites``."""

    def run(self, args: list[str], opts: argparse.Namespace) -> None:
        if args and args[0] == "news_sites":
            assert self.settings is not None
            path = opts.spargs.get("sites") or self.settings.get("NEWS_SITES_FILE")
            try:
                load_site_list(path, {"DEMO_URL": _PLACEHOLDER_DEMO_URL})
            except SiteListError as exc:
                print(f"error: {exc}", file=sys.stderr)
                self.exitcode = 2
                return
        super().run(args, opts)
