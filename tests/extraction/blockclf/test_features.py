"""Block and paragraph features (papers 003, 004 and extras): each one on both sides of what it separates."""

from __future__ import annotations

from itertools import islice

import numpy as np
import pytest
from lxml import etree, html

from evaluation.datasets import datasets_dir, iter_pages
from evaluation.datasets.textutil import decode_text
from extraction.blockclf.features import (
    BLOCK_FEATURES,
    CLASS_GROUPS,
    FEATURE_VERSION,
    PARAGRAPH_FEATURES,
    _pruned_copy,
    block_features,
    class_groups,
    noise_words,
    paragraph_features,
    text_counts,
)
from extraction.dom.blocks import Block, page_blocks, walk_top
from extraction.dom.html import parse_html

# Real pages per dataset in the range check (a quick sample, not a benchmark).
REAL_PAGES = 5
# Columns that are shares, densities, indicators or positions: all within [0, 1].
UNIT_COLUMNS = [name for name in BLOCK_FEATURES if not name.startswith(("cetd_tbd", "log_"))]

ARTICLE_EN = (
    "The council approved the new budget on Tuesday, after a debate that lasted more than six hours. "
    "Officials said the plan would fund schools and repair roads; critics called it too expensive."
)
ARTICLE_ZH = "今天上午，市政府召开新闻发布会，介绍了今年经济运行的总体情况。发言人表示：“全年目标有望完成。”"
NAV_EN = "<ul id='nav'>" + "".join(f"<li><a href='/{w}'>{w}</a></li>" for w in ("World", "Sport", "Business")) + "</ul>"


def _page(body: str) -> tuple[list[Block], np.ndarray]:
    root = parse_html(f"<html><body>{body}</body></html>")
    blocks = page_blocks(root)
    return blocks, block_features(blocks, root)


def _feature(blocks: list[Block], features: np.ndarray, element_id: str, name: str) -> float:
    row = next(i for i, block in enumerate(blocks) if block.element.get("id") == element_id)
    return float(features[row, BLOCK_FEATURES.index(name)])


def test_shape_dtype_and_names() -> None:
    blocks, features = _page(f"{NAV_EN}<div id='a'><p>{ARTICLE_EN}</p><p>Second.</p></div>")
    assert features.shape == (len(blocks), len(BLOCK_FEATURES)) == (2, len(BLOCK_FEATURES))
    assert features.dtype == np.float32
    assert len(set(BLOCK_FEATURES)) == len(BLOCK_FEATURES)
    assert np.isfinite(features).all()
    paragraphs = paragraph_features(blocks[1])
    assert paragraphs.shape == (2, len(PARAGRAPH_FEATURES)) and paragraphs.dtype == np.float32
    assert len(set(PARAGRAPH_FEATURES)) == len(PARAGRAPH_FEATURES)
    assert isinstance(FEATURE_VERSION, int)


def test_no_blocks_give_an_empty_matrix() -> None:
    assert block_features([]).shape == (0, len(BLOCK_FEATURES))
    assert page_blocks(parse_html("<html><body></body></html>")) == []


def test_paper_004_table_4_example() -> None:
    # Paper 004, figure 2, page 1, with the text lengths of its table 3: body 6 (two ad links),
    # nav 10, disclaimer 83, source line 13, article 15 (+1 img), licence line 65; page 192.
    items = "".join(f"<li><a>{w}</a></li>" for w in ("中国", "国际", "军事", "观点", "专题"))
    nav = f"<div><ul>{items}</ul></div>"
    blocks, features = _page(
        f"{nav}<div>{'声' * 83}</div><div><span>来源:新华社</span><span>责任编辑:张越</span></div>"
        "<div><p>正文部分A</p><p>正文部分B</p><p>正文部分C</p><img src='a.png'></div>"
        f"<div><p>{'备' * 65}</p></div><a>广告A</a><a>广告B</a>"
    )
    assert [block.chars for block in blocks] == [6, 10, 83, 13, 15, 65]
    columns = [BLOCK_FEATURES.index(f"r{k}_{name}") for k, name in enumerate(
        ("text_share", "link_text_share", "link_count_share", "img_count_share", "link_text_ratio"), start=1)]
    table_4 = [
        [0.031, 0.353, 0.25, 0, 0.857],  # body
        [0.052, 0.588, 0.625, 0, 0.909],  # nav (our block is the ul: the div has no own text)
        [0.430, 0, 0, 0, 0],
        [0.067, 0, 0, 0, 0],
        [0.078, 0, 0, 0.5, 0],
        [0.336, 0, 0, 0, 0],  # 65 / 193 = 0.3368: the paper truncates here
    ]
    assert features[:, columns] == pytest.approx(np.array(table_4), abs=1e-3)


