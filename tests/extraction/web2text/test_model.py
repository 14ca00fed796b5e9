"""Web2Text (paper 002): the collapsed DOM on hand-made trees, the block and edge features by name, Viterbi
against brute force, and the shipped ONNX networks (parity with torch's stored outputs, refusal of a
foreign meta.json, an article page end to end, how content leaves are joined)."""

from __future__ import annotations

import itertools
import json
import math
import shutil
from pathlib import Path

import numpy as np
import pytest
from lxml import etree
from lxml import html as lxml_html

from extraction.blockclf.classifier import ModelError
from extraction.dom.html import parse_html
from extraction.methods import extract
from extraction.web2text import cdom as cd
from extraction.web2text.cdom import CDom, collapse
from extraction.web2text.features import (
    BINARY_BLOCK,
    BINARY_EDGE,
    BLOCK_FEATURES,
    EDGE_FEATURES,
    FEATURE_VERSION,
    page_features,
    words_of,
)
from extraction.web2text.model import META_FILE, MODEL_DIR, Web2TextModel, content_text, decode
from extraction.web2text.viterbi import sequence_score, viterbi, with_threshold

PARITY_TOLERANCE = 1e-5
requires_model = pytest.mark.skipif(not (MODEL_DIR / META_FILE).exists(),
                                    reason="no trained Web2Text model in models/web2text (run `make train-web2text`)")


def _cdom(body: str) -> CDom:
    return collapse(parse_html(f"<html><head><title>t</title></head><body>{body}</body></html>"))


def _features(body: str) -> tuple[CDom, np.ndarray, np.ndarray]:
    page = _cdom(body)
    block, edge = page_features(page)
    return page, block, edge


def _col(block: np.ndarray, name: str, table: tuple[str, ...] = BLOCK_FEATURES) -> np.ndarray:
    return block[:, table.index(name)]


# --- collapsed DOM -------------------------------------------------------------------------------


def test_whitespace_and_empty_elements_disappear() -> None:
    page = _cdom("<div>  \n <span> </span><p></p><em>\t</em><p>Kept text</p>   </div>")
    assert page.texts == ["Kept text"]
    assert len(page.nodes) == 1
    assert page.nodes[0].tags == ("body", "div", "p")


def test_removed_and_invisible_tags_go_but_their_tails_stay() -> None:
    page = _cdom("<div>A<br>B<img src='x.png'>C<input value='v'>D<hr>E<iframe>frame</iframe>F"
                 "<script>var x = 1;</script>G<style>p {color: red}</style>H</div>")
    assert page.texts == list("ABCDEFGH")
    assert not any(text in " ".join(page.texts) for text in ("frame", "var", "color"))
    assert all(page.nodes[leaf].tags == () for leaf in page.leaves)


def test_head_is_removed() -> None:
    page = collapse(parse_html("<html><head><title>Title here</title></head><body><p>Body</p></body></html>"))
    assert page.texts == ["Body"]
    tree = lxml_html.fromstring("<div><head><title>Inner</title></head><p>Only</p></div>")
    assert collapse(tree).texts == ["Only"]


def test_single_child_chain_merges_into_one_leaf() -> None:
    page = _cdom("<div><ul><li><a href='/x'>x</a></li></ul><p>other</p></div>")
    leaf = page.nodes[page.leaves[0]]
    assert leaf.tags == ("ul", "li", "a")
    assert leaf.children == []
    assert page.nodes[page.leaves[1]].tags == ("p",)


def test_list_with_two_items_keeps_its_node() -> None:
    page = _cdom("<div><ul><li>one</li><li>two</li></ul><p>after</p></div>")
    ul = next(index for index, node in enumerate(page.nodes) if node.tags == ("ul",))
    assert [page.nodes[child].tags for child in page.nodes[ul].children] == [("li",), ("li",)]
    assert [page.texts[page.nodes[child].first_leaf] for child in page.nodes[ul].children] == ["one", "two"]


