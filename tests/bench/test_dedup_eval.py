"""bench.dedup_eval on a few real articles: their copies match them, different articles on one story do not.

Skipped with a reason when ../shared/datasets (or DATASETS_DIR) is absent.
"""

from __future__ import annotations

import pytest

from bench.dedup_eval import Extractor, Language, agreement, evaluate
from bench.dedup_report import cell, wilson
from bench.dedup_sets import KINDS, build_corpus, chinese_articles, english_articles, same_story_pairs
from evaluation.datasets import datasets_dir
from extraction.dedup import DedupConfig


def test_wilson_interval() -> None:
    share, low, high = wilson(19, 20)
    assert share == 0.95 and 0.76 < low < 0.77 and 0.99 < high < 0.992
    assert wilson(0, 50)[1] == 0.0 and cell(0, 0) == "—"


@pytest.fixture(scope="module")
def extract() -> Extractor:
    for name in ("wcxb-dev", "msv-big5", "chinese-wced-dev"):
        if not (datasets_dir() / name).is_dir():
            pytest.skip(f"dataset folder {datasets_dir() / name} is absent (set DATASETS_DIR)")
    return Extractor()


@pytest.mark.datasets
def test_small_bench_matches_copies_and_keeps_stories_apart(extract: Extractor) -> None:
    config = DedupConfig()
    for lang, articles in (("en", list(english_articles(wcxb=2, chaos=4))),
                           ("zh", list(chinese_articles(extract.article, limit=3)))):
        corpus = build_corpus(lang, articles)
        assert {copy.kind for copy in corpus.copies} == set(KINDS)
        texts = {key: extract.article(article)[0] for key, article in corpus.articles.items()}
        texts.update({copy.key: extract(copy.key, copy.html, copy.url, copy.content_type)[0] for copy in corpus.copies})
        sources = {copy.source for copy in corpus.copies}
        language = Language(corpus, texts, {key: agreement(corpus.articles[key], texts[key]) for key in sources})
        result = evaluate(language, config)
        # The same HTML under another URL is not always the same text: the page-type model reads the URL
        # (a query string), and the block decision the page type.
        assert result.copies["url"]["exact"] > 0
        for kind in KINDS:
            assert result.copies[kind]["right"] == result.copies[kind]["n"], (kind, result.errors)
        assert all(counts["merged"] == 0 for counts in result.negatives.values()), result.errors
        if lang == "en":  # the first chaos-all pages share one query: different articles on one story
            assert len(same_story_pairs(corpus)) == result.negatives["same-story"]["pairs"] == 6
