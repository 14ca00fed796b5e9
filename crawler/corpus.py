"""The corpus of a crawl's JSONL feeds: the records a text corpus keeps, each page once (``scrapy corpus``).

A scheduled crawl writes one feed a run (``corpus/%(time)s.jsonl``). Its records hold more than a text corpus
wants: error items, list pages, duplicates the crawl marked (``duplicate_of``), and an article exported again
when its text changed (``change: "changed"``, ``recrawl=changed``). :func:`select` reads the feeds once and
decides which line of which file each kept page comes from; :func:`write_corpus` reads them again and writes
those lines, in the feeds' order, with the fields asked for. Only each page's key and the position of its chosen
line are held in memory, not the records, and the fingerprints of the texts written.

A record is kept when it is no error, has text, is of one of the page types asked for, is no duplicate (unless
asked), in one of the languages asked for, at least ``min_chars`` long and not published before ``since`` (an
undated page is kept, as the crawl's ``-a since=`` keeps it). Of the records of one page (its ``url``) that
pass, the one fetched last is kept (``fetched_at`` as a time; on a tie, or between records without one, the later
line; a record without one is older than one with it): a changed article's
last text replaces the earlier. Of the records left, one whose text is the same as an earlier one's (normalised:
``extraction.dedup.text_hash``) or, by default, a near-duplicate of it, is left out too: the crawl
marks the copies it sees with its state, and feeds of runs without one, or of several states, hold others. Lines
that are no JSON record (the line a killed crawl cut short, another file's lines) are counted and left out.
"""

from __future__ import annotations

import json
import math
import zlib
from collections import Counter, defaultdict
from collections.abc import Callable, Container, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from crawler.state import date_timestamp, parse_since
from extraction.dedup import DedupConfig, DuplicateIndex, fingerprint

PAGE_TYPES = ("article", "list", "other")
# A JSON line is a crawl record when it has one of these (a stats file's or another tool's JSON lines have none).
RECORD_KEYS = frozenset({"url", "canonical_url", "text", "page_type", "error", "schema_version"})
READ_BYTES = 1 << 16  # bytes read at a time from a compressed feed
GZIP_WBITS = 31  # zlib's window bits for a gzip member
DEFAULT_PAGE_TYPES = ("article",)
NEAR, EXACT, KEEP = DUPLICATE_MODES = ("near", "exact", "keep")

# Why a record is left out, in the order the checks run (the first that applies is counted).
ERROR, EMPTY, PAGE_TYPE, DUPLICATE, LANGUAGE, SHORT, BEFORE_SINCE, OLDER_VERSION, COPY, GONE = (
    "error", "empty", "page_type", "duplicate", "language", "short", "before_since", "older_version", "copy", "gone")
REASONS = (ERROR, EMPTY, PAGE_TYPE, DUPLICATE, LANGUAGE, SHORT, BEFORE_SINCE, OLDER_VERSION, COPY, GONE)
_REASON_TEXT = {ERROR: "errors", EMPTY: "without text", PAGE_TYPE: "other page types", DUPLICATE: "duplicates",
                LANGUAGE: "other languages", SHORT: "under --min-chars", BEFORE_SINCE: "published before --since",
                OLDER_VERSION: "older versions of a page", COPY: "copies of an earlier record's text",
                GONE: "changed in their feed since it was read"}