def test_link_density_nav_vs_article() -> None:
    blocks, features = _page(f"{NAV_EN}<div id='a'><p>{ARTICLE_EN} <a href='/more'>More</a></p></div>")
    assert _feature(blocks, features, "nav", "link_density") == pytest.approx(1.0)
    assert _feature(blocks, features, "a", "link_density") < 0.05
    assert _feature(blocks, features, "nav", "r5_link_text_ratio") > 0.7
    assert _feature(blocks, features, "a", "r3_link_count_share") == pytest.approx(1 / 5)


def test_chinese_punctuation_paragraph_vs_menu() -> None:
    menu = "<ul id='m'><li><a href='/'>国内</a></li><li><a href='/w'>国际</a></li><li><a href='/s'>体育</a></li></ul>"
    blocks, features = _page(f"{menu}<div id='a'><p>{ARTICLE_ZH}</p></div>")
    assert _feature(blocks, features, "a", "zh_punct_density") > 0.1
    assert _feature(blocks, features, "m", "zh_punct_density") == 0.0
    assert _feature(blocks, features, "a", "latin_punct_density") == 0.0


def test_latin_punctuation_prose_vs_menu() -> None:
    blocks, features = _page(f"{NAV_EN}<div id='a'><p>{ARTICLE_EN}</p></div>")
    assert _feature(blocks, features, "a", "latin_punct_density") > 0.01
    assert _feature(blocks, features, "nav", "latin_punct_density") == 0.0


def test_noise_word_density_chinese() -> None:
    blocks, features = _page(f"<div id='n'>首页 | 搜索 | 版权</div><div id='a'><p>{ARTICLE_ZH}</p></div>")
    assert _feature(blocks, features, "n", "noise_word_density") == pytest.approx(1.0)
    assert _feature(blocks, features, "a", "noise_word_density") == 0.0


def test_noise_words_spanning_several_tokens_count_as_noise() -> None:
    assert {"关于我们", "联系我们", "signin", "home"} <= noise_words()
    for text in ("关于我们", "联系我们", "Sign in"):
        noise, tokens, _, _ = text_counts(text)
        assert noise == tokens > 0
    noise, tokens, _, _ = text_counts("We spoke about the home team")
    assert (noise, tokens) == (2, 6)  # about, home


def test_noise_word_density_english() -> None:
    blocks, features = _page(f"<div id='n'>Home | Search | Sign in | Subscribe</div><div id='a'>{ARTICLE_EN}</div>")
    assert _feature(blocks, features, "n", "noise_word_density") == pytest.approx(1.0)
    assert _feature(blocks, features, "a", "noise_word_density") < 0.05


def test_decoration_tag_density() -> None:
    blocks, features = _page("<div id='d'><b>bold</b> and <strong>strong</strong></div><div id='p'>plain</div>")
    assert _feature(blocks, features, "d", "deco_tag_density") == pytest.approx(2 / 3)
    assert _feature(blocks, features, "p", "deco_tag_density") == 0.0


def test_region_position_early_vs_middle() -> None:
    filler = "<div><span>x</span><span>y</span></div>" * 10
    blocks, features = _page(f"<div id='early'>top</div>{filler}<div id='mid'>middle</div>{filler}")
    early = _feature(blocks, features, "early", "region_position")
    middle = _feature(blocks, features, "mid", "region_position")
    assert early < 0.05 and 0.4 < middle < 0.6


def test_class_tokens_of_the_block_element() -> None:
    blocks, features = _page("<div id='c' class='comments'>nice</div><div id='a' class='article-body'>text</div>")
    assert _feature(blocks, features, "c", "class_comment") == 1.0
    assert _feature(blocks, features, "c", "class_article") == 0.0
    assert _feature(blocks, features, "a", "class_article") == 1.0
    assert _feature(blocks, features, "a", "class_comment") == 0.0


def test_class_tokens_split_camel_case_and_ignore_substrings() -> None:
    bits = {name: 1 << bit for bit, (name, _) in enumerate(CLASS_GROUPS)}
    assert class_groups("articleBody") == bits["article"]
    assert class_groups("sideBar") == bits["sidebar"]
    assert class_groups("ad-slot top-AD") == bits["ad"]
    assert class_groups("header shadow loaded") == 0  # "ad" only as a whole token
    assert class_groups("site-nav main-menu") == bits["nav"]


def test_ancestor_class_tokens() -> None:
    blocks, features = _page(
        "<div class='sidebar'><section><div id='in'>related story</div></section></div><div id='out'>text</div>"
    )
    assert _feature(blocks, features, "in", "ancestor_class_sidebar") == 1.0
    assert _feature(blocks, features, "in", "class_sidebar") == 0.0
    assert _feature(blocks, features, "out", "ancestor_class_sidebar") == 0.0


