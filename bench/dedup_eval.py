"""Near-duplicate detection (``extraction.dedup``) on copies of real articles, and duplicate rates of real sites.

``python -m bench.dedup_eval [--wcxb N] [--chaos N] [--zh N] [--skip-rates] [--cache FILE.json] [--out FILE.md]``

Every page, article or copy (``bench.dedup_sets``: the same page under another URL, an AMP
version, a print version, a syndicated copy in another site's page frame with a changed
headline), goes through ``extraction.process.process`` with ``Context.from_settings({})`` (the
shipped models, no templates), and the record's text through ``fingerprint``. Per language, all
articles go into one ``DuplicateIndex`` in turn (``matches`` before ``add``: every pair of
articles the index would merge is counted); then each copy is looked up (``find``): right when
the match is its article (or a found copy of it), wrong when another article, missed when none.
Recall per kind = right / copies; precision = right / (right + wrong). Negatives: different
articles on one story (chaos-all pages of one query; the Chinese pairs of ``SAME_STORY_ZH``) and
every other pair of articles (random pairs: all of them), merged = the index matched the pair.
Overall precision counts every wrong match and merged negative pair against the copies found.
"Extraction agrees": the article page's extracted text and the content its copies carry (the gold
text) hold at least 80% of each other's 9-character shingles; recall on those articles measures
the index apart from the extractor. 95% intervals: Wilson's. A sweep over shingle sizes,
containment thresholds and Jaccard floors (and ``min_chars``) on the same texts chose the
defaults. Duplicate rates: every page of msv-big5, of WCXB-dev (1,497 pages of many kinds and
sites) and of the demo sites through the same flow and ``DuplicateIndex.check`` in order: the
share of records with text that match an earlier one. Results: ``bench/results/dedup.md`` and
``dedup.json``.
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import statistics
import sys
import time
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from bench.dedup_report import report
from bench.dedup_sets import (
    FOUND_COPIES,
    KINDS,
    PARTIAL_COPIES,
    Article,
    Corpus,
    build_corpus,
    chinese_articles,
    english_articles,
    found_pages,
    same_story_pairs,
)
from extraction.dedup import DedupConfig, DuplicateIndex, Fingerprint, fingerprint, normalize, similarity
from extraction.page import Page
from extraction.process import Context, process

OUT = Path(__file__).parent / "results" / "dedup.md"
SHINGLES = (5, 7, 9, 10, 12)
THRESHOLDS = (0.75, 0.8, 0.85, 0.9, 0.95)  # containment (DEDUP_THRESHOLD)
MIN_JACCARDS = (0.2, 0.3, 0.4)  # swept at the default shingle size; the other sizes at the default floor
MIN_CHARS = (0, 50, 100, 200, 500)
AGREE = 0.8  # shingle share both ways for an article's extraction to "agree" with its content
AGREE_SHINGLE = 9
PROGRESS_EVERY = 200


class Extractor:
    """The flow on pages, once per page key and URL (the texts are reused by the sweep)."""

    def __init__(self, cache: dict[str, list[str | None]] | None = None) -> None:
        self.context: Context | None = None  # loaded on the first page the cache does not hold
        self.records: dict[str, list[str | None]] = cache if cache is not None else {}
        self.seconds = 0.0
        self.extracted = 0
        self.started = time.monotonic()

    def __call__(self, key: str, body: bytes, url: str | None,
                 content_type: str | None = None) -> tuple[str, str | None]:
        """Return the record's (text, title) for the page."""
        cached = self.records.get(f"{key}\t{url}")
        if cached is not None:
            return cached[0] or "", cached[1]
        if self.context is None:
            self.context = Context.from_settings({})
        start = time.perf_counter()
        record = process(Page(body, url, content_type), self.context)
        self.seconds += time.perf_counter() - start
        self.extracted += 1
        self.records[f"{key}\t{url}"] = [record.text, record.title]
        if self.extracted % PROGRESS_EVERY == 0:
            elapsed = time.monotonic() - self.started
            print(f"  {self.extracted} pages extracted, {self.extracted / elapsed:.1f} pages/s", file=sys.stderr)
        return record.text, record.title

    def article(self, article: Article) -> tuple[str, str | None]:
        """Return the flow's (text, title) for an article page."""
        return self(article.key, article.html, article.url, article.content_type)


