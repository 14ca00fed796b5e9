"""Offline rendering of saved HTML in real Chromium: sizes, no network, stripped styles, bad pages."""

from __future__ import annotations

import io
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from crawler.render import chromium_path
from crawler.render.offline import (
    FALLBACK_ORIGIN,
    OFFLINE_ARGS,
    OfflineRenderConfig,
    RenderedPage,
    document_url,
    render_html,
)

CHROMIUM = Path(chromium_path())
browser = pytest.mark.skipif(not CHROMIUM.exists(), reason=f"no Chromium at {CHROMIUM} (make setup installs it)")


class _RecordingHandler(BaseHTTPRequestHandler):
    """Answers every GET with a red stylesheet/image-ish body and records the path."""

    requests: list[str]

    def do_GET(self) -> None:
        self.requests.append(self.path)
        body = b"body{background:#f00}"
        self.send_response(200)
        self.send_header("Content-Type", "text/css")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture()
def asset_server() -> Iterator[tuple[str, list[str]]]:
    """A loopback server on port 0 that no render may reach: (base URL, paths it was asked for)."""
    requests: list[str] = []
    handler = type("Handler", (_RecordingHandler,), {"requests": requests})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", requests
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def _styled_page(base: str) -> str:
    return f"""<!DOCTYPE html><html><head>
<link rel="stylesheet" href="{base}/site.css">
<style>@font-face{{font-family:F;src:url({base}/font.woff2)}}
body{{background:#1d3557;color:#f1faee;font-family:F,serif}} .box{{background:#e63946;height:300px}}</style>
<script src="{base}/app.js"></script>
<meta http-equiv="refresh" content="0;url={base}/elsewhere">
</head><body><h1 style="font-size:64px">Styled headline</h1><div class="box"></div>
<img src="{base}/photo.jpg" alt="photo"><iframe src="{base}/frame.html"></iframe>
<script>fetch("{base}/api").catch(() => {{}}); new Image().src = "{base}/pixel.gif";</script>
</body></html>"""


def _size(png: bytes) -> tuple[int, int]:
    with Image.open(io.BytesIO(png)) as image:
        assert image.mode == "RGB"
        return image.size


def _pixels(png: bytes) -> np.ndarray:
    with Image.open(io.BytesIO(png)) as image:
        return np.asarray(image.convert("RGB"))


def test_document_url_keeps_absolute_http_urls_only() -> None:
    assert document_url("k", "https://example.com/a?b=1") == "https://example.com/a?b=1"
    assert document_url("wcxb-dev/offline/0001", None) == FALLBACK_ORIGIN + "wcxb-dev/offline/0001"
    assert document_url("a b", "not a url") == FALLBACK_ORIGIN + "a%20b"
    assert document_url("k", "ftp://example.com/x").startswith(FALLBACK_ORIGIN)


@browser
@pytest.mark.browser
def test_render_sizes_offline_and_bad_pages(asset_server: tuple[str, list[str]]) -> None:
    base, requests = asset_server
    broken = "<html><body>" + "<div><table><tr><td>\x00\ufffd broken" * 20_000 + "<p>" * 5_000
    pages: list[tuple[str, str, str | None]] = [
        ("styled", _styled_page(base), "https://news.example.com/story.html"),
        ("tall", '<body style="margin:0"><div style="height:3000px;background:linear-gradient(#000,#fff)">'
                 "</div></body>", None),
        ("capped", '<body style="margin:0"><div style="height:9000px;background:linear-gradient(red,blue)">'
                   "</div></body>", None),
        ("broken", broken, "not a url"),
        ("https", "<head><script>if (location.protocol == 'http:') location.href = 'https:' + "
                  "location.href.substring(5)</script></head><body><h1>redirected</h1></body>", None),
        ("loop", "<head><script>location.href = location.href + 'x'</script></head><body>loop</body>", None),
        ("hang", "<body><h1>never loads</h1><script>while (true) {}</script></body>", None),
        # An onerror fallback that never matches its own src retries forever while images fail.
        ("onerror", "<body>" + f"<img src='{base}/a.jpg' onerror=\"if (this.src != '//x.test/f.png') "
                    "this.src = '//x.test/f.png'\">" * 20 + "</body>", None),
        ("after", "<body><h1>still rendering</h1></body>", None),
    ]
    config = OfflineRenderConfig(max_height=4000, timeout_s=4.0)
    results = list(render_html(iter(pages), config))

    assert [r.key for r in results] == [key for key, _, _ in pages]
    by_key: dict[str, RenderedPage] = {r.key: r for r in results}
    styled, tall, capped = by_key["styled"], by_key["tall"], by_key["capped"]
    assert styled.error is None and styled.png is not None and _size(styled.png) == (1280, 800)
    assert styled.page_height == 800 and "blank" not in styled.flags
    # The <style> rules applied (dark blue background); the meta refresh did not navigate away.
    assert tuple(_pixels(styled.png)[790, 640]) == (0x1D, 0x35, 0x57)
    assert tall.png is not None and _size(tall.png) == (1280, 3000) and tall.page_height == 3000
    assert "screenshot_capped" not in tall.flags
    assert capped.png is not None and _size(capped.png) == (1280, 4000) and capped.page_height == 9000
    assert "screenshot_capped" in capped.flags
    # A bad page gives a result either way; a hung one an error, and the batch goes on.
    assert by_key["broken"].png is not None or by_key["broken"].error
    assert by_key["hang"].png is None and by_key["hang"].error
    # A script redirect while loading gets the document again; a redirect loop ends.
    assert by_key["https"].error is None and "script_redirect" in by_key["https"].flags
    assert by_key["loop"].png is not None or by_key["loop"].error
    assert by_key["after"].error is None and by_key["after"].png is not None
    assert by_key["onerror"].error is None and "load_timeout" not in by_key["onerror"].flags
    # Stylesheet, font, script, image, frame, fetch, redirect: nothing reached the server.
    assert requests == []


@browser
@pytest.mark.browser
def test_strip_styles_removes_styling(asset_server: tuple[str, list[str]]) -> None:
    base, requests = asset_server
    page = [("styled", _styled_page(base), None)]
    # Without the host-resolver rule, so that request interception alone is shown to keep
    # every request from the server.
    options = OfflineRenderConfig().launch_options
    options["args"] = [arg for arg in options["args"] if arg not in OFFLINE_ARGS]
    styled = next(render_html(page, OfflineRenderConfig(launch_options=options)))
    plain = next(render_html(page, OfflineRenderConfig(strip_styles=True, launch_options=options)))
    assert styled.png is not None and plain.png is not None
    assert _size(plain.png) == (1280, 800)
    styled_px, plain_px = _pixels(styled.png), _pixels(plain.png)
    assert tuple(plain_px[790, 640]) == (255, 255, 255)  # default white background
    assert np.count_nonzero(np.any(styled_px != plain_px, axis=2)) > 0.5 * styled_px.shape[0] * styled_px.shape[1]
    assert requests == []
