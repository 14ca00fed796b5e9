"""Content labels from gold text (evaluation.labels): alignment, thresholds, hand-labelled pages."""

from __future__ import annotations

import gzip
import random
from collections.abc import Sequence
from functools import cache

import pytest

from evaluation.datasets import Page, datasets_dir, iter_pages
from evaluation.datasets.textutil import html_to_text
from evaluation.labels import (
    CONTENT_SHARE,
    align_tokens,
    l3s_block_labels,
    l3s_gold_text,
    label_texts,
    text_shares,
    tokens_for_alignment,
)

# Random sequences compared with the textbook LCS table.
RANDOM_CASES = 500
RANDOM_SEED = 20240611
# Real pages labelled per dataset check.
SAMPLE_PAGES = 10
# On a real page nearly all gold tokens should be matched to some block (gold text that is not
# on the page at all, e.g. edited by the annotators, is the rest) ...
MIN_GOLD_MATCHED = 0.9
# ... on most pages: the page text comes from html_to_text, which loses a few pages to decoding
# or parsing (chinese-wced-dev b70f455d decoded as cp1252, l3s-gn1 51600d8d has no body).
MIN_GOOD_PAGES = 0.8


def words(text: str) -> list[str]:
    """Return the space-separated words of ``text`` (token lists written compactly)."""
    return text.split()


def lcs_length(a: Sequence[str], b: Sequence[str]) -> int:
    """Return the LCS length by dynamic programming (the reference for align_tokens)."""
    table = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i, x in enumerate(a):
        for j, y in enumerate(b):
            table[i + 1][j + 1] = table[i][j] + 1 if x == y else max(table[i][j + 1], table[i + 1][j])
    return table[len(a)][len(b)]


def is_subsequence(part: Sequence[str], whole: Sequence[str]) -> bool:
    """Return True when ``part`` occurs in ``whole`` in order (gaps allowed)."""
    remaining = iter(whole)
    return all(any(token == other for other in remaining) for token in part)


def matched_tokens(page: Sequence[str], gold: Sequence[str]) -> list[str]:
    """Return the page tokens that align_tokens matches, in order."""
    return [token for token, hit in zip(page, align_tokens(page, gold), strict=True) if hit]


# --- tokens -----------------------------------------------------------------------------------


def test_tokens_lower_cased_words() -> None:
    assert tokens_for_alignment("Hello, World! it's 2024 snake_case") == words("hello world it s 2024 snake_case")
    assert tokens_for_alignment(None) == []
    assert tokens_for_alignment(" -- ") == []


def test_tokens_cjk_one_per_character() -> None:
    # `\w+` alone would give one token per clause: ["暴雨袭击沿海城市", "居民撤离"].
    assert tokens_for_alignment("暴雨袭击，居民撤离。") == ["暴", "雨", "袭", "击", "居", "民", "撤", "离"]
    assert tokens_for_alignment("iPhone15手机") == ["iphone15", "手", "机"]
    assert tokens_for_alignment("カタカナ") == ["カ", "タ", "カ", "ナ"]
    # Hangul is written with spaces between words: words stay whole.
    assert tokens_for_alignment("한국어 단어") == ["한국어", "단어"]


# --- alignment --------------------------------------------------------------------------------


def test_align_tokens_is_an_lcs_on_small_examples() -> None:
    page = words("x home news a b c news d")
    gold = words("news a b c d")
    assert align_tokens(page, gold) == [False, False, True, True, True, True, False, True]
    assert align_tokens([], gold) == []
    assert align_tokens(page, []) == [False] * len(page)
    assert align_tokens(["a", "b"], ["b", "a"]).count(True) == 1


def test_align_tokens_matches_random_lcs_lengths() -> None:
    rng = random.Random(RANDOM_SEED)
    for _ in range(RANDOM_CASES):
        page = [rng.choice("abcd") for _ in range(rng.randint(0, 14))]
        gold = [rng.choice("abce") for _ in range(rng.randint(0, 14))]
        matched = matched_tokens(page, gold)
        assert is_subsequence(matched, gold), (page, gold)
        assert len(matched) == lcs_length(page, gold), (page, gold)