def test_cetd_columns_separate_article_from_nav() -> None:
    links = "".join(f"<li><a href='/{i}'>navigation entry {i}</a></li>" for i in range(20))
    article = "".join(f"<p>{ARTICLE_EN}</p>" for _ in range(4))
    blocks, features = _page(f"<ul id='nav'>{links}</ul><div id='a'>{article}</div>")
    assert _feature(blocks, features, "a", "cetd_in_content") == 1.0
    assert _feature(blocks, features, "nav", "cetd_in_content") == 0.0
    assert _feature(blocks, features, "a", "cetd_score_ratio") == pytest.approx(1.0)
    assert _feature(blocks, features, "a", "cetd_tbd_log") > _feature(blocks, features, "nav", "cetd_tbd_log")
    coverage = _feature(blocks, features, "a", "cetd_path_coverage")
    assert coverage > _feature(blocks, features, "nav", "cetd_path_coverage")


def test_invisible_text_changes_no_feature() -> None:
    page = f"{NAV_EN}<div id='a'><p>{ARTICLE_EN}</p></div>"
    hidden = "<script>" + "var x = 1;" * 500 + "</script><div hidden>" + "w " * 500 + "</div>"
    noisy = page.replace("</ul>", "</ul>" + hidden)
    _, clean_features = _page(page)
    _, noisy_features = _page(noisy)
    assert noisy_features == pytest.approx(clean_features)


def test_default_root_is_the_document() -> None:
    root = parse_html(f"<html><body>{NAV_EN}<div id='a'>{ARTICLE_EN}</div></body></html>")
    blocks = page_blocks(root)
    assert block_features(blocks) == pytest.approx(block_features(blocks, root))


def test_size_depth_and_index_features() -> None:
    blocks, features = _page(
        "<div id='a'>one</div><div><div><div id='b'><p>two</p><p>three three</p></div></div></div>"
    )
    assert _feature(blocks, features, "a", "depth") == pytest.approx(1 / 4)  # max depth: the p under b
    assert _feature(blocks, features, "b", "depth") == pytest.approx(3 / 4)
    assert _feature(blocks, features, "a", "relative_index") == 0.0
    assert _feature(blocks, features, "b", "relative_index") == 1.0
    assert _feature(blocks, features, "b", "log_paragraphs") == pytest.approx(np.log1p(2))
    assert _feature(blocks, features, "b", "log_chars") == pytest.approx(np.log1p(14))
    assert _feature(blocks, features, "b", "log_mean_paragraph_chars") == pytest.approx(np.log1p(7))


def test_very_deep_document() -> None:
    body = etree.SubElement(html.Element("html"), "body")
    node = body
    for _ in range(5000):
        node = etree.SubElement(node, "div", {"class": "content"} if len(body) else {})
    node.text = "deep text"
    blocks = page_blocks(body.getparent())
    features = block_features(blocks)
    assert features.shape == (1, len(BLOCK_FEATURES))
    assert features[0, BLOCK_FEATURES.index("ancestor_class_article")] == 1.0
    assert features[0, BLOCK_FEATURES.index("depth")] == 1.0


CETD_COLUMNS = [i for i, name in enumerate(BLOCK_FEATURES) if name.startswith("cetd_")]


def test_rows_for_some_blocks_differ_from_all_rows_only_in_cetd() -> None:
    links = "".join(f"<div class='teaser'><a href='/{i}'>teaser {i}</a></div>" for i in range(12))
    root = parse_html(f"<html><body>{NAV_EN}{links}<div id='a'><p>{ARTICLE_EN}</p><p>{ARTICLE_EN}</p></div>"
                      "<div id='f'>Copyright 2024 The Example</div></body></html>")
    blocks = page_blocks(root)
    every = block_features(blocks, root)
    assert np.array_equal(block_features(blocks, root, list(range(len(blocks)))), every)
    scored = [i for i, block in enumerate(blocks) if block.element.get("id") in ("a", "f")]
    some = block_features(blocks, root, scored)
    other = [i for i in range(len(BLOCK_FEATURES)) if i not in CETD_COLUMNS]
    assert some.shape == (2, len(BLOCK_FEATURES))
    assert np.array_equal(some[:, other], every[scored][:, other])
    article = BLOCK_FEATURES.index("cetd_in_content")
    assert some[0, article] == every[scored[0], article] == 1.0  # still CETD's content block
    assert block_features(blocks, root, []).shape == (0, len(BLOCK_FEATURES))


