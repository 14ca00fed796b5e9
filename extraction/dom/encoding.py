"""Bytes to Unicode for HTML pages whose charset may be wrong or missing.

Order of evidence, as in the HTML standard's encoding sniffing, with two changes: a
declaration is only trusted when the body decodes under it without errors, and a single-byte
declaration (windows-1252, ISO-8859-x, ...) loses to strict UTF-8 when the body has non-ASCII
bytes and all of them form valid UTF-8 sequences (pages re-encoded to UTF-8 that kept their old
``<meta>``: 22 of 2,000 replayed dataset pages came out as mojibake, "Ã©" for "é"; Latin text
practically never forms valid multi-byte UTF-8 by chance).

1. a byte-order mark;
2. the HTTP ``Content-Type`` charset;
3. a ``<meta charset>`` / ``http-equiv`` declaration in the first 4 KiB;
4. strict UTF-8;
5. UTF-8 with a few stray single bytes: when at least ``MIXED_UTF8_SHARE`` of the non-ASCII bytes
   form valid UTF-8 sequences, the page is UTF-8 with some windows-1252 pasted in (a common
   accident of templates and CMS imports): each stray byte is read as windows-1252, not as
   U+FFFD (the same for a page that declares UTF-8 and breaks it);
6. statistical detection (charset-normalizer) among the encodings browsers decode (``WEB_ENCODINGS``),
   a tie going to the one more used on the web: left free, it read the curly quotes of undeclared
   English pages as DOS Baltic or Central European letters (cp775, cp852: "ōI reö" for "“I re”"),
   "Español" as "Espa±ol", and a GBK page as Kazakh Cyrillic (ptcp154);
7. a CJK multi-byte codec with a few broken bytes (``CJK_CODECS``), when detection found no codec or a
   single-byte one: a real GBK page with one truncated character fails every strict CJK decode, so
   detection never proposes it. The codec is taken when the page, its broken bytes left out, is
   detected as that codec and has at least ``MIN_DISTINCT_CHARS`` distinct non-ASCII characters;
8. windows-1252 with replacement characters (never fails, flagged as ``fallback``).

GB2312 and GBK are decoded as GB18030, their superset: pages declaring GB2312 routinely
contain GBK-only characters, and GB18030 decodes every GBK byte sequence identically.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass

import charset_normalizer

# Where in the document a <meta charset> may appear (HTML standard: the first 1024 bytes;
# real pages put long <script>/<style> first, so we look a little further).
META_SCAN_BYTES = 4096
# A declared charset that fails strict decoding is kept when at most this many characters (or
# this share of them) come out as U+FFFD (ours: a few broken bytes in a real GBK page).
MAX_REPLACED_CHARS = 10
MAX_REPLACED_SHARE = 0.001

# Share of a page's non-ASCII bytes that must form valid UTF-8 sequences for the page to be read as UTF-8 with
# stray windows-1252 bytes (step 5). GBK and Big5 text almost never forms UTF-8 sequences, so such pages stay
# with detection.
MIXED_UTF8_SHARE = 0.9

# Declared or detected names that are decoded with a superset codec instead.
SUPERSET_CODECS = {
    "gb2312": "gb18030",
    "gbk": "gb18030",
    "x-gbk": "gb18030",
    "cp936": "gb18030",
    "euc-cn": "gb18030",
    "big5": "big5hkscs",  # Big5-HKSCS extends Big5 with characters common on HK/TW pages
    "iso-8859-1": "cp1252",  # browsers treat latin-1 as windows-1252
    "iso8859-1": "cp1252",
    "latin-1": "cp1252",
    "latin_1": "cp1252",
    "ascii": "cp1252",
    "us-ascii": "cp1252",
}

# The encodings a browser decodes (the WHATWG Encoding Standard's), by charset-normalizer's names, most used on the
# web first (latin-1 and ASCII are windows-1252 there). Detection chooses among these only, and a tie (as little
# mess and coherence: an English page whose few non-ASCII bytes read as well in windows-1250 as in windows-1252)
# goes to the one earlier here. Left out, though browsers know them, as detection took them for English pages and
# pages practically never use them: macintosh and ISO-8859-3, -4, -10, -13, -14, -15, -16.
WEB_ENCODINGS = ("utf_8", "cp1252", "gb18030", "gbk", "gb2312", "shift_jis", "cp1251", "euc_kr", "euc_jp", "big5",
                 "big5hkscs", "cp1250", "iso8859_2", "cp1256", "cp1254", "cp1253", "iso8859_7", "cp874", "koi8_r",
                 "koi8_u", "cp1255", "iso8859_8", "cp1257", "iso8859_5", "iso8859_6", "cp866", "mac_cyrillic",
                 "cp1258", "iso2022_jp", "utf_16_le", "utf_16_be")
# A declared charset is read only when it names one of these (``normalise_encoding``'s names): the encodings of the
# detection above and those browsers decode that it leaves out. Python knows more (UTF-7, EBCDIC's cp037), which a
# page declaring them by mistake would come out of as garbage ("+ADw-" read as "<"): such a declaration is no
# evidence, as a browser ignores it.
BROWSER_ENCODINGS = frozenset({codecs.lookup(name).name for name in WEB_ENCODINGS} | {
    "utf-16", "iso8859-3", "iso8859-4", "iso8859-10", "iso8859-11", "iso8859-13", "iso8859-14", "iso8859-15",
    "iso8859-16", "mac-roman", "tis-620", "cp932", "cp949"})
# Matches charset-normalizer cannot tell apart (its own tolerances, ``CharsetMatch.__lt__``).
_CHAOS_TIE = 0.005
_COHERENCE_TIE = 0.02
# Multi-byte codecs tried with a few broken bytes after detection (step 7), by ``normalise_encoding``'s names.
CJK_CODECS = ("gb18030", "big5hkscs", "shift_jis", "euc_jp", "euc_kr")
# Distinct non-ASCII characters a page read with a CJK codec must have for step 7 (the broken English pages seen
# came to 3-10, Chinese pages have hundreds).
MIN_DISTINCT_CHARS = 20
_ASCII_CHARS = frozenset(map(chr, range(128)))

_META_CHARSET_RE = re.compile(
    rb"""<meta[^>]+charset\s*=\s*["']?\s*([a-zA-Z0-9_\-:.]+)""", re.IGNORECASE
)
_HEADER_CHARSET_RE = re.compile(r"""charset\s*=\s*["']?([a-zA-Z0-9_\-:.]+)""", re.IGNORECASE)