def test_align_tokens_repeated_words_use_each_gold_token_once() -> None:
    page = words("the the the cat")
    gold = words("the cat")
    # One "the" only, and the one next to "cat" (contiguous runs are preferred among ties).
    assert align_tokens(page, gold) == [False, False, True, True]


def test_align_tokens_prefers_contiguous_runs_among_ties() -> None:
    # A breadcrumb word and a teaser repeat the start of the gold; the copies that continue
    # the rest of the alignment win, at the same LCS length.
    page = words("world > world leaders meet")
    assert align_tokens(page, words("world leaders meet")) == [False, False, True, True, True]
    teaser = words("rain floods town")
    body = words("rain floods town as river bursts")
    assert align_tokens(teaser + body, body) == [False] * 3 + [True] * 6


def test_align_tokens_cjk() -> None:
    page = tokens_for_alignment("首页新闻 暴雨袭击沿海城市")
    gold = tokens_for_alignment("暴雨袭击城市")
    assert matched_tokens(page, gold) == list("暴雨袭击城市")
    assert align_tokens(page, gold)[:4] == [False] * 4


# --- thresholds -------------------------------------------------------------------------------


def test_share_at_the_threshold_is_content() -> None:
    gold = "alpha beta"
    assert text_shares(["alpha beta gamma delta"], gold) == [0.5]
    assert CONTENT_SHARE == 0.5
    assert label_texts(["alpha beta gamma delta"], gold) == [True]
    assert label_texts(["alpha beta gamma delta"], gold, threshold=0.51) == [False]


def test_share_either_side_of_the_threshold() -> None:
    gold = "one two three four"
    below = "one two three x y z w"  # 3/7
    above = "one two three four x y z"  # 4/7
    assert text_shares([below], gold) == [pytest.approx(3 / 7)]
    assert label_texts([below], gold) == [False]
    assert label_texts([above], gold) == [True]


def test_texts_without_tokens_are_noise() -> None:
    assert text_shares(["", "!!!", "alpha"], "alpha") == [0.0, 0.0, 1.0]
    assert label_texts(["", "!!!", "alpha"], "alpha") == [False, False, True]
    assert label_texts(["alpha", "beta"], None) == [False, False]
    assert label_texts([], "alpha") == []


# --- hand-labelled pages (labels decided by hand, then asserted) ------------------------------


def test_hand_labelled_news_page() -> None:
    gold = (
        "Storm floods coastal towns\n"
        "Heavy rain flooded three coastal towns on Monday, forcing hundreds of residents to leave their homes.\n"
        "The weather service expects more rain this week."
    )
    blocks = [
        ("Home | News | Weather | Sport", False),  # nav; "weather" is in the gold, but later
        ("Storm floods coastal towns", True),
        ("", False),
        ("Heavy rain flooded three coastal towns on Monday, forcing hundreds of residents to leave their homes.", True),
        ("Advertisement", False),
        ("The weather service expects more rain this week.", True),
        ("Read more: heavy rain flooded three towns last year as well, our archive shows", False),  # partial repeat
        ("© 2024 News Corp. All rights reserved.", False),
    ]
    assert label_texts([text for text, _ in blocks], gold) == [label for _, label in blocks]


def test_hand_labelled_breadcrumb_before_title() -> None:
    # The breadcrumb's "climate" could take the gold's first token (a tie for the LCS, and
    # then half of the breadcrumb would be matched); the title's copy continues the alignment.
    gold = "Climate report warns of faster warming\nScientists say the climate is warming faster than expected."
    blocks = [
        ("Science > Climate", False),
        ("Climate report warns of faster warming", True),
        ("Scientists say the climate is warming faster than expected.", True),
        ("Tags: climate, science, warming", False),  # every word is in the gold, all used already
    ]
    texts = [text for text, _ in blocks]
    assert label_texts(texts, gold) == [label for _, label in blocks]
    assert text_shares(texts, gold)[0] == 0.0