def test_leaves_in_document_order_and_leaf_ranges() -> None:
    page = _cdom("<div><p>a <b>b</b> c</p><section><ul><li>d</li><li><i>e</i> f</li></ul></section><p>g</p></div>")
    assert page.texts == list("abcdefg")
    assert page.leaves == sorted(page.leaves)  # pre-order numbering follows document order
    for index, node in enumerate(page.nodes):
        below = [leaf for leaf in page.leaves if _is_below(page, leaf, index)]
        assert page.leaves[node.first_leaf:node.end_leaf] == below
        if node.parent >= 0:
            assert node.depth == page.nodes[node.parent].depth + 1
            assert index in page.nodes[node.parent].children
    assert page.nodes[0].parent == -1 and page.nodes[0].depth == 0
    depths = {page.texts[i]: page.nodes[leaf].depth for i, leaf in enumerate(page.leaves)}
    # body>div root; p at 1 with a, b, c at 2; section>ul at 1, li "d" at 2, li at 2 with e, f at 3; p "g" at 1.
    assert depths == {"a": 2, "b": 2, "c": 2, "d": 2, "e": 3, "f": 3, "g": 1}
    assert page.max_depth == 3


def _is_below(page: CDom, node: int, ancestor: int) -> bool:
    while node >= 0:
        if node == ancestor:
            return True
        node = page.nodes[node].parent
    return False


def test_text_leaf_beside_an_element_has_no_tags() -> None:
    page = _cdom("<p>Hello <b>world</b> again.</p><p>next</p>")
    assert [page.nodes[leaf].tags for leaf in page.leaves] == [(), ("b",), (), ("p",)]


def test_ancestor_flags() -> None:
    page = _cdom("<div class='nav'><a href='/'>Home</a> <span>Menu</span></div>"
                 "<div class='article-body'><h2>Title</h2><p>Body <a href='/l'>link</a>.</p></div>"
                 "<div id='content'><p>More</p></div><p>Plain</p>")
    flags = dict(zip(page.texts, page.flags, strict=True))
    assert flags["Home"] & cd.IN_LINK and flags["Home"] & cd.UNDER_NOISE_CLASS
    assert flags["Menu"] == cd.UNDER_NOISE_CLASS
    assert flags["Title"] == cd.IN_HEADING | cd.UNDER_CONTENT_CLASS
    assert flags["Body"] == cd.UNDER_CONTENT_CLASS
    assert flags["link"] == cd.IN_LINK | cd.UNDER_CONTENT_CLASS
    assert flags["."] == cd.UNDER_CONTENT_CLASS  # the tail after </a> is outside the link
    assert flags["More"] == cd.UNDER_CONTENT_CLASS
    assert flags["Plain"] == 0


def test_line_breaks() -> None:
    page = _cdom("<p>Hello <b>world</b></p><p>Second<br>line</p>")
    assert page.texts == ["Hello", "world", "Second", "line"]
    assert page.breaks == [False, False, True, True]


def test_hidden_block_does_not_break_the_line_but_a_removed_br_does() -> None:
    assert _cdom("a<div hidden>h</div>b<br>c").breaks == [False, False, True]


def test_hidden_elements_are_removed() -> None:
    page = _cdom("<p>shown</p><p style='display: none'>secret</p><div hidden>also secret</div>"
                 "<span style='visibility:hidden'>gone</span><p>visible</p>")
    assert page.texts == ["shown", "visible"]


def test_deep_pages_do_not_recurse() -> None:
    page = collapse(parse_html("<html><body>" + "<div>" * 5000 + "deep text" + "</div>" * 5000 + "</body></html>"))
    assert page.texts == ["deep text"]
    # A tree built directly keeps its depth: each level holds a text and the next level.
    root = lxml_html.Element("div")
    element = root
    for level in range(5000):
        element.text = f"t{level}"
        element = etree.SubElement(element, "div")
    element.text = "bottom"
    page = collapse(root)
    assert len(page) == 5001 and page.max_depth == 5000
    assert page.texts[0] == "t0" and page.texts[-1] == "bottom"
    block, edge = page_features(page)
    assert block.shape == (5001, 128) and edge.shape == (5000, 25)


def test_page_without_text_is_empty() -> None:
    page = _cdom("<div> <img src='a.png'> <script>x()</script><p>  </p></div>")
    assert len(page) == 0 and page.nodes == [] and page.max_depth == 0
    block, edge = page_features(page)
    assert block.shape == (0, 128) and edge.shape == (0, 25)


# --- features ------------------------------------------------------------------------------------


def test_feature_names() -> None:
    assert len(BLOCK_FEATURES) == 128 and len(set(BLOCK_FEATURES)) == 128
    assert len(EDGE_FEATURES) == 25 and len(set(EDGE_FEATURES)) == 25
    assert len(BINARY_BLOCK) == 128 and len(BINARY_EDGE) == 25