_BOMS = (
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)


@dataclass(frozen=True)
class DecodedHtml:
    """A decoded page: its text, the codec used and which evidence chose it."""

    text: str
    encoding: str
    source: str  # "bom" | "header" | "meta" | "utf-8" | "detected" | "fallback"


def normalise_encoding(name: str | None) -> str | None:
    """Return the Python codec name for a declared charset, or None if unknown."""
    if not name:
        return None
    key = name.strip().strip("\"'").lower()
    key = SUPERSET_CODECS.get(key, key)
    try:
        canonical = codecs.lookup(key).name
    except LookupError:
        return None
    return SUPERSET_CODECS.get(canonical, canonical)


def header_charset(content_type: str | None) -> str | None:
    """Return the charset named in a Content-Type header value, or None."""
    if not content_type:
        return None
    match = _HEADER_CHARSET_RE.search(content_type)
    return match.group(1) if match else None


def meta_charset(body: bytes) -> str | None:
    """Return the charset declared by a <meta> tag near the top of ``body``, or None."""
    match = _META_CHARSET_RE.search(body[:META_SCAN_BYTES])
    return match.group(1).decode("ascii", "replace") if match else None


_SINGLE_BYTE_PREFIXES = ("cp125", "iso8859", "latin", "cp437", "cp850", "cp866", "cp874", "koi8", "mac-", "tis-620")


def _single_byte(encoding: str) -> bool:
    """Return True for a single-byte legacy codec (every byte is some character)."""
    name = codecs.lookup(encoding).name
    return name.startswith(_SINGLE_BYTE_PREFIXES)


_ASCII_BYTES = bytes(range(128))
_STRAY_RE = re.compile("[\udc80-\udcff]")  # bytes surrogateescape kept
# Each byte 0x80-0xff as windows-1252 reads it (its five unassigned bytes as Latin-1 does).
_CP1252 = [bytes([b]).decode("cp1252", "ignore") or chr(b) for b in range(256)]


