"""The collapsed DOM (CDOM) of Web2Text (paper 002, section 3.1) and its leaves, the text blocks.

Paper 002 parses the page into a DOM tree, then

1. removes empty nodes and nodes holding only whitespace, and nodes with no extractable content:
   ``<br>``, ``<checkbox>``, ``<head>``, ``<hr>``, ``<iframe>``, ``<img>``, ``<input>``;
2. merges every parent that has a single child into that child, recursively ("Collapsed DOM");
3. takes the leaves of the result (the ``#text`` nodes), in document order, as the blocks to label.

Our reading, written down where the paper is silent:

* Text nodes are lxml's ``.text`` and ``.tail`` strings, each a leaf of its own; whitespace
  collapses to one space. Elements whose text is never shown (``extraction.dom.text.INVISIBLE_TAGS``:
  script, style, noscript, select ...; Jsoup keeps script/style bodies as data nodes, not text) and
  elements hidden by markup are removed with their subtrees, like the removed tags above; the
  tail text after them stays.
* Removal happens first, then empty elements (no text left below them) disappear, then the
  collapse: a node with one child becomes that child, and the merged node keeps the tags of the
  whole chain, outermost first (``<ul><li><a>x</a></li></ul>`` is one leaf with tags
  ``("ul", "li", "a")``). A text leaf that has element siblings has no tags of its own.
* The walk starts where the block classifier's does (``extraction.dom.blocks.walk_top``: the
  ``<body>``, else the element given) and is iterative: pages can be thousands of levels deep.
  Comments count only for the text after them (their tails).

Each leaf also carries what its features need from the raw tree before collapsing: flags of
its ancestors (inside a link, heading, list item, table cell, nav-like or article-like element,
under a noise or content class/id) and whether a line break separates it from the previous leaf
in the unstyled page (a visible block-level tag starts or ends between them, or a removed
``<br>``/``<hr>`` lies between them; a hidden block does not break the line).
"""

from __future__ import annotations

from dataclasses import dataclass

from lxml import etree, html

from extraction.blockclf.features import CLASS_GROUPS, element_groups
from extraction.dom.blocks import walk_top
from extraction.dom.text import BLOCK_TAGS as LINE_BREAK_TAGS
from extraction.dom.text import INVISIBLE_TAGS, is_hidden

# Paper 002, section 3.1: nodes without extractable content ("checkbox" is not an HTML tag; the
# paper's list is kept as printed, and <input type=checkbox> is covered by "input").
REMOVED_TAGS = frozenset({"br", "checkbox", "head", "hr", "iframe", "img", "input"})
SKIPPED_TAGS = REMOVED_TAGS | INVISIBLE_TAGS
_BREAKING_REMOVED_TAGS = frozenset({"br", "hr"})

# Ancestor flags of a leaf (raw tree, the element holding the text included).
IN_LINK = 1
IN_HEADING = 2
IN_LIST_ITEM = 4
IN_TABLE_CELL = 8
IN_NAV_LIKE = 16  # nav, header, footer, aside, menu
IN_ARTICLE_LIKE = 32  # article, main
UNDER_NOISE_CLASS = 64  # class/id tokens of the nav, footer, comment, sidebar, ad or share groups
UNDER_CONTENT_CLASS = 128  # class/id tokens of the article group

_TAG_FLAGS: dict[str, int] = {
    "a": IN_LINK, "h1": IN_HEADING, "h2": IN_HEADING, "h3": IN_HEADING, "h4": IN_HEADING, "h5": IN_HEADING,
    "h6": IN_HEADING, "li": IN_LIST_ITEM, "td": IN_TABLE_CELL, "th": IN_TABLE_CELL, "nav": IN_NAV_LIKE,
    "header": IN_NAV_LIKE, "footer": IN_NAV_LIKE, "aside": IN_NAV_LIKE, "menu": IN_NAV_LIKE,
    "article": IN_ARTICLE_LIKE, "main": IN_ARTICLE_LIKE,
}
_GROUP_NAMES = [name for name, _ in CLASS_GROUPS]
_CONTENT_GROUPS = 1 << _GROUP_NAMES.index("article")
_NOISE_GROUPS = sum(1 << _GROUP_NAMES.index(name) for name in ("nav", "footer", "comment", "sidebar", "ad", "share"))


@dataclass(slots=True)
class CNode:
    """One node of the collapsed DOM."""

    tags: tuple[str, ...]  # tags of the merged element chain, outermost first; () for a bare text node
    parent: int  # index of the parent node; -1 for the root
    depth: int  # the root has depth 0
    children: list[int]  # indices of the children, in document order; [] for a leaf
    first_leaf: int  # the leaves below the node are leaves[first_leaf:end_leaf]
    end_leaf: int


