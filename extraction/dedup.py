"""Near-duplicate records: an exact hash of the normalised text, then MinHash signatures and LSH bands.

A record's text is first **normalised** (:func:`normalize`: NFKC, case folded, every character that
is not a letter or a digit removed), so a copy that was reflowed, re-punctuated or re-spaced hashes
equal (:func:`text_hash`, BLAKE2b of 16 bytes). Near copies (the same article in another frame: an
AMP or print version, a syndicated copy with its own headline and an "originally published by"
line) are found by the estimated Jaccard similarity of the texts' **shingle sets**: every run of
``DEDUP_SHINGLE`` consecutive characters of the normalised text. Characters, not words, so that
Chinese, which has no spaces, works the same way as English.

Each shingle set is summarised by a MinHash signature of ``DEDUP_PERMUTATIONS`` values (datasketch's
``MinHash``, its default ``affine32`` permutations, 4 bytes a value) kept with the set's size; the
share of equal values of two signatures estimates the Jaccard similarity J of the sets
(:func:`similarity`, standard error about 0.04 with 128 values), and with the two sizes the
**containment** C = |A & B| / min(|A|, |B|), the share of the shorter text found in the other
(:func:`containment`). A text is a near-duplicate of an earlier one when C >= ``DEDUP_THRESHOLD``
and J >= ``DEDUP_MIN_JACCARD``. Containment, because a copy in another frame keeps nearly all of
the article and adds the frame (or loses a few paragraphs to it): its Jaccard similarity falls with
the frame's share, its containment does not; two different articles written from one template
share sentences, but not 85% of them. The Jaccard floor keeps a short text quoted inside a page
several times its length from being that page's copy. The index does not compare a new text with
every stored one: the signature is cut into ``b`` bands of ``r`` values (:func:`band_keys`), and only
stored texts that share a whole band are candidates (:class:`DuplicateIndex`). ``b`` and ``r`` come
from datasketch's ``_optimal_param`` for the Jaccard floor, with a false negative weighted 9 times a
false positive (``FALSE_NEGATIVE_WEIGHT``): a false positive band only costs one signature
comparison, a false negative loses a duplicate.

The defaults were chosen with ``python -m bench.dedup_eval`` (``bench/results/dedup.md``): 606
English and 84 Chinese article pages of ``../shared/datasets``, each with four copies (under
another URL, in an AMP frame, in a print frame, inside another site's page with a new headline
and an "originally published by" line), every page run through :func:`extraction.process.process`,
against 1,616 pairs of different articles on one story (MSV chaos-all), every other pair, and the
duplicate rates of MSV, WCXB-dev and the demo sites (whose generated articles share template
sentences: different articles that must not match). A Jaccard threshold alone could not have both:
at 0.5 (10-character shingles) English recall was 0.951 but 20 of the demo's 100 pages matched
another; containment 0.85 with the floor 0.3 and 12-character shingles gives English recall 0.955
[0.946, 0.963] at precision 0.997 (Chinese 0.991 and 1.000), no pair of different articles on one
story merged, and no demo page matched (the bench's sweep has the neighbours). Most
misses are the extractor's: syndicated copies whose host page's boilerplate it kept. Two limits:
texts a failed extraction leaves ("Skip to content") are exact duplicates of each other (4 of
1,497 WCXB pages), and list pages are not deduplicated by the crawl (pipelines/state.py).

The signature is datasketch's ``MinHash`` with crc32 as its ``hashfunc`` (one shared set of
permutations, batches of ``BATCH`` shingles), computed with numpy for the whole text at once
(:func:`_shingle_keys`): crc32 of a fixed-length message is affine over GF(2), so the crc32 of every
shingle is the XOR of one table entry per byte position; the same gathers carry a second 32-bit
tabulation hash, so that the set size counts distinct shingles (not distinct crc32 values, which
collide about once in a 10,000-shingle text). The values are the ones ``MinHash.update_batch`` gives
for the distinct shingles (tested). On 198 WCXB and Chinese texts (11,000 characters on average):
2.6 ms a text, against 4.3 ms with a Python set of shingles and crc32 per shingle (datasketch's
defaults, SHA-1 and permutations made per MinHash, were slower still). Nothing here
imports Scrapy; the crawl's storage is any :class:`IndexStorage` (:class:`MemoryStorage` here).
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import ClassVar, Protocol

import numpy as np
from datasketch import MinHash
from datasketch.lsh import _optimal_param
from datasketch.minhash import _fmix

from extraction.config import ComponentConfig
from extraction.record import Record

HASH_BYTES = 16  # BLAKE2b digest of the normalised text: 128 bits, no collision in any corpus we will hold
SCHEME = "affine32"  # datasketch's default permutation scheme: 32-bit values, 4x faster than affine64 here
SEED = 1  # datasketch's default seed; signatures made with another seed cannot be compared
VALUE = np.dtype("<u4")  # how a signature's values are stored (little-endian uint32)
# LSH band choice (datasketch's _optimal_param weights): candidates are verified with the estimated
# similarity, so a band shared by a pair under the threshold costs one comparison, a missed pair a duplicate.
FALSE_POSITIVE_WEIGHT = 0.1
FALSE_NEGATIVE_WEIGHT = 0.9
# Shingles per batch of the signature's (shingles x permutations) arrays, which then stay near glibc's
# 128 KiB mmap threshold; one call for a 2,000-shingle article allocates 1 MB arrays that are
# mapped and faulted in afresh every time (1.6 ms against 0.65 ms per article, measured).
BATCH = 256
BAND_KEY_BYTES = 8  # a band's values are hashed to this many bytes (after its 2-byte band number)
MAX_PERMUTATIONS = 1024  # band numbers fit 2 bytes; _optimal_param takes 0.1 s at 512 already
_NOT_WORD = re.compile(r"[\W_]+")


@dataclass(frozen=True)
class DedupConfig(ComponentConfig):
    """DEDUP_* settings (``bench/results/dedup.md`` has the measurements behind the defaults)."""

    prefix: ClassVar[str] = "DEDUP"
    enabled: bool = True  # off: no fingerprints, no duplicate_of (the crawl state still skips known URLs)
    # Estimated containment at which a text is a near-duplicate of an earlier one: the share of the
    # shorter text's shingles that the other has (estimated from the MinHash Jaccard similarity and the
    # two shingle counts). A copy in another frame keeps nearly all of the article's shingles and adds
    # the frame's (its Jaccard similarity falls, its containment does not); two different articles
    # written from one template (the demo's, sports results, market reports) share sentences but not
    # most of them. See the module docstring for the numbers.
    threshold: float = 0.85
    # Jaccard floor: pairs under it are never near-duplicates (a short text wholly quoted in a page
    # 4 times its length is not its copy), and the LSH bands are tuned to find pairs above it.
    min_jaccard: float = 0.3
    # Characters per shingle (of the normalised text): characters so that Chinese works. With a Jaccard
    # threshold, 3 characters merged 633 random English pairs (common letter runs) and 5 one; at
    # containment 0.85, 10 characters let one pair of demo articles through by the estimate's noise
    # (0.861, exactly 0.80) and 12 none, at English recall 0.955 against 0.959. Chinese: no false
    # match at any size.
    shingle: int = 12
    permutations: int = 128  # MinHash values per signature (datasketch's default)
    # Texts shorter than this (normalised characters) get the exact hash only. 0 to 500 give the
    # same recall in the bench; the one near match under 200 in MSV, WCXB-dev and the demo was two
    # shop category pages sharing a 280-character promotion.
    min_chars: int = 200
    drop: bool = False  # the crawl drops near and exact duplicates from the export

    def validate(self) -> None:
        """Raise ValueError naming the setting whose value cannot work."""
        if not 0.0 < self.threshold <= 1.0:
            raise ValueError(f"DEDUP_THRESHOLD must be in (0, 1], got {self.threshold!r}")
        if not 0.0 < self.min_jaccard <= 1.0:
            raise ValueError(f"DEDUP_MIN_JACCARD must be in (0, 1], got {self.min_jaccard!r}")
        if self.shingle < 1:
            raise ValueError(f"DEDUP_SHINGLE must be at least 1, got {self.shingle!r}")
        if not 2 <= self.permutations <= MAX_PERMUTATIONS:
            raise ValueError(f"DEDUP_PERMUTATIONS must be between 2 and {MAX_PERMUTATIONS}, got {self.permutations!r}")
        if self.min_chars < 0:
            raise ValueError(f"DEDUP_MIN_CHARS must be 0 or more, got {self.min_chars!r}")
        if self.min_chars and self.min_chars < self.shingle:
            raise ValueError(f"DEDUP_MIN_CHARS ({self.min_chars}) must be 0 or at least DEDUP_SHINGLE "
                             f"({self.shingle})")


def normalize(text: str) -> str:
    """Return ``text`` NFKC-normalised and case-folded, with everything but letters and digits removed."""
    return _NOT_WORD.sub("", unicodedata.normalize("NFKC", text).casefold())


def text_hash(text: str) -> str:
    """Return the hex BLAKE2b digest (16 bytes) of the normalised text: equal for reflowed copies."""
    return _digest(normalize(text))


def _digest(normalized: str) -> str:
    return hashlib.blake2b(normalized.encode("utf-8"), digest_size=HASH_BYTES).hexdigest()


EMPTY_HASH = _digest("")  # a text with no letters or digits: never a duplicate, never stored


@dataclass(frozen=True)
class Fingerprint:
    """What the index keeps of a text: its exact hash and its MinHash signature."""

    text_hash: str
    # The shingle count (little-endian uint32) then the MinHash values (little-endian uint32); None for a
    # text under min_chars. Opaque to a storage.
    signature: bytes | None


@cache
def _permutations(count: int) -> tuple[np.ndarray, np.ndarray]:
    """Return datasketch's permutations for ``count`` values and SEED (made once: 0.16 ms each time)."""
    a, b = MinHash(num_perm=count, seed=SEED, scheme=SCHEME).permutations
    return a, b


