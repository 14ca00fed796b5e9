"""Per-element statistics (extraction.dom.stats) on hand-made pages with hand-computed numbers."""

from __future__ import annotations

from lxml import etree, html

from extraction.dom.html import parse_html
from extraction.dom.preprocess import remove_keep_tail
from extraction.dom.stats import compute_stats, text_length

PAGE = (
    "<html><body><div class='x  y'>ab <a href='#'>cd</a> ef<p>hello  world</p></div>"
    "<ul><li><a href='/1'><span>one</span></a></li></ul></body></html>"
)


def _row(stats, tag):
    i = next(k for k, e in enumerate(stats.elements) if e.tag == tag)
    return i


def test_counts_on_a_hand_made_page():
    stats = compute_stats(parse_html(PAGE))
    assert [e.tag for e in stats.elements] == ["html", "body", "div", "a", "p", "ul", "li", "a", "span"]
    div = _row(stats, "div")
    # "ab" + "cd" + "ef" + "hello world": 2 + 2 + 2 + 11 chars; "cd" is link text.
    assert (stats.cn[div], stats.lcn[div]) == (17, 2)
    # div, a, p: 3 tags, one of them a link.
    assert (stats.tn[div], stats.ltn[div]) == (3, 1)
    # Direct text of the div: "ab" and the <a>'s tail "ef".
    assert (stats.own_text_len[div], stats.own_text_nodes[div], stats.text_nodes[div]) == (4, 2, 4)
    assert stats.cls[div] == "x y"
    assert stats.depth[div] == 3
    assert stats.path_str(stats.path[div]) == "html/body/div"
    ul = _row(stats, "ul")
    # <span> inside <a>: its text is link text.
    assert (stats.cn[ul], stats.lcn[ul], stats.tn[ul], stats.ltn[ul]) == (3, 3, 4, 1)
    assert stats.in_link[_row(stats, "span")]
    root = 0
    assert (stats.cn[root], stats.lcn[root], stats.tn[root], stats.ltn[root]) == (20, 5, 9, 2)
    assert stats.children[div] == [3, 4]
    assert stats.parent[div] == 1 and stats.parent[root] == -1
    assert stats.index[stats.elements[div]] == div


def test_same_tag_path_shares_one_id():
    stats = compute_stats(parse_html("<body><p>a</p><p>b</p><div><p>c</p></div></body>"))
    paths = [stats.path_str(stats.path[i]) for i, e in enumerate(stats.elements) if e.tag == "p"]
    assert paths == ["html/body/p", "html/body/p", "html/body/div/p"]
    ps = [i for i, e in enumerate(stats.elements) if e.tag == "p"]
    assert stats.path[ps[0]] == stats.path[ps[1]] != stats.path[ps[2]]


def test_comment_tail_is_parent_text():
    root = html.fragment_fromstring("<div>a<!-- c -->bc</div>")
    stats = compute_stats(root)
    assert (stats.own_text_len[0], stats.own_text_nodes[0]) == (3, 2)
    assert len(stats) == 1


def test_whitespace_is_collapsed():
    assert text_length("  a \n\t b  ") == 3
    assert text_length(None) == 0
    stats = compute_stats(parse_html("<body>\n   <p>  </p>\n</body>"))
    assert stats.cn[0] == 0 and stats.text_nodes[0] == 0


def test_very_deep_tree_is_walked_iteratively():
    root = etree.Element("div")
    node = root
    for _ in range(5000):
        node = etree.SubElement(node, "div")
    node.text = "deep"
    stats = compute_stats(root)
    assert len(stats) == 5001
    assert stats.cn[0] == 4 and stats.tn[0] == 5001 and stats.depth[-1] == 5001


def test_skipped_elements_count_as_removed_with_their_tails_kept() -> None:
    """``compute_stats(top, skip)`` equals the statistics of a copy without the skipped elements
    (``remove_keep_tail``): text around a skipped element joins into one text node."""
    page = ("<body><div id='a'>Lead <script>var x = 1;</script> text <span hidden>secret words</span>"
            "<a href='/'>link <style>p {}</style>text</a> tail <b>bold</b><noscript>no</noscript></div>"
            "<p>Second <script>y()</script><script>z()</script> paragraph</p></body>")
    root = parse_html(page)
    body = root.find("body")
    skip = {node for node in body.iter("script", "style", "noscript", "span")}
    in_place = compute_stats(body, skip)
    copy = parse_html(page).find("body")
    for node in [node for node in copy.iter("script", "style", "noscript", "span")]:
        remove_keep_tail(node)
    pruned = compute_stats(copy)
    columns = ("parent", "children", "depth", "path", "cls", "in_link", "cn", "lcn", "tn", "ltn", "text_nodes",
               "own_text_len", "own_text_nodes")
    for column in columns:
        assert getattr(in_place, column) == getattr(pruned, column), column
    assert [node.tag for node in in_place.elements] == [node.tag for node in pruned.elements]
    div = in_place.index[body.find("div")]
    assert in_place.own_text_nodes[div] == 2  # "Lead  text " (before <a>) and " tail " (before <b>)
    assert in_place.cn[div] == len("Lead text") + len("link text") + len("tail") + len("bold")
