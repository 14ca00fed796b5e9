"""Keeps every fetched page for re-extraction and provenance: WARC files by default, or loose files.

:class:`PageArchive` writes a page where it is processed, right before the flow of
``extraction.process`` (``pipelines.process``: in the extraction worker), so the crawl's reactor
thread neither serialises nor compresses pages, and a page whose processing then fails or times out
is archived all the same.

``ARCHIVE_FORMAT=warc`` (the default): each page is a capture in WARC files under ARCHIVE_DIR/warc/
(:mod:`extraction.warc`: the HTTP response as received with its headers, the request, the rendered
DOM, the screenshot and the crawl's metadata of the page); the record names its file and offset
(``warc_file``, ``warc_offset``, ``warc_length``) and ``scrapy reextract`` reads them back. Every
process writes files of its own (an extraction worker, and the crawl's process for a page whose
worker died).

``ARCHIVE_FORMAT=files``: the archive of the first versions, kept for tools that read plain HTML
files (``scrapy extract``, grep): HTML stored as gzip of UTF-8 with a byte-order mark (our charset
detection, or the browser, already decoded the page, and the BOM overrides any stale ``<meta
charset>`` left in the markup, as the HTML standard's encoding sniffing says, so every reader
decodes it right), named by the SHA-256 of the content (``html/ab/abcd....html.gz``,
``screenshots/ab/abcd....png`` under ARCHIVE_DIR), written atomically, never twice. It keeps no URL,
status, headers or fetch time: ``html_file`` and the JSONL line together are the only record of them.
"""

from __future__ import annotations

import codecs
import gzip
import hashlib
import logging
import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from extraction.config import ComponentConfig
from extraction.page import Page
from extraction.record import Record
from extraction.warc import GZIP_LEVEL as WARC_GZIP_LEVEL
from extraction.warc import WarcWriter

logger = logging.getLogger(__name__)

# zlib's default level: on 120 real pages 2.7 ms a page and 21.3% of the size, against 4.1 ms and 21.2% at 9.
GZIP_LEVEL = 6


@dataclass(frozen=True)
class ArchiveConfig(ComponentConfig):
    """ARCHIVE_* settings."""

    prefix: ClassVar[str] = "ARCHIVE"
    enabled: bool = True  # off: no page is kept
    # warc/ (or html/ and screenshots/) are created under it; empty: the crawl's folder, named like its feed
    # (crawler/outputs.py: output/news_sites-<time>/ beside output/news_sites-<time>.jsonl)
    dir: str = ""
    format: str = "warc"  # warc: WARC files; files: content-addressed HTML and screenshot files
    # Bytes per WARC file before the next is begun: the WARC standard's annex and Heritrix's default, 1 GB.
    warc_max_size: int = 1_000_000_000
    warc_prefix: str = "newscorpus"  # WARC file names: <prefix>-<UTC time>-<serial>-<pid>.warc.gz
    # zlib level of the WARC records' gzip members, 1 (fastest) to 9 (smallest); measured in extraction/warc.py
    # (ARCHIVE_FORMAT=files compresses its HTML files at GZIP_LEVEL, above).
    gzip_level: int = WARC_GZIP_LEVEL

    def validate(self) -> None:
        if self.format not in FORMATS:
            raise ValueError(f"ARCHIVE_FORMAT must be one of {', '.join(FORMATS)}, got {self.format!r}")
        if self.warc_max_size < 1:
            raise ValueError(f"ARCHIVE_WARC_MAX_SIZE must be a positive number of bytes, got {self.warc_max_size}")
        if not self.warc_prefix or "/" in self.warc_prefix:
            raise ValueError(f"ARCHIVE_WARC_PREFIX must be a file name prefix, got {self.warc_prefix!r}")
        if not 1 <= self.gzip_level <= 9:
            raise ValueError(f"ARCHIVE_GZIP_LEVEL must be between 1 and 9, got {self.gzip_level!r}")


FORMATS = ("warc", "files")