@dataclass(frozen=True)
class Filters:
    """What the corpus keeps (see the module docstring)."""

    page_types: tuple[str, ...] = DEFAULT_PAGE_TYPES  # empty: every type
    languages: tuple[str, ...] = ()  # primary subtags ("zh" keeps "zh-Hans"); empty: every language
    # near: the crawl's duplicates and the copies of an earlier text, the same or near (MinHash); exact: the same
    # text only (faster); keep: every record
    duplicates: str = NEAR
    min_chars: int = 0
    since: float | None = None  # a Unix time (``parse_since``)

    @classmethod
    def parse(cls, page_types: str | None = None, languages: str | None = None, duplicates: str = NEAR,
              min_chars: int = 0, since: str | None = None) -> Filters:
        """Return the filters of the command's options; ValueError naming the option that cannot be read."""
        types = _names(page_types) if page_types is not None else DEFAULT_PAGE_TYPES
        if not types:
            raise ValueError("--page-types: give at least one page type, or all")
        if types == ("all",):
            types = ()
        unknown = [name for name in types if name not in PAGE_TYPES]
        if unknown:
            raise ValueError(f"--page-types: unknown page type(s) {', '.join(unknown)}; "
                             f"choose from {', '.join(PAGE_TYPES)} or all")
        if min_chars < 0:
            raise ValueError(f"--min-chars must be 0 or more, got {min_chars}")
        if duplicates not in DUPLICATE_MODES:
            raise ValueError(f"--duplicates must be one of {', '.join(DUPLICATE_MODES)}, got {duplicates!r}")
        try:
            moment = parse_since(since)
        except ValueError as exc:
            raise ValueError(f"--since: {exc}") from None
        # "en-US" asks for English: the records' languages are compared by their primary subtags too.
        return cls(types, tuple(name.split("-")[0].lower() for name in _names(languages)), duplicates, min_chars,
                   moment)

    @property
    def keep_duplicates(self) -> bool:
        return self.duplicates == KEEP

    def reason(self, record: dict[str, Any]) -> str | None:
        """Return why ``record`` is left out, or None when it is kept (its version aside)."""
        if record.get("error") is not None:
            return ERROR
        text = record.get("text")
        if not isinstance(text, str) or not text.strip():
            return EMPTY
        if self.page_types and record.get("page_type") not in self.page_types:
            return PAGE_TYPE
        if not self.keep_duplicates and record.get("duplicate_of") is not None:
            return DUPLICATE
        if self.languages and str(record.get("lang") or "").split("-")[0].lower() not in self.languages:
            return LANGUAGE
        if len(text) < self.min_chars:
            return SHORT
        if self.since is not None:
            published = record.get("date_published")
            moment = date_timestamp(published) if isinstance(published, str) else None
            if moment is not None and moment < self.since:
                return BEFORE_SINCE
        return None


def _names(value: str | None) -> tuple[str, ...]:
    return tuple(name.strip() for name in (value or "").split(",") if name.strip())


@dataclass
class Selection:
    """What :func:`select` found: per page, the position (feed, line) of its kept record; the counts."""

    chosen: dict[str, tuple[float, int, int]] = field(default_factory=dict)  # url -> (fetched_at, feed, line)
    left_out: Counter[str] = field(default_factory=Counter)
    records: int = 0
    unreadable: int = 0  # lines that are no JSON record
    cut: list[str] = field(default_factory=list)  # compressed feeds read only in part, and why
    # The pages the records marked duplicate_of name, with how many such records; and hashes of every page read,
    # to tell the copies of pages in these feeds from those of pages the crawl state knew from other crawls.
    originals: Counter[str] = field(default_factory=Counter)
    pages_read: set[int] = field(default_factory=set)
    no_records: list[str] = field(default_factory=list)  # feeds with lines, none of them a record

    @property
    def kept(self) -> int:
        return len(self.chosen)

    @property
    def duplicates_of_other_crawls(self) -> int:
        """Records left out as duplicates of a page no feed read holds: first seen by another crawl."""
        return sum(count for url, count in self.originals.items() if hash(url) not in self.pages_read)

    def summary(self) -> str:
        """Return the one-line account of what was kept and why the rest was left out."""
        parts = []
        for reason in REASONS:
            if self.left_out[reason]:
                part = f"{_REASON_TEXT[reason]} {self.left_out[reason]:,}"
                elsewhere = self.duplicates_of_other_crawls if reason == DUPLICATE else 0
                if elsewhere:
                    part += (f" ({elsewhere:,} of pages first seen outside these feeds, by another crawl with the "
                             "same crawl state)")
                parts.append(part)
        line = f"Kept {self.kept:,} of {self.records:,} records"
        line += "; left out: " + ", ".join(parts) if parts else ""
        if self.unreadable:
            line += f"; lines that are no JSON record: {self.unreadable:,}"
        return line + "."


