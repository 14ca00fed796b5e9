"""Tests for the list-page extractor (extraction/lists.py)."""

from __future__ import annotations

import pytest
from lxml import etree

from evaluation.datasets import datasets_dir
from extraction.dom.html import parse_html
from extraction.lists import (
    MAX_TOKEN_SHARE,
    MIN_ITEMS,
    REPEAT_MIN,
    clean_list_page,
    entry_url,
    extract_list_page,
    list_page_entries,
    main_text,
)
from extraction.methods import METHODS

# Held-out WCXB-dev list pages: F1 of `python -m bench.lists_eval` (bench/results/lists-wcxb.md,
# 2026-11-21: 0.595, trafilatura 0.576) rounded down with a small margin; raise it when a change
# improves it, never lower it to make the test pass.
WCXB_HELD_OUT_LIST_F1_FLOOR = 0.58

NAV = "".join(f'<li><a href="/{s}/">{s.title()}</a></li>' for s in ("world", "business", "sport", "culture"))
FOOTER = '<footer><ul><li><a href="/about">About us</a></li><li><a href="/privacy">Privacy</a></li>' \
         '<li><a href="/contact">Contact</a></li></ul><p>Copyright 2026 Harbor Gazette</p></footer>'


def section_page(items: int = 12) -> str:
    """Return a section page: nav, a heading, ``items`` repeated entries with teasers, a footer."""
    entries = "".join(
        f'<div class="card card-{n}"><h3><a href="/news/2026/story-{n}.html?utm_source=list">Council approves '
        f"harbor plan number {n} after long debate</a></h3><p class=\"teaser\">The vote on plan {n} ended a "
        f"month of hearings on the waterfront.</p><span class=\"date\">May {n}, 2026</span>"
        f'<p class="more"><a href="/news/2026/story-{n}.html#comments">Read more</a></p></div>'
        for n in range(1, items + 1))
    return (f'<html><head><title>Local news</title></head><body><header><nav><ul>{NAV}</ul></nav></header>'
            f'<main><h1>Local news</h1><div class="list">{entries}</div></main>{FOOTER}</body></html>')


def test_section_page_entries_are_the_items_in_order_with_absolute_urls() -> None:
    result = extract_list_page(parse_html(section_page()), "https://example.org/news/local/")
    assert [e.url for e in result.entries] == [f"https://example.org/news/2026/story-{n}.html" for n in range(1, 13)]
    assert result.entries[0].text == "Council approves harbor plan number 1 after long debate"
    assert result.method == "list" and result.page_type == "list" and result.title == "Local news"


def test_section_page_text_keeps_items_and_teasers_not_nav_footer_or_buttons() -> None:
    text = extract_list_page(parse_html(section_page()), None).text
    assert "Local news" in text.split("\n")
    assert "The vote on plan 7 ended a month of hearings on the waterfront." in text.split("\n")
    for noise in ("Business", "Privacy", "Copyright", "Read more"):
        assert noise not in text


def test_fewer_than_min_items_is_no_list_but_a_heading_link_is_an_entry() -> None:
    page = section_page(MIN_ITEMS - 1).replace("<h3>", "<p>").replace("</h3>", "</p>")
    assert extract_list_page(parse_html(page), None).entries == ()
    assert len(extract_list_page(parse_html(section_page(MIN_ITEMS - 1)), None).entries) == MIN_ITEMS - 1


def test_chinese_list_page() -> None:
    titles = ["江城举行防汛演练", "地铁五号线今日开通", "市民公园新增健身步道", "老城区改造方案公布",
              "江城中学获科技竞赛金奖"]
    items = "".join(f'<li class="news-item"><a href="/zh/news/{n}.html">{t}</a><span>2026-05-0{n}</span></li>'
                    for n, t in enumerate(titles, start=1))
    page = (f'<html><head><meta charset="utf-8"><title>本地新闻</title></head><body>'
            f'<div id="nav"><a href="/zh/">首页</a><a href="/zh/local/">本地</a><a href="/zh/sport/">体育</a></div>'
            f'<div class="main"><h2>本地新闻</h2><ul class="news-list">{items}</ul></div>'
            f'<div class="footer">版权所有 江城日报</div></body></html>')
    result = extract_list_page(parse_html(page), "http://jiangcheng.example/zh/local/")
    assert [e.text for e in result.entries] == titles
    assert result.entries[0].url == "http://jiangcheng.example/zh/news/1.html"
    assert "首页" not in result.text and "版权所有" not in result.text and "江城举行防汛演练" in result.text


@pytest.mark.parametrize("html", ["", "<html></html>", "<html><body></body></html>", "<p>no links</p>",
                                  "<div><a href='#'>x</a><a href='javascript:void(0)'>y</a></div>",
                                  "<<<>>>&&<a href=", "\x00\x01"])
def test_empty_and_malformed_pages_give_empty_results(html: str) -> None:
    result = extract_list_page(parse_html(html), "https://example.org/")
    assert result.entries == ()
    assert result.page_type == "list"


