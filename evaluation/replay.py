"""Replay saved dataset pages at their original URLs, so that a real crawl fetches real pages.

``replay_pages()`` reads pages of ``../shared/datasets`` that have a URL (the reader's, else the one
the page declares with ``<link rel=canonical>`` / ``og:url``). :class:`ReplayServer` is a local
HTTP **proxy** on 127.0.0.1 that answers a GET for one of those URLs with the page's bytes as the
dataset stored them (``Content-Type: text/html`` and no charset, since the original headers are
unknown: the crawl's charset detection sees undeclared UTF-8, GBK and Big5 as on the web), every
other URL with a quick 404 (robots.txt included), and one sitemap per original site at
``http://<host>/__replay__/sitemap.xml`` (a web archive's copies: one per original host and year,
``http://<host>/__replay__/<site>/sitemap.xml``). ``write_site_list()`` writes the site list (one
site per original site, its sitemap as its only start point, depth 1) so that::

    http_proxy=http://127.0.0.1:PORT scrapy crawl news_sites -a sites=replay.yaml -O out.jsonl

crawls exactly the replayed pages, as it would crawl the web. By hand::

    python -m evaluation.replay --serve --datasets wcxb-dev l3s-gn1 --limit 50

Evaluation code: nothing here imports Scrapy, and runtime code never imports this module.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import Any
from urllib.parse import urlsplit
from xml.sax.saxutils import escape as xml_escape

import yaml

from crawler.render.saved_url import declared_url, page_url
from crawler.urls import canonical_url
from evaluation.datasets import Page as DatasetPage
from evaluation.harness import load_pages, metric_for
from extraction.dom.encoding import decode_html
from extraction.dom.repair import MOJIBAKE_RE

# Datasets replayed by default: every set whose pages (or most of them) carry or declare a URL.
REPLAY_DATASETS: tuple[str, ...] = (
    "wcxb-dev", "l3s-gn1", "cleaneval", "cleanportaleval", "dragnet", "msv-big5", "trafilatura-eval",
    "mozilla-readability", "chinese-wced-dev", "gne-chinese", "article-vs-nonarticle",
)
SITEMAP_PATH = "/__replay__/sitemap.xml"  # a host's sitemap; an archived site's: /__replay__/<site>/sitemap.xml
_ARCHIVED_RE = re.compile(r"/web/(\d{4})\d{0,10}[a-z_]*/(https?://.+)", re.IGNORECASE)
_SITE_NAME_BAD = re.compile(r"[^A-Za-z0-9_.-]+")



@dataclass(frozen=True)
class ReplayPage:
    """One page to replay.

    ``url`` is the page's original URL in the crawl's canonical form (``crawler.urls.canonical_url``:
    what the spider requests) with ``https://`` rewritten to ``http://``, since the replay speaks plain
    HTTP only. ``body`` is the raw HTML exactly as the dataset stored it (decompressed, never decoded
    or re-encoded). ``gold`` is the reader's gold text (None when the set has none); ``metric`` is the
    harness's metric for the dataset (``evaluation.harness.metric_for``), None for sets without one;
    ``source`` is the dataset record (snippets and page type, for scoring).
    """

    url: str
    body: bytes
    dataset: str
    key: str
    gold: str | None
    metric: str | None
    source: DatasetPage | None = None

    @property
    def host(self) -> str:
        """Return the URL's host (with its port when it has one), lower-cased."""
        return urlsplit(self.url).netloc.lower()

    @property
    def site_key(self) -> str:
        """Return the page's original site: its host, or for a web archive's copy
        (``/web/<timestamp>/<original URL>``) the original host and the year of the copy."""
        match = _ARCHIVED_RE.match(urlsplit(self.url).path)
        if match:
            original = urlsplit(match.group(2)).netloc.lower()
            if original:
                return f"{original} {match.group(1)}"
        return self.host


def replay_url(url: str) -> str | None:
    """Return ``url`` as the replay serves it (http, canonical form), or None when it is not http(s)."""
    url = url.strip()
    try:
        parts = urlsplit(url)
        if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
            return None
        return canonical_url("http" + url[len(parts.scheme):])
    except ValueError:  # a bad port or IPv6 literal: no URL the crawl could request
        return None


def _metric(dataset: str) -> str | None:
    try:
        return metric_for(dataset)
    except ValueError:  # a set without a text metric (page-type sets, msv-big5)
        return None