@cache
def _shingle_tables(shingle: int) -> np.ndarray:
    """Return, per byte position of a shingle's UTF-32 bytes and byte value, the 64-bit contribution to its key:
    crc32's (high 32 bits: ``crc32(m) = crc32(zeros) ^ XOR of table[k][m[k]]``, crc32 being affine over GF(2)) and a
    tabulation hash's (low 32 bits, seeded). A zero byte contributes nothing."""
    width = 4 * shingle
    zeros = bytes(width)
    base = zlib.crc32(zeros)
    tables = np.random.default_rng(SEED).integers(0, 1 << 32, size=(width, 256), dtype=np.uint64)
    tables[:, 0] = 0
    for position in range(width):
        message = bytearray(zeros)
        for value in range(1, 256):
            message[position] = value
            tables[position, value] |= np.uint64(zlib.crc32(message) ^ base) << np.uint64(32)
    return tables


def _shingle_keys(normalized: str, shingle: int) -> np.ndarray:
    """Return the distinct keys of the text's shingles (sorted uint64): crc32 of the shingle's UTF-32-LE bytes in
    the high 32 bits, a tabulation hash in the low ones."""
    codes = np.frombuffer(normalized.encode("utf-32-le"), dtype="<u4")
    count = len(codes) - shingle + 1
    columns = codes.view(np.uint8).reshape(-1, 4)
    tables = _shingle_tables(shingle)
    keys = np.full(count, np.uint64(zlib.crc32(bytes(4 * shingle))) << np.uint64(32), dtype=np.uint64)
    for byte in range(4):
        column = columns[:, byte]
        if byte >= 2 and not column.any():  # code points under U+10000 (nearly all text) have zero high bytes
            continue
        for char in range(shingle):
            keys ^= tables[4 * char + byte][column[char:char + count]]
    return np.unique(keys)


