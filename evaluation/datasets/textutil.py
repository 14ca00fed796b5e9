"""Text helpers shared by the dataset readers: decoding gold files, HTML to text, URLs.

Gold text files come in mixed encodings. ``decode_text`` tries strict UTF-8 first, then
the reader's fallbacks in order. On the copies read here that was needed for:

- ``cleaneval``: 48 of 739 gold files are windows-1252/latin-1; 4 are UTF-8 with a few
  broken bytes (kept as UTF-8, the broken bytes replaced);
- ``dragnet``: 43 of 1,381 gold files are windows-1252, 5 UTF-16 with a byte-order mark (49, 27, 39, 42,
  158: read as windows-1252 before, their gold was every character with a NUL after it, so every candidate
  scored 0 on them);
- ``msv-big5``: about 440 of 720 gold files are windows-1252.

The Chinese sets (``chinese-wced-dev``) are all UTF-8; their readers still list GB18030 as
the first fallback. ``cleanportaleval``, ``wcxb-dev`` and the JSON sets are UTF-8.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from urllib.parse import urlsplit

from extraction.dom.encoding import decode_html
from extraction.dom.html import parse_html
from extraction.dom.text import visible_text

WESTERN_FALLBACKS: tuple[str, ...] = ("cp1252",)
CHINESE_FALLBACKS: tuple[str, ...] = ("gb18030", "cp1252")

_BOM = b"\xef\xbb\xbf"
_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")

_URL_TAG_RE = re.compile(rb"<(?:link|meta)\b[^>]*>", re.IGNORECASE)
_URL_KIND_RE = re.compile(rb"""(?:rel\s*=\s*["']?canonical\b|property\s*=\s*["']og:url["'])""", re.IGNORECASE)
_URL_VALUE_RE = re.compile(rb"""\b(?:href|content)\s*=\s*(?:"([^"]*)"|'([^']*)')""", re.IGNORECASE)
_URL_SCAN_BYTES = 256 * 1024


def decode_text(data: bytes, fallbacks: Sequence[str] = WESTERN_FALLBACKS) -> str:
    """Return ``data`` decoded: UTF-16 when it starts with its byte-order mark, UTF-8 (BOM stripped), else
    mostly-UTF-8, else the first fallback that fits.

    A file that is valid UTF-8 except for a few bytes (more than twice as many good non-ASCII
    characters as bad bytes) stays UTF-8 with the bad bytes replaced; otherwise each fallback
    codec is tried strictly, and the last one is applied with replacement characters.
    Line endings are normalised to ``\\n``.
    """
    if data.startswith(_UTF16_BOMS):
        return normalise_newlines(data.decode("utf-16", "replace"))  # the codec reads the mark and drops it
    if data.startswith(_BOM):
        data = data[len(_BOM) :]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = _decode_fallback(data, fallbacks)
    return normalise_newlines(text)


def _decode_fallback(data: bytes, fallbacks: Sequence[str]) -> str:
    lenient = data.decode("utf-8", "replace")
    bad = lenient.count("\ufffd")
    good = sum(1 for char in lenient if ord(char) > 127 and char != "\ufffd")
    if good > 2 * bad:
        return lenient
    for codec in fallbacks:
        try:
            return data.decode(codec)
        except UnicodeDecodeError:
            continue
    return data.decode(fallbacks[-1] if fallbacks else "cp1252", "replace")


def normalise_newlines(text: str) -> str:
    """Return ``text`` with CRLF and lone CR line endings turned into ``\\n``."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def html_to_text(body: bytes) -> str:
    """Return the visible text of an HTML document, one block-level element per line."""
    return visible_text(parse_html(decode_html(body).text))


def url_site(url: str | None) -> str | None:
    """Return the lower-cased host of ``url`` without a leading ``www.``, or None."""
    if not url:
        return None
    host = (urlsplit(url).hostname or "").lower()
    if host.startswith("www."):
        host = host[4:]
    return host or None


def sniff_url(body: bytes) -> str | None:
    """Return the page's own URL from ``<link rel=canonical>`` or ``og:url``, or None if absent."""
    for tag in _URL_TAG_RE.finditer(body[:_URL_SCAN_BYTES]):
        if not _URL_KIND_RE.search(tag.group(0)):
            continue
        value = _URL_VALUE_RE.search(tag.group(0))
        if value is None:
            continue
        url = (value.group(1) or value.group(2) or b"").decode("utf-8", "replace").strip()
        if url.startswith("//"):
            url = "https:" + url
        elif url and "://" not in url:
            if url.startswith("/"):
                continue  # a relative canonical names no host
            url = "http://" + url
        if url:
            return url
    return None
