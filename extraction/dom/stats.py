"""Per-element DOM statistics shared by CETD-TPC (paper 001) and I-AWCE (paper 000).

One iterative walk (compiled: ``extraction.dom.pagetable.dom_stats``; the Python form it replaced is the tests'
oracle, tests/extraction/dom/reference.py): "start" assigns an element its index, depth and tag
path; "end" -- post-order -- folds its subtree totals into its parent; a comment's or PI's tail is
text of the open element), so it is linear in the number of nodes and safe on arbitrarily deep
pages. Everything is stored in parallel lists indexed by document (pre-)order; ``index`` maps an
element back to its position.

Definitions (paper 001, section 2.2, "文本块" = the subtree rooted at the element):

* CN: characters of all text under the element. Each text node counts its whitespace-collapsed,
  stripped length, so indentation in the source does not count as text.
* LCN: the part of CN that lies inside an ``<a>`` (the element itself included).
* TN: tags the block contains; the block ``blk(v)`` is the subtree rooted at ``v``, so ``v``
  itself counts: a bare ``<p>`` has TN = 1.
* LTN: ``<a>`` tags the block contains, ``v`` included when it is an ``<a>``.
* text nodes: non-empty text nodes (``el.text`` and the tails of its children); ``own_*`` are the
  element's direct text nodes, which are what paper 001's TPR counts per tag path.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field
from functools import cached_property

from lxml import html

from extraction.dom.pagetable import dom_stats

LINK_TAG = "a"


def text_length(text: str | None) -> int:
    """Return the whitespace-collapsed, stripped length of ``text`` (0 for None)."""
    return len(" ".join(text.split())) if text else 0


@dataclass
class DomStats:
    """Per-element statistics in parallel lists, document order (index 0 is the walk's top).

    ``children``, ``depth`` and ``cls`` (read by I-AWCE and the list reader only) are derived from
    ``parent`` and ``elements`` the first time they are read, not in the walk every page pays for.
    """

    elements: list[html.HtmlElement] = field(default_factory=list)
    index: dict[html.HtmlElement, int] = field(default_factory=dict)
    parent: list[int] = field(default_factory=list)  # -1 for the top element
    path: list[int] = field(default_factory=list)  # interned tag-path id, see path_str()
    in_link: list[bool] = field(default_factory=list)  # the element is or is inside an <a>
    cn: list[int] = field(default_factory=list)
    lcn: list[int] = field(default_factory=list)
    tn: list[int] = field(default_factory=list)
    ltn: list[int] = field(default_factory=list)
    text_nodes: list[int] = field(default_factory=list)  # non-empty text nodes in the subtree
    own_text_len: list[int] = field(default_factory=list)  # chars of the direct text nodes
    own_text_nodes: list[int] = field(default_factory=list)  # number of direct text nodes
    path_parent: list[int] = field(default_factory=list)  # per path id: parent path id or -1
    path_tag: list[str] = field(default_factory=list)  # per path id: its last tag

    def __len__(self) -> int:
        return len(self.elements)

    @cached_property
    def children(self) -> list[list[int]]:
        """Per element, its element children's indices, in order."""
        children: list[list[int]] = [[] for _ in self.elements]
        for i, parent in enumerate(self.parent):
            if parent >= 0:
                children[parent].append(i)
        return children

    @cached_property
    def depth(self) -> list[int]:
        """Per element, its depth: the top element is 1 (paper 000, figure 7)."""
        depth: list[int] = []
        for parent in self.parent:  # pre-order: a parent comes before its children
            depth.append(depth[parent] + 1 if parent >= 0 else 1)
        return depth

    @cached_property
    def cls(self) -> list[str]:
        """Per element, its class attribute, whitespace-normalised."""
        return [" ".join(value.split()) if (value := element.get("class")) else "" for element in self.elements]

    def path_str(self, path_id: int) -> str:
        """Return the tag path of a path id as text, e.g. ``"html/body/div/p"``."""
        tags: list[str] = []
        while path_id >= 0:
            tags.append(self.path_tag[path_id])
            path_id = self.path_parent[path_id]
        return "/".join(reversed(tags))


def compute_stats(top: html.HtmlElement, skip: Collection[html.HtmlElement] = ()) -> DomStats:
    """Return the :class:`DomStats` of ``top``'s subtree (comments and PIs are not elements).

    ``skip``: elements counted as if they had been removed with their tails kept
    (``extraction.dom.preprocess.remove_keep_tail``): their subtrees are not walked and the text
    around them joins into one text node, so the statistics equal those of a pruned copy without
    making one. The walk is compiled (``extraction.dom.pagetable.dom_stats``).
    """
    (elements, parent, path, in_link, cn, lcn, tn, ltn, text_nodes, own_len, own_nodes, path_parent,
     path_tag) = dom_stats(top, skip)
    index = {element: i for i, element in enumerate(elements)}
    return DomStats(elements, index, parent, path, in_link, cn, lcn, tn, ltn, text_nodes, own_len, own_nodes,
                    path_parent, path_tag)


