"""Threaded local HTTP server for the demo sites and the /bad/ endpoints.

Run ``python -m demo.server [--host H] [--port N] [--port-file FILE]`` to serve
in the foreground until SIGINT/SIGTERM, or use :class:`DemoServer` in tests.
"""

from __future__ import annotations

import argparse
import collections
import hashlib
import logging
import signal
import socket
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import FrameType, TracebackType
from typing import Any

from demo import badpages
from demo.assets import static_assets
from demo.content import DemoPage, DemoSite, build_sites
from demo.feeds import render_feed, render_robots, render_sitemap

log = logging.getLogger(__name__)
_DISCONNECTS = (BrokenPipeError, ConnectionResetError, ConnectionAbortedError, socket.timeout)
_ROOT_HTML = ('<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>Demo news sites</title></head><body>'
              '<h1>Demo news sites</h1><ul><li><a href="/en/">Harbor Gazette</a></li>'
              '<li><a href="/zh/">江城日报</a></li></ul></body></html>\n')


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True  # hanging handlers must never block interpreter exit
    # The listen backlog (socketserver's default is 5): a crawl and its Chromium open dozens of
    # connections at once, and a refused connect is a lost page when retries are off (the tests).
    request_queue_size = 1024
    demo: DemoServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        # Client disconnects are routine for a crawler test server; keep stderr quiet.
        log.debug("error while serving %s", client_address, exc_info=True)


class _Handler(BaseHTTPRequestHandler):
    server: _HTTPServer
    server_version = "DemoNews/1.0"
    timeout = 60  # a client that connects and never sends cannot pin a thread forever

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("%s " + format, self.address_string(), *args)

    def handle(self) -> None:
        try:
            super().handle()
        except _DISCONNECTS:
            log.debug("client %s went away", self.client_address)

    # -- Responder interface used by demo.badpages --------------------------------
    def send_head(self, status: int, content_type: str, length: int,
                  headers: Sequence[tuple[str, str]] = ()) -> bool:
        """Send status line and headers; return False when no body should follow (HEAD)."""
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(length))
        for key, value in headers:
            self.send_header(key, value)
        self.end_headers()
        self.wfile.flush()
        return self.command != "HEAD"

    def send_body(self, status: int, content_type: str, body: bytes,
                  headers: Sequence[tuple[str, str]] = ()) -> None:
        """Send a complete response with Content-Length."""
        if self.send_head(status, content_type, len(body), headers):
            self.wfile.write(body)

    def write(self, data: bytes) -> None:
        """Write part of a streamed body."""
        self.wfile.write(data)

    # -- request dispatch ----------------------------------------------------------
    def do_GET(self) -> None:
        demo = self.server.demo
        if demo.record_header is None:
            self._get()
            return
        started = time.monotonic()
        try:
            self._get()
        finally:
            demo.record(Visit(self.path.partition("?")[0], self.headers.get(demo.record_header), started,
                              time.monotonic()))

    def _get(self) -> None:
        path, _, query = self.path.partition("?")
        path = path.split("#", 1)[0]
        demo = self.server.demo
        demo.count_hit(path)
        page = demo.page_for(path)
        if page is not None:
            # An ETag, and 304 Not Modified to a conditional GET that names it (`-a recrawl=changed`).
            body = page.body_bytes
            etag = f'"{hashlib.blake2b(body, digest_size=8).hexdigest()}"'
            if etag in (self.headers.get("If-None-Match") or ""):
                demo.count_hit(f"304:{path}")
                self.send_head(304, f"text/html; charset={page.encoding}", 0, [("ETag", etag)])
                return
            self.send_body(200, f"text/html; charset={page.encoding}", body, [("ETag", etag)])
            return
        generated = demo.generated(path)
        if generated is not None:
            self.send_body(200, generated[0], generated[1])
            return
        if badpages.respond(path, query, self, demo.stop_event):
            return
        self.send_body(404, "text/html; charset=utf-8",
                       b"<!DOCTYPE html><html><head><title>404 Not Found</title></head>"
                       b"<body><h1>404 Not Found</h1><p>No such page on the demo server.</p></body></html>\n")

    do_HEAD = do_GET

    def do_POST(self) -> None:
        """``POST /_demo/publish?count=N&site=NAME``: publish N new articles (DemoServer.publish)."""
        path, _, query = self.path.partition("?")
        params = dict(pair.split("=", 1) for pair in query.split("&") if "=" in pair)
        if path != "/_demo/publish":
            self.send_body(404, "text/plain; charset=utf-8", b"POST /_demo/publish?count=N&site=NAME only\n")
            return
        try:
            added = self.server.demo.publish(int(params.get("count", "1")), params.get("site") or None)
        except ValueError as exc:
            self.send_body(400, "text/plain; charset=utf-8", f"{exc}\n".encode())
            return
        self.send_body(200, "text/plain; charset=utf-8", "".join(f"{path}\n" for path in added).encode())


@dataclass(frozen=True)
class Visit:
    """One request the server answered (``DemoServer(record_header=...)``), in ``time.monotonic()`` seconds."""

    path: str
    client: str | None  # the value of the recorded request header (a crawl worker's name), None without it
    started: float
    ended: float  # when the answer was written (or the client went away)


