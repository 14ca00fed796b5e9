"""The page every step works on: its bytes as fetched, decoded and parsed once, lazily.

A :class:`Page` is what the crawl's spider and ``scrapy extract`` hand to
:func:`extraction.process.process`: the body (bytes as received, or the rendered DOM as text),
the URL, the ``Content-Type`` header, the screenshot, the site and, for a page the crawl rendered,
the browser's DOM beside the fetched bytes (:attr:`Page.rendered`). Bad input is stopped here,
before any parser or model sees it (:attr:`Page.refusal`):

- ``empty``: no bytes, or only whitespace (after a byte-order mark);
- ``not_html``: a declared content type that is not HTML or XHTML (a missing one is fine), a binary signature (PDF,
  images, archives, media, executables) at the start, or NUL bytes in the first
  :data:`SNIFF_BYTES` (what ``git`` and ``file`` take for binary) outside UTF-16/32 text (a wide
  byte-order mark, or the charset of the Content-Type).

The text comes from :func:`extraction.dom.encoding.decode_html` (BOM, header, ``<meta>``, then
detection: GBK, GB18030 and Big5 pages declare nothing often enough), except for a page whose
text was decoded already (the browser's DOM, :meth:`Page.from_text`). :attr:`Page.tree` is the
one parsed tree the whole flow shares: the page-type model reads it whole, then template
cleaning removes nodes from it in place, then the text step reads what is left.
"""

from __future__ import annotations

import codecs
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from lxml import html

from extraction.dom.encoding import DecodedHtml, decode_html, header_charset
from extraction.dom.html import parse_html
from extraction.pagetype.site import SiteHint

SNIFF_BYTES = 8192  # bytes looked at for NULs and signatures
# Magic numbers of formats that are served or saved in place of HTML (file(1)'s magic, WHATWG
# mimesniff's image/audio/video/archive patterns); two- and three-letter ones (BMP's "BM", MP3's
# "ID3") are left to the NUL check, which their headers fail, so that text starting so is no image.
BINARY_SIGNATURES: tuple[bytes, ...] = (
    b"%PDF-", b"\x89PNG\r\n\x1a\n", b"GIF87a", b"GIF89a", b"\xff\xd8\xff", b"II*\x00", b"MM\x00*",
    b"RIFF", b"\x00\x00\x01\x00", b"PK\x03\x04", b"PK\x05\x06", b"\x1f\x8b", b"BZh", b"\xfd7zXZ\x00",
    b"7z\xbc\xaf\x27\x1c", b"Rar!\x1a\x07", b"\x28\xb5\x2f\xfd", b"OggS", b"fLaC", b"\x1a\x45\xdf\xa3",
    b"\x7fELF", b"\x00asm", b"wOFF", b"wOF2", b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", b"SQLite format 3\x00",
)
_WIDE_BOMS = (codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE, codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)
_WHITESPACE = b" \t\r\n\f\v"


def not_html_type(content_type: str | None) -> bool:
    """Return True for a declared media type that is not HTML (text/html, application/xhtml+xml; none is fine)."""
    media_type = (content_type or "").split(";", 1)[0].strip().lower()
    return bool(media_type) and "html" not in media_type


def sniff(body: bytes, content_type: str | None = None) -> str | None:
    """Return why ``body`` is not a page to extract ("empty", "not_html"), or None when it is one."""
    if not_html_type(content_type):
        return "not_html"
    head = body[:SNIFF_BYTES]
    if head.startswith(_WIDE_BOMS) or (header_charset(content_type) or "").lower().startswith(("utf-16", "utf-32")):
        return "empty" if not decode_html(body, content_type).text.strip() else None
    stripped = head.removeprefix(codecs.BOM_UTF8).lstrip(_WHITESPACE)
    if not stripped and not body[len(head):].strip():
        return "empty"
    if stripped.startswith(BINARY_SIGNATURES) or stripped[4:12].startswith(b"ftyp") or b"\x00" in head:
        return "not_html"
    return None


