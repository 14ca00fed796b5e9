"""Bad-input endpoints under /bad/ for crawler robustness tests.

``BAD_CASES`` is the registry tests iterate over; :func:`respond` serves a
request for one of them through the small :class:`Responder` interface the
server's request handler implements.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape
from typing import Protocol
from urllib.parse import parse_qs

from demo import bad_texts as bt
from demo.assets import minimal_pdf, random_bytes, small_png

HUGE_SIZE = 12 * 1024 * 1024  # bigger than a 10 MB DOWNLOAD_MAXSIZE
SLOW_DEFAULT_S = 30.0
SLOW_MAX_S = 60.0
HANG_S = 60.0
DEEP_LEVELS = 5000
Headers = Sequence[tuple[str, str]]


@dataclass(frozen=True)
class BadCase:
    """One misbehaving endpoint and what a robust crawler should make of it."""

    name: str
    path: str  # request path (no query string)
    description: str
    kind: str  # http-error | redirect-loop | slow | hang | non-html | too-large | charset | malformed | empty
    status: int  # status code the server sends
    content_type: str  # Content-Type header as sent
    expected: str  # the outcome a robust crawler should produce
    expected_text: str = ""  # distinctive text a correct decoder/parser must recover ("" if none)
    encoding: str = ""  # codec of the body for the charset cases


def _case(name: str, description: str, kind: str, status: int, content_type: str, expected: str,
          expected_text: str = "", encoding: str = "") -> tuple[str, BadCase]:
    return name, BadCase(name, f"/bad/{name}", description, kind, status, content_type, expected,
                         expected_text, encoding)


_HTML = "text/html; charset=utf-8"
BAD_CASES: dict[str, BadCase] = dict([
    _case("404", "Not found, small HTML body.", "http-error", 404, _HTML,
          "record a 404 error, do not retry"),
    _case("500", "Internal server error.", "http-error", 500, _HTML,
          "record a 500 error after bounded retries"),
    _case("redirect-loop", "302 to itself, forever.", "redirect-loop", 302, _HTML,
          "give up after the redirect limit and record an error"),
    _case("slow", "Waits ?seconds=N (default 30, max 60) before answering.", "slow", 200, _HTML,
          "time out (download timeout) or accept the late page", bt.SLOW_SENTENCE),
    _case("never-loads", "HTML served at once, but its image /bad/hang.png never finishes.", "hang",
          200, _HTML, "plain fetch succeeds; a browser must not wait for the load event forever",
          bt.NEVER_LOADS_SENTENCE),
    _case("hang.png", "Sends image headers, then holds the connection open for 60 s.", "hang", 200,
          "image/png", "time out"),
    _case("binary", "64 KiB of seeded random bytes.", "non-html", 200, "application/octet-stream",
          "skip: not HTML"),
    _case("doc.pdf", "A minimal valid PDF.", "non-html", 200, "application/pdf", "skip: not HTML"),
    _case("image.png", "A small valid PNG.", "non-html", 200, "image/png", "skip: not HTML"),
    _case("huge", f"text/html of {HUGE_SIZE} bytes with Content-Length.", "too-large", 200, _HTML,
          "abort at DOWNLOAD_MAXSIZE / warn at DOWNLOAD_WARNSIZE"),
    _case("gbk-undeclared", "Simplified Chinese in GBK, no charset anywhere.", "charset", 200, "text/html",
          "detect GBK (or GB18030) and decode correctly", bt.GBK_SENTENCE, "gbk"),
    _case("gb18030-undeclared", "GB18030 with characters GBK lacks, no charset anywhere.", "charset", 200,
          "text/html", "detect GB18030 and decode correctly", bt.GB18030_SENTENCE, "gb18030"),
    _case("big5-undeclared", "Traditional Chinese in Big5, no charset anywhere.", "charset", 200, "text/html",
          "detect Big5 and decode correctly", bt.BIG5_SENTENCE, "big5"),
    _case("malformed", "Broken HTML: unclosed tags, stray end tags, unclosed comment at the end.",
          "malformed", 200, _HTML, "parse leniently and keep the known sentence", bt.MALFORMED_SENTENCE),
    _case("deep-nesting", f"{DEEP_LEVELS} nested <div>s with text at the bottom.", "malformed", 200,
          _HTML, "do not crash (parser depth limits); text may or may not be recovered", bt.DEEP_SENTENCE),
    _case("empty", "200 text/html with an empty body.", "empty", 200, _HTML,
          "record an empty page, no crash"),
])


class Responder(Protocol):
    """What :func:`respond` needs from the HTTP request handler."""

    def send_body(self, status: int, content_type: str, body: bytes, headers: Headers = ()) -> None:
        """Send a complete response (headers plus body; the body is skipped for HEAD)."""

    def send_head(self, status: int, content_type: str, length: int, headers: Headers = ()) -> bool:
        """Send status and headers only; return False for HEAD requests (no body wanted)."""

    def write(self, data: bytes) -> None:
        """Write part of a response body."""


def _page(title: str, paragraphs: Sequence[str], charset: str | None = "utf-8") -> str:
    meta = f'<meta charset="{charset}">' if charset else ""
    body = "\n".join(f"<p>{escape(p, quote=False)}</p>" for p in paragraphs)
    return (f"<!DOCTYPE html>\n<html><head>{meta}<title>{title}</title></head>\n"
            f"<body><h1>{title}</h1>\n{body}\n</body></html>\n")


def _index() -> str:
    items = "\n".join(f'<li><a href="{c.path}">{c.name}</a>: {escape(c.description)}</li>'
                      for c in BAD_CASES.values())
    return ('<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>Bad pages</title></head><body>'
            f"<h1>Bad pages for crawler robustness tests</h1>\n<ul>\n{items}\n</ul></body></html>\n")


def _malformed() -> str:
    return ("<html><head><title>Malformed page</title>\n<body bgcolor=white text=#222>\n"
            "<div class=outer><p>First paragraph <b>bold <i>both</b> italic</i>\n"
            "<p>A paragraph <p>nested inside another paragraph\n</div></div></td></tr></span>\n"
            "<table><tr>text in a row without cells</table>\n<table></table>\n"
            f"<div id=content><p class=lead>{bt.MALFORMED_SENTENCE}\n<span>unclosed span <ul><li>one<li>two\n"
            "<a href=/en/ title=home>unquoted attributes</a>\n"
            "<font face=Arial><center>old tags</font></center>\n"
            "</body>\n<!-- an unclosed comment swallows the rest of the document <p>never seen</p>\n")


def _deep() -> str:
    return ("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>Deep nesting</title></head><body>\n"
            + "<div>" * DEEP_LEVELS + f"<p>{bt.DEEP_SENTENCE}</p>" + "</div>" * DEEP_LEVELS
            + "\n</body></html>\n")


def _send_huge(out: Responder) -> None:
    """Stream HUGE_SIZE bytes from one reused filler block (no big buffers)."""
    head = b'<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>Huge page</title></head><body>\n'
    tail = b"</body></html>\n"
    block = b"".join(b"<p>Filler paragraph %05d for the download size limit test.</p>\n" % i
                     for i in range(1000))
    if not out.send_head(200, _HTML, HUGE_SIZE):
        return
    out.write(head)
    remaining = HUGE_SIZE - len(head) - len(tail)
    while remaining > 0:
        piece = block if remaining >= len(block) else block[:remaining]
        out.write(piece)
        remaining -= len(piece)
    out.write(tail)


def _slow_seconds(query: str) -> float:
    try:
        value = float(parse_qs(query).get("seconds", [SLOW_DEFAULT_S])[0])
    except ValueError:
        value = SLOW_DEFAULT_S
    return min(max(value, 0.0), SLOW_MAX_S)


def respond(path: str, query: str, out: Responder, stop: threading.Event) -> bool:
    """Serve ``path`` if it is a /bad/ endpoint; return False if it is not one."""
    name = path.removeprefix("/bad/")
    case = BAD_CASES.get(name)
    if path == "/bad/" or path == "/bad":
        out.send_body(200, _HTML, _index().encode())
    elif case is None:
        return False
    elif case.kind in ("http-error",):
        out.send_body(case.status, _HTML, _page(f"Error {case.status}", [case.description]).encode())
    elif name == "redirect-loop":
        out.send_body(302, _HTML, b"<p>Redirecting...</p>", [("Location", case.path)])
    elif name == "slow":
        if stop.wait(_slow_seconds(query)):  # released early because the server is stopping
            page = _page("Server stopping", ["The demo server is shutting down."])
            out.send_body(503, _HTML, page.encode())
        else:
            out.send_body(200, _HTML, _page("Slow page", [bt.SLOW_SENTENCE]).encode())
    elif name == "never-loads":
        html = _page("Never loads", [bt.NEVER_LOADS_SENTENCE]).replace(
            "</body>", '<img src="/bad/hang.png" width="200" height="100" alt="hanging image"></body>')
        out.send_body(200, _HTML, html.encode())
    elif name == "hang.png":
        png = small_png()
        if out.send_head(200, "image/png", len(png)):
            out.write(png[:8])  # the signature only; the rest never comes
            stop.wait(HANG_S)
    elif case.kind == "non-html":
        body = {"binary": random_bytes, "doc.pdf": minimal_pdf, "image.png": small_png}[name]()
        out.send_body(200, case.content_type, body)
    elif name == "huge":
        _send_huge(out)
    elif case.kind == "charset":
        texts = {"gbk": bt.GBK_TEXT, "gb18030": bt.GB18030_TEXT, "big5": bt.BIG5_TEXT}[case.encoding]
        title = "江城新聞" if case.encoding == "big5" else "江城新闻"
        out.send_body(200, "text/html", _page(title, texts, charset=None).encode(case.encoding))
    elif name == "malformed":
        out.send_body(200, _HTML, _malformed().encode())
    elif name == "deep-nesting":
        out.send_body(200, _HTML, _deep().encode())
    else:  # "empty"
        out.send_body(200, _HTML, b"")
    return True