def fingerprint(text: str, config: DedupConfig, signature: bool = True) -> Fingerprint:
    """Return the text's exact hash and, when it has ``config.min_chars`` normalised characters and ``signature``
    is true, its signature (:func:`text_fingerprint` leaves it out for page types never deduplicated)."""
    normalized = normalize(text)
    digest = _digest(normalized)
    if not signature or not normalized or len(normalized) < max(config.min_chars, config.shingle):
        return Fingerprint(digest, None)
    keys = _shingle_keys(normalized, config.shingle)
    # MinHash.update_batch's affine32 path on the shingles' crc32 values (a value twice changes no minimum).
    hashed = _fmix((keys >> np.uint64(32)).astype(np.uint32), 32)
    a, b = _permutations(config.permutations)
    values = np.full(config.permutations, np.iinfo(np.uint32).max, dtype=np.uint32)
    for start in range(0, len(hashed), BATCH):
        np.minimum(values, (hashed[start:start + BATCH, None] * a + b).min(axis=0), out=values)
    return Fingerprint(digest, np.array([len(keys)], dtype=VALUE).tobytes() + values.astype(VALUE).tobytes())


def _values(signature: bytes) -> np.ndarray:
    return np.frombuffer(signature, dtype=VALUE, offset=VALUE.itemsize)


def _size(signature: bytes) -> int:
    return int(np.frombuffer(signature, dtype=VALUE, count=1)[0])