def feed_lines(path: Path, on_bytes: Callable[[int], None] = lambda n: None) -> Iterator[bytes]:
    """Yield the lines of a JSONL feed (``.gz``: gzip-compressed, read as a stream, so that a compressed feed cut
    short by a kill gives its whole lines up to the cut, then raises EOFError). ``on_bytes`` is told the bytes of
    the file read (compressed ones for a compressed feed: a progress bar's total is the files' size)."""
    with open(path, "rb") as handle:
        if path.suffix != ".gz":
            for line in handle:
                on_bytes(len(line))
                yield line
            return
        inflate = zlib.decompressobj(wbits=GZIP_WBITS)
        in_member = False  # a member was begun and has not ended
        pending: list[bytes] = []  # the line being read, in pieces
        while chunk := handle.read(READ_BYTES):
            on_bytes(len(chunk))
            while chunk:
                if not in_member:
                    chunk = chunk.lstrip(b"\0")  # zeros padding a gzip file after a member (as gzip reads it)
                    if not chunk:
                        break
                data = inflate.decompress(chunk)
                in_member, chunk = True, b""
                if inflate.eof:  # the member ended; another may follow (concatenated gzip streams)
                    in_member, chunk = False, inflate.unused_data
                    inflate = zlib.decompressobj(wbits=GZIP_WBITS)
                *lines, rest = data.split(b"\n")
                for line in lines:
                    pending.append(line)
                    yield b"".join(pending) + b"\n"
                    pending = []
                if rest:
                    pending.append(rest)
        if in_member:
            raise EOFError(f"{path} ends before its compressed stream does")
        if pending:
            yield b"".join(pending)


def feed_records(path: Path, on_bytes: Callable[[int], None] = lambda n: None, cut: list[str] | None = None,
                 only: Container[int] | None = None) -> Iterator[tuple[int, bytes, dict[str, Any] | None]]:
    """Yield ``(line number, line, record)`` of each non-blank line of a feed (``feed_lines``), or of the line
    numbers in ``only`` (the others are not parsed); the record of a line that is no JSON object (a line a killed
    crawl cut short, another file's line) is None. A compressed feed cut short or damaged ends at its last whole
    line, and ``cut`` is told why (the path and the reason)."""
    try:
        for number, raw in enumerate(feed_lines(path, on_bytes)):
            if (only is not None and number not in only) or not raw.strip():
                continue
            try:
                record = json.loads(raw)
            except (ValueError, RecursionError):
                record = None
            yield number, raw, record if isinstance(record, dict) else None
    except EOFError:
        if cut is not None:
            cut.append(f"{path} ends early (a compressed feed cut by a kill)")
    except zlib.error as exc:
        if cut is not None:
            cut.append(f"{path} holds data that is no gzip stream ({exc})")


def select(feeds: Sequence[Path], filters: Filters, on_bytes: Callable[[int], None] = lambda n: None) -> Selection:
    """Read the feeds and choose each kept page's record (module docstring), copies of an earlier text aside:
    ``write_corpus`` leaves those out as it writes, in the feeds' order."""
    selection = Selection()
    chosen, left_out = selection.chosen, selection.left_out
    for index, path in enumerate(feeds):
        records, unreadable = selection.records, selection.unreadable
        for number, _, record in feed_records(path, on_bytes, selection.cut):
            if record is None or not RECORD_KEYS.intersection(record):
                selection.unreadable += 1
                continue
            selection.records += 1
            selection.pages_read.add(hash(str(record.get("url"))))
            selection.pages_read.add(hash(str(record.get("canonical_url"))))
            reason = filters.reason(record)
            if reason is not None:
                left_out[reason] += 1
                if reason == DUPLICATE:
                    selection.originals[str(record.get("duplicate_of"))] += 1
                continue
            key = _key(record, path, number)
            fetched = record.get("fetched_at")
            moment = date_timestamp(fetched) if isinstance(fetched, str) else None
            version = (moment if moment is not None else -math.inf, index, number)
            earlier = chosen.get(key)
            if earlier is not None:
                left_out[OLDER_VERSION] += 1
                if earlier > version:
                    continue
            chosen[key] = version
        if selection.records == records and selection.unreadable > unreadable:
            selection.no_records.append(f"{path} ({selection.unreadable - unreadable:,} lines)")
    return selection