@dataclass
class Language:
    """One language's corpus, the extracted text of every page, and how far each article's extraction agrees."""

    corpus: Corpus
    texts: dict[str, str]
    agreement: dict[str, tuple[float, float]] = field(default_factory=dict)  # source -> (content in text, reverse)

    @property
    def agreeing(self) -> frozenset[str]:
        """Return the articles whose extraction and content hold ``AGREE`` of each other's shingles."""
        return frozenset(key for key, (inside, back) in self.agreement.items() if min(inside, back) >= AGREE)


def _shingles(text: str) -> set[str]:
    normalized = normalize(text)
    return {normalized[i:i + AGREE_SHINGLE] for i in range(len(normalized) - AGREE_SHINGLE + 1)}


def agreement(article: Article, text: str) -> tuple[float, float]:
    """Return (share of the content's shingles in the extracted text, share of the text's shingles in the content)."""
    content, extracted = _shingles(" ".join(article.paragraphs)), _shingles(text)
    common = len(content & extracted)
    return common / max(1, len(content)), common / max(1, len(extracted))


@dataclass
class Result:
    """One language at one configuration."""

    lang: str
    config: dict[str, Any]
    copies: dict[str, dict[str, int]] = field(default_factory=dict)  # kind -> n, right, wrong, exact, *_agree
    negatives: dict[str, dict[str, int]] = field(default_factory=dict)  # same-story / random -> pairs, merged
    found: dict[str, int] = field(default_factory=dict)  # found copies: pairs, matched
    partial: list[dict[str, Any]] = field(default_factory=list)
    errors: list[dict[str, Any]] = field(default_factory=list)  # missed and wrong copies, merged negatives

    def overall(self) -> tuple[int, int, int]:
        """Return (right, copies, false matches) over kinds a-d and both negative kinds."""
        right = sum(counts["right"] for counts in self.copies.values())
        total = sum(counts["n"] for counts in self.copies.values())
        false = sum(counts["wrong"] for counts in self.copies.values())
        false += sum(counts["merged"] for counts in self.negatives.values())
        return right, total, false


def clusters(pairs: Iterable[Iterable[str]]) -> dict[str, str]:
    """Return {key: cluster representative} for copy pairs (union-find)."""
    parent: dict[str, str] = {}

    def root(key: str) -> str:
        while parent.setdefault(key, key) != key:
            key = parent[key]
        return key

    for pair in pairs:
        first, second = sorted(pair)
        parent[root(second)] = root(first)
    return {key: root(key) for key in parent}