def test_link_density_and_stop_words() -> None:
    _, block, _ = _features("<ul><li><a href='/home'>Home News Sport</a></li><li><a href='/w'>World</a></li></ul>"
                            "<p>The cat is on the mat and it is happy.</p>")
    assert block.shape == (3, 128)
    density = _col(block, "leaf_link_density")
    stops = _col(block, "leaf_stop_word_ratio")
    assert density.tolist() == [1.0, 1.0, 0.0]
    assert stops[0] == 0.0
    assert stops[2] == pytest.approx(7 / 10)  # the, is, on, the, and, it, is of 10 words
    assert _col(block, "leaf_in_link").tolist() == [1.0, 1.0, 0.0]
    assert _col(block, "leaf_tag_a").tolist() == [1.0, 1.0, 0.0]
    assert _col(block, "leaf_tag_p").tolist() == [0.0, 0.0, 1.0]


def test_chinese_words_and_han_ratio() -> None:
    text = "这是我的书了。"
    assert "的" in words_of(text) and "了" in words_of(text)
    _, block, _ = _features(f"<p>{text}</p><p>Home page</p>")
    assert _col(block, "leaf_stop_word_ratio")[0] > 0
    assert _col(block, "leaf_han_ratio")[0] == pytest.approx(1.0)
    assert _col(block, "leaf_han_ratio")[1] == 0.0


@pytest.mark.parametrize(("text", "column"), [("Contact: a@b.com", "leaf_has_email"),
                                              ("see www.example.com", "leaf_has_url"),
                                              ("Founded 2019", "leaf_has_year"),
                                              ("\u00a9 2020 Foo", "leaf_has_copyright")])
def test_text_flags(text: str, column: str) -> None:
    _, block, _ = _features(f"<p>{text}</p><p>Plain words here</p>")
    assert _col(block, column).tolist() == [1.0, 0.0]


def test_duplicate_text() -> None:
    _, block, _ = _features("<p>Share</p><p>Unique text</p><p>Share</p>")
    assert _col(block, "leaf_duplicate").tolist() == [1.0, 0.0, 1.0]
    assert _col(block, "leaf_log_duplicates") == pytest.approx([math.log1p(1), 0.0, math.log1p(1)])


# body (root, depth 0)
#   div>p (1): "One" (2), b "two" (2)
#   div>p (1): i "three" (2), "four" (2)
#   section>ul (1): li (2): i "five" (3), "six" (3); li "seven" (2)
EDGE_PAGE = ("<div><p>One <b>two</b></p></div><div><p><i>three</i> four</p></div>"
             "<section><ul><li><i>five</i> six</li><li>seven</li></ul></section>")


def test_edge_distances_and_line_breaks() -> None:
    page, _, edge = _features(EDGE_PAGE)
    assert page.texts == ["One", "two", "three", "four", "five", "six", "seven"]
    assert edge.shape == (6, 25)
    # One-two siblings: 1 + 1; two-three via body: 2 + 2; three-four: 1 + 1; four-five via body: 2 + 3;
    # five-six: 1 + 1; six-seven via the ul node: 2 + 1.
    expected = {0: "distance_2", 1: "distance_4", 2: "distance_2", 3: "distance_over_4", 4: "distance_2",
                5: "distance_3"}
    for row, name in expected.items():
        onehot = edge[row, :4]
        assert onehot.sum() == 1.0 and onehot[EDGE_FEATURES.index(name)] == 1.0, (row, onehot)
    assert page.breaks == [False, False, True, False, True, False, True]
    assert _col(edge, "line_break", EDGE_FEATURES).tolist() == [float(b) for b in page.breaks[1:]]


def test_edge_ancestor_stats_are_the_common_ancestors() -> None:
    page, block, edge = _features(EDGE_PAGE)
    # six-seven: their common ancestor is the section>ul node, the parent of "seven".
    assert _col(edge, "ancestor_log_chars", EDGE_FEATURES)[5] == pytest.approx(math.log1p(len("fivesixseven")))
    assert _col(edge, "ancestor_log_leaves", EDGE_FEATURES)[5] == pytest.approx(math.log1p(3))
    parent_cols = [BLOCK_FEATURES.index(f"parent_{name[len('ancestor_'):]}") for name in EDGE_FEATURES[5:]]
    np.testing.assert_allclose(edge[5, 5:], block[6, parent_cols])
    # two-three: the body, the root of the page.
    root_cols = [BLOCK_FEATURES.index(f"root_{name[len('ancestor_'):]}") for name in EDGE_FEATURES[5:]]
    np.testing.assert_allclose(edge[1, 5:], block[0, root_cols])
    assert _col(edge, "ancestor_log_chars", EDGE_FEATURES)[1] == pytest.approx(math.log1p(sum(map(len, page.texts))))


