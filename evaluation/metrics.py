"""Evaluation metrics for main-text extraction: shingle P/R/F1, bag-of-words F1, snippets, distance.

Four published metrics, each reproduced from its reference implementation so that figures are
comparable with the published ones:

- the article-body shingle metric of the Scrapinghub/Zyte article-extraction-benchmark
  (`evaluate.py`), with a jieba-token variant for Chinese;
- WCXB's word-level bag-of-words F1 (the `word_f1` of the WCXB README), macro-averaged;
- trafilatura's snippet metric (`evaluate_result` / `calculate_scores` of its comparison script);
- the text-distance categories of paper 000 (Qin et al., I-AWCE), "complete"/"correct"/"wrong".

jieba and rapidfuzz are imported on first use only, so importing this module stays cheap.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

# The tokenizers of the metrics (``word_tokens``: the references' \w+ runs; ``jieba_tokens``: the
# Chinese variant) are the runtime library's, shared with the block features; re-exported here.
from extraction.dom.tokens import jieba_tokens as jieba_tokens
from extraction.dom.tokens import word_tokens

# Shingle length: string_shingle_matching(ngram_n=4) in the article-extraction-benchmark.
SHINGLE_SIZE = 4
# Paper 000 (Qin et al.), section 3.2.2: "漢明距離小於10為完全提取正確", "小於30為提取正確".
COMPLETE_DISTANCE = 10
CORRECT_DISTANCE = 30

Tokenizer = Callable[[str], list[str]]
DistanceCategory = Literal["complete", "correct", "wrong"]


# --- article-body shingle metric --------------------------------------------------------------


@dataclass(frozen=True)
class PageCounts:
    """Shingle TP/FP/FN of one page, scaled to sum to 1 (all 0 when neither text has a token)."""

    tp: float
    fp: float
    fn: float
    pred_empty: bool  # the prediction has no token
    gold_empty: bool  # the gold text has no token

    @property
    def precision(self) -> float:
        """Return TP/(TP+FP); 1 when FP=FN=0 (both empty included), 0 when TP=FP=0."""
        if self.fp == self.fn == 0:
            return 1.0
        if self.tp == self.fp == 0:
            return 0.0
        return self.tp / (self.tp + self.fp)

    @property
    def recall(self) -> float:
        """Return TP/(TP+FN); 1 when FP=FN=0 (both empty included), 0 when TP=FN=0."""
        if self.fp == self.fn == 0:
            return 1.0
        if self.tp == self.fn == 0:
            return 0.0
        return self.tp / (self.tp + self.fn)


@dataclass(frozen=True)
class PRF:
    """Precision, recall and F1 over a number of pages."""

    precision: float
    recall: float
    f1: float
    pages: int


def _f1(precision: float, recall: float) -> float:
    """Return the harmonic mean of precision and recall, 0 when both are 0."""
    return 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0


def shingles(tokens: Sequence[str], n: int = SHINGLE_SIZE) -> Counter[tuple[str, ...]]:
    """Return the multiset of n-token windows; 1..n-1 tokens make one shorter shingle, 0 none."""
    return Counter(tuple(tokens[i : i + n]) for i in range(max(1, len(tokens) - n + 1)) if tokens)


def shingle_counts(
    pred: str | None,
    gold: str | None,
    tokenizer: Tokenizer = word_tokens,
    *,
    n: int = SHINGLE_SIZE,
    shrink_to_shorter: bool = False,
) -> PageCounts:
    """Return the page's shingle TP/FP/FN, scaled to sum to 1 (all 0 when both texts are empty).

    Default: exactly the benchmark's `string_shingle_matching`: each text's tokens are cut into
    n-token windows independently, a text of 1..n-1 tokens being one shorter shingle. So
    "a b c" (one 3-shingle) vs "a b c d" (one 4-shingle) share nothing: TP/FP/FN 0/0.5/0.5.

    `shrink_to_shorter=True` (not the benchmark's): the window is min(n, tokens of the shorter
    non-empty text) for both texts; identical to the default when both have >= n tokens. Then
    prediction "a b c d" vs gold "a b c" gives gold {abc}, prediction {abc, bcd}: 0.5/0.5/0.
    """
    pred_tokens, gold_tokens = tokenizer(pred or ""), tokenizer(gold or "")
    if shrink_to_shorter and pred_tokens and gold_tokens:
        n = min(n, len(pred_tokens), len(gold_tokens))
    pred_sh, gold_sh = shingles(pred_tokens, n), shingles(gold_tokens, n)
    tp = float(sum((pred_sh & gold_sh).values()))
    fp = float(sum((pred_sh - gold_sh).values()))
    fn = float(sum((gold_sh - pred_sh).values()))
    total = tp + fp + fn
    if total > 0:
        tp, fp, fn = tp / total, fp / total, fn / total
    return PageCounts(tp, fp, fn, pred_empty=not pred_tokens, gold_empty=not gold_tokens)


def corpus_prf(pages: Iterable[PageCounts]) -> PRF:
    """Return the benchmark's corpus precision, recall and F1.

    Precision is the mean of per-page precision over pages with TP+FP>0, recall the mean of
    per-page recall over pages with TP+FN>0 (a page with FP=FN=0 scores 1); F1 is the harmonic
    mean of those two means, not the mean of per-page F1. A both-empty page (0/0/0) enters
    neither mean, as in the benchmark. Where no page enters a mean (the benchmark would crash),
    that mean is taken over all pages' per-page scores instead (1 for both-empty pages, 0 for an
    empty prediction). Raises ValueError on an empty corpus.
    """
    page_list = list(pages)
    if not page_list:
        raise ValueError("corpus_prf needs at least one page")
    precisions = [p.precision for p in page_list if p.tp + p.fp > 0] or [p.precision for p in page_list]
    recalls = [p.recall for p in page_list if p.tp + p.fn > 0] or [p.recall for p in page_list]
    precision = sum(precisions) / len(precisions)
    recall = sum(recalls) / len(recalls)
    return PRF(precision, recall, _f1(precision, recall), len(page_list))


# --- WCXB bag-of-words F1 ---------------------------------------------------------------------


def bow_prf(pred: str | None, gold: str | None) -> PRF:
    """Return one page's bag-of-words precision, recall and F1 (pages=1).

    Tokens are the `\\w+` matches of the lower-cased text, counted as a multiset; overlap is the
    sum of min counts. Both texts without tokens: 1/1/1; exactly one without tokens: 0/0/0
    (WCXB's `word_f1` gives the same F1).
    """
    pred_bag = Counter(word_tokens((pred or "").lower()))
    gold_bag = Counter(word_tokens((gold or "").lower()))
    if not pred_bag or not gold_bag:
        score = 1.0 if not pred_bag and not gold_bag else 0.0
        return PRF(score, score, score, 1)
    overlap = sum((pred_bag & gold_bag).values())
    precision = overlap / sum(pred_bag.values())
    recall = overlap / sum(gold_bag.values())
    return PRF(precision, recall, _f1(precision, recall), 1)


def macro_prf(pages: Iterable[PRF]) -> PRF:
    """Return the macro means over pages of precision, recall and F1 (F1 = mean of per-page F1).

    `pages` of the result is the number of pages averaged. Raises ValueError when there are none.
    """
    page_list = list(pages)
    if not page_list:
        raise ValueError("macro_prf needs at least one page")
    count = len(page_list)
    return PRF(
        sum(p.precision for p in page_list) / count,
        sum(p.recall for p in page_list) / count,
        sum(p.f1 for p in page_list) / count,
        count,
    )


# --- trafilatura snippet metric ---------------------------------------------------------------


@dataclass(frozen=True)
class SnippetCounts:
    """Snippet confusion counts of one page (or summed over pages)."""

    tp: int  # with-snippets found
    fn: int  # with-snippets not found
    fp: int  # without-snippets found
    tn: int  # without-snippets not found


@dataclass(frozen=True)
class SnippetScores:
    """Micro-averaged snippet precision, recall, F1 and accuracy, with the summed counts."""

    precision: float
    recall: float
    f1: float
    accuracy: float
    counts: SnippetCounts


def _squash(text: str) -> str:
    """Return the text with every run of whitespace made one space, and stripped."""
    return " ".join(text.split())


def snippet_counts(
    output: str | None,
    with_snippets: Iterable[str],
    without_snippets: Iterable[str],
    *,
    normalize_whitespace: bool = False,
) -> SnippetCounts:
    """Return one page's snippet counts.

    A snippet is "found" when it is a substring of the output: plain `in` by default, as in
    trafilatura's evaluation (comparable with its published figures); with
    `normalize_whitespace=True` both output and snippet first have whitespace runs collapsed to
    one space and are stripped. An empty or None output finds nothing.
    """
    with_list, without_list = list(with_snippets), list(without_snippets)
    if not output:
        return SnippetCounts(tp=0, fn=len(with_list), fp=0, tn=len(without_list))
    prep: Callable[[str], str] = _squash if normalize_whitespace else str
    text = prep(output)
    found_with = sum(prep(s) in text for s in with_list)
    found_without = sum(prep(s) in text for s in without_list)
    return SnippetCounts(
        tp=found_with, fn=len(with_list) - found_with, fp=found_without, tn=len(without_list) - found_without
    )


def snippet_prf(pages: Iterable[SnippetCounts]) -> SnippetScores:
    """Return micro precision TP/(TP+FP), recall TP/(TP+FN), their F1 and accuracy
    (TP+TN)/all over the summed counts of all pages; a ratio with a 0 denominator is 0.

    Raises ValueError when the pages hold no snippet at all.
    """
    tp = fn = fp = tn = 0
    for page in pages:
        tp, fn, fp, tn = tp + page.tp, fn + page.fn, fp + page.fp, tn + page.tn
    total = tp + fn + fp + tn
    if total == 0:
        raise ValueError("snippet_prf needs at least one snippet")
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    return SnippetScores(precision, recall, _f1(precision, recall), (tp + tn) / total, SnippetCounts(tp, fn, fp, tn))


# --- paper 000's text distance ----------------------------------------------------------------


def text_distance(pred: str | None, gold: str | None) -> float:
    """Return the character edit distance between extracted and gold text, whitespace ignored.

    Paper 000 (section 3.2.2) only says it compares the extracted with the hand-extracted text
    by "漢明距離" (Hamming distance) and calls < 10 complete and < 30 correct; no formula
    survives in the text copy. Read here as: all whitespace removed from both texts (layout
    differs between extractor and annotator, Chinese needs no spaces), then the Levenshtein
    distance (insertions, deletions, substitutions) over characters, as an absolute count, not
    normalised (the paper writes 10 and 30 bare, while it writes percentages with %). Plain
    Hamming distance is undefined for texts of different length, and one missing character
    early on would make every later position differ; edit distance is its usual generalisation.
    """
    from rapidfuzz.distance import Levenshtein  # lazy: only distance users need rapidfuzz

    return float(Levenshtein.distance("".join((pred or "").split()), "".join((gold or "").split())))


def distance_category(distance: float) -> DistanceCategory:
    """Return "complete" when distance < 10, "correct" when < 30, else "wrong" (paper 000)."""
    if distance < COMPLETE_DISTANCE:
        return "complete"
    if distance < CORRECT_DISTANCE:
        return "correct"
    return "wrong"
