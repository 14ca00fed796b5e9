"""Servers and a resolver for the address-policy tests: a listed site, an unlisted server that counts what it gets.

``SiteServer`` answers its ``routes`` (path -> status, headers, body) on one loopback address; ``CountingServer``
answers every request with a secret, on another loopback address (Linux routes all of 127.0.0.0/8 to ``lo``), and
counts each one, so a test can say that the crawl sent it nothing. ``MappedPolicyResolver`` is the crawl's
resolver with test names (``TEST_HOSTS=name=address,...``) in place of the system's DNS.
"""

from __future__ import annotations

import collections
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

from crawler.fetch_policy import AddressPolicy, PolicyResolver

SECRET = "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
SECRET_PAGE = (f"<html><head><title>Internal</title></head><body><h1>Instance credentials</h1><p>{SECRET}</p>"
               f"<p>{SECRET} is the key of this machine's role; never publish it.</p></body></html>").encode()

Route = tuple[int, dict[str, str], bytes]


class _Server:
    """A threaded HTTP server on ``host``, port 0, in a background thread."""

    def __init__(self, host: str) -> None:
        self.host = host
        self.hits: collections.Counter[str] = collections.Counter()
        self._lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                with outer._lock:
                    outer.hits[self.path] += 1
                status, headers, body = outer.answer(self.path)
                self.send_response(status)
                for name, value in {"Content-Type": "text/html; charset=utf-8", **headers}.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_POST = do_GET
            do_HEAD = do_GET

        self._httpd = ThreadingHTTPServer((host, 0), Handler)
        self._httpd.daemon_threads = True
        self.port = self._httpd.server_address[1]
        self.url = f"http://{host}:{self.port}"
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True)

    def answer(self, path: str) -> Route:
        raise NotImplementedError

    def __enter__(self) -> Any:
        self._thread.start()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()


class CountingServer(_Server):
    """The unlisted server: the secret for every path, every request counted (``hits``)."""

    def __init__(self, host: str = "127.0.0.2") -> None:
        super().__init__(host)

    def answer(self, path: str) -> Route:
        return 200, {}, SECRET_PAGE


class SiteServer(_Server):
    """A listed site: ``routes`` by path (query string included), 404 for any other; HTML pages after ``delay``
    seconds (a slow site, whose URLs wait in the crawl's queue), robots.txt after ``robots_delay``."""

    def __init__(self, routes: dict[str, Route], host: str = "127.0.0.1", delay: float = 0.0,
                 robots_delay: float = 0.0) -> None:
        super().__init__(host)
        self.routes = routes
        self.delay, self.robots_delay = delay, robots_delay

    def answer(self, path: str) -> Route:
        found = self.routes.get(path, (404, {}, b"<html><body>Not found</body></html>"))
        if path == "/robots.txt":
            time.sleep(self.robots_delay)
        elif self.delay and found[1].get("Content-Type", "text/html").startswith("text/html"):
            time.sleep(self.delay)
        return found


class MappedPolicy(AddressPolicy):
    """The address policy with names from ``hosts`` (name -> addresses) instead of DNS; other names fail."""

    hosts: dict[str, list[str]]

    async def resolve(self, host: str) -> list[str]:
        return self.resolve_sync(host)

    def resolve_sync(self, host: str) -> list[str]:
        found = getattr(self, "hosts", {}).get(host)
        if not found:
            raise OSError(f"{host}: not a test host")
        return found


class MappedPolicyResolver(PolicyResolver):
    """TWISTED_DNS_RESOLVER for test crawls: TEST_HOSTS (``name=address`` items, comma-separated) resolve."""

    policy_class = MappedPolicy

    @classmethod
    def from_crawler(cls, crawler: Any, reactor: Any) -> MappedPolicyResolver:
        resolver = super().from_crawler(crawler, reactor)
        hosts: dict[str, list[str]] = {}
        for item in crawler.settings.getlist("TEST_HOSTS"):
            name, _, address = item.partition("=")
            hosts.setdefault(name.strip(), []).append(address.strip())
        assert isinstance(resolver.policy, MappedPolicy)
        resolver.policy.hosts = hosts
        return resolver
