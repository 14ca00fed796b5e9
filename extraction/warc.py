"""The crawl's archive as WARC files (ISO 28500: the format of web archives and Common Crawl), written and read.

Every fetched page is one **capture**: its records written together, each a gzip member of its own, in this
order (the response first, so a record's ``warc_offset`` is where a reader starts; the metadata last, so a
capture with its metadata record is whole):

1. ``response``: ``WARC-Target-URI`` the URL fetched (after redirects), ``WARC-Date`` the fetch time,
   ``WARC-IP-Address`` when known; the HTTP status line, the response headers and the body *as Scrapy received
   it*: decompressed (Scrapy's HTTP compression middleware drops the ``Content-Encoding`` it decoded) and
   de-chunked. As Common Crawl does, the headers that no longer describe the stored body (``Transfer-Encoding``,
   ``Content-Length``) are kept renamed ``X-Crawler-...`` and a ``Content-Length`` of the stored body is added, so
   every WARC reader gets the body the extraction read. Header values are written as the bytes received
   (latin-1), not percent-encoded. The reason phrase is the standard one for the status (Scrapy does not keep
   the server's).
2. ``request``: the request line and the headers Scrapy sent; ``WARC-Concurrent-To`` the response.
3. ``conversion`` (``text/html; charset=utf-8``): the rendered DOM, for a page rendered in Chromium;
   ``WARC-Refers-To`` the response (a conversion is "an alternative version of another record's content").
4. ``resource``: the screenshot (``image/png`` or ``image/jpeg``), ``WARC-Target-URI`` ``urn:screenshot:<URL>``,
   ``WARC-Concurrent-To`` the response.
5. ``metadata`` (``application/json``): what the crawl knew of the page besides the exchange, the fields of
   :data:`extraction.record.FETCH_FIELDS` (the URL found, the canonical URL, site, depth, fetch time, fetch and
   render milliseconds, render flags and heights) plus ``key`` (the crawl state's), ``capture`` (the page's id in
   the crawl: the crawl's process archives a page again when its extraction worker died, possibly after writing
   it), ``content_type`` (as the crawl read it), ``refetch`` ("revisit" for a hub a later round fetched again for its
   links, "recrawl" for a known article checked with ``recrawl=changed``), ``listed_date``, ``listed`` and
   ``redirect_urls``;
   ``WARC-Concurrent-To`` the response. ``scrapy reextract`` rebuilds the crawl's record from it.

Each file starts with a ``warcinfo`` record (software, format, the crawl's settings and models). A process
writes files of its own (``<prefix>-<UTC time>-<serial>-<pid>.warc.gz``, never appended to), a new one once
the current one reaches ``max_size`` bytes (a capture is never split: a file ends at most one capture over).
A capture goes to the file in one write and is flushed before the page's record is exported, so a record
never names bytes that are not on disk, and a crawl killed at any moment leaves at most a cut last capture,
which the reader reports and skips.
"""

from __future__ import annotations

import contextlib
import io
import json
import logging
import os
import socket
import zlib
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.client import responses as REASONS
from pathlib import Path
from typing import IO, Any
from urllib.parse import urlsplit

from warcio.archiveiterator import ArchiveIterator
from warcio.exceptions import ArchiveLoadFailed
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from extraction.page import HttpExchange, Page
from extraction.record import FETCH_FIELDS, Record

logger = logging.getLogger(__name__)

WARC_VERSION = "1.1"
# zlib level of each record's gzip member (ARCHIVE_GZIP_LEVEL). On 500 dataset pages (178 KiB of HTML on average):
# level 1 1.07 ms a page, 23.3% of the bytes; 3 1.32 ms, 21.9%; 6 (zlib's default) 2.89 ms, 19.6%; 9 (warcio's
# own wrapper) 4.49 ms, 19.5%. Level 3 spends half of level 6's CPU for 12% more bytes: the archive is written
# for every page in the extraction workers, the crawl's busiest processes.
GZIP_LEVEL = 3
SUFFIX = ".warc.gz"
# Headers that describe the bytes on the wire, not the body stored: kept under this prefix. (Scrapy removes a
# Content-Encoding it decoded; one it could not decode still describes the body stored, and stays as it is.)
REWRITTEN_HEADERS = ("transfer-encoding", "content-length")
REWRITTEN_PREFIX = "X-Crawler-"
SCREENSHOT_URN = "urn:screenshot:"
METADATA_TYPE = "application/json"