def test_page_is_not_modified() -> None:
    root = parse_html(section_page())
    before = etree.tostring(root)
    extract_list_page(root, "https://example.org/")
    assert etree.tostring(root) == before


def test_entries_alone_equal_the_extractors_and_leave_the_page_as_it_was() -> None:
    """``list_page_entries`` reads the page with the noise skipped, not removed from a copy: the same
    entries, titles without the hidden and script text inside their links."""
    noisy = section_page().replace(
        "Council approves", "<span hidden>Sponsored</span>Council<script>x()</script> approves"
    ).replace("<body>", "<body><aside class='ad'><div class='card'><a href='/ad'>An advert link here</a></div></aside>")
    for page in (section_page(), noisy, section_page().replace("<body>", "<body style='display:none'>")):
        root = parse_html(page)
        before = etree.tostring(root)
        entries = list_page_entries(root, "https://example.org/news/local/")
        assert etree.tostring(root) == before
        assert entries == extract_list_page(root, "https://example.org/news/local/").entries
    assert entries == ()  # a hidden <body> is gone, and its entries with it
    titles = [entry.text for entry in list_page_entries(parse_html(noisy), None)]
    assert titles[0] == "Council approves harbor plan number 1 after long debate"


def test_whole_page_inside_a_form_or_nav_is_kept() -> None:
    page = section_page().replace("<main>", "<form><nav>").replace("</main>", "</nav></form>")
    assert len(extract_list_page(parse_html(page), None).entries) == 12


def test_token_share_guard_on_both_sides() -> None:
    # A "sidebar"-classed wrapper is removed while small, kept when it holds most of the text.
    small = "<html><body><div class='sidebar'>side words</div><div>" + "content words " * 100 + "</div></body></html>"
    large = "<html><body><div class='has-sidebar'>" + "content words " * 100 + "</div><p>x</p></body></html>"
    assert "side" not in main_text(clean_list_page(parse_html(small)))
    assert MAX_TOKEN_SHARE < 1 and "content" in main_text(clean_list_page(parse_html(large)))


def test_repeated_short_lines_are_dropped_at_the_threshold_only() -> None:
    def page(n: int) -> str:
        stories = "".join(f"<p>Story {k} text here</p><p>Buy now</p>" for k in range(n))
        return f"<html><body>{stories}</body></html>"

    assert "Buy now" not in main_text(clean_list_page(parse_html(page(REPEAT_MIN))))
    assert "Buy now" in main_text(clean_list_page(parse_html(page(REPEAT_MIN - 1))))


def test_entry_url_drops_fragment_and_tracking() -> None:
    assert entry_url("/a.html?utm_source=x&id=3#c", "https://e.org/list/") == "https://e.org/a.html?id=3"
    assert entry_url("b.html", None) == "b.html"
    # A malformed address, in the link or the page's URL, is no address (urlsplit raised, and the page was lost).
    assert entry_url("http://[broken/x.html", "https://e.org/list/") is None
    assert entry_url("/a.html", "http://[::1") is None


def test_a_list_page_with_a_malformed_link_keeps_its_entries() -> None:
    items = "".join(f'<li><a href="/news/2024/03/{i}/story-{i}.html">Story headline number {i} today</a></li>'
                    for i in range(12))
    items += '<li><a href="http://[broken/x.html">Story headline with a broken link</a></li>'
    root = parse_html(f"<html><body><ul>{items}</ul></body></html>")
    entries = METHODS["list"](root, "https://example.com/news/").entries
    assert len(entries) == 13 and entries[-1].url is None and entries[0].url.startswith("https://example.com/")


def test_registered_as_list_method() -> None:
    assert METHODS["list"] is extract_list_page


def test_demo_list_pages_entries_exact() -> None:
    from demo.content import build_sites

    for site in build_sites():
        for path, page in site.pages.items():
            if page.page_type == "list":
                entries = extract_list_page(parse_html(page.html), f"http://127.0.0.1{path}").entries
                assert [e.url.removeprefix("http://127.0.0.1") for e in entries if e.url] == list(page.links), path


@pytest.mark.datasets
def test_wcxb_held_out_list_pages_f1_floor() -> None:
    if not (datasets_dir() / "wcxb-dev").is_dir():
        pytest.skip(f"dataset folder {datasets_dir() / 'wcxb-dev'} is absent (set DATASETS_DIR)")
    from evaluation.folds import held_out_pages
    from evaluation.metrics import bow_prf, macro_prf
    from extraction.dom.encoding import decode_html

    scores = [bow_prf(extract_list_page(parse_html(decode_html(p.html_bytes()).text), p.url).text, p.gold_text)
              for p in held_out_pages("wcxb-dev") if p.page_type == "list" and p.gold_text]
    assert macro_prf(scores).f1 >= WCXB_HELD_OUT_LIST_F1_FLOOR