def replay_pages(names: Sequence[str] = REPLAY_DATASETS, limit_per_dataset: int | None = None,
                 root: Path | None = None, guess_urls: bool = False, archive_urls: bool = False) -> list[ReplayPage]:
    """Return the pages of the datasets ``names`` that have a URL, in dataset order then reader order.

    The URL is the reader's, else the one the page declares (``declared_url``), else, with ``archive_urls``,
    the web archive's address its toolbar names (``archived_url``: msv-big5's 2005 and 2009 copies declare
    none); pages with none are skipped, unless ``guess_urls``: then they get
    ``crawler.render.saved_url.page_url``'s guess, a URL on the site the page's links name (what the offline
    renderer opens saved pages at; some pages have none and are still skipped). A URL seen before (in its
    replay form) is skipped: the first page keeps it. ``limit_per_dataset`` keeps the first N pages of each set.
    """
    pages: list[ReplayPage] = []
    seen: set[str] = set()
    for name in names:
        kept = 0
        metric = _metric(name)
        for page in load_pages(name, None, root):
            if limit_per_dataset is not None and kept >= limit_per_dataset:
                break
            body = page.html_bytes()
            url = page.url
            if not url:
                html = decode_html(body).text
                url = declared_url(html)
                if not url and archive_urls:
                    url = archived_url(html)
                if not url and guess_urls:
                    url = page_url(page.page_id.replace("/", "_") + ".html", html)
            served = replay_url(url) if url else None
            if served is None or served in seen:
                continue
            seen.add(served)
            pages.append(ReplayPage(served, body, name, page.page_id, page.gold_text, metric, page))
            kept += 1
    return pages


_TOOLBAR_URL_RE = re.compile(r"""id=["']?wmtbURL["']?[^>]*?\svalue=["']([^"']+)["']""", re.IGNORECASE)
_ARCHIVE_STAMP_RE = re.compile(r"/web/(\d{14})/")


def archived_url(html: str) -> str | None:
    """Return the address of a web archive's copy from its toolbar: ``http://web.archive.org/web/<timestamp>/
    <original URL>``, the toolbar's URL field and its most frequent 14-digit timestamp; None without them."""
    field = _TOOLBAR_URL_RE.search(html)
    stamps = Counter(_ARCHIVE_STAMP_RE.findall(html))
    if field is None or not stamps:
        return None
    original = field.group(1).strip()
    if not original.lower().startswith(("http://", "https://")):
        return None
    return f"http://web.archive.org/web/{stamps.most_common(1)[0][0]}/{original}"


def group_by_host(pages: Iterable[ReplayPage]) -> dict[str, list[ReplayPage]]:
    """Return ``{host: pages}``, hosts in order of their first page, pages in the given order."""
    hosts: dict[str, list[ReplayPage]] = {}
    for page in pages:
        hosts.setdefault(page.host, []).append(page)
    return hosts


def group_by_site(pages: Iterable[ReplayPage]) -> dict[str, list[ReplayPage]]:
    """Return ``{site key: pages}`` (:attr:`ReplayPage.site_key`), in order of each site's first page."""
    sites: dict[str, list[ReplayPage]] = {}
    for page in pages:
        sites.setdefault(page.site_key, []).append(page)
    return sites


def sitemap_url(site_key: str, pages: Sequence[ReplayPage]) -> str:
    """Return where the replay serves the sitemap of one site's ``pages`` (all on one host)."""
    host = pages[0].host
    if site_key == host:
        return f"http://{host}{SITEMAP_PATH}"
    return f"http://{host}/__replay__/{_SITE_NAME_BAD.sub('_', site_key)}/sitemap.xml"


