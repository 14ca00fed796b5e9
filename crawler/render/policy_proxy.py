"""The renderer's HTTP proxy: Chromium's own requests under the crawl's address policy.

While a page renders, Chromium fetches its subresources, frames and the documents its scripts navigate to. Every
one of them goes through this proxy (the rendering context's proxy; Playwright sends loopback addresses through
it too, ``<-loopback>``), which checks the host as Scrapy's requests are checked (:mod:`crawler.fetch_policy`) and
connects to the address it checked: Chromium resolves no name itself, so a name cannot pass the check with one
address and be fetched from another. A refused request gets ``403`` (a refused tunnel, for https) and nothing
is sent to the host; stats ``fetch/refused/<reason>``.

It runs in the crawl's own event loop on 127.0.0.1 (port 0) and relays bytes: ``CONNECT`` tunnels for https
and WebSockets, and one plain-http request per connection (sent with ``Connection: close`` and relayed until the
server closes, so a second request on the connection cannot skip the check). With RENDER_PROXY set, requests go
on to that proxy, which resolves names itself: only what a URL says (an address, ``localhost``) is checked then.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from urllib.parse import urlsplit

from crawler.fetch_policy import AddressPolicy, FetchRefused

logger = logging.getLogger(__name__)

HEAD_LIMIT = 64 * 1024  # bytes of a request line and headers (Chromium's are a few KiB)
IDLE_TIMEOUT = 60.0  # s without a byte either way before a relayed connection is closed
CONNECT_TIMEOUT = 30.0  # s to open the connection to the host (DOWNLOAD_TIMEOUT's default)
_HOP_HEADERS = frozenset({"connection", "keep-alive", "proxy-connection", "proxy-authorization", "te", "trailer",
                          "upgrade"})


class PolicyProxy:
    """A forward HTTP proxy that applies ``policy`` to every request (module docstring)."""

    def __init__(self, policy: AddressPolicy, refused: Callable[[FetchRefused, str], None],
                 upstream: str = "") -> None:
        self.policy = policy
        self.refused = refused  # called with the refusal and the URL
        self.upstream = _host_port(urlsplit(upstream if "://" in upstream else f"http://{upstream}").netloc, 80) \
            if upstream else None
        self._server: asyncio.Server | None = None
        self._lock = asyncio.Lock()
        self._connections: set[asyncio.Task[None]] = set()

    async def url(self) -> str:
        """Return the proxy's address (``http://127.0.0.1:PORT``), starting it on the first call."""
        async with self._lock:
            if self._server is None:
                self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0, limit=HEAD_LIMIT)
            port = self._server.sockets[0].getsockname()[1]
        return f"http://127.0.0.1:{port}"

    async def close(self) -> None:
        """Stop listening and end the connections still relayed."""
        if self._server is not None:
            self._server.close()
            self._server = None
        for task in list(self._connections):
            task.cancel()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._connections.add(task)
        try:
            await self._handle(reader, writer)
        except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, TimeoutError, ValueError) as exc:
            logger.debug("Proxy connection ended: %r", exc)
        except asyncio.CancelledError:
            # close() at the end of the crawl: a page that never finished loading still had a connection open.
            # Ended here: the streams server would log the cancellation of its connection task as an error.
            logger.debug("Proxy connection closed with the crawl")
        finally:
            self._connections.discard(task)
            writer.close()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), IDLE_TIMEOUT)
        request_line, *lines = head.decode("latin-1").split("\r\n")
        method, target, version = request_line.split(" ", 2)
        if method.upper() == "CONNECT":
            host, port = _host_port(target, 443)
            url = f"https://{target}/"
        else:
            parts = urlsplit(target)
            if parts.scheme not in ("http", "https") or not parts.hostname:
                await _answer(writer, 400, "absolute http URL expected")
                return
            host, port = _host_port(parts.netloc, 80)
            url = target
        try:
            upstream = await self._open(url, host, port)
        except FetchRefused as refusal:
            self.refused(refusal, url)
            await _answer(writer, 403, str(refusal))
            return
        except (OSError, TimeoutError) as exc:
            await _answer(writer, 502, f"cannot connect to {host}:{port}: {exc}")
            return
        origin_reader, origin_writer = upstream
        try:
            if method.upper() == "CONNECT":
                if self.upstream is not None:
                    origin_writer.write(head)  # the upstream proxy answers the CONNECT itself
                else:
                    writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
                await _tunnel((reader, writer), (origin_reader, origin_writer))
                return
            headers = [line for line in lines if line and line.split(":", 1)[0].strip().lower() not in _HOP_HEADERS]
            if any(line.split(":", 1)[0].strip().lower() == "transfer-encoding" for line in headers):
                await _answer(writer, 501, "chunked request bodies are not relayed")
                return
            length = next((int(line.split(":", 1)[1]) for line in headers
                           if line.split(":", 1)[0].strip().lower() == "content-length"), 0)
            path = target if self.upstream is not None else _origin_form(target)
            origin_writer.write("\r\n".join([f"{method} {path} {version}", *headers, "Connection: close", "", ""])
                                .encode("latin-1"))
            if length:
                origin_writer.write(await asyncio.wait_for(reader.readexactly(length), IDLE_TIMEOUT))
            await _relay(origin_reader, writer)
        finally:
            origin_writer.close()

    async def _open(self, url: str, host: str, port: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        """Return a connection for ``url``: to the upstream proxy, or to the first checked address that answers."""
        if self.upstream is not None:
            refusal = self.policy.literal_refusal(url)
            if refusal is not None:
                raise refusal
            return await asyncio.wait_for(asyncio.open_connection(*self.upstream), CONNECT_TIMEOUT)
        failure: Exception = OSError(f"{host} has no address")
        for address in await self.policy.addresses(host):
            try:
                return await asyncio.wait_for(asyncio.open_connection(str(address), port), CONNECT_TIMEOUT)
            except (OSError, TimeoutError) as exc:
                failure = exc
        raise failure


def _host_port(netloc: str, default: int) -> tuple[str, int]:
    """Return (host, port) of ``host:port``, ``[v6]:port`` or a bare host (userinfo dropped)."""
    netloc = netloc.rsplit("@", 1)[-1]
    if netloc.startswith("["):
        host, _, rest = netloc[1:].partition("]")
        return host, int(rest[1:]) if rest.startswith(":") and rest[1:] else default
    host, _, port = netloc.partition(":")
    return host, int(port) if port else default


def _origin_form(target: str) -> str:
    """Return an absolute URI's path and query, as a request to the origin server writes it."""
    parts = urlsplit(target)
    return (parts.path or "/") + (f"?{parts.query}" if parts.query else "")


async def _relay(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Copy bytes from ``reader`` to ``writer`` until either side ends or stays idle IDLE_TIMEOUT seconds."""
    try:
        while data := await asyncio.wait_for(reader.read(65536), IDLE_TIMEOUT):
            writer.write(data)
            await writer.drain()
    except (OSError, TimeoutError):
        pass


async def _tunnel(client: tuple[asyncio.StreamReader, asyncio.StreamWriter],
                  origin: tuple[asyncio.StreamReader, asyncio.StreamWriter]) -> None:
    """Relay both ways until one side ends, then end the other (a tunnel: TLS or a WebSocket)."""
    tasks = {asyncio.ensure_future(_relay(client[0], origin[1])), asyncio.ensure_future(_relay(origin[0], client[1]))}
    try:
        await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in tasks:
            task.cancel()


async def _answer(writer: asyncio.StreamWriter, status: int, reason: str) -> None:
    """Answer a request the proxy does not relay (a refusal, a host that cannot be reached)."""
    phrase = {400: "Bad Request", 403: "Forbidden", 501: "Not Implemented", 502: "Bad Gateway"}[status]
    logger.debug("Proxy answers %d: %s", status, reason)
    writer.write(f"HTTP/1.1 {status} {phrase}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".encode())
    with contextlib.suppress(OSError):
        await writer.drain()
