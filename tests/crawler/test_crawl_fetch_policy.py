"""A rendered crawl of a listed site that points, in every way it can, at an unlisted server on another loopback
address: the unlisted server gets no request, and no record or WARC capture holds its secret (issue 61).

Real crawls (`scrapy crawl news_sites` in a subprocess, rendering in Chromium with nothing blocked by the
renderer's Content-Security-Policy, so that the address policy alone keeps the browser's requests in). Names
resolve through the test resolver (tests/fetch_servers.py): ``secret.test`` and ``secret.evil.test`` to the
unlisted server's address, ``meta.evil.test`` to the cloud metadata address 169.254.169.254.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.crawl_helpers import needs_chromium, run_crawl
from tests.fetch_servers import SECRET, CountingServer, SiteServer

pytestmark = [needs_chromium, pytest.mark.browser]

_TEXT = "".join(f"<p>Paragraph {n} of the harbour council's report on the new ferry timetable and its costs.</p>"
                for n in range(12))


def _page(title: str, body: str, head: str = "") -> bytes:
    return f"<html><head><title>{title}</title>{head}</head><body><h1>{title}</h1>{body}{_TEXT}</body></html>".encode()


def _routes(secret: str, secret_port: int) -> dict[str, tuple[int, dict[str, str], bytes]]:
    named = f"http://secret.test:{secret_port}"
    links = "".join(f'<a href="{href}">{href}</a> ' for href in (
        "/site/r302", "/site/r301", "/site/refresh", "/site/script", "/site/media", "/site/moved",
        f"{secret}/outside-link", "/other/page"))
    feed = (f'<?xml version="1.0"?><rss version="2.0"><channel><title>F</title>'
            f"<item><link>{secret}/feed-entry</link></item><item><link>/site/a1</link></item></channel></rss>")
    sitemap = ('<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
               f"<url><loc>{secret}/sitemap-entry</loc></url><url><loc>SITE/site/a2</loc></url></urlset>")
    return {
        "/robots.txt": (200, {"Content-Type": "text/plain"}, b"User-agent: *\nAllow: /\n"),
        "/site/": (200, {}, _page("Harbour news", links)),
        "/site/r302": (302, {"Location": f"{secret}/r302"}, b""),
        "/site/r301": (301, {"Location": f"{secret}/r301"}, b""),
        "/site/refresh": (200, {}, _page("Moved", "", f'<meta http-equiv="refresh" content="0; url={secret}/refresh">'
                                                      )),
        "/site/script": (200, {}, _page("Moving", f'<script>location.href = "{secret}/script";</script>')),
        "/site/media": (200, {}, _page("Ferry", f'<img src="{secret}/img.png"><img src="{named}/named.png">'
                                                f'<iframe src="{secret}/frame"></iframe>'
                                                f'<script>fetch("{secret}/fetch").catch(() => null);</script>')),
        "/site/moved": (302, {"Location": "/site/a3"}, b""),
        "/site/a1": (200, {}, _page("Ferry fares", "")),
        "/site/a2": (200, {}, _page("Ferry crews", "")),
        "/site/a3": (200, {}, _page("Ferry piers", "")),
        "/site/feed.xml": (200, {"Content-Type": "application/rss+xml"}, feed.encode()),
        "/site/sitemap.xml": (200, {"Content-Type": "application/xml"}, sitemap.encode()),
        # A site that widens its redirect scope to the unlisted host: the address policy stops it there.
        "/wide/": (200, {}, _page("Wide", '<a href="/wide/r-ip">a</a> <a href="/wide/r-name">b</a> '
                                          '<a href="/wide/r-meta">c</a>')),
        "/wide/r-ip": (302, {"Location": f"{secret}/wide-ip"}, b""),
        "/wide/r-name": (302, {"Location": f"http://secret.evil.test:{secret_port}/wide-name"}, b""),
        "/wide/r-meta": (302, {"Location": "http://meta.evil.test/latest/meta-data/"}, b""),
    }


@pytest.fixture(scope="module")
def servers() -> Iterator[tuple[SiteServer, CountingServer]]:
    with CountingServer("127.0.0.2") as secret:
        routes = _routes(secret.url, secret.port)
        with SiteServer(routes, "127.0.0.1") as site:
            status, headers, body = routes["/site/sitemap.xml"]
            routes["/site/sitemap.xml"] = (status, headers, body.replace(b"SITE", site.url.encode()))
            yield site, secret


def _sites(base: str) -> list[dict[str, Any]]:
    return [
        {"name": "harbour", "start_urls": [f"{base}/site/"], "allowed_prefixes": [f"{base}/site/"],
         "feeds": [f"{base}/site/feed.xml"], "sitemaps": [f"{base}/site/sitemap.xml"], "javascript": True},
        {"name": "wide", "start_urls": [f"{base}/wide/"], "allowed_prefixes": [f"{base}/wide/"],
         "redirect_domains": ["127.0.0.2", "evil.test"], "render": False},
    ]


def _archive_bytes(archive: Path) -> bytes:
    return b"".join(gzip.decompress(path.read_bytes()) for path in sorted(archive.rglob("*.warc.gz")))


def test_nothing_reaches_the_unlisted_server(servers: tuple[SiteServer, CountingServer], tmp_path: Path) -> None:
    site, secret = servers
    settings = {"RENDER_BLOCK_RESOURCES": "", "CRAWL_STATE_ENABLED": "False",
                "TWISTED_DNS_RESOLVER": "tests.fetch_servers.MappedPolicyResolver",
                "TEST_HOSTS": "secret.test=127.0.0.2,secret.evil.test=127.0.0.2,meta.evil.test=169.254.169.254"}
    result = run_crawl(tmp_path, _sites(site.url), settings)
    assert result.returncode == 0, result.log[-3000:]

    assert dict(secret.hits) == {}  # not its robots.txt, pages, images, frames, fetch() or feed entries
    by_path = {str(item["url"]).removeprefix(site.url): item for item in result.items}
    for path in ("/site/r302", "/site/r301", "/site/refresh", "/site/script"):
        item = by_path[path]
        assert item["error"] == "redirect_offsite", item
        assert item["redirect_to"] == f"{secret.url}/{path.rsplit('/', 1)[1]}"
        assert item["text"] == "" and item["warc_file"] is None
    assert by_path["/site/moved"]["final_url"] == f"{site.url}/site/a3" and by_path["/site/moved"]["error"] is None
    assert by_path["/site/media"]["error"] is None and by_path["/site/media"]["rendered"] is True
    assert {"/site/", "/site/a1", "/site/a2", "/site/media", "/wide/"} <= set(by_path)
    assert not any(path.startswith("/wide/r-") for path in by_path)  # refused: no record
    assert SECRET not in json.dumps(result.items)
    archive = _archive_bytes(result.archive)
    assert b"Ferry piers" in archive and SECRET.encode() not in archive

    stats = result.stats
    assert stats["fetch/refused/redirect_offsite"] == 4
    # The widened site's two loopback redirects (an address, a name), the media page's two images, its frame and
    # its fetch() in the browser (each refused once or more: Chromium may ask again).
    assert stats["fetch/refused/loopback"] >= 6
    assert stats["render/refused"] >= 4
    assert stats["fetch/refused/link_local"] == 1  # the metadata address, by a name (its robots.txt is not asked)
    assert stats["crawl/dropped/fetch_refused"] == 3
    assert stats["crawl/skipped/outside_site"] >= 3  # the feed's entry, the sitemap's, the link