@dataclass(frozen=True)
class HttpExchange:
    """What went over the wire for a fetched page besides its body: the request and the response's status line
    and headers, as the WARC archive keeps them (:mod:`extraction.warc`)."""

    status: int
    headers: tuple[tuple[str, str], ...] = ()  # the response's, in order, repeated names repeated
    protocol: str = "HTTP/1.1"
    reason: str = ""  # the status line's reason phrase ("" when the server sent none or it is unknown)
    method: str = "GET"
    request_headers: tuple[tuple[str, str], ...] = ()
    ip_address: str | None = None  # the server's address, when known

    def header(self, name: str) -> str | None:
        """Return the response header called ``name`` (any case; the last of repeated ones, as Scrapy's
        ``Headers.get`` reads them), or None."""
        lowered = name.lower()
        values = [value for key, value in self.headers if key.lower() == lowered]
        return values[-1] if values else None


@dataclass(eq=False)
class Page:
    """One page to process (see the module docstring)."""

    body: bytes  # as received (decompressed), or the UTF-8 of ``from_text``'s text
    url: str | None = None  # the page's URL after redirects (links, URL features, the site)
    content_type: str | None = None  # the Content-Type header, when there was one
    screenshot: bytes | None = field(default=None, repr=False)  # PNG or JPEG of the rendered page
    site: str | None = None  # the site's key in the template library (None: no site templates)
    given: DecodedHtml | None = field(default=None, repr=False)  # text decoded before (``from_text``)
    rendered: str | None = field(default=None, repr=False)  # the browser's DOM of this page, when it was rendered
    listed_date: str | None = None  # the feed's pubDate or the sitemap's date the spider found the URL with
    site_hint: SiteHint | None = None  # the crawl's sure type for the page's URL shape (extraction.pagetype.site)
    http: HttpExchange | None = field(default=None, repr=False)  # the fetch's request and response headers (crawl)

    @classmethod
    def from_text(cls, text: str, url: str | None = None, *, encoding: str = "utf-8", source: str = "browser",
                  content_type: str | None = None, screenshot: bytes | None = None,
                  site: str | None = None) -> Page:
        """Return a page whose text was decoded already (the browser's DOM); ``encoding`` as it was decoded."""
        body = text.encode("utf-8", "surrogatepass")
        return cls(body, url, content_type, screenshot, site, DecodedHtml(text, encoding, source))

    @classmethod
    def from_tree(cls, root: html.HtmlElement, url: str | None = None, **kwargs: Any) -> Page:
        """Return a page around a tree parsed already (the method registry's callers); no door checks."""
        page = cls(b"", url, given=DecodedHtml("", "utf-8", "tree"), **kwargs)
        page.__dict__.update(tree=root, refusal=None)  # the cached properties' values
        return page

    def __getstate__(self) -> dict[str, Any]:
        """Pickled (to a worker process) with its decoded text and refusal, without the parsed tree."""
        state = dict(self.__dict__)
        state.pop("tree", None)
        return state

    def rendered_page(self) -> Page | None:
        """Return the rendered DOM as a page of its own (same URL, screenshot and site), or None."""
        if self.rendered is None:
            return None
        page = Page.from_text(self.rendered, self.url, encoding=self.decoded.encoding, content_type=self.content_type,
                              screenshot=self.screenshot, site=self.site)
        page.listed_date = self.listed_date
        page.site_hint = self.site_hint
        return page

    @cached_property
    def refusal(self) -> str | None:
        """Why the page is not processed ("empty", "not_html"), or None (see :func:`sniff`)."""
        if self.given is None:
            return sniff(self.body, self.content_type)
        if not_html_type(self.content_type):  # a browser shows PDFs and images in a document of its own
            return "not_html"
        return None if self.given.text.strip() else "empty"

    @cached_property
    def decoded(self) -> DecodedHtml:
        """The page's text with the encoding it was decoded with and the evidence for it."""
        return self.given if self.given is not None else decode_html(self.body, self.content_type)

    @property
    def text(self) -> str:
        """The page's HTML as text."""
        return self.decoded.text

    @cached_property
    def tree(self) -> html.HtmlElement:
        """The parsed page, shared by every step (template cleaning edits it in place)."""
        return parse_html(self.text)