def test_pruned_copy_holds_only_the_scored_regions() -> None:
    root = parse_html("<html><body>lead<div id='a'>Alpha <script>var x;</script>beta <span hidden>no</span>"
                      "gamma <b>bold</b> delta<div id='b'>dropped<div id='c'>kept inner</div>gone</div> after</div>"
                      "<div id='d'>dropped too</div>tail</body></html>")
    blocks = page_blocks(root)
    by_id = {block.element.get("id"): block for block in blocks}
    copy, twins = _pruned_copy(by_id[None].element, [by_id["a"], by_id["c"]])
    assert set(twins) == {by_id["a"].element, by_id["c"].element}
    assert copy.text is None and copy.tail is None  # the body's own region is not scored: no "lead", no "tail"
    assert twins[by_id["a"].element].text_content() == "Alpha beta gamma bold deltakept inner after"
    assert [element.tag for element in copy.iter()] == ["body", "div", "b", "div", "div"]
    assert twins[by_id["c"].element].getparent().text is None  # b's own text is left out with its region


def test_pruned_copy_leaves_out_what_the_segmentation_skips_for_its_class() -> None:
    # A class that hides and a figure's credit: the segmentation skips them, so CETD's copy has no text of theirs.
    root = parse_html("<html><body><div id='a'>Alpha <span class='d-none'>hidden</span>beta<figure><img src='x'>"
                      "<span class='credit'>Photo: AP</span></figure></div><div id='b'>other</div></body></html>")
    blocks = page_blocks(root)
    by_id = {block.element.get("id"): block for block in blocks}
    table = blocks[0].page.table  # the page table's segmentation skipped the two (its CETD statistics leave them out)
    assert table is not None and sorted(table.strings[table.cls[i]] for i in table.skipped) == ["credit", "d-none"]
    _, twins = _pruned_copy(walk_top(root), [by_id["a"]])  # the copy of a page over the block cap: looked for again
    assert twins[by_id["a"].element].text_content() == "Alpha beta"


def test_pruned_copy_of_a_very_deep_document() -> None:
    body = etree.SubElement(html.Element("html"), "body")
    node = body
    for depth in range(5000):
        node = etree.SubElement(node, "div")
        node.text = f"level {depth}"
    blocks = page_blocks(body.getparent())
    copy, twins = _pruned_copy(body, [blocks[-1]])
    assert twins[blocks[-1].element].text == "level 4999" and sum(1 for _ in copy.iter()) == 5001
    assert block_features(blocks, body.getparent(), [len(blocks) - 1]).shape == (1, len(BLOCK_FEATURES))


def test_paragraph_features_head_noise_vs_body() -> None:
    blocks, _ = _page(
        f"<div><p>分享到：</p><p>{ARTICLE_ZH}</p><p>{ARTICLE_ZH}</p><p><a href='/'>返回首页</a></p></div>"
    )
    (block,) = blocks
    features = paragraph_features(block)
    column = {name: features[:, i] for i, name in enumerate(PARAGRAPH_FEATURES)}
    assert column["text_density"].sum() == pytest.approx(1.0)
    assert column["text_density"][1] > 0.4 > column["text_density"][0]
    assert column["region_density"] == pytest.approx([0.25, 0.5, 0.75, 1.0])  # ((PC + PC) / 2) / APC
    assert column["is_first"].tolist() == [1, 0, 0, 0]
    assert column["is_last"].tolist() == [0, 0, 0, 1]
    assert column["link_density"].tolist() == [0, 0, 0, 1]
    assert column["zh_punct_density"][1] > 0.1 and column["zh_punct_density"][3] == 0.0
    assert column["noise_word_density"][3] == 1.0 and column["noise_word_density"][1] == 0.0
    assert column["log_chars"][0] == pytest.approx(np.log1p(4))


@pytest.mark.datasets
@pytest.mark.parametrize("dataset", ["cleaneval", "chinese-wced-dev"])
def test_real_pages_give_finite_features_in_range(dataset: str) -> None:
    folder = datasets_dir() / dataset
    if not folder.is_dir():
        pytest.skip(f"dataset folder {folder} is absent (set DATASETS_DIR)")
    unit = [BLOCK_FEATURES.index(name) for name in UNIT_COLUMNS]
    for page in islice(iter_pages(dataset), REAL_PAGES):
        root = parse_html(decode_text(page.html_bytes()))
        blocks = page_blocks(root)
        features = block_features(blocks, root)
        assert features.shape == (len(blocks), len(BLOCK_FEATURES)), page.page_id
        assert np.isfinite(features).all(), page.page_id
        assert ((features[:, unit] >= 0) & (features[:, unit] <= 1)).all(), page.page_id
        for block in blocks:
            paragraphs = paragraph_features(block)
            assert paragraphs.shape == (len(block.paragraphs), len(PARAGRAPH_FEATURES))
            assert np.isfinite(paragraphs).all() and paragraphs.min() >= 0
