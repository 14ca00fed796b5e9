"""``scrapy extract``: run an extraction method over saved pages, standard input or pages fetched by URL.

    scrapy extract PATH... | - | -u URL... | --list FILE  [-o OUT.jsonl] [--method NAME] [--url URL]
                           [--site NAME] [--no-templates] [--render | --screenshot PNG]

``-`` reads one page from standard input; ``-u URL`` (repeatable) fetches pages as the crawl fetches them
(:mod:`crawler.fetch`: Scrapy's downloader with the crawl's settings, robots.txt obeyed, nothing rendered or
kept); ``--list FILE`` reads ``PATH<TAB>URL`` lines, each page with its own URL. ``--url`` names the URL of one
page (a saved file or standard input) and is refused with several.

The default method, ``pipeline``, is the crawl's: page type (paper 000's models), then the SVM
block classifier with the paragraph denoiser (``extraction_method`` "svm"); list pages also get
their entries; the site's templates are removed first when it has a library (below).
``--method`` runs any single algorithm for the text instead.

Every page gets a ``page_type`` (article, list, other) with ``page_type_confidence`` and
``page_type_source``, whatever the method: from the DOM/URL model alone, or with ``--render`` from the fusion of
the screenshot CNN and the DOM/URL model (``--render`` turns PAGETYPE_FUSION on; a ``--screenshot`` is used as the
crawl uses it, by the fusion when PAGETYPE_FUSION is on).
``--render`` renders each saved page in the project's Chromium first (the setting PLAYWRIGHT_LAUNCH_OPTIONS; no
network: every request but the page itself is blocked, so external CSS, images and scripts are missing, as
they are from the saved file); a page that cannot be rendered is typed by the DOM/URL model
and says so in ``render_error``. The text is always extracted from the saved HTML.

PATH may be a file (``.html``, ``.htm``, either with ``.gz``; the crawl's archived
``html/*.html.gz`` included), a glob or a folder (searched recursively for such files).
Each page goes through :func:`extraction.process.process`, the crawl's own flow, and becomes one
JSON line with the crawl's record schema (``extraction/record.schema.json``): ``html_file`` is
the path (as given or as found under a given folder), ``url`` the ``--url``, fetch fields are
null; a page that could not be rendered has the flag ``render_failed``. Empty files and binary
files (PDF, images, archives) get ``error`` "empty" / "not_html". A failing page never stops
the run; the exit status is 0 unless every page failed (1), or no page was found (2).

Several pages are processed in the crawl's extraction workers (:class:`extraction.workers.PagePool`,
EXTRACT_WORKERS, one per CPU by default and at most one per page; 0 runs them in this process, as does a single
page): every core works, the pages of one site spread over the workers (nothing is learned), a page over
EXTRACT_TIMEOUT seconds has its worker replaced and its record ``error: "extract_timeout"`` (a dead worker gives
``extract_crashed``), and the records come out in the input's order.

Template cleaning (paper 004). A page's site is ``--site`` (a key of the template library,
as ``scrapy templates list`` shows), else the key of its URL: its entry in the site list
(setting NEWS_SITES_FILE) or, when the URL is in no entry or the list cannot be loaded, its
scheme + host. When that site has templates in the store (setting TEMPLATES_STORE), each page
is parsed, the site's template leaves are removed (with the guard of
:mod:`extraction.templates`) and the method runs on what is left; otherwise, and with
``--no-templates``, TEMPLATES_ENABLED=False or no site, extraction is exactly as without a
library. The store is only read: nothing is learned, and a missing store is not created. A
store that cannot be opened gives one warning and extraction goes on without templates. With
``--url`` the store's page-type votes for the site (``crawler/sitetypes.py``) type the page as the
crawl would have.
"""

from __future__ import annotations

import argparse
import glob
import gzip
import logging
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import IO, Any
from urllib.parse import urlsplit

from scrapy.commands import ScrapyCommand
from scrapy.exceptions import UsageError
from scrapy.settings import Settings
from w3lib.url import safe_url_string

from crawler.cli import ProjectCommand
from crawler.fetch import Fetched, fetch_pages
from crawler.logs import notice
from crawler.progress import Progress
from crawler.sites import SiteList, SiteListError, load_site_list
from crawler.sitetypes import StoredHints
from extraction.dom.encoding import decode_html
from extraction.methods import method_names
from extraction.onnx import ModelError
from extraction.page import Page
from extraction.pagetype.site import SiteHint
from extraction.process import PIPELINE, Context, Count, process
from extraction.record import Record
from extraction.workers import InOrder, PagePool, WorkersConfig
from pipelines.process import PageHandler, worker_settings
from templates_db.library import TemplateLibrary, TemplatesConfig, site_key
from templates_db.store import store_exists