def test_positions_and_shares() -> None:
    page, block, _ = _features(EDGE_PAGE)
    position = _col(block, "leaf_relative_position")
    assert position[0] == 0.0
    assert position == pytest.approx([i / 7 for i in range(7)])
    chars = np.cumsum([0] + [len(text) for text in page.texts])
    assert _col(block, "leaf_chars_before_share") == pytest.approx(chars[:-1] / chars[-1])
    assert _col(block, "leaf_relative_depth")[4] == pytest.approx(1.0)  # "five" is the deepest node


def test_sentences_across_leaves() -> None:
    _, block, _ = _features("<p>Hello <b>world</b> again.</p><p>Two sentences. Here!</p>")
    assert _col(block, "parent_log_sentences")[0] == pytest.approx(math.log1p(1))
    assert _col(block, "leaf_log_sentences")[3] == pytest.approx(math.log1p(2))
    assert _col(block, "leaf_ends_sentence").tolist() == [0.0, 0.0, 1.0, 1.0]


def test_trailing_punctuation_leaf_opens_no_sentence() -> None:
    # The div's text is "Done. »": one sentence (no word after its end); "Done. More" is two.
    _, block, _ = _features("<div><p>Done.</p><p>\u00bb</p></div><div><p>Done.</p><p>More</p></div>")
    assert _col(block, "parent_log_sentences").tolist() == pytest.approx([math.log1p(1)] * 2 + [math.log1p(2)] * 2)


def _news_page(paragraphs: list[str]) -> str:
    nav = "<nav class='menu'><ul>" + "".join(
        f"<li><a href='/{item.lower()}'>{item}</a></li>"
        for item in ("Home", "World", "Politics", "Business", "Sport", "Culture")) + "</ul></nav>"
    article = ("<article class='article-body'><h1>River council approves flood defence plan</h1>"
               + "".join(f"<p>{text}</p>" for text in paragraphs) + "</article>")
    footer = ("<footer class='footer'><p>\u00a9 2024 The Riverside Gazette. All rights reserved.</p>"
              "<p>Contact: newsdesk@riverside-gazette.example | www.riverside-gazette.example</p></footer>")
    return (f"<html><head><title>Flood plan</title></head><body><header>{nav}</header>"
            f"<main>{article}</main>{footer}</body></html>")


ARTICLE = [
    "The river council voted on Tuesday evening to approve a flood defence plan that has been debated for "
    "almost three years, after residents of the lower town were forced from their homes twice last winter.",
    "Under the plan, a new earth embankment will be built along the eastern bank of the river, and the old "
    "stone wall near the market square will be raised by nearly a metre. Work is expected to begin in the "
    "spring and to last about eighteen months.",
    "Several members of the council said the cost of the project, which engineers put at more than twelve "
    "million pounds, was too high for a town of this size. Others argued that the damage caused by a single "
    "serious flood would be far greater than the price of the defences.",
    "Local shop owners welcomed the decision. One baker, whose premises were flooded in January, said she had "
    "been waiting for the council to act since the first storm and that many of her neighbours had already "
    "moved away because they could not get insurance.",
    "The council will hold a public meeting next month to explain the timetable for the work, and residents "
    "are invited to send their questions in advance. A full report on the plan is available at the town hall "
    "and in the public library.",
]


def test_binary_columns_hold_only_zero_and_one() -> None:
    page = collapse(parse_html(_news_page(ARTICLE)))
    block, edge = page_features(page)
    for matrix, binary in ((block, BINARY_BLOCK), (edge, BINARY_EDGE)):
        columns = matrix[:, np.asarray(binary)]
        assert np.isin(columns, (0.0, 1.0)).all()
    # The page is varied enough that the binary columns are not all trivially zero.
    assert block[:, np.asarray(BINARY_BLOCK)].any(axis=0).sum() > 20
    assert np.isfinite(block).all() and np.isfinite(edge).all()