def sitemap_xml(urls: Iterable[str]) -> bytes:
    """Return a sitemaps.org urlset listing ``urls`` (XML-escaped), UTF-8."""
    locs = "".join(f"<url><loc>{xml_escape(url)}</loc></url>\n" for url in urls)
    return ('<?xml version="1.0" encoding="UTF-8"?>\n'
            f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n{locs}</urlset>\n').encode()


def mojibake(text: str) -> list[str]:
    """Return the mojibake sequences in ``text`` (UTF-8 read as windows-1252, and U+FFFD), in order."""
    found = [match.group(0) for match in MOJIBAKE_RE.finditer(text)]
    return found + ["\ufffd"] * text.count("\ufffd")


def charset_kind(body: bytes) -> str:
    """Return how a page's charset is found, as ``<declared|undeclared>-<family>``.

    The family is what ``decode_html`` decodes it as: "gbk" (GB2312/GBK/GB18030), "big5",
    "utf-8" (with non-ASCII bytes), "ascii", or "other" (windows-1252, Latin-2, ...). Declared:
    a BOM, header or ``<meta>`` charset that the bytes honour; undeclared: strict UTF-8 or detection.
    """
    decoded = decode_html(body)
    encoding = decoded.encoding.lower()
    if encoding in ("gb18030", "gbk", "gb2312"):
        family = "gbk"
    elif encoding.startswith("big5"):
        family = "big5"
    elif encoding in ("utf-8", "utf_8"):
        family = "ascii" if body.isascii() else "utf-8"
    else:
        family = "other"
    declared = decoded.source in ("bom", "header", "meta")
    return f"{'declared' if declared else 'undeclared'}-{family}"


class _ProxyHandler(BaseHTTPRequestHandler):
    """Answers proxy requests (absolute URIs) and direct ones (Host header) from the server's pages."""

    server: _ReplayHTTPServer
    protocol_version = "HTTP/1.1"

    def _target(self) -> str:
        if "://" in self.path:
            return self.path
        return f"http://{self.headers.get('Host', '')}{self.path}"

    def _answer(self, head_only: bool) -> None:
        target = self._target()
        body, kind = self.server.replay.lookup(target)
        if body is None:
            self.send_response(404)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", "10")
            self.end_headers()
            if not head_only:
                self.wfile.write(b"not found\n")
            return
        self.send_response(200)
        self.send_header("Content-Type", "application/xml" if kind == "sitemap" else "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if not head_only:
            self.wfile.write(body)

    def do_GET(self) -> None:
        self._answer(head_only=False)

    def do_HEAD(self) -> None:
        self._answer(head_only=True)

    def do_CONNECT(self) -> None:  # https through the proxy (a page's subresources): nothing to tunnel to
        self.server.replay.count("not_found", self.path)
        self.send_response(404)
        self.send_header("Content-Length", "0")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True

    def log_message(self, format: str, *args: Any) -> None:  # quiet: the counters say what was asked
        return


class _ReplayHTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    # The listen backlog: a crawl opens hundreds of connections at once (one per site), and with the
    # default of 5 the kernel drops the rest, which then wait out DOWNLOAD_TIMEOUT.
    request_queue_size = 1024

    def __init__(self, replay: ReplayServer) -> None:
        self.replay = replay
        super().__init__(("127.0.0.1", 0), _ProxyHandler)


class ReplayServer:
    """A local HTTP proxy serving ``pages`` at their URLs (module docstring); a context manager.

    ``proxy_url`` is ``http://127.0.0.1:PORT`` once started. ``requests`` is a snapshot of what
    was asked: a Counter of ``(outcome, url)``, outcome "page", "sitemap" or "not_found".
    """

    def __init__(self, pages: Iterable[ReplayPage]) -> None:
        self.pages: dict[str, ReplayPage] = {}
        for page in pages:
            self.pages.setdefault(page.url, page)
        # One sitemap per original site (group_by_site), keyed by its URL.
        self.sitemaps = {sitemap_url(key, site_pages): sitemap_xml(page.url for page in site_pages)
                         for key, site_pages in group_by_site(self.pages.values()).items()}
        self._counts: Counter[tuple[str, str]] = Counter()
        self._lock = threading.Lock()
        self._server: _ReplayHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lookups (called from the handler threads) --

    def count(self, outcome: str, url: str) -> None:
        """Count one request for ``url`` with ``outcome``."""
        with self._lock:
            self._counts[outcome, url] += 1

    def lookup(self, url: str) -> tuple[bytes | None, str]:
        """Return ``(body, kind)`` for a requested absolute URL; ``(None, "not_found")`` when unknown."""
        parts = urlsplit(url)
        if parts.path.startswith("/__replay__/") and not parts.query:
            sitemap = self.sitemaps.get(f"http://{parts.netloc.lower()}{parts.path}")
            if sitemap is not None:
                self.count("sitemap", url)
                return sitemap, "sitemap"
        page = self.pages.get(url)
        if page is None:
            served = replay_url(url)
            page = self.pages.get(served) if served else None
        if page is None:
            self.count("not_found", url)
            return None, "not_found"
        self.count("page", page.url)
        return page.body, "page"

    @property
    def requests(self) -> Counter[tuple[str, str]]:
        """Return a copy of the request counts, ``{(outcome, url): n}``."""
        with self._lock:
            return Counter(self._counts)

    def outcome_counts(self) -> dict[str, int]:
        """Return the number of requests per outcome ("page", "sitemap", "not_found")."""
        totals: Counter[str] = Counter()
        for (outcome, _url), n in self.requests.items():
            totals[outcome] += n
        return dict(totals)

    def pages_served(self) -> int:
        """Return how many distinct pages were served at least once."""
        with self._lock:
            return sum(1 for outcome, _url in self._counts if outcome == "page")

    # -- lifecycle --

    @property
    def proxy_url(self) -> str:
        """Return the proxy's address, ``http://127.0.0.1:PORT``; raises RuntimeError before start."""
        if self._server is None:
            raise RuntimeError("the replay server is not running")
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self) -> ReplayServer:
        """Start serving in a background thread; return self."""
        self._server = _ReplayHTTPServer(self)
        self._thread = threading.Thread(target=self._server.serve_forever, name="replay-server", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close the socket."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join()
            self._thread = None

    def __enter__(self) -> ReplayServer:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 traceback: TracebackType | None) -> None:
        self.stop()


def site_name(host: str, taken: set[str]) -> str:
    """Return a site name for ``host`` (``[A-Za-z0-9][A-Za-z0-9_.-]*``) not in ``taken``; adds it there."""
    base = _SITE_NAME_BAD.sub("_", host).strip("_.-") or "site"
    if not base[0].isalnum():
        base = "site-" + base
    name, n = base, 1
    while name in taken:
        n += 1
        name = f"{base}-{n}"
    taken.add(name)
    return name


def site_entries(pages: Iterable[ReplayPage], render: bool, max_pages: int | None = None) -> list[dict[str, Any]]:
    """Return the site-list entries of ``pages``: one per original site (see :func:`write_site_list`)."""
    taken: set[str] = set()
    sites = []
    groups = group_by_site(pages)
    shared = {group[0].host for key, group in groups.items() if key != group[0].host}  # hosts of archived sites
    for key, site_pages in groups.items():
        host = site_pages[0].host
        sites.append({
            "name": site_name(key, taken),
            "sitemaps": [sitemap_url(key, site_pages)],
            # A host's pages; on an archive's host, each site's own pages (they share no prefix but the host).
            "allowed_prefixes": [f"http://{host}/"] if host not in shared else [page.url for page in site_pages],
            "max_depth": 1,  # pages listed in a sitemap have depth 1: no link beyond the replayed pages
            "max_pages": max(len(site_pages), max_pages or 1),
            "render": render,
        })
    return sites


def write_site_list(pages: Iterable[ReplayPage], path: str | Path, render: bool,
                    max_pages: int | None = None) -> Path:
    """Write the YAML site list of ``pages`` to ``path`` and return the path.

    One site per original site (:attr:`ReplayPage.site_key`: the host, or the original host and year of
    a web archive's copies, as msv-big5's nine sites over four years), named after it (sanitised,
    unique), its sitemap (:func:`sitemap_url`) as the only start point, ``allowed_prefixes`` the host
    (an archived site: its pages' URLs), ``max_depth`` 1, ``render`` as given, ``max_pages`` the larger
    of ``max_pages`` and the site's page count. Archived sites share their archive's host, so they share
    its politeness, as they would on the web.
    """
    path = Path(path)
    text = yaml.safe_dump({"sites": site_entries(pages, render, max_pages)}, sort_keys=False, allow_unicode=True)
    path.write_text(text, encoding="utf-8")
    return path


def crawl_settings(work: Path, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """Return the settings of a replay crawl under ``work``: its stats file, WARC archive and template store
    (the crawl state beside it) there, then ``extra``; the project's settings otherwise."""
    settings = {"STATS_FILE": str(work / "stats.json"), "LOG_LEVEL": "INFO", "ARCHIVE_DIR": str(work / "archive"),
                "TEMPLATES_STORE": str(work / "templates_db")}
    settings.update(extra or {})
    return settings


def replay_crawl(pages: Sequence[ReplayPage], work: Path, extra: Mapping[str, str] | None = None,
                 timeout: float = 3600.0, render: bool = False, out: Path | None = None) -> list[dict[str, Any]]:
    """Crawl ``pages`` once through a :class:`ReplayServer` (``scrapy crawl news_sites`` in a subprocess, the
    site list of :func:`write_site_list`, ``crawl_settings(work, extra)``) and return the feed's records.

    The feed is ``out`` (default ``work/out.jsonl``, replaced); the crawl's log is ``work/crawl.log``. A crawl
    that fails or runs past ``timeout`` seconds gives the records it wrote (RuntimeError when it wrote none).
    """
    work.mkdir(parents=True, exist_ok=True)
    write_site_list(pages, work / "sites.yaml", render=render)
    feed = out or work / "out.jsonl"
    feed.unlink(missing_ok=True)
    command = [sys.executable, "-m", "scrapy", "crawl", "news_sites", "-a", f"sites={work / 'sites.yaml'}",
               "-O", str(feed)]
    for key, value in crawl_settings(work, extra).items():
        command += ["-s", f"{key}={value}"]
    env = {key: value for key, value in os.environ.items()
           if key.lower() not in ("http_proxy", "https_proxy", "no_proxy")}
    repo = Path(__file__).resolve().parent.parent
    with ReplayServer(pages) as server:
        env["http_proxy"] = server.proxy_url
        # On a timeout the records written so far are read.
        with (work / "crawl.log").open("ab") as crawl_log, contextlib.suppress(subprocess.TimeoutExpired):
            subprocess.run(command, cwd=repo, env=env, stdout=crawl_log, stderr=subprocess.STDOUT,
                           stdin=subprocess.DEVNULL, timeout=timeout, check=False)
    if not feed.exists():
        raise RuntimeError(f"the replay crawl wrote no feed; see {work / 'crawl.log'}")
    records = []
    for line in feed.read_text(encoding="utf-8").splitlines():
        if line.strip():
            with contextlib.suppress(ValueError):
                records.append(json.loads(line))
    return records


def _serve(args: argparse.Namespace) -> int:
    pages = replay_pages(args.datasets, args.limit, guess_urls=args.guess_urls)
    if not pages:
        print("error: no page with a URL in " + " ".join(args.datasets), file=sys.stderr)
        return 2
    out = Path(args.sites) if args.sites else Path(tempfile.mkdtemp(prefix="replay-")) / "sites.yaml"
    write_site_list(pages, out, render=args.render)
    with ReplayServer(pages) as server:
        print(f"Replaying {len(server.pages)} pages of {len(server.sitemaps)} sites through {server.proxy_url}")
        print(f"Site list: {out}")
        print(f"Crawl: http_proxy={server.proxy_url} .venv/bin/scrapy crawl news_sites -a sites={out} -O replay.jsonl")
        print("Ctrl-C stops the server.", flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            threading.Event().wait()
        print(f"Requests: {server.outcome_counts()}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Command line: ``--serve`` the pages of ``--datasets``; returns the exit status."""
    parser = argparse.ArgumentParser(prog="python -m evaluation.replay", description=__doc__.split("\n\n")[0])
    parser.add_argument("--serve", action="store_true", help="serve the pages until Ctrl-C")
    parser.add_argument("--datasets", nargs="+", default=list(REPLAY_DATASETS), metavar="NAME")
    parser.add_argument("--limit", type=int, default=None, help="pages per dataset at most")
    parser.add_argument("--guess-urls", action="store_true",
                        help="give pages without a URL one on the site their links name (else they are skipped)")
    parser.add_argument("--no-render", dest="render", action="store_false", help="render: false in the site list")
    parser.add_argument("--sites", metavar="FILE", help="where to write the site list (default: a temporary folder)")
    args = parser.parse_args(argv)
    if not args.serve:
        pages = replay_pages(args.datasets, args.limit, guess_urls=args.guess_urls)
        print(f"{len(pages)} pages of {len(group_by_site(pages))} sites on {len(group_by_host(pages))} hosts "
              "(add --serve to serve them)")
        return 0
    return _serve(args)


if __name__ == "__main__":
    sys.exit(main())
