"""Near-duplicate records: an exact hash of the normalised text, then MinHash signatures and LSH bands.

A record's text is first **normalised** (:func:`normalize`: NFKC, case folded, every character that
is not a letter or a digit removed), so a copy that was reflowed, re-punctuated or re-spaced hashes
equal (:func:`text_hash`, BLAKE2b of 16 bytes). Near copies (the same article in another frame: an
AMP or print version, a syndicated copy with its own headline and an "originally published by"
line) are found by the estimated Jaccard similarity of the texts' **shingle sets**: every run of
``DEDUP_SHINGLE`` consecutive characters of the normalised text. Characters, not words, so that
Chinese, which has no spaces, works the same way as English.

Each shingle set is summarised by a MinHash signature of ``DEDUP_PERMUTATIONS`` values (datasketch's
``MinHash``, its default ``affine32`` permutations, 4 bytes a value); the share of equal values of
two signatures estimates the Jaccard similarity of the sets (:func:`similarity`, standard error
about 0.04 at 0.5 with 128 values). The index does not compare a new text with every stored one:
the signature is cut into ``b`` bands of ``r`` values (:func:`band_keys`), and only stored texts that
share a whole band are candidates; candidates at ``DEDUP_THRESHOLD`` or above are near-duplicates
(:class:`DuplicateIndex`). ``b`` and ``r`` come from datasketch's ``_optimal_param`` for the threshold,
with a false negative weighted 9 times a false positive (``FALSE_NEGATIVE_WEIGHT``): a false
positive band only costs one signature comparison, a false negative loses a duplicate. For 0.5
and 128 values that is 32 bands of 4: a pair at 0.5 becomes a candidate with probability 0.87, at
0.6 0.99, at 0.2 0.05.

The defaults were chosen with ``python -m bench.dedup_eval`` (``bench/results/dedup.md``): 606
English and 84 Chinese article pages of ``../shared/datasets``, each with four copies (under
another URL, in an AMP frame, in a print frame, inside another site's page with a new headline
and an "originally published by" line), every page run through :func:`extraction.process.process`.
At 10-character shingles and 0.5: English recall 0.951 [0.942, 0.959] and precision 0.999
(Chinese 0.979 and 1.000); none of 1,616 pairs of different articles on one story (MSV chaos-all)
and none of 200,928 other pairs merged. Most misses are the extractor's: where an article page's
extracted text and its content agree (80% of each other's shingles), recall is 0.987 (0.997 in
Chinese), the rest being syndicated copies whose host page's boilerplate the extractor kept. Two
limits the bench shows: pages whose extracted text is mostly one site's boilerplate (a "latest
news" rail, a photo gallery: true similarity 0.41-0.51 between different MSV articles) sit at the
threshold and merge or not with the estimate's noise (1 of 719 MSV pages); and texts a failed
extraction leaves ("Skip to content") are exact duplicates of each other (4 of 1,497 WCXB pages).

Cost: a 2,500-3,500-character text takes about 1.5 ms (the flow takes 35 ms a page): crc32 as
datasketch's ``hashfunc``, one shared set of permutations and batches of ``BATCH`` shingles;
datasketch's defaults (SHA-1, permutations made per MinHash, one batch) take 3.9 ms. Nothing here
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

from extraction.config import ComponentConfig

HASH_BYTES = 16  # BLAKE2b digest of the normalised text: 128 bits, no collision in any corpus we will hold
SCHEME = "affine32"  # datasketch's default permutation scheme: 32-bit values, 4x faster than affine64 here
SEED = 1  # datasketch's default seed; signatures made with another seed cannot be compared
VALUE = np.dtype("<u4")  # how a signature's values are stored (little-endian uint32)
# LSH band choice (datasketch's _optimal_param weights): candidates are verified with the estimated
# similarity, so a band shared by a pair under the threshold costs one comparison, a missed pair a duplicate.
FALSE_POSITIVE_WEIGHT = 0.1
FALSE_NEGATIVE_WEIGHT = 0.9
# Shingles per MinHash.update_batch call: its (shingles x permutations) arrays stay near glibc's
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
    enabled: bool = True
    # Estimated Jaccard similarity of the shingle sets at which two texts are near-duplicates. Sweep
    # 0.3-0.8 at 10 characters (bench/results/dedup.md): English recall 0.965 at 0.4, 0.958 at
    # 0.45, 0.951 at 0.5, 0.940 at 0.55, 0.926 at 0.6; precision 0.999 throughout; different
    # articles on one story reach 0.27 (two outlets on Ceres' atmosphere quoting one press release),
    # boilerplate-heavy pages of one site 0.41-0.51 (MSV pages matched: 2 at 0.4, 1 at 0.45-0.55).
    threshold: float = 0.5
    # Characters per shingle (of the normalised text): characters so that Chinese works. At 0.5,
    # 3 characters merge 8 same-story and 633 random English pairs (common letter runs), 5 and 7
    # one random pair and 2-3 more MSV pages; 10 none; 12 loses recall (0.947) and, by the
    # estimate's noise, merges one boilerplate-heavy pair. Chinese: no false match at any size.
    shingle: int = 10
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
    signature: bytes | None  # the MinHash values (little-endian uint32), None for a text under min_chars


@cache
def _permutations(count: int) -> tuple[np.ndarray, np.ndarray]:
    """Return datasketch's permutations for ``count`` values and SEED (made once: 0.16 ms each time)."""
    a, b = MinHash(num_perm=count, seed=SEED, scheme=SCHEME).permutations
    return a, b


