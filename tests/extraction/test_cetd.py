"""CETD-TPC (paper 001) on hand-made pages: TBD, TPR threshold, CTPC and the TDTPC choice."""

from __future__ import annotations

import pytest

from extraction.cetd import NAME, content_block, path_ratios, score, threshold
from extraction.dom.html import parse_html
from extraction.dom.stats import compute_stats
from extraction.methods import extract, method_names

NAV = "<ul>" + "".join(f"<li><a href='/{i}'>{'n' * 10}</a></li>" for i in range(5)) + "</ul>"


def _index(stats, element_id):
    return next(i for i, e in enumerate(stats.elements) if e.get("id") == element_id)


def test_tbd_follows_equation_1():
    stats = compute_stats(parse_html("<body><div id='d'><p>abc</p>xy<a href='/'>link</a></div></body>"))
    scores = score(stats)
    # <p>: (3-0+1)/(1-0+1) = 2; text "xy": (2+1)/1 = 3; <a>: (4-4+1)/(1-1+1) = 1.
    assert scores.tbd[_index(stats, "d")] == pytest.approx(6.0)


def test_content_block_beats_link_heavy_nav_with_more_text():
    links = "".join(f"<li><a href='/{i}'>navigation entry {i:02d}</a></li>" for i in range(30))
    page = (
        f"<html><body><ul id='nav'>{links}</ul><div id='art'><p>{'word ' * 30}</p>"
        f"<p>{'text ' * 25}</p></div></body></html>"
    )
    root = parse_html(page)
    stats = compute_stats(root.find("body"))
    assert stats.cn[_index(stats, "nav")] > stats.cn[_index(stats, "art")]
    assert content_block(root).get("id") == "art"
    text = extract(page, NAME).text
    assert text.splitlines() == [("word " * 30).strip(), ("text " * 25).strip()]


def test_tpr_threshold_separates_paths():
    page = f"<body>{NAV}<div><p>{'a' * 200}</p><p>{'b' * 100}</p></div></body>"
    stats = compute_stats(parse_html(page))
    tpr = path_ratios(stats)
    by_name = {stats.path_str(p): v for p, v in tpr.items()}
    assert by_name == {"html/body/ul/li/a": 10.0, "html/body/div/p": 150.0}
    tau = threshold(stats, tpr)
    # Text nodes: five with TPR 10, two with 150; mean 50, std = sqrt((5*40^2 + 2*100^2)/7) = 63.2.
    assert tau == pytest.approx(63.2456, abs=1e-3)
    names = {stats.path_str(p) for p in score(stats).content_paths}
    assert names == {"html/body/div/p"}  # 150 > tau > 10


def test_one_path_page_makes_every_text_node_content():
    stats = compute_stats(parse_html("<body><p>short</p><p>a much longer paragraph</p></body>"))
    scores = score(stats)
    assert scores.tau == 0.0
    assert {stats.path_str(p) for p in scores.content_paths} == {"html/body/p"}
    assert scores.ctpc[0] == 1.0


def test_tdtpc_picks_whole_article_where_tbd_picks_a_sub_block():
    # Like paper 001's Hadoop page (figures 3-6): the article has a sub-section whose dense
    # paragraphs give it the largest TBD, but the article's own paragraphs share the content
    # paths, so CTPC of the sub-section is only 6/8 and TDTPC prefers the whole article.
    sub = "".join(f"<p>{'s' * 100}</p>" for _ in range(6))
    page = (
        f"<html><body>{NAV}<div id='art'><h1>{'t' * 10}</h1><p>{'a' * 200}</p>"
        f"<div id='sub'>{sub}</div><p>{'z' * 200}</p></div></body></html>"
    )
    stats = compute_stats(parse_html(page).find("body"))
    scores = score(stats)
    art, sub_i = _index(stats, "art"), _index(stats, "sub")
    # TBD(sub) = 6 x 101/2 = 303; TBD(art) = 11/2 + 2 x 201/2 + 601/8 = 281.6.
    assert scores.tbd[sub_i] == pytest.approx(303.0)
    assert scores.tbd[art] == pytest.approx(5.5 + 201 + 601 / 8)
    assert max(range(len(stats)), key=scores.tbd.__getitem__) == sub_i
    assert scores.ctpc[sub_i] == pytest.approx(6 / 8)
    assert scores.ctpc[art] == pytest.approx(1.0)
    assert scores.best == art
    lines = extract(page, NAME).text.splitlines()
    assert lines[0] == "t" * 10 and lines[-1] == "z" * 200 and len(lines) == 9


def test_empty_and_textless_pages_give_empty_text():
    assert extract("", NAME).text == ""
    assert extract("<html><body><img src='x'></body></html>", NAME).text == ""


def test_registered_and_input_not_modified():
    assert NAME in method_names()
    root = parse_html("<html><head><title>Title</title></head><body><script>x</script><p>t</p></body></html>")
    from extraction.methods import METHODS

    result = METHODS[NAME](root, None)
    assert result.title == "Title" and result.text == "t"
    assert root.find("head") is not None and root.find(".//script") is not None