class ContentStore:
    """A folder of files named by the SHA-256 of their bytes."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def put(self, kind: str, data: bytes, suffix: str) -> tuple[str, bool]:
        """Store ``data``; returns (path, written) where written is False if it existed."""
        digest = hashlib.sha256(data).hexdigest()
        path = self.root / kind / digest[:2] / f"{digest}{suffix}"
        if path.exists():
            return str(path), False
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        return str(path), True


def html_archive_bytes(html: str) -> bytes:
    """Return the archived form of a page's HTML: gzip of BOM + UTF-8, reproducible."""
    return gzip.compress(codecs.BOM_UTF8 + html.encode("utf-8", "surrogatepass"), compresslevel=GZIP_LEVEL, mtime=0)


def read_archived_html(path: str | Path) -> str:
    """Return the HTML text of an archived page."""
    return gzip.decompress(Path(path).read_bytes()).decode("utf-8-sig")


class PageArchive:
    """Writes each page to the WARC archive (``warc`` set) or as files (``store``), and says where in its record.

    WARC: the record's ``warc_file``/``warc_offset``/``warc_length``, counted ``archive/warc/<captures|bytes>``
    (``archive/error`` and the flag ``archive_failed`` when the disk refuses);
    files: ``html_file``, ``rendered_file``, ``screenshot_file``, counted ``archive/<html|screenshots>/<written|
    exists>``; through ``count(key, n)``."""

    def __init__(self, store: ContentStore | None = None, count: Callable[[str, int], Any] | None = None,
                 warc: WarcWriter | None = None) -> None:
        self.store = store
        self.warc = warc
        self.count = count or (lambda key, n: None)

    @classmethod
    def from_settings(cls, settings: Any, count: Callable[[str, int], Any] | None = None,
                      info: dict[str, Any] | None = None) -> PageArchive | None:
        """Return the archive of ARCHIVE_* ``settings`` (``info``: the WARC files' warcinfo fields), or None when
        ARCHIVE_ENABLED is off."""
        config = ArchiveConfig.from_settings(settings)
        if not config.enabled:
            return None
        if not config.dir:  # the crawl names it after its feed; anything else must say where
            raise ValueError("ARCHIVE_DIR is not set: name the folder the archive goes to")
        if config.format == "files":
            return cls(ContentStore(Path(config.dir)), count)
        return cls(count=count, warc=WarcWriter(Path(config.dir) / "warc", config.warc_prefix, config.warc_max_size,
                                                info, config.gzip_level))

    def keep(self, page: Page, record: Record) -> None:
        """Archive ``page`` into ``record``. In WARC every fetched response is kept, refused ones (empty, not HTML)
        too; as files a refused page is not kept (the record says why)."""
        if self.warc is not None:
            try:
                location = self.warc.write(page, record)
            except OSError as exc:  # a full or read-only disk: the page is still processed, the record says so
                logger.error("Could not write %s to the WARC archive: %s", record.final_url or record.url, exc)
                record.flags.append("archive_failed")
                self.count("archive/error", 1)
                return
            record.warc_file, record.warc_offset, record.warc_length = location.file, location.offset, location.length
            self.count("archive/warc/captures", 1)
            self.count("archive/warc/bytes", self.warc.last_size)
            return
        if page.refusal is not None:
            return
        record.html_file = self._put("html", html_archive_bytes(page.text), ".html.gz")
        if page.rendered is not None:
            record.rendered_file = self._put("html", html_archive_bytes(page.rendered), ".html.gz")
        if page.screenshot is not None:
            suffix = ".jpg" if page.screenshot.startswith(b"\xff\xd8\xff") else ".png"
            record.screenshot_file = self._put("screenshots", page.screenshot, suffix)

    def close(self) -> None:
        """Close the WARC file being written (nothing to do for files)."""
        if self.warc is not None:
            self.warc.close()

    def _put(self, kind: str, data: bytes, suffix: str) -> str:
        assert self.store is not None
        path, written = self.store.put(kind, data, suffix)
        self.count(f"archive/{kind}/{'written' if written else 'exists'}", 1)
        return path