def mixed_utf8(body: bytes) -> tuple[str, float, int]:
    """Return ``body`` read as UTF-8 with every byte outside a valid sequence read as windows-1252, the share of
    its non-ASCII bytes that were valid UTF-8 (1.0 for an ASCII body) and how many were not."""
    text = body.decode("utf-8", "surrogateescape")
    fixed, stray = _STRAY_RE.subn(lambda match: _CP1252[ord(match.group()) - 0xDC00], text)
    non_ascii = len(body.translate(None, _ASCII_BYTES))
    return fixed, 1.0 - stray / non_ascii if non_ascii else 1.0, stray


def _try_decode(body: bytes, encoding: str | None) -> str | None:
    if encoding is None:
        return None
    try:
        return body.decode(encoding)
    except (UnicodeDecodeError, LookupError):
        return None


def declared_encoding(declared: str | None, source: str) -> str | None:
    """Return the codec of a charset declared in the header or a ``<meta>`` (``source``), None when no browser
    decodes with it (``BROWSER_ENCODINGS``). A ``<meta>`` naming UTF-16 means UTF-8, as the HTML standard reads it:
    the bytes that held the declaration were ASCII, which UTF-16 is not."""
    encoding = normalise_encoding(declared)
    if encoding not in BROWSER_ENCODINGS:
        return None
    return "utf-8" if source == "meta" and encoding.startswith("utf-16") else encoding


def _few_strays(valid: float, stray: int) -> bool:
    """Return True when a page declared (or marked by a BOM) as UTF-8 is UTF-8 with a few stray bytes: most of its
    non-ASCII bytes valid (``MIXED_UTF8_SHARE``), or at most ``MAX_REPLACED_CHARS`` that are not (a German page
    with a dozen umlauts and two stray non-breaking spaces)."""
    return valid >= MIXED_UTF8_SHARE or stray <= MAX_REPLACED_CHARS


def decode_html(body: bytes, content_type: str | None = None) -> DecodedHtml:
    """Decode an HTML body; returns the text, the codec and the evidence that chose it."""
    read_as_utf8: tuple[str, float, int] | None = None  # mixed_utf8(body), read once when first needed

    def read_utf8() -> tuple[str, float, int]:
        nonlocal read_as_utf8
        if read_as_utf8 is None:
            read_as_utf8 = mixed_utf8(body)
        return read_as_utf8

    for bom, bom_codec in _BOMS:
        if body.startswith(bom):
            body = body[len(bom) :]  # a BOM the bytes after it contradict (a GBK page after a UTF-8 BOM) is no evidence
            if bom_codec == "utf-8":
                mixed, valid, stray = read_utf8()
                if _few_strays(valid, stray):
                    return DecodedHtml(mixed, bom_codec, "bom")
            elif not body or b"\x00" in body[:1024]:  # UTF-16 and -32 write ASCII markup with NUL bytes
                return DecodedHtml(body.decode(bom_codec, "replace"), bom_codec, "bom")
            break
    header = declared_encoding(header_charset(content_type), "header")
    meta = declared_encoding(meta_charset(body), "meta")
    if header == "cp1252" and meta is not None:
        header = None  # many servers send ISO-8859-1 by default: the page's own declaration knows better
    if "cp1252" in (header, meta) and not body.isascii() and _double_byte(body) \
            and read_utf8()[1] < MIXED_UTF8_SHARE:
        cjk = _cjk_decode(body)  # CJK text under a Latin declaration (the same default, or a template's)
        if cjk is not None:
            return cjk
    candidates: list[tuple[str, str | None]] = [("header", header), ("meta", meta), ("utf-8", "utf-8")]
    for source, encoding in candidates:
        text = _try_decode(body, encoding)
        if text is not None and encoding is not None:
            if source != "utf-8" and _single_byte(encoding) and not body.isascii():
                as_utf8 = _try_decode(body, "utf-8")
                if as_utf8 is not None:
                    return DecodedHtml(as_utf8, "utf-8", "utf-8")
            return DecodedHtml(text, encoding, source)
    # A declared charset with a few broken bytes (a truncated GBK character, a stray byte) is
    # still the page's charset: decode with replacements when they stay rare; UTF-8's strays as windows-1252.
    for source, encoding in candidates[:2]:
        if encoding is None:
            continue
        if encoding == "utf-8":
            text, valid, stray = read_utf8()
            if _few_strays(valid, stray):
                return DecodedHtml(text, encoding, source)
            continue
        text = body.decode(encoding, "replace")
        if text.count("\ufffd") <= max(MAX_REPLACED_CHARS, MAX_REPLACED_SHARE * len(text)):
            return DecodedHtml(text, encoding, source)
    mixed, valid, _stray = read_utf8()
    if valid >= MIXED_UTF8_SHARE:
        return DecodedHtml(mixed, "utf-8", "utf-8")
    detected = _detect(body)
    if detected is None or _single_byte(detected):
        cjk = _cjk_decode(body)
        if cjk is not None:
            return cjk
    guessed = _try_decode(body, detected)
    if guessed is not None and detected is not None:
        return DecodedHtml(guessed, detected, "detected")
    return DecodedHtml(body.decode("cp1252", "replace"), "cp1252", "fallback")