logger = logging.getLogger(__name__)

PAGE_SUFFIXES = (".html", ".htm", ".html.gz", ".htm.gz")
DEFAULT_METHOD = PIPELINE  # page type, then the block classifier (articles) or the list extractor
RENDER_CHUNK = 16  # pages rendered per batch with --render (screenshots held in memory meanwhile)


def find_pages(arguments: list[str], suffixes: tuple[str, ...] = PAGE_SUFFIXES) -> Iterator[str]:
    """Yield the paths of files, globs and folders (searched for names ending in ``suffixes``), in the order given
    (folders sorted)."""
    for argument in arguments:
        matches = sorted(glob.glob(argument, recursive=True)) if glob.has_magic(argument) else [argument]
        for match in matches:
            path = Path(match)
            if path.is_dir():
                yield from sorted(str(p) for p in path.rglob("*")
                                  if p.is_file() and p.name.lower().endswith(suffixes))
            else:
                yield match


def read_page(path: str) -> bytes:
    """Return the bytes of a saved page, gunzipping ``.gz`` files."""
    data = Path(path).read_bytes()
    if path.lower().endswith(".gz") or data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    return data


def load_sites(settings: Any) -> SiteList | None:
    """Return the site list of the NEWS_SITES_FILE setting, or None when it is unset or unusable.

    An unusable list (e.g. ``${DEMO_URL}`` unset outside a crawl) is logged at DEBUG only: pages
    then belong to their scheme + host.
    """
    path = settings.get("NEWS_SITES_FILE")
    if not path:
        return None
    try:
        return load_site_list(path, os.environ)
    except SiteListError as exc:
        logger.debug("Site list not used, sites are scheme + host: %s", exc)
        return None


def page_url(url: str, what: str = "--url") -> str:
    """Return a page's URL as a record can hold it: bytes that were no UTF-8 on the command line (which Python
    keeps as lone surrogates) percent-encoded, as w3lib makes the crawl's URLs. Raises ValueError naming
    ``what`` for anything but an absolute http(s) URL."""
    try:
        url.encode("utf-8")
    except UnicodeEncodeError:
        url = safe_url_string(os.fsencode(url))
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018  # raises ValueError for a port that is no number or over 65535
    except ValueError as exc:  # a broken IPv6 host: urljoin against it would fail on every link
        raise ValueError(f"{what} {url!r} is not a URL: {exc}") from None
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        raise ValueError(f"{what} {url!r} is not an absolute http(s) URL such as https://example.com/news/1")
    return url


def frozen_library(settings: Any) -> TemplateLibrary | None:
    """Return the template library of the settings, read only: nothing is learned and a missing store is not
    created. Never raises for the store: a missing store or bad TEMPLATES_* settings give None (logged; an
    unusable store or bad settings as one warning)."""
    if not settings.getbool("TEMPLATES_ENABLED", True):
        return None
    try:
        config = TemplatesConfig.from_settings(settings, learn=False)
    except ValueError as exc:
        logger.warning("Template settings unusable, extracting without templates: %s", exc)
        return None
    if not store_exists(config.store):
        logger.info("No template store at %s: extracting without templates", config.store)
        return None
    library = TemplateLibrary.open(config)  # an unusable store: one warning, a library without store
    if not library.available:
        library.close()
        return None
    return library


def open_library(settings: Any, site: str | None) -> TemplateLibrary | None:
    """Return a read-only library for ``site`` when the store holds templates for it, else None."""
    library = frozen_library(settings) if site is not None else None
    if library is None or site is None:
        return None
    if not library.templates(site):
        logger.info("Site %s has no templates in %s: extracting without templates", site, library.config.store)
        library.close()
        return None
    logger.info("Template cleaning with %d templates of site %s (%s)", len(library.templates(site)), site,
                library.config.store)
    return library


def page_file(path: str, url: str | None = None, site: str | None = None, screenshot: bytes | None = None,
              site_hint: SiteHint | None = None) -> tuple[Page | None, Record]:
    """Return one saved page to process and its record; no page when the file cannot be read (its record says
    so in ``error``). ``site_hint``: the site's page-type evidence for ``url`` (``crawler.sitetypes.stored_hint``)."""
    record = Record(url=url, site=site, html_file=path)
    try:
        body = read_page(path)
    except Exception as exc:  # one bad file must not stop a batch: it is reported in its line
        record.error = f"unreadable: {type(exc).__name__}: {exc}"
        logger.warning("Could not read %s: %s", path, exc)
        return None, record
    page = Page(body, url, screenshot=screenshot, site=site)
    page.site_hint = site_hint
    return page, record