def fingerprint(text: str, config: DedupConfig) -> Fingerprint:
    """Return the text's exact hash and, when it has ``config.min_chars`` normalised characters, its signature."""
    normalized = normalize(text)
    digest = _digest(normalized)
    if not normalized or len(normalized) < max(config.min_chars, config.shingle):
        return Fingerprint(digest, None)
    # UTF-32 gives every character 4 bytes: a shingle is a slice, with no encoding per shingle.
    data, width = normalized.encode("utf-32-le"), 4 * config.shingle
    shingles = list({data[start:start + width] for start in range(0, len(data) - width + 4, 4)})
    minhash = MinHash(num_perm=config.permutations, seed=SEED, hashfunc=zlib.crc32, scheme=SCHEME,
                      permutations=_permutations(config.permutations))
    for start in range(0, len(shingles), BATCH):
        minhash.update_batch(shingles[start:start + BATCH])
    return Fingerprint(digest, minhash.hashvalues.astype(VALUE).tobytes())


def _values(signature: bytes) -> np.ndarray:
    return np.frombuffer(signature, dtype=VALUE)


def similarity(a: bytes, b: bytes) -> float:
    """Return the estimated Jaccard similarity of two signatures: the share of equal MinHash values."""
    first, second = _values(a), _values(b)
    if len(first) != len(second) or not len(first):
        raise ValueError(f"signatures of {len(first)} and {len(second)} values cannot be compared")
    return float(np.count_nonzero(first == second)) / len(first)


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
    count, rows = bands(config.threshold, config.permutations)
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

    def add(self, key: str, fp: Fingerprint, keys: Sequence[bytes]) -> None:
        """Store the text's fingerprint and band keys under ``key`` (replacing what the key had)."""
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

    def add(self, key: str, fp: Fingerprint, keys: Sequence[bytes]) -> None:
        """Store the text's fingerprint and band keys under ``key`` (replacing what the key had)."""
        self._remove(key)
        self._entries[key] = (fp, tuple(keys))
        self._hashes.setdefault(fp.text_hash, key)
        for band_key in keys:
            self._bands.setdefault(band_key, {})[key] = None

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
    similarity: float  # estimated Jaccard similarity; 1.0 for an exact hash match
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
            score = similarity(fp.signature, signature)
            if score >= self.config.threshold:
                near.append(Match(key, score, False))
        near.sort(key=lambda match: (-match.similarity, match.key))
        return found + near

    def find(self, fp: Fingerprint, exclude: str | None = None) -> Match | None:
        """Return the exact match, else the most similar stored text at the threshold or above, else None."""
        found = self.matches(fp, exclude)
        return found[0] if found else None

    def add(self, key: str, fp: Fingerprint) -> None:
        """Store ``fp`` under ``key`` (a text with no letters or digits is not stored)."""
        if fp.text_hash == EMPTY_HASH:
            return
        keys = band_keys(fp.signature, self.config) if fp.signature is not None else []
        self.storage.add(key, fp, keys)

    def check(self, key: str, text: str) -> Match | None:
        """Return the earlier text that ``text`` duplicates (not ``key`` itself); store it when there is none."""
        fp = fingerprint(text, self.config)
        match = self.find(fp, exclude=key)
        if match is None:
            self.add(key, fp)
        return match