# Non-ASCII bytes in runs of two or more: most of CJK double-byte text (all of GBK's; Big5 and Shift_JIS put some
# second bytes in ASCII's range: 0.59 on a Shift_JIS page of CleanEval), while Latin text written in windows-1252
# has one such byte between ASCII letters ("für", "café": at most 0.4 on the datasets' pages, a run of "§§§§§"
# aside). Over the share, the CJK codecs are tried (``_cjk_decode``), which the Latin pages fail.
_HIGH_RUN_RE = re.compile(rb"[\x80-\xff]{2,}")
DOUBLE_BYTE_SHARE = 0.5


def _double_byte(body: bytes) -> bool:
    """Return True when at least ``DOUBLE_BYTE_SHARE`` of the body's non-ASCII bytes, and ``MIN_DISTINCT_CHARS``
    pairs of them, stand in runs, as CJK double-byte text's do."""
    paired = sum(map(len, _HIGH_RUN_RE.findall(body)))
    return paired >= 2 * MIN_DISTINCT_CHARS and paired >= DOUBLE_BYTE_SHARE * len(body.translate(None, _ASCII_BYTES))


def _cjk_decode(body: bytes) -> DecodedHtml | None:
    """Return ``body`` read with the first CJK codec (``CJK_CODECS``) it holds text in, a few broken bytes
    allowed: text, not one byte pair over and over (UTF-8 mojibake reads as a few kanji), that detection, the
    broken bytes left out, takes for that codec. None when it holds none."""
    for codec in CJK_CODECS:
        text = body.decode(codec, "replace")
        broken = text.count("\ufffd")
        if broken > max(MAX_REPLACED_CHARS, MAX_REPLACED_SHARE * len(text)):
            continue
        if len(set(text) - _ASCII_CHARS) >= MIN_DISTINCT_CHARS \
                and _detect(text.replace("\ufffd", "").encode(codec)) == codec:
            return DecodedHtml(text, codec, "detected")
    return None


def _detect(body: bytes) -> str | None:
    """Return the codec charset-normalizer finds for ``body`` among ``WEB_ENCODINGS`` (normalised; None when
    nothing decodes): of its best match and the matches it cannot tell from it (``_CHAOS_TIE``,
    ``_COHERENCE_TIE``), the encoding more used on the web."""
    matches = charset_normalizer.from_bytes(body, cp_isolation=list(WEB_ENCODINGS))
    best = matches.best()
    if best is None:
        return None
    names = [name for match in matches
             if abs(match.chaos - best.chaos) < _CHAOS_TIE and abs(match.coherence - best.coherence) <= _COHERENCE_TIE
             for name in match.could_be_from_charset if name in WEB_ENCODINGS]
    # charset-normalizer's own fallbacks (ascii, utf_8 on a near-ASCII body) may name no encoding of the list.
    return normalise_encoding(min(names, key=WEB_ENCODINGS.index) if names else best.encoding)