def evaluate(language: Language, config: DedupConfig, prints: dict[str, Fingerprint] | None = None) -> Result:
    """Run one language's articles and copies through a DuplicateIndex at ``config`` (module docstring)."""
    corpus, texts = language.corpus, language.texts
    prints = prints if prints is not None else {key: fingerprint(text, config) for key, text in texts.items()}
    result = Result(corpus.lang, asdict(config))
    index = DuplicateIndex(config)
    merged: dict[frozenset[str], float] = {}
    for key in corpus.articles:
        for found in index.matches(prints[key], exclude=key):
            merged[frozenset((key, found.key))] = found.similarity
        index.add(key, prints[key])
    copies = {frozenset(pair) for pair in FOUND_COPIES if all(key in corpus.articles for key in pair)}
    partial = {frozenset(pair) for pair in PARTIAL_COPIES if all(key in corpus.articles for key in pair)}
    stories = same_story_pairs(corpus)
    cluster = clusters(copies)
    count = len(corpus.articles)
    result.found = {"pairs": len(copies), "matched": sum(pair in merged for pair in copies)}
    for pair in sorted(partial, key=sorted):
        first, second = sorted(pair)
        result.partial.append({"pair": [first, second], "similarity": pair_similarity(prints[first], prints[second]),
                               "matched": pair in merged})
    same_story = [pair for pair in merged if pair in stories]
    random_pairs = [pair for pair in merged if pair not in stories and pair not in copies and pair not in partial]
    result.negatives = {
        "same-story": {"pairs": len(stories), "merged": len(same_story)},
        "random": {"pairs": count * (count - 1) // 2 - len(stories) - len(copies) - len(partial),
                   "merged": len(random_pairs)},
    }
    for kind, pairs in (("same-story", same_story), ("random", random_pairs)):
        for pair in pairs:
            first, second = sorted(pair)
            result.errors.append({"error": f"merged {kind}", "key": first, "match": second,
                                  "similarity": merged[pair], "why": stories.get(pair, "")})
    agreeing = language.agreeing
    result.copies = {kind: dict.fromkeys(("n", "right", "wrong", "exact", "n_agree", "right_agree"), 0)
                     for kind in KINDS}
    for copy in corpus.copies:
        counts = result.copies[copy.kind]
        counts["n"] += 1
        counts["n_agree"] += copy.source in agreeing
        match = index.find(prints[copy.key])
        if match is not None and cluster.get(match.key, match.key) == cluster.get(copy.source, copy.source):
            counts["right"] += 1
            counts["right_agree"] += copy.source in agreeing
            counts["exact"] += match.exact
            continue
        counts["wrong"] += match is not None
        inside, back = language.agreement.get(copy.source, (math.nan, math.nan))
        result.errors.append({"error": "wrong" if match is not None else "missed", "key": copy.key,
                              "match": match.key if match else None,
                              "similarity": match.similarity if match else None,
                              "own_similarity": pair_similarity(prints[copy.source], prints[copy.key]),
                              "chars": len(normalize(texts[copy.key])),
                              "article_chars": len(normalize(texts[copy.source])),
                              "content_in_extraction": inside, "extraction_in_content": back})
    return result


def pair_similarity(first: Fingerprint, second: Fingerprint) -> float | None:
    """Return the estimated similarity of two fingerprints (1.0 for equal hashes, None without signatures)."""
    if first.text_hash == second.text_hash:
        return 1.0
    if first.signature is None or second.signature is None:
        return None
    return similarity(first.signature, second.signature)


