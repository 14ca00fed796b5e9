"""Features of the DOM/URL page-type model on small inline pages, and the shipped model on two of them."""

from __future__ import annotations

import json

import numpy as np
import pytest
from lxml import etree

from extraction.dom.html import parse_html
from extraction.pagetype.features import (
    CJK_CHAR_WEIGHT,
    DOM_FEATURE_VERSION,
    DOM_FEATURES,
    FEATURE_GROUPS,
    HEADLINE_CHARS,
    LONG_PARAGRAPH_CHARS,
    URL_FEATURES,
    dom_features,
    url_features,
)
from tests.crawl_helpers import REPO

MODEL_DIR = REPO / "models" / "pagetype"
LIST_URL = "https://news.example.com/world/"
ARTICLE_URL = "https://news.example.com/world/2024/05/10/harbor-council-approves-new-budget-for-ferries.html"
NAV = ("<nav><ul><li><a href='/'>Home</a></li><li><a href='/world/'>World</a></li>"
       "<li><a href='/sport/'>Sport</a></li></ul></nav>")
SENTENCE = "The harbor council approved the budget for the new ferry line after a long debate on Tuesday evening. "


def list_page(entries: int = 20) -> str:
    items = "".join(
        f"<li class='item item-{i}'><a href='/world/2024/05/{i:02d}/story-{i}.html'>"
        f"Headline number {i} about the harbor council and its ferries</a></li>"
        for i in range(entries)
    )
    return (f"<html><head><title>World</title></head><body>{NAV}<h1>World news</h1>"
            f"<ul class='list'>{items}</ul></body></html>")


def article_page(meta: str = "") -> str:
    paragraphs = "".join(f"<p>{SENTENCE * 3}<a href='/more'>council</a></p>" for _ in range(6))
    return (f"<html><head><title>Budget</title>{meta}</head><body>{NAV}<article><h1>Harbor council approves budget</h1>"
            f"<time datetime='2024-05-10'>10 May 2024</time>{paragraphs}</article></body></html>")


def features(page: str, url: str | None = None) -> dict[str, float]:
    vector = dom_features(parse_html(page), url)
    assert vector.dtype == np.float32
    assert vector.shape == (len(DOM_FEATURES),)
    return dict(zip(DOM_FEATURES, vector.tolist(), strict=True))


def test_feature_names_are_unique_and_grouped() -> None:
    assert len(set(DOM_FEATURES)) == len(DOM_FEATURES)
    assert tuple(name for names in FEATURE_GROUPS.values() for name in names) == DOM_FEATURES
    assert DOM_FEATURE_VERSION >= 1


def test_list_and_article_differ_on_every_important_feature() -> None:
    listing = features(list_page(), LIST_URL)
    article = features(article_page(), ARTICLE_URL)
    assert listing["link_share"] > 0.8 > 0.1 > article["link_share"]
    for third in ("link_share_first", "link_share_middle", "link_share_last"):
        assert listing[third] > 0.7 > 0.1 > article[third]
    assert listing["links_per_1000_chars"] > 15 > 6 > article["links_per_1000_chars"]
    assert listing["headline_link_share"] > 0.8 > 0.1 > article["headline_link_share"]
    assert listing["longest_paragraph_log"] < np.log1p(LONG_PARAGRAPH_CHARS) < article["longest_paragraph_log"]
    assert listing["long_paragraphs_log"] == 0.0
    assert article["long_paragraphs_log"] == pytest.approx(np.log1p(6), rel=1e-6)
    assert article["long_paragraph_share"] > 0.9
    assert listing["repeat_group_size_log"] == pytest.approx(np.log1p(20), rel=1e-6)  # item-N classes are one group
    assert article["repeat_group_size_log"] <= np.log1p(6)
    assert listing["repeat_group_text_share"] > 0.8 > article["repeat_group_text_share"]
    assert article["p_text_share"] > 0.9 > 0.0 == listing["p_text_share"]
    assert article["article_elements_log"] == pytest.approx(np.log1p(1)) and listing["article_elements_log"] == 0.0
    assert article["time_elements_log"] > 0.0 == listing["time_elements_log"]
    assert listing["text_chars_log"] > 0 and article["text_chars_log"] > listing["text_chars_log"]


def test_headings_holding_links() -> None:
    page = ("<body><h2><a href='/a'>A headline that is long enough to count</a></h2><h2>Plain heading</h2>"
            "<h3><a href='/b'>Another headline</a></h3></body>")
    values = features(page)
    assert values["headings_with_links_log"] == pytest.approx(np.log1p(2), rel=1e-6)
    assert values["heading_link_share"] == pytest.approx(2 / 3, rel=1e-6)


@pytest.mark.parametrize(("anchor", "headline"), [
    ("x" * (HEADLINE_CHARS - 1), False),
    ("x" * HEADLINE_CHARS, True),
    ("江城港口新渡轮航线" , False),  # 9 CJK characters
    ("江城港口新渡轮航线开通", True),  # 11
])
def test_headline_anchor_threshold(anchor: str, headline: bool) -> None:
    values = features(f"<body><p>text</p><a href='/x'>{anchor}</a></body>")
    assert values["headline_link_share"] == (1.0 if headline else 0.0)


