"""``scrapy crawl``, with the site list checked before the engine starts and the demo served.

Scrapy's own command, plus two steps for the ``news_sites`` spider:

- the site list is loaded and validated first, and a bad entry ends the command with a one-line
  error naming the file, the entry and the field (exit status 2) instead of a traceback;
- when the list uses ``${DEMO_URL}`` (the bundled ``sites/demo.yaml``, the default) and the
  environment does not set it, the command serves the demo sites (``demo.server``) on 127.0.0.1
  (port DEMO_PORT, 0: any free one) for the length of the crawl and sets ``DEMO_URL``. The
  spider itself never imports the demo.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from pathlib import Path
from typing import Any

from scrapy.commands.crawl import Command as ScrapyCrawlCommand
from scrapy.settings import BaseSettings

from crawler.cli import ProjectCommand, fail
from crawler.logs import notice
from crawler.outputs import local_path
from crawler.sites import SiteList, SiteListError, load_site_list, referenced_variables
from crawler.state import CrawlStateConfig
from extraction.workers import WorkersConfig, warm_up

logger = logging.getLogger(__name__)

PLAYWRIGHT_HANDLERS = ("crawler.handlers.SharedPlaywrightDownloadHandler",
                       "scrapy_playwright.handler.ScrapyPlaywrightDownloadHandler")
# Stand-in for ${DEMO_URL} while validating: the real address is known once the server starts.
_PLACEHOLDER_DEMO_URL = "http://127.0.0.1:1"


class Command(ProjectCommand, ScrapyCrawlCommand):
    """Run a spider; for ``news_sites`` check its arguments, site list and feeds first, and serve the demo if the
    list needs it."""

    def short_desc(self) -> str:
        return "Crawl the sites of a site list (-a sites=FILE; default: the bundled demo) into a JSONL feed"

    def long_desc(self) -> str:
        from crawler.spiders.news_sites import NewsSitesSpider

        arguments = "\n".join(f"  -a {name}={value:<14} {meaning}"
                              for name, (value, meaning) in NewsSitesSpider.arguments.items())
        return ("Run a spider of the project: news_sites crawls the sites of a site list (the bundled demo sites "
                "when no list is given) into a JSONL feed, its WARC files and its report.\n\n"
                f"Arguments of the news_sites spider:\n\n{arguments}\n\n"
                "Re-run the same command to crawl again: each run exports only what is new, so give each run a file "
                "of its own (-o 'corpus/%(time)s.jsonl') or append (-o corpus.jsonl); -O, which replaces the file, "
                "is refused when the file holds an earlier run's records.")

    def run(self, args: list[str], opts: argparse.Namespace) -> None:
        if not args or args[0] != "news_sites":
            super().run(args, opts)
            return
        assert self.settings is not None
        path = self._check(opts)
        try:
            site_list = load_site_list(path, {"DEMO_URL": os.environ.get("DEMO_URL", _PLACEHOLDER_DEMO_URL)})
            needs_demo = "DEMO_URL" in referenced_variables(Path(path).read_text(encoding="utf-8"))
        except (SiteListError, OSError) as exc:
            fail(str(exc))
        if not _renders(site_list, self.settings):
            _without_playwright(self.settings)
        if WorkersConfig.from_settings(self.settings).processes:
            from pipelines.process import worker_handler

            warm_up(worker_handler)  # the workers' fork server imports the extraction code while Scrapy starts
        if not needs_demo or os.environ.get("DEMO_URL"):
            self._crawl(args, opts)
            return
        from demo.server import DemoServer  # only the bundled demo needs it

        server = DemoServer(port=self.settings.getint("DEMO_PORT", 0))
        os.environ["DEMO_URL"] = server.start()
        # Its addresses last this run: the crawl keeps a state of the run (crawler/outputs.py).
        self.settings.set("DEMO_SERVED", True, priority="cmdline")
        notice(logger, "Serving the bundled demo sites at %s for this crawl", os.environ["DEMO_URL"])
        try:
            self._crawl(args, opts)
        finally:
            server.stop()
            del os.environ["DEMO_URL"]

    def _check(self, opts: argparse.Namespace) -> str:
        """Return the site list's path once the spider's arguments and the feeds are checked (``fail`` else)."""
        from crawler.spiders.news_sites import NewsSitesSpider

        assert self.settings is not None
        try:
            NewsSitesSpider.check_arguments(opts.spargs)
        except ValueError as exc:
            fail(str(exc))
        if CrawlStateConfig.from_settings(self.settings).enabled:
            for uri, options in self.settings.getdict("FEEDS").items():
                target = local_path(str(uri))
                if (options or {}).get("overwrite") and target is not None and target.is_file() \
                        and target.stat().st_size:
                    fail(f"-O {uri} would replace the records an earlier run wrote there, and this run exports only "
                         f"what is new since (the crawl state remembers what was exported): use -o {uri} to append, "
                         "or a file per run such as -o 'corpus/%(time)s.jsonl' (or -s CRAWL_STATE_ENABLED=False "
                         "for a full crawl that remembers nothing)")
        return str(opts.spargs.get("sites") or self.settings.get("NEWS_SITES_FILE"))

    def _crawl(self, args: list[str], opts: argparse.Namespace) -> None:
        """Run the crawl; a worker stopped because its shared crawl state went away exits with status 1."""
        from crawler.leases import fatal_closes

        super().run(args, opts)
        if fatal_closes and not self.exitcode:
            print("error: the crawl stopped: its crawl state database could not be used (the log says why); run it "
                  "again once the database is back", file=sys.stderr)
            self.exitcode = 1


def _renders(site_list: SiteList, settings: BaseSettings) -> bool:
    """Return True when some site of the list has its pages rendered (``render: true``, RENDER_ENABLED on)."""
    from crawler.middlewares.render_config import RenderConfig

    return RenderConfig.from_settings(settings).enabled and any(site.render for site in site_list.sites)


def _without_playwright(settings: BaseSettings) -> None:
    """Leave scrapy-playwright's handler out of DOWNLOAD_HANDLERS, for a crawl that renders nothing: Scrapy's own
    HTTP handler downloads, and no Playwright driver (a Node process of about 110 MB) starts with the crawl."""
    handlers = settings.getdict("DOWNLOAD_HANDLERS")
    kept = {scheme: handler for scheme, handler in handlers.items() if _name(handler) not in PLAYWRIGHT_HANDLERS}
    if kept != handlers:
        settings.set("DOWNLOAD_HANDLERS", kept, priority=settings.getpriority("DOWNLOAD_HANDLERS") or "project")
        logger.info("No site of the list is rendered: pages are downloaded without scrapy-playwright")


def _name(handler: Any) -> str | None:
    """Return a DOWNLOAD_HANDLERS value's import path (None: the scheme is turned off)."""
    if handler is None or isinstance(handler, str):
        return handler
    return f"{handler.__module__}.{handler.__qualname__}"
