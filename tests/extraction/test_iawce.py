"""I-AWCE article (algorithm 1) and list (algorithm 2) extraction, paper 000."""

from __future__ import annotations

from extraction.dom.html import parse_html
from extraction.dom.stats import compute_stats
from extraction.iawce import ARTICLE_NAME, LIST_NAME, LIST_TOP_N, article_node, list_items
from extraction.methods import ListEntry, extract, method_names


def _body_stats(page):
    return compute_stats(parse_html(page).find("body"))


def _chosen_id(page, **kwargs):
    stats = _body_stats(page)
    return stats.elements[article_node(stats, **kwargs)].get("id")


def test_decisive_gap_returns_the_longest_child():
    # Lengths [30, 500, 20]: gap 470 > std (221) and > 100.
    page = f"<body><div id='h'>{'h' * 30}</div><div id='a'>{'a' * 500}</div><div id='f'>{'f' * 20}</div></body>"
    assert _chosen_id(page) == "a"
    # The pseudo-code's literal lines 13-15: the earlier of the two longest (header, 30 chars).
    assert _chosen_id(page, earlier=True) == "h"


def test_small_gap_above_std_returns_the_parent():
    # Paragraphs [120, 100, 110]: gap 10 > std 8.2 but < 100, so the container is the text.
    paras = "".join(f"<p>{c * n}</p>" for c, n in (("x", 120), ("y", 100), ("z", 110)))
    page = f"<body><div id='c'>{paras}</div></body>"
    assert _chosen_id(page) == "c"  # body has one child: descended into it first
    assert extract(page, ARTICLE_NAME).text.splitlines() == ["x" * 120, "y" * 100, "z" * 110]


def test_gap_within_std_descends_into_the_longest():
    # Body children [300, 290, 0, 0]: gap 10 <= std 147.5 -> descend into the 300 one, whose
    # children [250, 50] have gap 200 > std 100 and > 100 -> the 250-char paragraph.
    page = (
        f"<body><div id='m1'><p id='p1'>{'a' * 250}</p><p>{'b' * 50}</p></div>"
        f"<div id='m2'>{'c' * 290}</div><div></div><div></div></body>"
    )
    assert _chosen_id(page) == "p1"


def test_leaf_returns_its_parent_text():
    page = "<body><div id='d'><p>only text</p>tail</div></body>"
    assert _chosen_id(page) == "d"
    assert extract(page, ARTICLE_NAME).text == "only text\ntail"


def test_article_noise_removed_and_empty_page():
    page = "<html><body><nav><a href='/'>home</a></nav><p>body text</p></body></html>"
    result = extract(page, ARTICLE_NAME)
    assert result.text == "body text" and result.page_type == "article"
    assert extract("", ARTICLE_NAME).text == ""


LIST_PAGE = (
    "<html><body><div class='menu'>" + "".join(f"<a href='/s{i}'>Sec{i}</a>" for i in range(5)) + "</div>"
    "<ul class='news'>"
    + "".join(
        f"<li class='item'><a href='/n/{i}'>Headline number {i} about something</a>"
        f"<span class='date'>2024-01-0{i}</span></li>"
        for i in range(1, 8)
    )
    + "</ul></body></html>"
)


def test_list_picks_the_longest_mean_key_with_absolute_links():
    result = extract(LIST_PAGE, LIST_NAME, url="https://example.org/news/")
    assert result.page_type == "list"
    assert result.entries[0] == ListEntry("Headline number 1 about something", "https://example.org/n/1")
    assert len(result.entries) == 7
    assert result.text.splitlines()[-1] == "Headline number 7 about something"
    # Without a page URL the href stays as written.
    assert extract(LIST_PAGE, LIST_NAME).entries[0].url == "/n/1"


def test_list_link_from_enclosing_anchor_and_no_link():
    page = (
        "<body>" + "".join(f"<a href='/x{i}'><span class='t'>title {i} long enough</span></a>" for i in range(3))
        + "".join(f"<b class='t'>x{i}</b>" for i in range(3)) + "</body>"
    )
    entries = extract(page, LIST_NAME).entries
    assert [e.url for e in entries] == ["/x0", "/x1", "/x2"]
    page = "<body>" + "".join(f"<p class='q'>plain item {i}</p>" for i in range(3)) + "</body>"
    assert [e.url for e in extract(page, LIST_NAME).entries] == [None, None, None]


def test_only_top_n_keys_by_r_compete_on_mean_length():
    # 16 keys with O=3, L=60 (R=180) outrank one key with O=1, L=150 (R=150), which would win
    # on mean text length (150 vs 20) were it among the top n = 15.
    assert LIST_TOP_N == 15
    groups = "".join(f"<i class='k{k}'>{'x' * 20}</i>" * 3 for k in range(16))
    page = f"<body><p class='lonely'>{'y' * 150}</p>{groups}</body>"
    stats = _body_stats(page)
    chosen = {stats.cls[i] for i in list_items(stats)}
    assert chosen == {"k0"}  # all top keys tie on TL: the first-ranked wins
    # With fewer competing keys the lonely long paragraph is in the top n and wins on TL.
    groups = "".join(f"<i class='k{k}'>{'x' * 20}</i>" * 3 for k in range(14))
    stats = _body_stats(f"<body><p class='lonely'>{'y' * 150}</p>{groups}</body>")
    assert {stats.cls[i] for i in list_items(stats)} == {"lonely"}


def test_list_empty_page_and_registration():
    assert extract("", LIST_NAME).entries == ()
    assert {ARTICLE_NAME, LIST_NAME, "cetd-tpc"} <= set(method_names())