@pytest.mark.parametrize(("own_chars", "long"), [(LONG_PARAGRAPH_CHARS - 1, False), (LONG_PARAGRAPH_CHARS, True)])
def test_long_paragraph_threshold_counts_text_outside_links(own_chars: int, long: bool) -> None:
    page = f"<body><p>{'a' * own_chars}<a href='/x'>{'b' * 100}</a></p></body>"
    assert (features(page)["long_paragraphs_log"] > 0) is long


@pytest.mark.parametrize(("cjk_chars", "long"), [(59, False), (60, True)])
def test_cjk_characters_count_as_latin_equivalent(cjk_chars: int, long: bool) -> None:
    assert CJK_CHAR_WEIGHT * 60 == LONG_PARAGRAPH_CHARS
    values = features(f"<body><p>{'港' * cjk_chars}</p></body>")
    assert (values["long_paragraphs_log"] > 0) is long
    assert values["text_chars_log"] == pytest.approx(np.log1p(CJK_CHAR_WEIGHT * cjk_chars), rel=1e-6)


def test_hidden_and_script_text_does_not_count() -> None:
    page = ("<body><p>visible</p><script>var x = 'no no no no no no';</script>"
            "<div style='display:none'><a href='/'>hidden link text here</a></div></body>")
    values = features(page)
    assert values["text_chars_log"] == pytest.approx(np.log1p(len("visible")), rel=1e-6)
    assert values["link_share"] == 0.0 and values["headline_link_share"] == 0.0


@pytest.mark.parametrize(("meta", "expected"), [
    ("<meta property='og:type' content='article'>", {"og_article"}),
    ("<meta property='og:type' content='website'>", {"og_website"}),
    ("<meta property='og:type' content='video.other'>", {"og_other"}),
    ("<meta property='article:published_time' content='2024-05-10'>", {"published_meta"}),
    ('<script type="application/ld+json">{"@context": "https://schema.org", "@graph": '
     '[{"@type": "WebSite"}, {"@type": ["NewsArticle"], "headline": "x"}]}</script>',
     {"jsonld_article", "jsonld_website"}),
    ('<script type="application/ld+json">[{"@type": "CollectionPage"}, {"@type": "BreadcrumbList"}]</script>',
     {"jsonld_collection"}),
    ('<script type="application/ld+json">{"@type": "schema:ItemList"}</script>', {"jsonld_collection"}),
    ('<script type="application/ld+json">{"@type": "Product", "offers": {"@type": "Offer"}}</script>',
     {"jsonld_other"}),
    ('<script type="application/ld+json">{"@type": "BlogPosting",</script>', set()),  # malformed: ignored
    ("", set()),
])
def test_metadata_features(meta: str, expected: set[str]) -> None:
    values = features(article_page(meta))
    names = ("og_article", "og_website", "og_other", "jsonld_article", "jsonld_collection", "jsonld_website",
             "published_meta", "jsonld_other")
    assert {name for name in names if values[name] == 1.0} == expected


def test_cues_of_other_page_types() -> None:
    shop = features("<body><h1>Kettle</h1><p>Price: $24.99, was $29.99. Ships for 5 EUR.</p>"
                    "<form><select><option>1</option></select><input name='q'>"
                    "<button>Add to cart</button></form></body>")
    assert shop["prices_log"] == pytest.approx(np.log1p(3), rel=1e-6)
    assert shop["form_controls_log"] == pytest.approx(np.log1p(3), rel=1e-6)  # the <option> is not a control
    docs = features("<body><p>Call <code>parse()</code>:</p><pre><code>x = parse(page)</code></pre></body>")
    assert docs["code_blocks_log"] == pytest.approx(np.log1p(3), rel=1e-6)
    article = features(article_page())
    assert article["prices_log"] == article["form_controls_log"] == article["code_blocks_log"] == 0.0


@pytest.mark.parametrize(("url", "expected"), [
    ("https://x.com/", {"has_url", "url_root"}),
    ("https://x.com", {"has_url", "url_root"}),
    ("https://x.com/2024/05/10/council-approves-the-budget", {"has_url", "url_date", "url_slug"}),
    ("http://x.cn/zh/news/202603/t20260210_757849.html", {"has_url", "url_date", "url_numeric_id", "url_html_ext"}),
    ("https://x.com/news/20240510/story.shtml", {"has_url", "url_date", "url_html_ext"}),
    ("http://www.theverge.com/2018/2/1/16956198/ona-brixton-camera-laptop-bag-review",
     {"has_url", "url_date", "url_numeric_id", "url_slug"}),
    ("https://www.dw.com/en/deep-tech-startups/a-48727620", {"has_url", "url_numeric_id"}),
    ("https://x.com/tag/politics/", {"has_url", "url_list_word", "url_trailing_slash"}),
    ("https://x.com/news/index.html", {"has_url", "url_index", "url_html_ext"}),
    ("https://x.com/news?page=2", {"has_url", "url_page_query", "url_query"}),
    ("https://x.com/blog/page/3/", {"has_url", "url_page_query", "url_trailing_slash"}),
    ("https://x.com/a-b-c", {"has_url"}),  # two hyphens: not a slug
    ("http://[::1", set()),  # unparsable
    ("", set()),
])
def test_url_shapes(url: str, expected: set[str]) -> None:
    values = dict(zip(URL_FEATURES, url_features(url), strict=True))
    binary = {name for name, value in values.items()
              if name not in ("url_depth", "url_last_segment_log") and value == 1.0}
    assert binary == expected