def test_hand_labelled_teaser_repeating_the_first_sentence() -> None:
    gold = "Heavy rain flooded three coastal towns on Monday. Residents were moved to schools."
    blocks = [
        ("Top story: heavy rain flooded three coastal towns", False),  # the gold has the sentence once
        ("Heavy rain flooded three coastal towns on Monday. Residents were moved to schools.", True),
    ]
    assert label_texts([text for text, _ in blocks], gold) == [label for _, label in blocks]


def test_hand_labelled_chinese_page() -> None:
    gold = (
        "暴雨袭击沿海城市\n"
        "周一的暴雨导致三座沿海城市发生洪水，数百名居民被迫撤离。气象部门在新闻发布会上表示本周还将有降雨。"
    )
    blocks = [
        ("首页 新闻 体育", False),  # "新闻" is in the gold, in the last sentence
        ("暴雨袭击沿海城市", True),
        ("周一的暴雨导致三座沿海城市发生洪水，数百名居民被迫撤离。", True),
        # Differs from the gold's clause by two characters: with `\w+` clause tokens it would match nothing.
        ("气象部门昨日在新闻发布会上表示本周还将有降雨。", True),
        ("相关新闻：暴雨", False),
        ("版权所有 © 2024", False),
        ("", False),
    ]
    assert label_texts([text for text, _ in blocks], gold) == [label for _, label in blocks]


# --- L3S-GN1 ----------------------------------------------------------------------------------

ANNOTATED = b"""<html><body>
<div><span class="x-nc-sel0">Menu</span></div>
<h1><span class="x-nc-sel1">Storm floods towns</span></h1>
<p><span class="x-nc-sel2">Heavy rain flooded three towns.</span></p>
<p><span class="x-nc-sel3">Photo: the flooded high street.</span></p>
<div><span class="x-nc-sel4">Related: more storms</span></div>
<div><span class="x-nc-sel5">Great article!</span></div>
</body></html>"""


def test_l3s_gold_text_keeps_labels_one_to_three_in_order() -> None:
    expected = "Storm floods towns\nHeavy rain flooded three towns.\nPhoto: the flooded high street."
    assert l3s_gold_text(ANNOTATED) == expected


def test_l3s_block_labels_label_the_original_page() -> None:
    blocks = ["Menu", "Storm floods towns", "Heavy rain flooded three towns.", "Photo: the flooded high street."]
    blocks += ["Related: more storms", "Great article!"]
    assert l3s_block_labels(blocks, ANNOTATED) == [False, True, True, True, False, False]


# --- real pages ---------------------------------------------------------------------------------


@cache
def _sample(name: str) -> tuple[Page, ...]:
    root = datasets_dir()
    if not (root / name).is_dir():
        pytest.skip(f"dataset folder {root / name} is absent (set DATASETS_DIR)")
    pages = [page for page in iter_pages(name) if page.gold_text]
    return tuple(pages[:: max(1, len(pages) // SAMPLE_PAGES)][:SAMPLE_PAGES])


@pytest.mark.datasets
@pytest.mark.parametrize("name", ["cleaneval", "wcxb-dev", "chinese-wced-dev", "l3s-gn1"])
def test_real_pages_match_most_gold_tokens(name: str) -> None:
    pages = _sample(name)
    good = 0
    for page in pages:
        blocks = html_to_text(page.html_bytes()).split("\n")
        page_tokens = [token for block in blocks for token in tokens_for_alignment(block)]
        gold_tokens = tokens_for_alignment(page.gold_text)
        if sum(align_tokens(page_tokens, gold_tokens)) < MIN_GOLD_MATCHED * len(gold_tokens):
            continue
        good += 1
        labels = label_texts(blocks, page.gold_text)
        assert any(labels), page.page_id
        assert not all(labels), page.page_id
    assert good >= MIN_GOOD_PAGES * len(pages)


@pytest.mark.datasets
def test_l3s_gold_text_equals_the_reader_gold() -> None:
    for page in _sample("l3s-gn1")[:3]:
        annotated = gzip.decompress(page.extra["annotated_path"].read_bytes())
        assert l3s_gold_text(annotated) == page.gold_text