def similarity(a: bytes, b: bytes) -> float:
    """Return the estimated Jaccard similarity of two signatures: the share of equal MinHash values."""
    first, second = _values(a), _values(b)
    if len(first) != len(second) or not len(first):
        raise ValueError(f"signatures of {len(first)} and {len(second)} values cannot be compared")
    return float(np.count_nonzero(first == second)) / len(first)


def containment(a: bytes, b: bytes, jaccard: float | None = None) -> float:
    """Return the estimated share of the smaller shingle set found in the other: |A & B| / min(|A|, |B|),
    with |A & B| = J (|A| + |B|) / (1 + J) from the estimated Jaccard similarity J."""
    j = similarity(a, b) if jaccard is None else jaccard
    first, second = _size(a), _size(b)
    if not first or not second:
        return 0.0
    return min(1.0, j * (first + second) / (1 + j) / min(first, second))


@cache
def bands(threshold: float, permutations: int) -> tuple[int, int]:
    """Return (bands, rows per band) for the threshold: datasketch's optimum with the module's weights."""
    count, rows = _optimal_param(threshold, permutations, FALSE_POSITIVE_WEIGHT, FALSE_NEGATIVE_WEIGHT)
    return int(count), int(rows)


def band_keys(signature: bytes, config: DedupConfig) -> list[bytes]:
    """Return one key per LSH band: the band's number (2 bytes) and a hash of its values (8 bytes)."""
    values = _values(signature)
    if len(values) != config.permutations:
        raise ValueError(f"a signature of {len(values)} values for DEDUP_PERMUTATIONS={config.permutations}")
    count, rows = bands(config.min_jaccard, config.permutations)
    return [band.to_bytes(2, "big") + hashlib.blake2b(values[band * rows:(band + 1) * rows].tobytes(),
                                                      digest_size=BAND_KEY_BYTES).digest()
            for band in range(count)]


class IndexStorage(Protocol):
    """Where a :class:`DuplicateIndex` keeps the fingerprints (memory here; SQLite in the crawl)."""

    def by_hash(self, text_hash: str) -> str | None:
        """Return the key of a stored text with this exact hash, or None."""
        ...

    def candidates(self, keys: Sequence[bytes]) -> list[tuple[str, bytes]]:
        """Return (key, signature) of every stored text that shares at least one band key, once each."""
        ...

    def add(self, key: str, fp: Fingerprint, keys: Sequence[bytes]) -> str | None:
        """Store the text's fingerprint and band keys under ``key`` (replacing what the key had) and return None;
        or, storing nothing, return the key of the same text (``text_hash``) that another writer stored since it
        was looked up (a storage shared by several processes decides this atomically: the first writer wins)."""
        ...


class MemoryStorage:
    """An :class:`IndexStorage` in dictionaries (tests, benchmarks, one-off runs)."""

    def __init__(self) -> None:
        self._hashes: dict[str, str] = {}  # text hash -> the first key stored with it
        self._entries: dict[str, tuple[Fingerprint, tuple[bytes, ...]]] = {}
        self._bands: dict[bytes, dict[str, None]] = {}  # band key -> keys in insertion order

    def __len__(self) -> int:
        return len(self._entries)

    def by_hash(self, text_hash: str) -> str | None:
        """Return the key of a stored text with this exact hash, or None."""
        return self._hashes.get(text_hash)

    def candidates(self, keys: Sequence[bytes]) -> list[tuple[str, bytes]]:
        """Return (key, signature) of every stored text that shares at least one band key, once each."""
        found: dict[str, bytes] = {}
        for band_key in keys:
            for key in self._bands.get(band_key, ()):
                signature = self._entries[key][0].signature
                if key not in found and signature is not None:
                    found[key] = signature
        return list(found.items())

    def add(self, key: str, fp: Fingerprint, keys: Sequence[bytes]) -> str | None:
        """Store the text's fingerprint and band keys under ``key`` (replacing what the key had); return None (one
        writer: nobody can have stored the text since it was looked up)."""
        self._remove(key)
        self._entries[key] = (fp, tuple(keys))
        self._hashes.setdefault(fp.text_hash, key)
        for band_key in keys:
            self._bands.setdefault(band_key, {})[key] = None
        return None

    def _remove(self, key: str) -> None:
        old = self._entries.pop(key, None)
        if old is None:
            return
        if self._hashes.get(old[0].text_hash) == key:
            del self._hashes[old[0].text_hash]
        for band_key in old[1]:
            self._bands[band_key].pop(key, None)