def extract_file(path: str, context: Context, url: str | None = None, site: str | None = None,
                 screenshot: bytes | None = None, site_hint: SiteHint | None = None) -> Record:
    """Return the record of one saved page, processed in this process (:func:`page_file`)."""
    page, record = page_file(path, url, site, screenshot, site_hint)
    return record if page is None else process(page, context, record)


def frozen_handler(count: Count, settings: dict[str, Any], templates: bool, method: str = PIPELINE,
                   site: str | None = None) -> PageHandler:
    """Build an extraction worker's handler for the offline commands (:data:`extraction.workers.HandlerFactory`):
    the models, ``method``, and the template store read only when ``templates`` (every site's, ``scrapy
    reextract``; ``site``'s alone when given, ``scrapy extract``); nothing archived."""
    values = Settings(settings)
    library = None
    if templates:
        library = frozen_library(values) if site is None else open_library(values, site)
    return PageHandler(Context.from_settings(values, templates=library, method=method), None)


def page_queue(settings: Any, workers: WorkersConfig, library: TemplateLibrary | None, method: str = PIPELINE,
               site: str | None = None, pin_sites: bool = True) -> InOrder[Any]:
    """Return the queue an offline command's pages go through, in order (:class:`extraction.workers.InOrder`, at
    most 8 pages a worker in flight): ``workers.processes`` extraction workers, each with a :func:`frozen_handler` (so
    ``library``, the command's own, is closed here), or, with 0, a handler in this process with ``library``. The
    queue's :meth:`~extraction.workers.InOrder.close` closes what it holds. Raises UsageError when the models do
    not load, here or in a worker (``library`` closed)."""
    try:
        if workers.processes:
            pool = PagePool(workers, frozen_handler, (worker_settings(settings), library is not None, method, site),
                            pin_sites=pin_sites)
            pool.start()
            if library is not None:  # each worker opened its own
                library.close()
            return InOrder(pool, None, 8 * workers.processes)
        return InOrder(None, PageHandler(Context.from_settings(settings, templates=library, method=method), None), 0)
    except (ModelError, RuntimeError) as exc:  # a model that does not load, here or in a worker
        if library is not None:
            library.close()
        raise UsageError(f"models unusable: {exc}") from exc


@dataclass
class Source:
    """A page to extract: a saved file (``path``), standard input (``-``), or a page fetched by URL (``fetched``)."""

    path: str | None  # the file as given or found; "-" for standard input; None for a fetched page
    url: str | None = None
    body: bytes | None = None  # standard input's bytes
    fetched: Fetched | None = None

    def read(self) -> bytes:
        """Return the page's bytes (a file's gunzipped); OSError or ValueError when they cannot be had."""
        if self.fetched is not None:
            if self.fetched.page is None:
                raise ValueError(f"not fetched: {self.fetched.error}")
            return self.fetched.page.body
        if self.body is not None:
            return self.body
        assert self.path is not None
        return read_page(self.path)


def source_page(source: Source, site: str | None = None, screenshot: bytes | None = None,
                site_hint: SiteHint | None = None) -> tuple[Page | None, Record]:
    """Return a source's page to process and its record; no page when it cannot be read or fetched (its record
    says why in ``error``)."""
    fetched = source.fetched
    if fetched is None:
        if source.body is None:
            assert source.path is not None
            return page_file(source.path, source.url, site, screenshot, site_hint)
        record = Record(url=source.url, site=site)
        page = Page(source.body, source.url, screenshot=screenshot, site=site)
    else:
        record = Record(url=fetched.url, canonical_url=fetched.url, final_url=fetched.final_url, site=site,
                        fetched_at=fetched.fetched_at, status=fetched.status, fetch_ms=fetched.fetch_ms)
        if fetched.page is None:
            record.error = fetched.error
            return None, record
        page = fetched.page
        page.site, page.screenshot = site, screenshot
    page.site_hint = site_hint
    return page, record


def listed_sources(path: str) -> list[Source]:
    """Return the pages of a list file: one ``PATH<TAB>URL`` a line (the URL may be left out; blank lines and
    lines starting with # are skipped). ValueError names a line whose URL cannot be used."""
    handle = sys.stdin if path == "-" else open(path, encoding="utf-8")  # noqa: SIM115
    sources = []
    try:
        for number, line in enumerate(handle, start=1):
            line = line.rstrip("\r\n")
            if not line.strip() or line.startswith("#"):
                continue
            page, _, url = line.partition("\t")
            try:
                sources.append(Source(page, page_url(url.strip(), "a URL") if url.strip() else None))
            except ValueError as exc:
                raise ValueError(f"{path}, line {number}: {exc}") from None
    finally:
        if handle is not sys.stdin:
            handle.close()
    return sources