class DemoServer:
    """The demo sites and /bad/ endpoints on a background ThreadingHTTPServer.

    ``record_header``: keep every request's path, that header's value and its start and end times (``visits``):
    the tests of several crawl workers check with them which worker fetched a site when."""

    sites: tuple[DemoSite, ...]
    _pages: dict[str, DemoPage]

    def __init__(self, host: str = "127.0.0.1", port: int = 0, seed: int = 2026,
                 published: dict[str, int] | None = None, record_header: str | None = None) -> None:
        self.host, self.port, self.seed = host, port, seed
        self.record_header = record_header
        self.visits: list[Visit] = []
        self.published: dict[str, int] = dict(published or {})  # articles added after the 40, by site
        self.hits: collections.Counter[str] = collections.Counter()
        self.stop_event = threading.Event()
        self._hit_cond = threading.Condition()  # guards ``hits``; notified on every request
        self._build()
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._url = ""

    def _build(self) -> None:
        sites = build_sites(self.seed, self.published)
        pages: dict[str, DemoPage] = {}
        for site in sites:
            pages.update(site.pages)
            pages.update(site.private_pages)
        self.sites, self._pages = sites, pages  # swapped whole: a request sees the old or the new site

    def publish(self, count: int = 1, site: str | None = None) -> list[str]:
        """Publish ``count`` new articles on ``site`` (default: the English site); return their paths.

        They appear on the home page, their section list, the feed and the sitemap, like a newsroom's
        (demo.plan.plan_published); the existing articles do not change. Also ``POST /_demo/publish``.
        """
        names = [s.name for s in self.sites]
        site = site or names[0]
        if site not in names:
            raise ValueError(f"no demo site {site!r} (sites: {', '.join(names)})")
        if count < 1:
            raise ValueError(f"count must be >= 1, got {count}")
        before = set(self._pages)
        self.published[site] = self.published.get(site, 0) + count
        self._build()
        return sorted(set(self._pages) - before)
    @property
    def url(self) -> str:
        """Return the base URL, e.g. "http://127.0.0.1:43125" (no trailing slash); "" before start()."""
        return self._url

    def start(self) -> str:
        """Start serving in a background thread and return the base URL."""
        if self._httpd is not None:
            return self._url
        self.stop_event.clear()
        httpd = _HTTPServer((self.host, self.port), _Handler)
        httpd.demo = self
        host, port = httpd.server_address[:2]
        host_text = host.decode() if isinstance(host, bytes) else host
        self._url = f"http://{host_text}:{port}"
        self._httpd = httpd
        self._thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.1},
                                        name="demo-server", daemon=True)
        self._thread.start()
        return self._url

    def stop(self) -> None:
        """Release waiting handlers, stop serving and close the socket (idempotent)."""
        self.stop_event.set()
        httpd, self._httpd = self._httpd, None
        if httpd is None:
            return
        httpd.shutdown()
        httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def record(self, visit: Visit) -> None:
        """Keep one answered request (``record_header``)."""
        with self._hit_cond:
            self.visits.append(visit)

    def count_hit(self, path: str) -> None:
        """Count one request for ``path`` (query string already stripped)."""
        with self._hit_cond:
            self.hits[path] += 1
            self._hit_cond.notify_all()

    def reset_hits(self) -> None:
        """Forget all counted requests."""
        with self._hit_cond:
            self.hits.clear()

    def wait_for_hit(self, path: str, count: int = 1, timeout: float = 5.0) -> bool:
        """Block until ``path`` has been requested ``count`` times; return False on timeout.

        Lets tests act while a slow or hanging request is in progress, without sleeping.
        """
        with self._hit_cond:
            return self._hit_cond.wait_for(lambda: self.hits[path] >= count, timeout)

    def page_for(self, path: str) -> DemoPage | None:
        """Return the demo page served at ``path`` (including robots-disallowed ones), or None."""
        return self._pages.get(path)

    def generated(self, path: str) -> tuple[str, bytes] | None:
        """Return (content type, body) for robots.txt, sitemaps, feeds and static files, or None."""
        if path == "/robots.txt":
            return "text/plain; charset=utf-8", render_robots(self.sites, self._url).encode()
        if path == "/":
            return "text/html; charset=utf-8", _ROOT_HTML.encode()
        for site in self.sites:
            if path == site.sitemap_path:
                return "application/xml; charset=utf-8", render_sitemap(site, self._url).encode()
            if path == site.feed_path:
                content_type, text = render_feed(site, self._url)
                return content_type, text.encode()
        return static_assets().get(path)

    def __enter__(self) -> DemoServer:
        self.start()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()


def main(argv: Sequence[str] | None = None) -> int:
    """Run the demo server in the foreground until SIGINT/SIGTERM; return the exit status."""
    parser = argparse.ArgumentParser(description="Serve the demo news sites locally.")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--port-file", type=Path, help="write the base URL to this file once listening")
    parser.add_argument("--published", type=int, default=0, metavar="N",
                        help="start with N articles published on the English site after its 40 (more with "
                             "POST /_demo/publish?count=N&site=NAME)")
    args = parser.parse_args(argv)
    stopping = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stopping.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    server = DemoServer(args.host, args.port, args.seed,
                        {"en-gazette": args.published} if args.published else None)
    url = server.start()
    if args.port_file:
        tmp = args.port_file.with_name(args.port_file.name + ".tmp")
        tmp.write_text(url + "\n")
        tmp.replace(args.port_file)  # atomic, so a poller never reads half a URL
    print(f"Demo sites at {url}", flush=True)
    try:
        while not stopping.wait(0.5):
            pass
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