# --- Viterbi -------------------------------------------------------------------------------------


def _brute_force(unary: np.ndarray, pairwise: np.ndarray, weight: float) -> tuple[int, ...]:
    labellings = itertools.product((0, 1), repeat=len(unary))
    return max(labellings, key=lambda labels: sequence_score(labels, unary, pairwise, weight))


def test_viterbi_joint_optimum_differs_from_independent_argmax() -> None:
    unary = np.array([[0.4, 0.6], [0.6, 0.4], [0.4, 0.6]])
    pairwise = np.array([[0.45, 0.05, 0.05, 0.45]] * 2)  # neighbours agree
    # By hand (natural logs: .6 -> -0.511, .4 -> -0.916, .45 -> -0.799, .05 -> -2.996):
    #   1 0 1: 3 * -0.511 + 2 * -2.996 = -7.524
    #   1 1 1: 2 * -0.511 - 0.916 + 2 * -0.799 = -3.535   <- best
    #   0 0 0: 2 * -0.916 - 0.511 + 2 * -0.799 = -3.940
    #   mixed labellings pay at least one -2.996 edge and score below -5.
    assert unary.argmax(axis=1).tolist() == [1, 0, 1]
    assert viterbi(unary, pairwise).tolist() == [1, 1, 1]
    assert _brute_force(unary, pairwise, 1.0) == (1, 1, 1)
    assert sequence_score([1, 1, 1], unary, pairwise) == pytest.approx(2 * math.log(0.6) + math.log(0.4)
                                                                        + 2 * math.log(0.45))
    assert viterbi(unary, pairwise, weight=0.0).tolist() == [1, 0, 1]


def test_viterbi_matches_brute_force_on_random_cases() -> None:
    rng = np.random.default_rng(7)
    for case in range(200):
        n = int(rng.integers(1, 9))
        unary = rng.dirichlet((1.0, 1.0), size=n)
        pairwise = rng.dirichlet((1.0, 1.0, 1.0, 1.0), size=n - 1).reshape(n - 1, 4)
        weight = (0.0, 0.5, 1.0, 2.0)[case % 4]
        labels = viterbi(unary, pairwise, weight)
        best = _brute_force(unary, pairwise, weight)
        assert sequence_score(labels, unary, pairwise, weight) == pytest.approx(
            sequence_score(best, unary, pairwise, weight), abs=1e-12), case
        assert tuple(labels.tolist()) == best, case
        if weight == 0.0:
            assert labels.tolist() == unary.argmax(axis=1).tolist()


def test_threshold_moves_the_unary_decision_point() -> None:
    unary = np.array([[0.65, 0.35], [0.75, 0.25], [0.5, 0.5]])
    # p(1) >= 0.3 becomes p(1) >= 0.5: 0.35 is content after, 0.25 is not; 0.5 stays content.
    assert viterbi(with_threshold(unary, 0.3), np.full((2, 4), 0.25), 0.0).tolist() == [1, 0, 1]
    assert with_threshold(unary, 0.5) == pytest.approx(unary)
    assert with_threshold(unary, 0.3).sum(axis=1) == pytest.approx([1.0, 1.0, 1.0])
    with pytest.raises(ValueError):
        with_threshold(unary, 1.0)


def test_decode_never_leaves_a_page_empty() -> None:
    # Strong 0-0 transitions outvote the one leaf over the threshold: the per-leaf decision is kept.
    unary = np.array([[0.9, 0.1], [0.4, 0.6], [0.9, 0.1]])
    sticky = np.tile([0.97, 0.01, 0.01, 0.01], (2, 1))
    assert viterbi(with_threshold(unary, 0.5), sticky, 2.0).tolist() == [0, 0, 0]
    decided = decode(unary, sticky, 2.0, 0.5)
    assert decided.labels.tolist() == [0, 1, 0] and decided.fallback == "per-leaf"
    # Nothing over the threshold: the most probable leaf.
    low = np.array([[0.9, 0.1], [0.7, 0.3], [0.8, 0.2]])
    decided = decode(low, sticky, 2.0, 0.5)
    assert decided.labels.tolist() == [0, 1, 0] and decided.fallback == "most-probable"
    # A normal decision is untouched, and an empty page stays empty.
    assert decode(unary, np.full((2, 4), 0.25), 0.0, 0.5).fallback is None
    assert decode(np.zeros((0, 2)), np.zeros((0, 4)), 2.0, 0.5).labels.tolist() == []


