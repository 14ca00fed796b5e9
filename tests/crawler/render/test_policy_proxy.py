"""crawler.render.policy_proxy: the browser's requests relayed under the address policy, or refused unsent."""

from __future__ import annotations

import asyncio
import logging

import pytest

from crawler.fetch_policy import FetchPolicyConfig, FetchRefused
from crawler.render.policy_proxy import PolicyProxy
from tests.fetch_servers import SECRET, CountingServer, MappedPolicy, SiteServer


async def _ask(proxy: str, request: bytes) -> bytes:
    host, port = proxy.removeprefix("http://").split(":")
    reader, writer = await asyncio.open_connection(host, int(port))
    writer.write(request)
    await writer.drain()
    answer = await asyncio.wait_for(reader.read(1 << 20), 10)
    while chunk := await asyncio.wait_for(reader.read(1 << 20), 10):
        answer += chunk
        if request.startswith(b"CONNECT"):
            break
    writer.close()
    return answer


def test_listed_hosts_are_relayed_and_unlisted_ones_get_nothing() -> None:
    page = b"<html><body>Harbour ferry timetable</body></html>"
    with CountingServer("127.0.0.2") as secret, SiteServer({"/a?x=1": (200, {}, page)}, "127.0.0.1") as site:
        refused: list[tuple[str, str]] = []
        policy = MappedPolicy(FetchPolicyConfig(), ["127.0.0.1"])
        policy.hosts = {"secret.test": ["127.0.0.2"]}

        async def scenario() -> list[bytes]:
            proxy = PolicyProxy(policy, lambda refusal, url: refused.append((refusal.reason, url)))
            url = await proxy.url()
            answers = [
                await _ask(url, f"GET {site.url}/a?x=1 HTTP/1.1\r\nHost: 127.0.0.1\r\nProxy-Connection: keep-alive"
                                f"\r\n\r\n".encode()),
                await _ask(url, f"GET {secret.url}/img.png HTTP/1.1\r\nHost: 127.0.0.2\r\n\r\n".encode()),
                await _ask(url, f"GET http://secret.test:{secret.port}/x HTTP/1.1\r\n\r\n".encode()),
                await _ask(url, f"CONNECT 127.0.0.2:{secret.port} HTTP/1.1\r\nHost: 127.0.0.2\r\n\r\n".encode()),
                await _ask(url, f"POST {secret.url}/fetch HTTP/1.1\r\nContent-Length: 2\r\n\r\nhi".encode()),
            ]
            await proxy.close()
            return answers

        allowed, *refusals = asyncio.run(scenario())
        assert allowed.startswith(b"HTTP/1.0 200") and allowed.endswith(page)
        assert site.hits["/a?x=1"] == 1
        assert all(answer.startswith(b"HTTP/1.1 403 Forbidden") for answer in refusals)
        assert not any(SECRET.encode() in answer for answer in refusals)
        assert dict(secret.hits) == {}
        assert [reason for reason, _ in refused] == ["loopback"] * 4


def test_through_an_upstream_proxy_addresses_written_in_the_url_are_still_refused() -> None:
    with CountingServer("127.0.0.2") as upstream:
        policy = MappedPolicy(FetchPolicyConfig(), [])
        refused: list[FetchRefused] = []

        async def scenario() -> bytes:
            proxy = PolicyProxy(policy, lambda refusal, url: refused.append(refusal), upstream=upstream.url)
            answer = await _ask(await proxy.url(), b"GET http://169.254.169.254/latest/ HTTP/1.1\r\n\r\n")
            relayed = await _ask(await proxy.url(), b"GET http://news.example/a HTTP/1.1\r\nHost: news.example\r\n\r\n")
            await proxy.close()
            assert b"wJalrXUtnFEMI" in relayed  # the upstream proxy (here the counting server) answered
            return answer

        assert asyncio.run(scenario()).startswith(b"HTTP/1.1 403")
        assert [refusal.reason for refusal in refused] == ["link_local"]
        assert dict(upstream.hits) == {"http://news.example/a": 1}  # the absolute URI, as a proxy gets it


def test_closing_the_proxy_ends_open_connections_quietly(caplog: pytest.LogCaptureFixture) -> None:
    with SiteServer({"/slow": (200, {}, b"<html>slow</html>")}, "127.0.0.1", delay=2.0) as site:
        policy = MappedPolicy(FetchPolicyConfig(), ["127.0.0.1"])

        async def scenario() -> None:
            proxy = PolicyProxy(policy, lambda refusal, url: None)
            host, port = (await proxy.url()).removeprefix("http://").split(":")
            _, writer = await asyncio.open_connection(host, int(port))
            writer.write(f"GET {site.url}/slow HTTP/1.1\r\n\r\n".encode())
            await writer.drain()
            await asyncio.sleep(0.3)  # relayed, waiting for the slow page
            await proxy.close()
            await asyncio.sleep(0.1)
            writer.close()

        with caplog.at_level(logging.DEBUG):
            asyncio.run(scenario())
    assert not [record for record in caplog.records if record.levelno >= logging.ERROR]