def _key(record: dict[str, Any], path: Path, number: int) -> str:
    """Return the page a record is of: its URL (the line's place for a record without one)."""
    return str(record.get("url") or record.get("canonical_url") or f"{path}:{number}")


def write_corpus(feeds: Sequence[Path], selection: Selection, out: IO[bytes], fields: Sequence[str] = (),
                 on_bytes: Callable[[int], None] = lambda n: None, duplicates: str = NEAR,
                 dedup: DedupConfig | None = None) -> int:
    """Write the chosen records, in the feeds' order, to ``out``: each line as the crawl wrote it, or with only
    ``fields``, in their order, when given. Return how many were written.

    Unless ``duplicates`` is ``keep``, a record whose text is the same as an earlier written record's, or (``near``)
    a near-duplicate of it, is left out and counted (the crawl's ``DuplicateIndex`` and ``DEDUP_*`` settings,
    ``dedup``): the copies the crawl could not mark, in runs without a shared crawl state or with
    ``DEDUP_ENABLED=False``. List pages are not looked up, as the crawl does not deduplicate them."""
    wanted: defaultdict[int, set[int]] = defaultdict(set)  # per feed, the numbers of its chosen lines
    for _, index, number in selection.chosen.values():
        wanted[index].add(number)
    config = dedup if dedup is not None else DedupConfig()
    texts = DuplicateIndex(config) if duplicates != KEEP else None
    written = 0
    unwritten = set(selection.chosen)
    for index, path in enumerate(feeds):
        # Only the chosen lines are parsed again; what is damaged was counted by select.
        for number, raw, record in feed_records(path, on_bytes, only=wanted[index]):
            if record is None:
                continue
            key = _key(record, path, number)
            chosen = selection.chosen.get(key)
            if chosen is None or chosen[1:] != (index, number):  # the feed changed since select read it
                continue
            unwritten.discard(key)
            if texts is not None and record.get("page_type") != "list":
                fp = fingerprint(str(record.get("text") or ""), config, signature=duplicates == NEAR)
                if texts.find(fp, exclude=key) is not None:
                    del selection.chosen[key]
                    selection.left_out[COPY] += 1
                    continue
                texts.add(key, fp)
            if fields:
                raw = _json_line({name: record.get(name) for name in fields})
            out.write(raw if raw.endswith(b"\n") else raw + b"\n")
            written += 1
    for key in unwritten:  # its line was not where select found it: a feed rewritten meanwhile
        del selection.chosen[key]
        selection.left_out[GONE] += 1
    return written


def _json_line(record: dict[str, Any]) -> bytes:
    """Return a record as a UTF-8 JSON line; a lone surrogate (from a JSON escape) stays escaped."""
    try:
        return json.dumps(record, ensure_ascii=False).encode("utf-8") + b"\n"
    except UnicodeEncodeError:
        return json.dumps(record).encode("ascii") + b"\n"


def feed_paths(args: Sequence[str], output: Path | None = None) -> list[Path]:
    """Return the feeds the arguments name: files, and the ``*.jsonl`` / ``*.jsonl.gz`` files of folders in name
    order (a scheduled crawl's ``%(time)s`` names sort by time), each once (the first place it is named). A folder's
    file that is ``output`` is left out (the corpus of an earlier run written there). ValueError for a path that is
    neither a file nor a folder, or a feed named that is ``output``."""
    paths: list[Path] = []
    seen: set[Path] = set()
    target = output.resolve() if output is not None else None
    for arg in args:
        path = Path(arg)
        if path.is_dir():
            found = sorted(p for p in path.iterdir() if p.is_file() and p.name.endswith((".jsonl", ".jsonl.gz")))
            found = [p for p in found if p.resolve() != target]
        elif path.is_file():
            if path.resolve() == target:
                raise ValueError(f"-o {output} is one of the feeds: it would be replaced by its own corpus")
            found = [path]
        else:
            raise ValueError(f"{arg} is no file or folder")
        for feed in found:
            if feed.resolve() not in seen:
                seen.add(feed.resolve())
                paths.append(feed)
    return paths