@dataclass(frozen=True)
class WarcLocation:
    """Where a capture's response record is: the WARC file, its offset and its length (compressed bytes)."""

    file: str
    offset: int
    length: int


def warc_date(iso: str | None) -> str:
    """Return a WARC-Date (UTC, ``Z``) for an ISO 8601 time (now when None or unreadable)."""
    moment = datetime.now(UTC)
    if iso:
        try:
            parsed = datetime.fromisoformat(iso)
            moment = parsed.astimezone(UTC) if parsed.tzinfo else parsed.replace(tzinfo=UTC)
        except ValueError:
            pass
    return moment.strftime("%Y-%m-%dT%H:%M:%S") + (f".{moment.microsecond:06d}Z" if moment.microsecond else "Z")


def stored_headers(headers: Iterable[tuple[str, str]], body_length: int) -> list[tuple[str, str]]:
    """Return the response headers as stored: the transfer headers renamed X-Crawler-*, the body's length added."""
    kept = [(f"{REWRITTEN_PREFIX}{name}" if name.lower() in REWRITTEN_HEADERS else name, value)
            for name, value in headers]
    return [*kept, ("Content-Length", str(body_length))]


def original_headers(headers: Iterable[tuple[str, str]]) -> tuple[tuple[str, str], ...]:
    """Return the response headers as they were received (the inverse of :func:`stored_headers`)."""
    restored = []
    for name, value in headers:
        if name.lower() == "content-length":
            continue  # ours: the stored body's
        if name.startswith(REWRITTEN_PREFIX) and name[len(REWRITTEN_PREFIX):].lower() in REWRITTEN_HEADERS:
            name = name[len(REWRITTEN_PREFIX):]
        restored.append((name, value))
    return tuple(restored)


class _RawHeaders(StatusAndHeaders):
    """HTTP headers written back as the bytes they were read from (latin-1), where warcio would percent-encode
    any value that is not ASCII."""

    def to_ascii_bytes(self, filter_func: Any = None) -> bytes:
        return bytes(self.to_str(filter_func).encode("latin-1", "replace") + b"\r\n")


def _write_all(handle: IO[bytes], data: bytes) -> None:
    """Write every byte to an unbuffered file (a raw write may take fewer)."""
    view = memoryview(data)
    while view:
        written = handle.write(view)
        if not written:
            raise OSError("the file took no bytes")
        view = view[written:]


def _gzip_member(data: bytes, level: int = GZIP_LEVEL) -> bytes:
    compressor = zlib.compressobj(level, zlib.DEFLATED, zlib.MAX_WBITS + 16)
    return compressor.compress(data) + compressor.flush()


