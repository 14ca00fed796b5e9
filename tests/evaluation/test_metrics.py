"""Evaluation metrics (evaluation.metrics) on tiny cases computed by hand."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from evaluation import metrics
from evaluation.metrics import (
    PRF,
    PageCounts,
    SnippetCounts,
    bow_prf,
    corpus_prf,
    distance_category,
    jieba_tokens,
    macro_prf,
    shingle_counts,
    shingles,
    snippet_counts,
    snippet_prf,
    text_distance,
    word_tokens,
)

HAS_JIEBA = importlib.util.find_spec("jieba") is not None
HAS_RAPIDFUZZ = importlib.util.find_spec("rapidfuzz") is not None
needs_jieba = pytest.mark.skipif(not HAS_JIEBA, reason="jieba is not installed (requirements.txt: jieba==0.42.1)")
needs_rapidfuzz = pytest.mark.skipif(
    not HAS_RAPIDFUZZ, reason="rapidfuzz is not installed (requirements.txt: rapidfuzz==3.14.6)"
)


def triple(counts: PageCounts) -> tuple[float, float, float]:
    return counts.tp, counts.fp, counts.fn


# --- shingle metric ---------------------------------------------------------------------------


def test_readme_example_benchmark_definition() -> None:
    # The benchmark's evaluate.py shingles each text on its own: "a b c" is one 3-shingle,
    # "a b c d" one 4-shingle; they differ, so nothing matches whichever way round.
    assert triple(shingle_counts("a b c d", "a b c")) == (0.0, 0.5, 0.5)
    assert triple(shingle_counts("a b c", "a b c d")) == (0.0, 0.5, 0.5)


def test_readme_example_shrink_to_shorter() -> None:
    # The "a b c" vs "a b c d" gives 0.5/0.5/0: prediction "a b c d", gold "a b c",
    # both cut into 3-shingles: gold {abc}, prediction {abc, bcd} -> TP 1, FP 1, FN 0.
    assert triple(shingle_counts("a b c d", "a b c", shrink_to_shorter=True)) == (0.5, 0.5, 0.0)
    # The other way round the extra shingle is missed text: 0.5/0/0.5.
    assert triple(shingle_counts("a b c", "a b c d", shrink_to_shorter=True)) == (0.5, 0.0, 0.5)
    # With >= 4 tokens on both sides the option changes nothing.
    long_pred, long_gold = "a b c d e f", "a b c d e"
    assert shingle_counts(long_pred, long_gold, shrink_to_shorter=True) == shingle_counts(long_pred, long_gold)


def test_shingles_short_and_empty() -> None:
    assert shingles(["a", "b"]) == {("a", "b"): 1}
    assert shingles([]) == {}
    assert shingles(["a", "b", "c", "d", "e"]) == {("a", "b", "c", "d"): 1, ("b", "c", "d", "e"): 1}


def test_identical_texts() -> None:
    counts = shingle_counts("The quick brown fox jumps.", "The  quick brown\nfox jumps")
    assert triple(counts) == (1.0, 0.0, 0.0)
    assert corpus_prf([counts]) == PRF(1.0, 1.0, 1.0, 1)


def test_disjoint_texts() -> None:
    counts = shingle_counts("a b c d e", "v w x y z")
    assert triple(counts) == (0.0, 0.5, 0.5)
    assert (counts.precision, counts.recall) == (0.0, 0.0)
    assert corpus_prf([counts]) == PRF(0.0, 0.0, 0.0, 1)


def test_both_empty() -> None:
    counts = shingle_counts("", "  ...  ")
    assert triple(counts) == (0.0, 0.0, 0.0)
    assert counts.pred_empty and counts.gold_empty
    assert (counts.precision, counts.recall) == (1.0, 1.0)
    assert corpus_prf([counts]) == PRF(1.0, 1.0, 1.0, 1)
    # As in the benchmark, a both-empty page enters neither corpus mean when others do.
    disjoint = shingle_counts("a b c d e", "v w x y z")
    assert corpus_prf([counts, disjoint]) == PRF(0.0, 0.0, 0.0, 2)


def test_one_empty() -> None:
    missed = shingle_counts(None, "a b c d e")
    assert triple(missed) == (0.0, 0.0, 1.0)
    assert missed.pred_empty and not missed.gold_empty
    assert (missed.precision, missed.recall) == (0.0, 0.0)
    invented = shingle_counts("a b c d e", "")
    assert triple(invented) == (0.0, 1.0, 0.0)
    assert (invented.precision, invented.recall) == (0.0, 0.0)
    # An empty prediction has no precision to average: only the identical page counts there.
    identical = shingle_counts("a b c d e", "a b c d e")
    result = corpus_prf([identical, missed])
    assert (result.precision, result.recall) == (1.0, 0.5)
    assert result.f1 == pytest.approx(2 / 3)


def test_shingles_are_a_multiset() -> None:
    # Prediction: abcd, bcda, cdab, dabc, abcd (abcd twice); gold: abcd once.
    # TP 1, FP 4, FN 0 -> 0.2/0.8/0 (as a set it would be 1/3/0 -> 0.25/0.75/0).
    counts = shingle_counts("a b c d a b c d", "a b c d")
    assert triple(counts) == pytest.approx((0.2, 0.8, 0.0))


def test_shingle_metric_keeps_case() -> None:
    assert triple(shingle_counts("The cat sat down", "the cat sat down")) == (0.0, 0.5, 0.5)
    assert word_tokens("The cat") == ["The", "cat"]


def test_corpus_f1_is_not_mean_of_page_f1() -> None:
    # Page A: identical, P = R = F1 = 1.
    page_a = shingle_counts("a b c d e", "a b c d e")
    # Page B: prediction abcd bcde cdef defg, gold abcd: TP 1, FP 3, FN 0 -> P 0.25, R 1, F1 0.4.
    page_b = shingle_counts("a b c d e f g", "a b c d")
    assert triple(page_b) == (0.25, 0.75, 0.0)
    assert (page_b.precision, page_b.recall) == (0.25, 1.0)
    result = corpus_prf([page_a, page_b])
    # P = (1 + 0.25) / 2 = 0.625, R = 1, F1 = 2 * 0.625 / 1.625 = 10/13 ~ 0.769,
    # while the mean of per-page F1 would be (1 + 0.4) / 2 = 0.7.
    assert (result.precision, result.recall, result.pages) == (0.625, 1.0, 2)
    assert result.f1 == pytest.approx(10 / 13)
    assert result.f1 != pytest.approx(0.7)


def test_corpus_prf_needs_pages() -> None:
    with pytest.raises(ValueError):
        corpus_prf([])


# --- jieba variant ----------------------------------------------------------------------------


@needs_jieba
def test_jieba_variant_shingles() -> None:
    gold = "我爱北京天安门。天安门上太阳升。"
    pred = "我爱北京天安门。"
    # \w+ gives whole clauses: gold [clause1, clause2] (one 2-shingle), prediction [clause1]: no match.
    assert triple(shingle_counts(pred, gold)) == (0.0, 0.5, 0.5)
    # jieba: gold has 7 words (4 shingles), the prediction's 4 words are gold's first shingle.
    assert triple(shingle_counts(pred, gold, jieba_tokens)) == (0.25, 0.0, 0.75)


def test_import_is_lazy() -> None:
    code = "import sys, evaluation.metrics; assert 'jieba' not in sys.modules and 'rapidfuzz' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True, cwd=Path(__file__).resolve().parents[2])


# --- bag-of-words F1 --------------------------------------------------------------------------


def test_bow_is_case_insensitive_multiset() -> None:
    assert bow_prf("The cat sat down", "the cat sat down") == PRF(1.0, 1.0, 1.0, 1)
    # Prediction {the: 2, cat: 1}, gold {the: 1, cat: 1, sat: 1}: overlap 2 -> P = R = F1 = 2/3.
    result = bow_prf("the cat the", "The cat sat")
    assert (result.precision, result.recall, result.f1) == pytest.approx((2 / 3, 2 / 3, 2 / 3))


def test_bow_empty_cases() -> None:
    assert bow_prf("", None) == PRF(1.0, 1.0, 1.0, 1)
    assert bow_prf("", "words here") == PRF(0.0, 0.0, 0.0, 1)
    assert bow_prf("words here", "!!") == PRF(0.0, 0.0, 0.0, 1)


def test_macro_prf_is_mean_of_page_scores() -> None:
    # Page 1: identical (1/1/1); page 2: prediction "a", gold "a b": P 1, R 0.5, F1 2/3.
    result = macro_prf([bow_prf("a b", "a b"), bow_prf("a", "a b")])
    assert (result.precision, result.recall, result.pages) == (1.0, 0.75, 2)
    # Mean of per-page F1 (1 + 2/3) / 2 = 5/6, not the harmonic mean of the means (6/7).
    assert result.f1 == pytest.approx(5 / 6)
    with pytest.raises(ValueError):
        macro_prf([])


# --- snippet metric ---------------------------------------------------------------------------

OUTPUT = "Hello world.\nThis is  the body."
WITH = ["Hello world", "This is the body", "missing"]
WITHOUT = ["the body", "footer"]


def test_snippet_counts_plain_substring() -> None:
    # "Hello world" found (TP); "This is the body" not (the output has two spaces) and "missing"
    # not (FN 2); the without-snippet "the body" is there (FP), "footer" is not (TN).
    assert snippet_counts(OUTPUT, WITH, WITHOUT) == SnippetCounts(tp=1, fn=2, fp=1, tn=1)


def test_snippet_counts_normalized_whitespace() -> None:
    assert snippet_counts(OUTPUT, WITH, WITHOUT, normalize_whitespace=True) == SnippetCounts(tp=2, fn=1, fp=1, tn=1)


def test_snippet_counts_empty_output_finds_nothing() -> None:
    assert snippet_counts(None, ["x"], ["y"]) == SnippetCounts(tp=0, fn=1, fp=0, tn=1)
    assert snippet_counts("", ["x", "z"], []) == SnippetCounts(tp=0, fn=2, fp=0, tn=0)


def test_snippet_prf_is_micro() -> None:
    pages = [snippet_counts(OUTPUT, WITH, WITHOUT), snippet_counts(None, ["x"], ["y"])]
    scores = snippet_prf(pages)
    # Summed: TP 1, FN 3, FP 1, TN 2 -> P 1/2, R 1/4, F1 1/3, accuracy 3/7.
    assert scores.counts == SnippetCounts(tp=1, fn=3, fp=1, tn=2)
    assert (scores.precision, scores.recall) == (0.5, 0.25)
    assert scores.f1 == pytest.approx(1 / 3)
    assert scores.accuracy == pytest.approx(3 / 7)
    with pytest.raises(ValueError):
        snippet_prf([])


# --- paper 000's distance ---------------------------------------------------------------------


@needs_rapidfuzz
def test_text_distance_ignores_whitespace() -> None:
    assert text_distance("新闻 正文\n内容", "新闻正文内容") == 0.0
    assert text_distance("abc", "axc") == 1.0
    assert text_distance(None, "abc") == 3.0


@needs_rapidfuzz
@pytest.mark.parametrize(
    ("missing", "category"),
    [(0, "complete"), (9, "complete"), (10, "correct"), (29, "correct"), (30, "wrong"), (31, "wrong")],
)
def test_distance_categories_around_thresholds(missing: int, category: str) -> None:
    gold = "这是一篇新闻的正文内容" * 10  # 110 characters
    distance = text_distance(gold[: len(gold) - missing], gold)
    assert distance == missing
    assert distance_category(distance) == category


def test_distance_category_fractional() -> None:
    assert distance_category(9.99) == "complete"
    assert distance_category(29.5) == "correct"
    assert distance_category(metrics.CORRECT_DISTANCE) == "wrong"