def test_viterbi_small_and_bad_shapes() -> None:
    assert viterbi(np.zeros((0, 2)), np.zeros((0, 4))).tolist() == []
    assert viterbi([[0.3, 0.7]], np.zeros((0, 4))).tolist() == [1]
    assert viterbi([[0.8, 0.2]], np.zeros((0, 4))).tolist() == [0]
    with pytest.raises(ValueError):
        viterbi(np.full((3, 3), 0.5), np.full((2, 4), 0.25))
    with pytest.raises(ValueError):
        viterbi(np.full((3, 2), 0.5), np.full((3, 4), 0.25))
    with pytest.raises(ValueError):
        viterbi(np.full((3, 2), 0.5), np.full((2, 2), 0.25))
    with pytest.raises(ValueError):
        viterbi(np.full(4, 0.5), np.full((3, 4), 0.25))


# --- model ---------------------------------------------------------------------------------------


@requires_model
def test_onnx_matches_stored_torch_outputs() -> None:
    model = Web2TextModel.load()
    parity = model.meta["parity"]
    for name, session, features in (("unary", model.unary, len(BLOCK_FEATURES)),
                                    ("pairwise", model.pairwise, len(EDGE_FEATURES))):
        rows = np.random.default_rng(features).standard_normal((12, features)).astype(np.float32)
        out = session.run(["probs"], {"features": np.ascontiguousarray(rows.T[np.newaxis])})[0][0].T
        expected = np.asarray(parity[name]["torch_output"], dtype=np.float64)
        assert out.shape == expected.shape == (12, 2 if name == "unary" else 4)
        np.testing.assert_allclose(out, expected, atol=PARITY_TOLERANCE, rtol=0)
        np.testing.assert_allclose(out.sum(axis=1), 1.0, atol=1e-5)


def test_load_from_empty_folder_names_the_make_target(tmp_path: Path) -> None:
    with pytest.raises(ModelError, match="make train-web2text"):
        Web2TextModel.load(tmp_path)


@requires_model
def test_meta_with_other_feature_version_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "web2text"
    shutil.copytree(MODEL_DIR, folder)
    Web2TextModel.load(folder)  # the copy itself loads
    meta = json.loads((folder / META_FILE).read_text(encoding="utf-8"))
    meta["feature_version"] = FEATURE_VERSION + 1
    (folder / META_FILE).write_text(json.dumps(meta), encoding="utf-8")
    with pytest.raises(ModelError, match="other features"):
        Web2TextModel.load(folder)


@requires_model
def test_potentials_and_labels_have_the_page_shapes() -> None:
    model = Web2TextModel.load()
    page = collapse(parse_html(_news_page(ARTICLE)))
    labelling = model.label(page)
    n = len(page)
    assert labelling.unary.shape == (n, 2) and labelling.pairwise.shape == (n - 1, 4)
    assert labelling.labels.shape == (n,) and set(labelling.labels.tolist()) <= {0, 1}
    np.testing.assert_allclose(labelling.unary.sum(axis=1), 1.0, atol=1e-5)


@requires_model
def test_extract_keeps_the_article_and_drops_the_footer() -> None:
    text = extract(_news_page(ARTICLE), "web2text").text
    article_words = words_of(" ".join(ARTICLE))
    kept = set(words_of(text))
    share = sum(word in kept for word in article_words) / len(article_words)
    assert share >= 0.8, text
    assert "rights reserved" not in text and "\u00a9" not in text, text


def test_content_text_joins_lines_and_gaps() -> None:
    page = _cdom("<p>Hello <b>world</b> again.</p><p>Two</p><p>Three <a href='/x'>link</a> end</p>")
    assert page.texts == ["Hello", "world", "again.", "Two", "Three", "link", "end"]
    assert content_text(page, [1, 1, 1, 1, 1, 1, 1]) == "Hello world again.\nTwo\nThree link end"
    assert content_text(page, [1, 0, 1, 0, 1, 1, 0]) == "Hello\nagain.\nThree link"
    assert content_text(page, np.zeros(7, dtype=np.int64)) == ""
    assert content_text(page, [0, 0, 0, 1, 0, 0, 1]) == "Two\nend"