class WarcWriter:
    """Writes captures to rotated WARC files under ``folder`` (the files of this process only)."""

    def __init__(self, folder: str | Path, prefix: str = "newscorpus", max_size: int = 1_000_000_000,
                 info: Mapping[str, Any] | None = None, gzip_level: int = GZIP_LEVEL) -> None:
        self.folder = Path(folder)
        self.gzip_level = gzip_level
        self.prefix = prefix
        self.max_size = max_size
        self.info = dict(info or {})
        self._builder = WARCWriter(io.BytesIO(), gzip=False, warc_version=WARC_VERSION)
        self._file: IO[bytes] | None = None
        self._path: Path | None = None
        self._serial = 0
        self.files: list[Path] = []  # every file this writer opened
        self.last_size = 0  # compressed bytes of the last capture written

    def write(self, page: Page, record: Record) -> WarcLocation:
        """Write ``page``'s capture (its fetch fields from ``record``); return where its response record is.

        The capture goes to the file unbuffered; a write the disk refuses (full, read-only) is cut back off the
        file, the error raised, and the next capture tries again (in a new file when the file itself is gone)."""
        members = [_gzip_member(self._serialise(warc), self.gzip_level) for warc in self._records(page, record)]
        data = b"".join(members)
        handle, path = self._current()
        offset = handle.tell()
        try:
            _write_all(handle, data)
        except OSError:
            try:
                handle.truncate(offset)  # no partial capture stays behind: the file ends on a whole one
                handle.seek(offset)
            except OSError:
                self.close()  # cannot even cut it back: the next write begins another file
            raise
        self.last_size = len(data)
        return WarcLocation(str(path), offset, len(members[0]))

    def close(self) -> None:
        """Close the current file (the next write opens a new one)."""
        handle, self._file, self._path = self._file, None, None
        if handle is not None:
            with contextlib.suppress(OSError):
                handle.close()

    # -- files --

    def _current(self) -> tuple[IO[bytes], Path]:
        if self._file is not None and self._file.tell() >= self.max_size:
            self.close()
        if self._file is None or self._path is None:
            self._open()
        assert self._file is not None and self._path is not None
        return self._file, self._path

    def _open(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        while True:
            self._serial += 1
            stamp = datetime.now(UTC).strftime("%Y%m%d%H%M%S%f")
            path = self.folder / f"{self.prefix}-{stamp}-{self._serial:05d}-{os.getpid()}{SUFFIX}"
            try:
                # Unbuffered: a capture is on its way to the disk when write() returns, nothing is held back.
                handle = open(path, "xb", buffering=0)  # noqa: SIM115 (kept open across writes; closed by close())
            except FileExistsError:
                continue
            break
        info = {"software": "newscorpus (https://github.com/; extraction/warc.py)",
                "format": f"WARC File Format {WARC_VERSION}",
                "conformsTo": "https://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/",
                "hostname": socket.gethostname(),
                **{name: value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
                   for name, value in self.info.items()}}
        warcinfo = self._builder.create_warcinfo_record(path.name, info)
        try:
            _write_all(handle, _gzip_member(self._serialise(warcinfo), self.gzip_level))
        except OSError:
            handle.close()
            path.unlink(missing_ok=True)
            raise
        self._file, self._path = handle, path
        self.files.append(path)
        logger.info("Writing WARC file %s", path)

    # -- records --

    def _serialise(self, warc: Any) -> bytes:
        out = io.BytesIO()
        self._builder._write_warc_record(out, warc)  # the uncompressed record; compressed per member above
        return out.getvalue()

    def _records(self, page: Page, record: Record) -> list[Any]:
        builder = self._builder
        url = record.final_url or page.url or record.url or ""
        date = warc_date(record.fetched_at)
        http = page.http or HttpExchange(status=record.status or 200,
                                         headers=(("Content-Type", page.content_type),) if page.content_type else ())
        status_line = f"{http.status} {http.reason or REASONS.get(http.status, '')}".rstrip()
        response_headers = {"WARC-Date": date}
        if http.ip_address:
            response_headers["WARC-IP-Address"] = http.ip_address
        response = builder.create_warc_record(
            url, "response", payload=io.BytesIO(page.body), length=len(page.body),
            http_headers=_RawHeaders(status_line, stored_headers(http.headers, len(page.body)),
                                     protocol=http.protocol),
            warc_headers_dict=response_headers)
        response_id = response.rec_headers.get_header("WARC-Record-ID")
        split = urlsplit(url)
        target = (split.path or "/") + (f"?{split.query}" if split.query else "")
        # Scrapy asks in HTTP/1.1 whatever the server answers in (the demo server answers HTTP/1.0); HTTP/2 as such.
        asked = http.protocol if http.protocol.upper().startswith(("HTTP/2", "H2")) else "HTTP/1.1"
        request = builder.create_warc_record(
            url, "request", http_headers=_RawHeaders(f"{http.method} {target} {asked}",
                                                          list(http.request_headers), is_http_request=True),
            warc_headers_dict={"WARC-Date": date, "WARC-Concurrent-To": response_id})
        records = [response, request]
        if page.rendered is not None:
            dom = page.rendered.encode("utf-8", "surrogatepass")
            records.append(builder.create_warc_record(
                url, "conversion", payload=io.BytesIO(dom), length=len(dom),
                warc_content_type="text/html; charset=utf-8",
                warc_headers_dict={"WARC-Date": date, "WARC-Refers-To": response_id}))
        if page.screenshot is not None:
            kind = "image/jpeg" if page.screenshot.startswith(b"\xff\xd8\xff") else "image/png"
            records.append(builder.create_warc_record(
                SCREENSHOT_URN + url, "resource", payload=io.BytesIO(page.screenshot), length=len(page.screenshot),
                warc_content_type=kind, warc_headers_dict={"WARC-Date": date, "WARC-Concurrent-To": response_id}))
        metadata = json.dumps(capture_metadata(page, record), ensure_ascii=False).encode("utf-8")
        records.append(builder.create_warc_record(  # last: a capture with its metadata record is whole
            url, "metadata", payload=io.BytesIO(metadata), length=len(metadata), warc_content_type=METADATA_TYPE,
            warc_headers_dict={"WARC-Date": date, "WARC-Concurrent-To": response_id}))
        return records


def capture_metadata(page: Page, record: Record) -> dict[str, Any]:
    """Return what the metadata record keeps of a page: the record's fetch fields and the spider's notes."""
    values: dict[str, Any] = {name: getattr(record, name) for name in FETCH_FIELDS}
    values["flags"] = list(record.flags)
    values["key"] = record.crawl.get("url")  # the crawl state's key of the page (duplicates name it)
    values["capture"] = record.crawl.get("capture")  # the page's id in the crawl: a page archived twice is one
    values["content_type"] = page.content_type  # as the crawl read it (the last Content-Type header)
    known = "known_text_hash" in record.crawl  # a page the crawl state had: a hub revisited, an article rechecked
    values["refetch"] = ("revisit" if record.crawl.get("revisit") else "recrawl") if known else None
    values["listed_date"] = page.listed_date
    values["listed"] = bool(record.crawl.get("listed"))
    values["redirect_urls"] = list(record.crawl.get("redirect_urls", ()))
    return values


# -- reading --


@dataclass
class Capture:
    """One page read back from a WARC file (see the module docstring)."""

    location: WarcLocation
    url: str
    date: str
    http: HttpExchange
    body: bytes
    metadata: dict[str, Any] = field(default_factory=dict)
    rendered: str | None = None
    screenshot: bytes | None = None
    complete: bool = False  # the metadata record was read (a capture cut by a kill has none)
    record_id: str | None = None  # its response record's WARC-Record-ID, which its other records refer to

    @property
    def content_type(self) -> str | None:
        """The Content-Type the crawl read (its metadata; for a capture without it, the last header, lower-cased as
        Scrapy's ``Headers.get`` and the crawl read it)."""
        if "content_type" in self.metadata:
            return self.metadata["content_type"] or None
        return (self.http.header("Content-Type") or "").strip().lower() or None

    def page(self, site: str | None = None) -> Page:
        """Return the page as the crawl's spider built it (body, URL, type, DOM, screenshot, listing date)."""
        page = Page(self.body, self.url, self.content_type, self.screenshot, site or self.metadata.get("site"))
        page.rendered = self.rendered
        page.listed_date = self.metadata.get("listed_date")
        page.http = self.http
        return page

    def record(self) -> Record:
        """Return the record the spider started for this page (fetch fields, render flags), WARC location set."""
        fields: dict[str, Any] = {name: self.metadata[name] for name in FETCH_FIELDS if name in self.metadata}
        record = Record(**fields)
        record.rendered = bool(self.metadata.get("rendered"))
        record.flags = [flag for flag in self.metadata.get("flags") or () if isinstance(flag, str)]
        record.warc_file, record.warc_offset, record.warc_length = self.location.file, self.location.offset, \
            self.location.length
        for name, key in (("key", "url"), ("capture", "capture")):
            if self.metadata.get(name):
                record.crawl[key] = self.metadata[name]
        if self.metadata.get("listed"):
            record.crawl["listed"] = True
        return record


def _exchange(response: Any) -> HttpExchange:
    http = response.http_headers
    reason = http.statusline.split(" ", 1)[1] if " " in http.statusline else ""
    return HttpExchange(status=int(http.get_statuscode() or 0), headers=original_headers(http.headers),
                        protocol=http.protocol or "HTTP/1.1", reason=reason,
                        ip_address=response.rec_headers.get_header("WARC-IP-Address"))


def _with_request(http: HttpExchange, request: Any) -> HttpExchange:
    headers = request.http_headers  # a request line parses as protocol = the method
    return HttpExchange(status=http.status, headers=http.headers, protocol=http.protocol, reason=http.reason,
                        method=headers.protocol or "GET", request_headers=tuple(headers.headers),
                        ip_address=http.ip_address)


def read_capture(path: str | Path, offset: int) -> Capture | None:
    """Return the capture whose response record is at ``offset`` of a WARC file (a record's ``warc_file`` and
    ``warc_offset``), or None when it is not whole there."""
    capture = next(read_captures(path, offset, limit=1), None)
    return capture if capture is not None and capture.location.offset == offset else None  # not one further on


# A record's block read into memory at most (a page, its rendered DOM, its screenshot): the crawl keeps pages under
# DOWNLOAD_MAXSIZE (8 MiB) and screenshots under a few MiB; a longer record is damage or another tool's.
MAX_RECORD_BYTES = 64 * 1024 * 1024
_GZIP_MEMBER = b"\x1f\x8b\x08"
_WARC_LINE = b"WARC/1."
# The record kinds a capture is made of, and which of them the reader needs the block of.
_CONTENT_KINDS = frozenset({"response", "metadata", "conversion", "resource"})


class _Damaged(Exception):
    """One capture of a WARC file cannot be read (its records are there, their content is not what it should be)."""


def is_warc(path: str | Path) -> bool:
    """Return True when a file starts as a WARC file does (``WARC/1.``, plain or in a gzip member); OSError when it
    cannot be read."""
    with open(path, "rb") as handle:
        head = handle.read(4096)
    if head[:2] == _GZIP_MEMBER[:2]:
        try:
            head = zlib.decompressobj(wbits=31).decompress(head, 16)
        except zlib.error:
            return False
    return head.startswith(b"WARC/1.")


def read_captures(path: str | Path, offset: int = 0, limit: int | None = None) -> Iterator[Capture]:
    """Yield the complete captures of a WARC file in file order, from ``offset`` (at most ``limit``).

    A file cut short (a crawl killed while writing) yields what is whole and logs one warning; a capture whose
    metadata record is missing is skipped the same way. Damage (a corrupt gzip member, a record whose headers or
    metadata are not what the crawl writes) costs the captures it touches, each logged: reading goes on at the next
    gzip member (the next ``WARC/1.`` line of an uncompressed file), so the rest of the file is read."""
    name = str(path)
    yielded = 0
    size = os.path.getsize(path)
    with open(path, "rb") as handle:
        marker = _GZIP_MEMBER if handle.read(2) == _GZIP_MEMBER[:2] else _WARC_LINE
        position: int | None = offset
        current: Capture | None = None
        while position is not None:
            handle.seek(position)
            iterator = ArchiveIterator(handle, no_record_parse=False, arc2warc=False)
            read_to = position  # the end of the last record read whole
            try:
                for warc in iterator:
                    kind = warc.rec_type
                    # A response's payload (after its HTTP headers), else the block; only the kinds a capture needs.
                    content = warc.raw_stream.read(MAX_RECORD_BYTES + 1) if kind in _CONTENT_KINDS else b""
                    # Read after the content: asking for the offset first would skip it (warcio reads to the end).
                    location = WarcLocation(name, iterator.get_record_offset(), iterator.get_record_length())
                    read_to = location.offset + location.length
                    try:
                        if len(content) > MAX_RECORD_BYTES:
                            raise _Damaged(f"a {kind} record over {MAX_RECORD_BYTES} bytes")
                        if kind == "response":
                            if current is not None and current.complete:
                                yield current
                                yielded += 1
                                if limit is not None and yielded >= limit:
                                    return
                            elif current is not None:
                                _skipped(name, current.location.offset, "its metadata record is missing")
                            current = None
                            current = Capture(location, warc.rec_headers.get_header("WARC-Target-URI") or "",
                                              warc.rec_headers.get_header("WARC-Date") or "", _exchange(warc), content)
                            current.record_id = warc.rec_headers.get_header("WARC-Record-ID")
                            continue
                        if current is None:
                            continue  # warcinfo, or records of a capture that began before ``offset`` or was damaged
                        refers = warc.rec_headers.get_header("WARC-Concurrent-To") or warc.rec_headers.get_header(
                            "WARC-Refers-To")
                        if refers != current.record_id:
                            if kind == "metadata":  # the last record of a capture whose response was not read
                                _skipped(name, location.offset, f"its metadata refers to {refers}, a record not "
                                                                "read as a response (another WARC-Type, no id)")
                            continue
                        if kind == "request":
                            current.http = _with_request(current.http, warc)
                        elif kind == "metadata":
                            metadata = json.loads(content.decode("utf-8"))
                            if not isinstance(metadata, dict):
                                raise _Damaged(f"its metadata is a JSON {type(metadata).__name__}, not an object")
                            current.metadata = _checked(metadata)
                            current.complete = True
                        elif kind == "conversion":
                            current.rendered = content.decode("utf-8", "surrogatepass")
                        elif kind == "resource" and (warc.rec_headers.get_header("WARC-Target-URI") or "").startswith(
                                SCREENSHOT_URN):
                            current.screenshot = content
                    except (_Damaged, ValueError, TypeError, AttributeError, RecursionError, OverflowError) as exc:
                        _skipped(name, current.location.offset if current is not None else location.offset,
                                 f"{type(exc).__name__}: {exc}")
                        current = None
            except (ArchiveLoadFailed, zlib.error, EOFError, ValueError, TypeError, AttributeError,
                    OverflowError) as exc:
                logger.warning("WARC file %s is cut short or damaged after offset %d: %s", name, read_to,
                               f"{type(exc).__name__}: {exc}"[:300])
                if current is not None and current.location.offset + current.location.length > read_to:
                    current = None  # its response was the record that failed
                position = _next_record(handle, read_to + 1, marker, size)
                continue
            # warcio stops at a gzip member it cannot inflate as if the file ended there (a message on stderr only).
            position = _next_record(handle, read_to + 1, marker, size)
            if position is not None:
                logger.warning("WARC file %s is damaged after offset %d: reading on at offset %d", name, read_to,
                               position)
        if current is not None and current.complete:
            yield current
        elif current is not None:
            logger.warning("WARC file %s ends inside a capture (offset %d): skipped", name, current.location.offset)


# The types of the metadata record's values (``capture_metadata``): a value of another type (another tool's, a
# damaged file's) is left out, as if the crawl had not written it; None stays.
_METADATA_TYPES: dict[str, type] = {
    **dict.fromkeys(("url", "canonical_url", "final_url", "site", "fetched_at", "key", "capture", "content_type",
                     "refetch", "listed_date"), str),
    **dict.fromkeys(("status", "depth", "fetch_ms", "render_ms", "page_height", "screenshot_height"), int),
    **dict.fromkeys(("rendered", "listed"), bool), **dict.fromkeys(("flags", "redirect_urls"), list)}


def _checked(metadata: dict[str, Any]) -> dict[str, Any]:
    return {name: value for name, value in metadata.items()
            if value is None or name not in _METADATA_TYPES or isinstance(value, _METADATA_TYPES[name])}


def _skipped(name: str, offset: int, why: str) -> None:
    logger.warning("WARC file %s: the capture at offset %d is damaged or cut short, skipped: %s", name, offset,
                   why[:300])


def _next_record(handle: IO[bytes], start: int, marker: bytes, size: int) -> int | None:
    """Return the offset of the next gzip member (or ``WARC/1.`` line) at or after ``start``, None at the end."""
    chunk_size = 1 << 20
    while start < size:
        handle.seek(start)
        chunk = handle.read(chunk_size + len(marker))
        found = chunk.find(marker)
        if found >= 0:
            return start + found
        start += chunk_size
    return None
