"""Dataset readers: unit tests on synthetic input, then checks against ../shared/datasets in place.

The dataset checks skip (with the path in the reason) when the datasets directory or one
dataset folder is absent, so a clone without the shared data still passes. Nothing from
the datasets is copied here: expected numbers are counts only.
"""

from __future__ import annotations

import gzip
from collections import Counter
from functools import cache
from pathlib import Path

import pytest

from evaluation.datasets import (
    ARTICLE,
    DATASET_NAMES,
    LIST,
    NONARTICLE,
    DatasetNotFound,
    Page,
    datasets_dir,
    iter_pages,
)
from evaluation.datasets.cleaneval import parse_gold
from evaluation.datasets.dragnet import split_comments
from evaluation.datasets.msv_big5 import infer_big9_site
from evaluation.datasets.textutil import decode_text, html_to_text, sniff_url, url_site
from evaluation.datasets.wcxb import wcxb_page_type

SAMPLE = 20

# Pages per dataset as read from disk; the README's figure is noted where it differs or
# needs explaining.
EXPECTED_COUNTS = {
    "wcxb-dev": 1497,
    "cleaneval": 739,  # dev 58 + final 681 with gold (59 more final inputs have no gold)
    "cleanportaleval": 71,
    "dragnet": 1381,  # training 966 + test 415
    "l3s-gn1": 621,
    "msv-big5": 720,  # README: 4 x 90 Big9 pages + 360 chaos-all
    "trafilatura-eval": 990,
    "mozilla-readability": 130,
    "chinese-wced-dev": 35,
    "gne-chinese": 66,  # 62 articles + 4 list pages
    "article-vs-nonarticle": 344,  # 169 articles + 175 non-articles
    "frontpage-archive-de": 194,  # 196 less web.de's two byte-identical copies of one 404 page
    "gerapy-zh": 84,
    "fundus-articles": 258,
    "newspaper4k-pages": 29,  # 30 less the copy of cleveland.com1
}

# Pages whose gold text is non-empty (None means the set has no gold text).
EXPECTED_GOLD = {
    "wcxb-dev": 1476,  # 21 pages have an empty main_content upstream
    "cleaneval": 732,  # 7 gold files hold only the URL line
    "cleanportaleval": 70,  # 1 gold file holds only the URL line
    "dragnet": 1381,
    "l3s-gn1": 621,
    "msv-big5": 720,
    "trafilatura-eval": None,
    "mozilla-readability": 130,
    "chinese-wced-dev": 35,
    "gne-chinese": None,
    "article-vs-nonarticle": None,
    "frontpage-archive-de": None,
    "gerapy-zh": None,
    "fundus-articles": 258,
    "newspaper4k-pages": None,
}


def _skip_reason(name: str) -> str | None:
    root = datasets_dir()
    if not root.is_dir():
        return f"datasets directory {root} is absent (set DATASETS_DIR)"
    if not (root / name).is_dir():
        return f"dataset folder {root / name} is absent"
    return None


@cache
def _pages(name: str) -> tuple[Page, ...]:
    reason = _skip_reason(name)
    if reason:
        pytest.skip(reason)
    return tuple(iter_pages(name))