def render_pages(sources: list[Source], settings: Any) -> Iterator[tuple[Source, bytes | None, str | None]]:
    """Yield (source, screenshot PNG or None, render error or None) per page, in chunks, in order."""
    from crawler.render.offline import OfflineRenderConfig, render_html
    from crawler.render.saved_url import page_url as saved_page_url

    config = OfflineRenderConfig.from_settings(settings)
    for start in range(0, len(sources), RENDER_CHUNK):
        chunk = sources[start:start + RENDER_CHUNK]
        texts = []
        errors: dict[int, str] = {}
        for index, source in enumerate(chunk):
            try:
                html = decode_html(source.read()).text
                texts.append((str(index), html, saved_page_url(Path(source.path or "page.html").name, html,
                                                               source.url)))
            except Exception as exc:  # reported again, with the same cause, by source_page
                errors[index] = f"{type(exc).__name__}: {exc}"
        shots = {shot.key: shot for shot in render_html(texts, config)}
        for index, source in enumerate(chunk):
            shot = shots.get(str(index))
            if shot is None:
                yield source, None, errors.get(index, "not rendered")
            else:
                yield source, shot.png, shot.error


class Command(ProjectCommand, ScrapyCommand):
    """Extract text from saved HTML pages, standard input or URLs with one method (``--method``)."""

    requires_project = True

    def syntax(self) -> str:
        return "[options] PATH... | - | -u URL... | --list FILE"

    def short_desc(self) -> str:
        return "Extract clean text from saved pages (files, globs, folders, stdin) or URLs to JSON lines"

    def long_desc(self) -> str:
        return ("Extract clean text and metadata from pages, one JSON line each (the crawl's record), with the "
                "crawl's own flow: page type, the site's templates when the template store has them, the block "
                "classifier's text, metadata.\n\n"
                "  newscorpus extract page.html                      a saved page (.html, .htm, .gz)\n"
                "  newscorpus extract saved/ -o pages.jsonl          every page of a folder\n"
                "  curl -s URL | newscorpus extract - --url URL      standard input\n"
                "  newscorpus extract -u https://example.com/a/1     fetched as the crawl fetches it\n"
                "  newscorpus extract --list pages.tsv               lines of PATH<TAB>URL\n\n"
                "Exit status 0; 1 when every page failed; 2 for bad usage or no page found.")

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        super().add_options(parser)
        parser.add_argument("-o", "--output", metavar="OUT.jsonl", help="write here instead of stdout")
        parser.add_argument("-u", "--fetch", metavar="URL", action="append", default=[],
                            help="fetch this page (repeatable) with the crawl's downloader and settings: user agent, "
                                 "robots.txt, redirects, size limit")
        parser.add_argument("--list", metavar="FILE", dest="list_file",
                            help="pages to extract, one PATH<TAB>URL a line (the URL may be left out; - reads the "
                                 "list from standard input)")
        parser.add_argument("--method", default=DEFAULT_METHOD,
                            help=f"extraction method: {', '.join(method_names())} (default: {DEFAULT_METHOD}: "
                                 "page type, then the block classifier or the list algorithm)")
        parser.add_argument("--url", help="the page's URL (one saved page, or standard input): resolves its links "
                                          "and finds its site")
        parser.add_argument("--site", metavar="NAME",
                            help="the pages' site in the template library (default: the site of each page's URL)")
        parser.add_argument("--no-templates", action="store_true",
                            help="do not remove the site's templates before extracting")
        parser.add_argument("--screenshot", metavar="PNG",
                            help="the page's screenshot (one page: e.g. the crawl's screenshot_file), used as the "
                                 "crawl uses it: by the page type's fusion when PAGETYPE_FUSION is on")
        parser.add_argument("--render", action="store_true",
                            help="render each page in Chromium (no network) and type it by the fusion of the "
                                 "screenshot model and the DOM/URL model, as PAGETYPE_FUSION does")

    def sources(self, args: list[str], opts: argparse.Namespace) -> list[Source]:
        """Return the pages the arguments name, in order; ValueError for what cannot be used."""
        if args.count("-") > 1 or (args.count("-") and opts.list_file == "-"):
            raise ValueError("standard input (-) can be read once")
        if opts.url is not None:
            opts.url = page_url(opts.url)
        fetch = [page_url(url, "-u") for url in opts.fetch]
        sources: list[Source] = []
        for arg in args:
            if arg == "-":
                sources.append(Source(None, opts.url, sys.stdin.buffer.read()))
            else:
                sources += [Source(path, opts.url) for path in find_pages([arg])]
        if opts.url is not None and (len(sources) != 1 or fetch or opts.list_file):
            raise ValueError("--url names the URL of one saved page: for several, give a --list of PATH<TAB>URL "
                             "lines, or -u URL to fetch them")
        if opts.list_file:
            sources += listed_sources(opts.list_file)
        if fetch:
            assert self.crawler_process is not None and self.settings is not None
            sources += [Source(None, fetched.url, fetched=fetched)
                        for fetched in fetch_pages(self.crawler_process, self.settings, fetch,
                                                   load_sites(self.settings))]
        return sources

    def run(self, args: list[str], opts: argparse.Namespace) -> None:
        if not args and not opts.fetch and not opts.list_file:
            raise UsageError("give a PATH, - (standard input), -u URL or --list FILE")
        if opts.method not in method_names():
            raise UsageError(f"unknown --method {opts.method!r}; known: {', '.join(method_names())}")
        if opts.site is not None and not opts.site.strip():
            raise UsageError("--site needs a non-empty NAME")
        try:
            sources = self.sources(args, opts)
        except (OSError, ValueError) as exc:
            raise UsageError(str(exc)) from None
        if not sources:
            print("error: no .html/.htm(.gz) page found in " + " ".join(args), file=sys.stderr)
            self.exitcode = 2
            return
        if opts.screenshot and (opts.render or len(sources) != 1):
            raise UsageError("--screenshot goes with exactly one page and without --render")
        screenshot = Path(opts.screenshot).read_bytes() if opts.screenshot else None
        assert self.settings is not None
        if opts.render:  # what it is for: the screenshot joins the page type (a --screenshot is used as the crawl
            # uses it, with PAGETYPE_FUSION: the crawl's record again)
            self.settings.set("PAGETYPE_FUSION", True, priority="cmdline")
        sites = load_sites(self.settings) if any(source.url for source in sources) else None
        page_sites = [opts.site or site_key(source.url, sites) for source in sources]
        workers = WorkersConfig.from_settings(self.settings)
        named = set(page_sites) - {None}
        site = next(iter(named)) if len(named) == 1 else None
        library = None
        if not opts.no_templates and named:  # one site's templates, or every site's when the pages have several
            library = open_library(self.settings, site) if site is not None else frozen_library(self.settings)
        hints = None if opts.no_templates else StoredHints(self.settings)
        # One page runs here: a pool's start-up (a second or two) would outweigh it. Nothing is learned, so the pages
        # of one site spread over the workers.
        processes = min(workers.processes, len(sources)) if len(sources) > 1 else 0
        queue: InOrder[str | None] = page_queue(self.settings, replace(workers, workers=processes), library,
                                                 opts.method, site, pin_sites=False)  # tag: the render error
        failed = 0
        finished = False
        pages: Iterator[tuple[Source, bytes | None, str | None]] = (
            render_pages(sources, self.settings) if opts.render else ((s, screenshot, None) for s in sources))
        sited = dict(zip(map(id, sources), page_sites, strict=True))
        out: IO[str] = sys.stdout
        try:
            if opts.output:
                out = open(opts.output, "w", encoding="utf-8")  # noqa: SIM115
            with Progress(len(sources), "Extracting") as progress:

                def write(done: Iterator[tuple[str | None, Record | None]]) -> None:
                    nonlocal failed
                    for render_error, record in done:
                        assert record is not None
                        if render_error is not None:
                            record.flags.append("render_failed")
                            logger.warning("Could not render %s (typed without the screenshot): %s",
                                           record.html_file or record.url, render_error)
                        failed += record.error is not None
                        out.write(record.json_line() + "\n")
                        progress.update(failed=failed)

                for source, shot, render_error in pages:
                    page_site = sited[id(source)]
                    hint = hints.hint(page_site, source.url) if hints is not None else None
                    write(queue.add(render_error, *source_page(source, page_site, shot, hint)))
                write(queue.drain())
            finished = True
        finally:
            if out is not sys.stdout:
                out.close()
            queue.close(finished)
        notice(logger, "Extracted %d pages with %s: %d failed%s", len(sources), opts.method, failed,
               f"; written to {opts.output}" if opts.output else "")
        self.exitcode = 1 if failed == len(sources) else 0