@dataclass(frozen=True)
class CDom:
    """A page's collapsed DOM: nodes in pre-order (the root first) and its leaves, the text blocks."""

    nodes: list[CNode]
    leaves: list[int]  # node index of each leaf, document order
    texts: list[str]  # text of each leaf, whitespace collapsed
    flags: list[int]  # ancestor flags of each leaf (IN_LINK ...)
    breaks: list[bool]  # per leaf: a line break separates it from the previous leaf
    owners: list[html.HtmlElement]  # per leaf: the element whose own text holds it (the parent, for a tail)

    def __len__(self) -> int:
        return len(self.leaves)

    @property
    def max_depth(self) -> int:
        """Return the largest node depth (0 for an empty or one-node tree)."""
        return max((node.depth for node in self.nodes), default=0)


class _Raw:
    """A node while the tree is built: an element (``leaf`` -1) or a text leaf (``leaf`` its number)."""

    __slots__ = ("children", "leaf", "tags")

    def __init__(self, tags: tuple[str, ...], leaf: int = -1) -> None:
        self.tags = tags
        self.children: list[_Raw] = []
        self.leaf = leaf


def _element_flags(element: html.HtmlElement, tag: str) -> int:
    flags = _TAG_FLAGS.get(tag, 0)
    groups = element_groups(element)
    if groups & _NOISE_GROUPS:
        flags |= UNDER_NOISE_CLASS
    if groups & _CONTENT_GROUPS:
        flags |= UNDER_CONTENT_CLASS
    return flags


def _finish(raw: _Raw) -> _Raw | None:
    """Return what an element becomes once its children are complete: None when it holds no text,
    its only child (carrying the element's tag in front of its own) when it has one, else itself."""
    if not raw.children:
        return None
    if len(raw.children) == 1:
        child = raw.children[0]
        child.tags = raw.tags + child.tags
        return child
    return raw


def collapse(root: html.HtmlElement) -> CDom:
    """Return the collapsed DOM of a parsed page (``root`` a document or any element)."""
    top = walk_top(root)  # the block classifier's top too, so that both see the same text
    texts: list[str] = []
    flags: list[int] = []
    breaks: list[bool] = []
    stack: list[_Raw] = [_Raw(())]  # a holder for the top element's result
    flag_stack: list[int] = [0]
    pending_break = False
    skip_depth = 0

    owners: list[html.HtmlElement] = []

    def add_text(value: str | None, owner: html.HtmlElement | None) -> None:
        nonlocal pending_break
        if value and not value.isspace() and owner is not None:
            owners.append(owner)
            text = " ".join(value.split())
            stack[-1].children.append(_Raw((), len(texts)))
            texts.append(text)
            flags.append(flag_stack[-1])
            breaks.append(pending_break and len(texts) > 1)
            pending_break = False

    for event, element in etree.iterwalk(top, events=("start", "end", "comment", "pi")):
        tag = element.tag
        if event in ("comment", "pi") or not isinstance(tag, str):  # only their tails count
            if event in ("comment", "pi") and not skip_depth:
                add_text(element.tail, element.getparent())
            continue
        if event == "start":
            if skip_depth or tag in SKIPPED_TAGS or is_hidden(element):
                skip_depth += 1
                if skip_depth == 1 and tag in _BREAKING_REMOVED_TAGS:
                    pending_break = True  # a removed <br>/<hr> still breaks the line; hidden blocks do not
                continue
            if tag in LINE_BREAK_TAGS:
                pending_break = True
            stack.append(_Raw((tag,)))
            flag_stack.append(flag_stack[-1] | _element_flags(element, tag))
            add_text(element.text, element)
            continue
        if skip_depth:
            skip_depth -= 1
            if skip_depth:
                continue
        else:
            flag_stack.pop()
            finished = _finish(stack.pop())
            if finished is not None:
                stack[-1].children.append(finished)
            if tag in LINE_BREAK_TAGS:
                pending_break = True
        if element is not top:
            add_text(element.tail, element.getparent())
    holder = stack[0]
    nodes: list[CNode] = []
    leaves: list[int] = [0] * len(texts)
    if holder.children:
        _flatten(holder.children[0], nodes, leaves)
    return CDom(nodes=nodes, leaves=leaves, texts=texts, flags=flags, breaks=breaks, owners=owners)


def _flatten(top: _Raw, nodes: list[CNode], leaves: list[int]) -> None:
    """Append the nodes below ``top`` (itself first) to ``nodes`` in pre-order and fill ``leaves``."""
    work: list[tuple[_Raw, int, int]] = [(top, -1, 0)]
    while work:
        raw, parent, depth = work.pop()
        index = len(nodes)
        first = raw.leaf if raw.leaf >= 0 else -1
        nodes.append(CNode(raw.tags, parent, depth, [], first, first + 1))
        if parent >= 0:
            nodes[parent].children.append(index)
        if raw.leaf >= 0:
            leaves[raw.leaf] = index
        # Children pushed in reverse so that they are numbered in document order.
        work.extend((child, index, depth + 1) for child in reversed(raw.children))
    # Leaf ranges: children follow their parent in pre-order, so a reverse pass sees them first.
    for node in reversed(nodes):
        if node.children:
            node.first_leaf = nodes[node.children[0]].first_leaf
            node.end_leaf = nodes[node.children[-1]].end_leaf