def _sample(pages: tuple[Page, ...]) -> tuple[Page, ...]:
    return pages[:: max(1, len(pages) // SAMPLE)]


# --- synthetic unit tests (no dataset needed) ---------------------------------------------


def test_parse_gold_strips_url_and_markers() -> None:
    raw = "URL: http://example.org/a\n\n<h> A  title\n<p>First line\n  wrapped here.\n<l>* item\n\nloose text\n"
    url, text, blocks = parse_gold(raw)
    assert url == "http://example.org/a"
    assert text.split("\n") == ["A title", "First line wrapped here.", "* item", "loose text"]
    assert blocks == ("h", "p", "l", "")


def test_parse_gold_without_url_unescapes_entities() -> None:
    url, text, _ = parse_gold("<p>it&#039;s &amp; more")
    assert url is None
    assert text == "it's & more"


def test_split_comments_tolerates_mistyped_separator() -> None:
    assert split_comments("body\n!@#$%^&*()  COMMENTS\nnice post") == ("body", "nice post")
    assert split_comments("body\n!@ $%^&*()  \tCOMMENTS\t\nc") == ("body", "c")
    assert split_comments("no comments here") == ("no comments here", "")


def test_decode_text_fallbacks() -> None:
    assert decode_text("caf\u00e9\r\nx".encode()) == "caf\u00e9\nx"
    assert decode_text(b"\xef\xbb\xbfbom") == "bom"
    # UTF-16 with its byte-order mark, both byte orders (five Dragnet gold files).
    assert decode_text("\ufeffThe caf\u00e9\r\nline".encode("utf-16-le")) == "The caf\u00e9\nline"
    assert decode_text("\ufeffThe caf\u00e9".encode("utf-16-be")) == "The caf\u00e9"
    assert decode_text("\u201cquoted\u201d".encode("cp1252")) == "\u201cquoted\u201d"
    assert decode_text("\u4e2d\u6587".encode("gb18030"), ("gb18030", "cp1252")) == "\u4e2d\u6587"
    # Mostly UTF-8 with one stray byte stays UTF-8.
    mixed = "\u00e9\u00e8\u00ea\u00eb ok ".encode() + b"\xc3 "
    assert decode_text(mixed).startswith("\u00e9\u00e8\u00ea\u00eb ok")


def test_sniff_url_and_site() -> None:
    assert sniff_url(b'<head><link href="https://www.ex.org/a" rel="canonical"></head>') == "https://www.ex.org/a"
    assert sniff_url(b"<meta property='og:url' content='//ex.org/b'>") == "https://ex.org/b"
    assert sniff_url(b'<link rel="canonical" href="/relative">') is None
    assert url_site("https://WWW.Example.com/x") == "example.com"
    assert url_site(None) is None


def test_html_to_text_puts_blocks_on_lines() -> None:
    text = html_to_text(b"<div><h1>Title</h1><p>One <b>two</b></p><script>x()</script><p>three</p></div>")
    assert text == "Title\nOne two\nthree"


def test_infer_big9_site_and_wcxb_types() -> None:
    assert infer_big9_site(b'<a href="http://www.CNN.com/x">cnn.com</a> forbes.com') == "cnn"
    assert infer_big9_site(b"<p>nothing</p>") is None
    assert wcxb_page_type("article") == ARTICLE
    assert wcxb_page_type("collection") == LIST
    assert wcxb_page_type("forum") == "other"


def test_missing_dataset_and_unknown_name(tmp_path: Path) -> None:
    with pytest.raises(DatasetNotFound, match=str(tmp_path / "wcxb-dev")):
        iter_pages("wcxb-dev", root=tmp_path)
    with pytest.raises(KeyError):
        iter_pages("no-such-set", root=tmp_path)


def test_datasets_dir_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("DATASETS_DIR", str(tmp_path))
    assert datasets_dir() == tmp_path
    monkeypatch.delenv("DATASETS_DIR")
    assert datasets_dir().parts[-2:] == ("shared", "datasets")


def test_page_html_bytes(tmp_path: Path) -> None:
    path = tmp_path / "p.html.gz"
    path.write_bytes(gzip.compress(b"<p>x</p>"))
    page = Page(dataset="d", page_id="p", html_path=path, url=None, gold_text=None)
    assert page.html_bytes() == b"<p>x</p>"


# --- checks against the shared datasets ---------------------------------------------------


@pytest.mark.datasets
@pytest.mark.parametrize("name", DATASET_NAMES)
def test_counts_ids_and_files(name: str) -> None:
    pages = _pages(name)
    assert len(pages) == EXPECTED_COUNTS[name]
    assert all(page.dataset == name for page in pages)
    assert len({page.page_id for page in pages}) == len(pages), "page ids are not unique"
    missing = [page.html_path for page in pages if not page.html_path.is_file()]
    assert not missing, f"{len(missing)} HTML files missing, e.g. {missing[:3]}"
    for page in _sample(pages):
        assert page.html_path.name.endswith(".gz")
        assert page.html_bytes().strip(), f"{page.html_path} is empty"


@pytest.mark.datasets
@pytest.mark.parametrize("name", DATASET_NAMES)
def test_gold_text(name: str) -> None:
    pages = _pages(name)
    with_gold = [page for page in pages if page.gold_text]
    expected = EXPECTED_GOLD[name]
    assert len(with_gold) == (expected or 0)
    for page in with_gold:
        assert page.gold_text is not None and page.gold_text.strip() == page.gold_text
        assert "\r" not in page.gold_text


@pytest.mark.datasets
def test_news_page_type_sets() -> None:
    """The labels of the four news sets (their READMEs' tables, duplicates read once) and what else they carry."""
    types = {name: Counter(page.page_type for page in _pages(name))
             for name in ("frontpage-archive-de", "gerapy-zh", "fundus-articles", "newspaper4k-pages")}
    assert types["frontpage-archive-de"] == {LIST: 155, "other": 39}
    assert types["gerapy-zh"] == {ARTICLE: 59, LIST: 25}
    assert types["fundus-articles"] == {ARTICLE: 258}
    assert types["newspaper4k-pages"] == {ARTICLE: 24, LIST: 3, "other": 2}
    fundus = _pages("fundus-articles")
    assert len({page.extra["country"] for page in fundus}) == 41
    assert Counter(page.extra["year"] for page in fundus) == {2023: 35, 2024: 98, 2025: 81, 2026: 44}
    assert all(page.url and page.extra["gold"]["title"] for page in fundus)
    assert sum(bool(page.extra["gold"]["authors"]) for page in fundus) == 253  # README: 5 without authors
    gerapy = _pages("gerapy-zh")
    assert sum(page.url is not None for page in gerapy) == 55  # the page's own canonical link, where absolute
    assert all(page.site for page in gerapy)


@pytest.mark.datasets
def test_splits() -> None:
    assert Counter(page.split for page in _pages("cleaneval")) == {"dev": 58, "final": 681}
    assert Counter(page.split for page in _pages("dragnet")) == {"training": 966, "test": 415}
    assert len(list(iter_pages("dragnet", split="test"))) == 415
    final_all = list(iter_pages("cleaneval", split="final", include_unlabelled=True))
    assert len(final_all) == 740


@pytest.mark.datasets
def test_page_types() -> None:
    assert Counter(p.page_type for p in _pages("wcxb-dev")) == {ARTICLE: 793, LIST: 216, "other": 488}
    assert Counter(p.page_type for p in _pages("gne-chinese")) == {ARTICLE: 62, LIST: 4}
    assert Counter(p.page_type for p in _pages("article-vs-nonarticle")) == {ARTICLE: 169, NONARTICLE: 175}
    assert all(p.page_type == ARTICLE for p in _pages("l3s-gn1"))


@pytest.mark.datasets
def test_snippets_and_urls() -> None:
    assert all(page.with_snippets and page.without_snippets for page in _pages("trafilatura-eval"))
    # 15 WCXB pages (all among those with empty main_content) have no snippets at all.
    assert sum(1 for page in _pages("wcxb-dev") if page.with_snippets or page.without_snippets) == 1482
    assert sum(1 for page in _pages("trafilatura-eval") if page.url) == 954  # 36 keys are "hard::"/"recall::"
    assert all(page.url and page.site for page in _pages("l3s-gn1"))
    assert all(page.url and page.site for page in _pages("article-vs-nonarticle"))
    assert all(page.url and page.url.startswith("http") for page in _pages("cleaneval"))


@pytest.mark.datasets
def test_msv_big5_sites_and_years() -> None:
    big9 = [page for page in _pages("msv-big5") if page.extra["subset"] != "chaos-all"]
    assert len(big9) == 360  # README: 9 sites x 10 pages x 4 years
    per_site_year = Counter((page.site, page.extra["year"]) for page in big9)
    assert len(per_site_year) == 36 and set(per_site_year.values()) == {10}
    chaos = [page for page in _pages("msv-big5") if page.extra["subset"] == "chaos-all"]
    assert len(chaos) == 360 and sum(1 for page in chaos if page.url) >= 350


@pytest.mark.datasets
def test_l3s_labels_and_dragnet_comments() -> None:
    for page in _sample(_pages("l3s-gn1")):
        labels = page.extra["labels"]
        assert labels["fulltext"], page.page_id
        assert page.gold_text is not None
        assert all(block in page.gold_text for block in labels["headline"])
    assert sum(1 for page in _pages("dragnet") if page.extra["comments"]) == 420  # 5 of them UTF-16


@pytest.mark.datasets
def test_readability_and_chinese_metadata() -> None:
    pages = _pages("mozilla-readability")
    assert Counter(page.extra["readerable"] for page in pages)[True] > 100
    wced = _pages("chinese-wced-dev")
    assert all(page.lang == "zh" for page in wced)
    assert sum(1 for page in wced if page.extra["author"]) >= 25
    assert sum(1 for page in wced if page.extra["date"]) >= 25