def distribution(corpus: Corpus, prints: dict[str, Fingerprint]) -> dict[str, dict[str, float]]:
    """Return, per copy kind and negative kind, the spread of the estimated similarity to the other page."""
    values: dict[str, list[float]] = {kind: [] for kind in KINDS}
    for copy in corpus.copies:
        score = pair_similarity(prints[copy.source], prints[copy.key])
        if score is not None:
            values[copy.kind].append(score)
    stories = same_story_pairs(corpus)
    values["same-story"] = [score for pair in stories
                            if (score := pair_similarity(*(prints[key] for key in sorted(pair)))) is not None]
    skip = set(stories) | {frozenset(pair) for pair in FOUND_COPIES + PARTIAL_COPIES}
    keys = [key for key in corpus.articles if prints[key].signature is not None]
    values["random"] = [similarity(prints[first].signature or b"", prints[second].signature or b"")
                        for i, first in enumerate(keys) for second in keys[i + 1:]
                        if frozenset((first, second)) not in skip]
    spread = {}
    for kind, scores in values.items():
        if scores:
            ordered = sorted(scores)
            spread[kind] = {"n": len(ordered), "min": ordered[0], "p05": ordered[len(ordered) // 20],
                            "median": statistics.median(ordered),
                            "p99": ordered[min(len(ordered) - 1, len(ordered) * 99 // 100)], "max": ordered[-1]}
    return spread


def duplicate_rate(pages: Sequence[tuple[str, str]], config: DedupConfig,
                   prints: dict[str, Fingerprint] | None = None) -> dict[str, Any]:
    """Return how many pages ``DuplicateIndex.check`` matches to an earlier one (known copies apart), and which.

    With ``prints`` (the pages' fingerprints at ``config``, for the sweep) it does what ``check`` does
    without fingerprinting again: ``find`` excluding the key, ``add`` when there is no match.
    """
    known = clusters(FOUND_COPIES)
    index = DuplicateIndex(config)
    matches: list[dict[str, Any]] = []
    with_text = short = 0
    for key, text in pages:
        normalized = len(normalize(text))
        with_text += normalized > 0
        short += 0 < normalized < config.min_chars
        if prints is None:
            match = index.check(key, text)
        elif (match := index.find(prints[key], exclude=key)) is None:
            index.add(key, prints[key])
        if match is not None:
            copy = key in known and known[key] == known.get(match.key)
            matches.append({"key": key, "match": match.key, "similarity": match.similarity, "exact": match.exact,
                            "chars": normalized, "known_copy": copy})
    exact = sum(match["exact"] for match in matches)
    return {"pages": len(pages), "with_text": with_text, "short": short, "exact": exact,
            "near": len(matches) - exact, "known_copies": sum(match["known_copy"] for match in matches),
            "matches": matches}


def dataset_pages(extract: Extractor, name: str) -> list[tuple[str, str]]:
    """Return (key, text) of every page of a dataset, in the reader's order."""
    from evaluation.datasets import iter_pages

    return [(f"{name}/{page.page_id}", extract(f"{name}/{page.page_id}", page.html_bytes(), page.url)[0])
            for page in iter_pages(name)]


def demo_pages(extract: Extractor) -> list[tuple[str, str]]:
    """Return (URL, text) of every demo page (both sites), by site and path."""
    from demo.content import build_sites

    pages = []
    for site in build_sites():
        for path, page in sorted(site.pages.items()):
            url = "http://127.0.0.1:8000" + path
            pages.append((url, extract(url, page.body_bytes, url, f"text/html; charset={page.encoding}")[0]))
    return pages


def build(extract: Extractor, wcxb: int, chaos: int | None, zh: int | None) -> dict[str, Language]:
    """Return the English and Chinese corpora with the extracted text of every page."""
    built = {}
    for lang in ("en", "zh"):
        print(f"{lang}: reading articles and building copies", file=sys.stderr)
        articles = list(english_articles(wcxb, chaos) if lang == "en" else chinese_articles(extract.article, zh))
        have = {article.key for article in articles}
        chinese = ("gne-chinese/", "chinese-wced-dev/")
        wanted = sorted({key for pair in FOUND_COPIES + PARTIAL_COPIES for key in pair
                         if key not in have and key.startswith(chinese) == (lang == "zh")})
        if (chaos if lang == "en" else zh) is None:  # the whole set: add the found copies' other pages
            articles += list(found_pages(wanted, lang))
        corpus = build_corpus(lang, articles)
        texts = {key: extract.article(article)[0] for key, article in corpus.articles.items()}
        for copy in corpus.copies:
            texts[copy.key] = extract(copy.key, copy.html, copy.url, copy.content_type)[0]
        sources = {copy.source for copy in corpus.copies}
        built[lang] = Language(corpus, texts, {key: agreement(corpus.articles[key], texts[key]) for key in sources})
        print(f"{lang}: {len(corpus.articles)} articles, {len(corpus.copies)} copies", file=sys.stderr)
    return built


def fingerprint_timing(texts: Iterable[str], config: DedupConfig) -> dict[str, float]:
    """Return ms per text for ``fingerprint``: the mean over all texts and the median of 2,500-3,500-character ones."""
    all_ms, typical = [], []
    for text in texts:
        start = time.perf_counter()
        fingerprint(text, config)
        elapsed = (time.perf_counter() - start) * 1000
        all_ms.append(elapsed)
        if 2500 <= len(text) <= 3500:
            typical.append(elapsed)
    return {"texts": len(all_ms), "mean_ms": statistics.fmean(all_ms) if all_ms else math.nan,
            "typical_texts": len(typical), "typical_median_ms": statistics.median(typical) if typical else math.nan}


def summary(result: Result) -> dict[str, Any]:
    """Return the counts the sweep tables show."""
    right, total, false = result.overall()
    return {"right": right, "copies": total, "false": false, "found": result.found,
            "right_agree": sum(counts["right_agree"] for counts in result.copies.values()),
            "n_agree": sum(counts["n_agree"] for counts in result.copies.values()),
            **{kind: counts["merged"] for kind, counts in result.negatives.items()}}


def _rates(rate_pages: dict[str, list[tuple[str, str]]], config: DedupConfig,
           prints: dict[str, Fingerprint] | None = None) -> dict[str, dict[str, int]]:
    rates = {}
    for name, pages in rate_pages.items():
        rate = duplicate_rate(pages, config, prints)
        matched = rate["exact"] + rate["near"]
        rates[name] = {"matched": matched, "unknown": matched - rate["known_copies"]}
    return rates


def sweep(built: dict[str, Language], base: DedupConfig,
          rate_pages: dict[str, list[tuple[str, str]]]) -> list[dict[str, Any]]:
    """Return P, R, merged pairs and duplicate counts for every shingle size, threshold and Jaccard floor."""
    rows = []
    for shingle in SHINGLES:
        shingled = replace(base, shingle=shingle)
        prints = {lang: {key: fingerprint(text, shingled) for key, text in language.texts.items()}
                  for lang, language in built.items()}
        rate_prints = {key: fingerprint(text, shingled) for pages in rate_pages.values() for key, text in pages}
        floors = MIN_JACCARDS if shingle == base.shingle else (base.min_jaccard,)
        for threshold, floor in [(t, f) for f in floors for t in THRESHOLDS]:
            config = replace(shingled, threshold=threshold, min_jaccard=floor)
            row: dict[str, Any] = {"shingle": shingle, "threshold": threshold, "min_jaccard": floor}
            row.update({lang: summary(evaluate(language, config, prints[lang])) for lang, language in built.items()})
            row.update(_rates(rate_pages, config, rate_prints))
            rows.append(row)
        print(f"sweep: shingle {shingle} done", file=sys.stderr)
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.dedup_eval", description=__doc__.split("\n\n")[0])
    parser.add_argument("--wcxb", type=int, default=250, help="WCXB-dev articles (seeded sample)")
    parser.add_argument("--chaos", type=int, default=None, help="chaos-all pages (default all)")
    parser.add_argument("--zh", type=int, default=None, help="Chinese articles (default all)")
    parser.add_argument("--skip-rates", action="store_true", help="no msv-big5, wcxb-dev and demo duplicate rates")
    parser.add_argument("--cache", type=Path, default=None, help="JSON of extracted texts, read and written")
    parser.add_argument("--out", default=str(OUT))
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.ERROR)
    config = DedupConfig()
    cache = json.loads(args.cache.read_text(encoding="utf-8")) if args.cache and args.cache.is_file() else None
    extract = Extractor(cache)
    built = build(extract, args.wcxb, args.chaos, args.zh)
    rate_pages = {} if args.skip_rates else {"msv-big5": dataset_pages(extract, "msv-big5"),
                                             "wcxb-dev": dataset_pages(extract, "wcxb-dev"),
                                             "demo": demo_pages(extract)}
    if args.cache:
        args.cache.write_text(json.dumps(extract.records, ensure_ascii=False), encoding="utf-8")
    results, spreads = {}, {}
    for lang, language in built.items():
        prints = {key: fingerprint(text, config) for key, text in language.texts.items()}
        results[lang] = evaluate(language, config, prints)
        spreads[lang] = distribution(language.corpus, prints)
    rows = sweep(built, config, rate_pages)
    min_chars_rows = []
    for min_chars in MIN_CHARS:
        variant = replace(config, min_chars=min_chars)
        row: dict[str, Any] = {"min_chars": min_chars}
        row.update({lang: summary(evaluate(language, variant)) for lang, language in built.items()})
        row.update(_rates(rate_pages, variant))
        min_chars_rows.append(row)
    rates = {name: duplicate_rate(pages, config) for name, pages in rate_pages.items()}
    texts = [text for language in built.values() for text in language.texts.values()]
    timing = {"fingerprint": fingerprint_timing(texts, config),
              "process_ms": extract.seconds * 1000 / extract.extracted if extract.extracted else math.nan}
    lines = report(__doc__, built, config, results, spreads, rows, min_chars_rows, rates, timing)
    out = Path(args.out)
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    payload = {"config": asdict(config), "results": {lang: asdict(result) for lang, result in results.items()},
               "agreement": {lang: language.agreement for lang, language in built.items()},
               "similarity": spreads, "sweep": rows, "min_chars": min_chars_rows, "rates": rates, "timing": timing}
    out.with_suffix(".json").write_text(json.dumps(payload, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