@dataclass(frozen=True)
class Match:
    """An earlier text that a text duplicates."""

    key: str  # the earlier text's key (e.g. its canonical URL)
    similarity: float  # estimated containment (see DedupConfig.threshold); 1.0 for an exact hash match
    exact: bool  # the normalised texts are equal


class DuplicateIndex:
    """Finds, for a text, an earlier text it duplicates (exactly or nearly); see the module docstring."""

    def __init__(self, config: DedupConfig, storage: IndexStorage | None = None) -> None:
        self.config = config
        self.storage: IndexStorage = storage if storage is not None else MemoryStorage()

    def matches(self, fp: Fingerprint, exclude: str | None = None) -> list[Match]:
        """Return every stored text ``fp`` duplicates, the exact match first, then by similarity; not ``exclude``."""
        if fp.text_hash == EMPTY_HASH:
            return []
        found: list[Match] = []
        exact = self.storage.by_hash(fp.text_hash)
        if exact is not None and exact != exclude:
            found.append(Match(exact, 1.0, True))
        if fp.signature is None:
            return found
        near = []
        for key, signature in self.storage.candidates(band_keys(fp.signature, self.config)):
            if key in (exclude, exact):
                continue
            jaccard = similarity(fp.signature, signature)
            if jaccard < self.config.min_jaccard:
                continue
            score = containment(fp.signature, signature, jaccard)
            if score >= self.config.threshold:
                near.append(Match(key, score, False))
        near.sort(key=lambda match: (-match.similarity, match.key))
        return found + near

    def find(self, fp: Fingerprint, exclude: str | None = None) -> Match | None:
        """Return the exact match, else the stored text with the highest containment at the threshold or above."""
        found = self.matches(fp, exclude)
        return found[0] if found else None

    def add(self, key: str, fp: Fingerprint) -> str | None:
        """Store ``fp`` under ``key`` (a text with no letters or digits is not stored); return None, or the key of
        the same text another writer stored first (``IndexStorage.add``: nothing stored then)."""
        if fp.text_hash == EMPTY_HASH:
            return None
        keys = band_keys(fp.signature, self.config) if fp.signature is not None else []
        return self.storage.add(key, fp, keys)

    def check(self, key: str, text: str) -> Match | None:
        """Return the earlier text that ``text`` duplicates (not ``key`` itself); store it when there is none."""
        fp = fingerprint(text, self.config)
        match = self.find(fp, exclude=key)
        if match is None:
            first = self.add(key, fp)
            return Match(first, 1.0, True) if first is not None else None
        return match


def _deduplicated_type(record: Record) -> bool:
    """Whether records of the page's type are looked up among the others: not a list page (a site's lists repeat
    each other's entries, a section's first page is mostly on the home page, without being copies, and they are
    not what a corpus deduplicates)."""
    return record.page_type != "list"


def text_fingerprint(record: Record, config: DedupConfig) -> Fingerprint:
    """Return the fingerprint of a record's text, with no signature for a page type never deduplicated."""
    return fingerprint(record.text, config, signature=_deduplicated_type(record))


def record_fingerprint(record: Record, config: DedupConfig) -> Fingerprint:
    """Return the fingerprint of a record's text: the one its extraction worker made (``record.crawl["fingerprint"]``,
    taken out of the record), else made now (:func:`text_fingerprint`)."""
    made = record.crawl.pop("fingerprint", None)
    return Fingerprint(*made) if made is not None else text_fingerprint(record, config)


def deduplicable(record: Record, fp: Fingerprint) -> bool:
    """Whether a record is looked up among the others: a page type that is (:func:`_deduplicated_type`), with
    text."""
    return _deduplicated_type(record) and bool(fp.text_hash) and bool(record.text.strip())


def deduplicate(record: Record, key: str, fp: Fingerprint, index: DuplicateIndex) -> Match | None:
    """Mark ``record`` (stored as ``key``) when its text duplicates an earlier one in ``index``: set its
    ``duplicate_of`` and ``duplicate_similarity`` and return the match; else add it to the index and return None.
    A record that is not :func:`deduplicable` is neither looked up nor added."""
    if not deduplicable(record, fp):
        return None
    match = index.find(fp, exclude=key)
    if match is None:
        first = index.add(key, fp)
        if first is None:
            return None
        match = Match(first, 1.0, True)  # another worker stored the same text between the look and the write
    record.duplicate_of = match.key
    record.duplicate_similarity = round(match.similarity, 4)
    return match