def test_url_depth_and_last_segment() -> None:
    values = dict(zip(URL_FEATURES, url_features("https://x.com/a/bb/ccc.html?x=1"), strict=True))
    assert values["url_depth"] == 3.0
    assert values["url_last_segment_log"] == pytest.approx(np.log1p(len("ccc.html")))


def test_url_none_zeroes_the_url_features_only() -> None:
    root = parse_html(article_page())
    with_url = dom_features(root, ARTICLE_URL)
    without = dom_features(root, None)
    url_columns = [DOM_FEATURES.index(name) for name in URL_FEATURES]
    page_columns = [i for i in range(len(DOM_FEATURES)) if i not in url_columns]
    assert not without[url_columns].any()
    assert with_url[DOM_FEATURES.index("has_url")] == 1.0
    np.testing.assert_array_equal(with_url[page_columns], without[page_columns])


@pytest.mark.parametrize("page", [
    "",
    "   ",
    "<html></html>",
    "<html><head><title>t</title></head></html>",
    "<html><body></body></html>",
    "</p></div></body>",
    "<body><script>document.write('x')</script><style>p{}</style></body>",
    "<body>" + "<div>" * 3000 + "</body>",
    "<body><div hidden><p>hidden</p></div></body>",
])
def test_pages_without_visible_text_give_zeros(page: str) -> None:
    vector = dom_features(parse_html(page), None)
    assert vector.shape == (len(DOM_FEATURES),)
    assert not vector.any()


@pytest.mark.parametrize("page", [
    "<<<>>> </p></div><a href=x>",
    "\x00\x01\ufffd",
    "<html><frameset><frame src='a.html'></frameset></html>",
    '<head><script type="application/ld+json">' + "[" * 5000 + "</script></head><body>x</body>",
    "<body><a><a><a>nested links that are long enough</a></a></a><table><tr><td><a>x</td></tr></body>",
])
def test_malformed_pages_do_not_raise(page: str) -> None:
    vector = dom_features(parse_html(page), "http://[bad")
    assert vector.shape == (len(DOM_FEATURES),)
    assert np.isfinite(vector).all()
    assert vector[DOM_FEATURES.index("has_url")] == 0.0  # an unparsable URL counts as none


def test_fragment_without_body_and_deep_pages_do_not_raise() -> None:
    fragment = parse_html("<div><a href='/'>only a link in a fragment of a page</a></div>")
    assert features("<div><a href='/'>only a link in a fragment of a page</a></div>")["link_share"] == 1.0
    assert dom_features(fragment.find(".//div"), "not a url").shape == (len(DOM_FEATURES),)
    deep = "<body>" + "<div><p>text <a href='/'>link</a>" * 4000 + "</body>"
    assert np.isfinite(dom_features(parse_html(deep), None)).all()


def test_root_is_not_modified() -> None:
    root = parse_html(list_page() + article_page("<meta property='og:type' content='article'>"))
    before = etree.tostring(root)
    dom_features(root, LIST_URL)
    assert etree.tostring(root) == before


@pytest.fixture(scope="module")
def shipped_model() -> object:
    onnx_path = MODEL_DIR / "dom.onnx"
    if not onnx_path.is_file():
        pytest.skip(f"{onnx_path} is absent (python -m models.training.train_pagetype_dom)")
    ort = pytest.importorskip("onnxruntime")
    meta = json.loads((MODEL_DIR / "meta.json").read_text(encoding="utf-8"))["dom"]
    assert meta["features"] == list(DOM_FEATURES) and meta["feature_version"] == DOM_FEATURE_VERSION
    assert meta["classes"] == ["article", "list", "other"]
    return ort.InferenceSession(str(onnx_path), providers=["CPUExecutionProvider"])


@pytest.mark.parametrize("with_url", [True, False])
def test_shipped_model_types_a_list_and_an_article(shipped_model: object, with_url: bool) -> None:
    x = np.stack([dom_features(parse_html(list_page()), LIST_URL if with_url else None),
                  dom_features(parse_html(article_page()), ARTICLE_URL if with_url else None)])
    label, probabilities = shipped_model.run(["label", "probabilities"], {"features": x})  # type: ignore[attr-defined]
    assert list(label) == ["list", "article"]
    assert probabilities.shape == (2, 3)
    np.testing.assert_allclose(probabilities.sum(axis=1), 1.0, rtol=1e-5)
