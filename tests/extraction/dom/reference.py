"""The Python walks the compiled page table replaced (``extraction/dom/pagetable.pyx``), kept as its test oracles.

The runtime has one implementation, the compiled one; these are the walks it was first written as, used only by
``test_pagetable.py`` to check that the compiled segmentation (``page_blocks``) and statistics (``compute_stats``)
are the same on generated and dataset pages. They read the rules where the runtime defines them.
"""

from __future__ import annotations

from collections.abc import Collection

from lxml import etree, html

from extraction.dom.blocks import (
    BLOCK_TAGS,
    DECORATION_TAGS,
    FIGURE_TAG,
    IMAGE_TAG,
    LINE_BREAK_TAGS,
    LINK_TAG,
    SKIPPED_TAGS,
    Block,
    PageTotals,
    Paragraph,
    _hidden_by_class,
    walk_top,
)
from extraction.dom.stats import DomStats, text_length
from extraction.dom.text import is_hidden

# Bit flags of a tag, looked up once per element.
_BLOCK = 1
_BREAK = 2
_LINK = 4
_IMAGE = 8
_DECORATION = 16
_INVISIBLE = 32
_FIGURE = 64


def _tag_kinds() -> dict[str, int]:
    kinds: dict[str, int] = {}
    for tags, flag in ((BLOCK_TAGS, _BLOCK | _BREAK), (LINE_BREAK_TAGS, _BREAK), ({LINK_TAG}, _LINK),
                       ({IMAGE_TAG}, _IMAGE), (DECORATION_TAGS, _DECORATION),
                       (SKIPPED_TAGS, _INVISIBLE), ({FIGURE_TAG}, _FIGURE)):
        for tag in tags:
            kinds[tag] = kinds.get(tag, 0) | flag
    return kinds


_KINDS = _tag_kinds()
# The attributes extraction.dom.text.is_hidden reads: elements without any of them are visible.
_HIDING_ATTRIBUTES = frozenset({"hidden", "aria-hidden", "style"})


class _Region:
    """Counts of one block element's own region while the walk is open."""

    __slots__ = ("deco_tags", "depth", "element", "imgs", "links", "order", "paragraphs", "tags")

    def __init__(self, element: html.HtmlElement, order: int, depth: int) -> None:
        self.element = element
        self.order = order
        self.depth = depth
        self.paragraphs: list[tuple[str, int, int]] = []  # (text, link chars, page line number)
        self.links = 0
        self.imgs = 0
        self.tags = 0
        self.deco_tags = 0


def _flush(line: list[str], link_chars: int, line_no: int, region: _Region) -> int:
    """End the current line: add it to ``region`` as a paragraph if it has text; return the next line number."""
    text = " ".join("".join(line).split())
    line.clear()
    if not text:
        return line_no
    region.paragraphs.append((text, link_chars, line_no))
    return line_no + 1


def page_blocks_reference(root: html.HtmlElement) -> list[Block]:
    """``page_blocks`` by the Python walk it was first written as (the table's oracle)."""
    top = walk_top(root)
    regions: list[_Region] = []
    stack: list[_Region] = []
    line: list[str] = []  # raw text pieces of the current line; it belongs to stack[-1]
    line_link = 0  # link characters of the current line
    line_no = 0
    order = -1
    depth = -1
    max_depth = 0
    in_link = 0  # open <a> elements
    in_figure = 0  # open <figure> elements
    skipped = False  # the previous event started an invisible element: this one is its end
    invisible: list[html.HtmlElement] = []  # the elements skipped
    kinds: list[int] = []  # kinds of the open elements, so that "end" need not read the tag again

    walker = etree.iterwalk(top, events=("start", "end", "comment", "pi"))
    for event, node in walker:
        if event == "start":
            kind = _KINDS.get(node.tag, 0)
            names = node.keys()  # one call instead of is_hidden's three lookups on most elements
            if kind & _INVISIBLE or (names and not _HIDING_ATTRIBUTES.isdisjoint(names) and is_hidden(node)) \
                    or ("class" in names and _hidden_by_class(node.get("class", ""), in_figure > 0)):
                walker.skip_subtree()  # its "end" still comes, right after
                skipped = True
                invisible.append(node)
                continue
            order += 1
            depth += 1
            kinds.append(kind)
            if kind & _BREAK and line:
                line_no = _flush(line, line_link, line_no, stack[-1])
                line_link = 0
            if depth > max_depth:
                max_depth = depth
            if kind & _BLOCK or node is top:
                region = _Region(node, order, depth)
                regions.append(region)
                stack.append(region)
            else:
                region = stack[-1]
            region.tags += 1
            if kind & _LINK:
                region.links += 1
                in_link += 1
            if kind & _FIGURE:
                in_figure += 1
            if kind & _IMAGE:
                region.imgs += 1
            if kind & _DECORATION:
                region.deco_tags += 1
            piece = node.text
            if piece:
                line.append(piece)
                if in_link:
                    line_link += len(" ".join(piece.split()))
            continue
        if event == "end":
            if skipped:
                skipped = False
            else:
                kind = kinds.pop()
                if kind & _LINK:
                    in_link -= 1
                if kind & _FIGURE:
                    in_figure -= 1
                is_block = bool(kind & _BLOCK) or node is top
                if (kind & _BREAK or is_block) and line:
                    line_no = _flush(line, line_link, line_no, stack[-1])
                    line_link = 0
                if is_block:
                    stack.pop()
                depth -= 1
            if node is top:
                break
        # "end" of an element, a comment or a processing instruction: its tail is the parent's text.
        piece = node.tail
        if piece:
            line.append(piece)
            if in_link:
                line_link += len(" ".join(piece.split()))
    return _finish(regions, order + 1, max_depth, line_no, top, frozenset(invisible))


def _finish(regions: list[_Region], elements: int, max_depth: int, lines: int, top: html.HtmlElement,
            invisible: frozenset[html.HtmlElement]) -> list[Block]:
    """Return the blocks of the regions that have text; empties ``regions`` as it goes, so that a
    page of 400,000 blocks does not hold both forms at once (about 80 MB less at the peak)."""
    chars = link_chars = links = imgs = 0
    for region in regions:
        for text, linked, _ in region.paragraphs:
            chars += len(text)
            link_chars += min(linked, len(text))
        links += region.links
        imgs += region.imgs
    page = PageTotals(elements, chars, link_chars, links, imgs, max_depth, lines, top)
    blocks: list[Block] = []
    regions.reverse()
    while regions:  # popped in document order: a region's memory is freed as its block is made
        region = regions.pop()
        if not region.paragraphs:
            continue
        # Link pieces are disjoint parts of the collapsed line, so linked <= len(text); min() guards it.
        paragraphs = [Paragraph(text, i, len(text), min(linked, len(text)), number, number)
                      for i, (text, linked, number) in enumerate(region.paragraphs)]
        blocks.append(Block(
            element=region.element, index=len(blocks), order=region.order, depth=region.depth,
            text="\n".join(p.text for p in paragraphs), paragraphs=paragraphs,
            chars=sum(p.chars for p in paragraphs), link_chars=sum(p.link_chars for p in paragraphs),
            links=region.links, imgs=region.imgs, tags=region.tags, deco_tags=region.deco_tags, page=page,
        ))
    return blocks


def compute_stats_reference(top: html.HtmlElement, skip: Collection[html.HtmlElement] = ()) -> DomStats:
    """``compute_stats`` by the Python walk it was first written as (the compiled walk's oracle)."""
    s = DomStats()
    # The walk runs once per page on every element (twice on list pages): the lists' methods are bound
    # once, and the text nodes of indentation alone (most of them) are passed over without a call.
    elements, parents, paths, in_links, index = s.elements, s.parent, s.path, s.in_link, s.index
    cn, lcn, tn, ltn = s.cn, s.lcn, s.tn, s.ltn
    text_nodes, own_len, own_nodes = s.text_nodes, s.own_text_len, s.own_text_nodes
    path_parents, path_tags = s.path_parent, s.path_tag
    path_ids: dict[tuple[int, str], int] = {}
    stack: list[int] = []  # indices of the open elements
    pending: list[str] = []  # per open element: the text node being read (text or tails between children)
    walker = etree.iterwalk(top, events=("start", "end", "comment", "pi"))
    skipped = None
    for event, node in walker:
        if event == "start":
            if skip and node in skip and node is not top:
                walker.skip_subtree()
                skipped = node
                if node.tail:
                    pending[-1] += node.tail  # the tail joins the text before the skipped element
                continue
            if stack:
                parent = stack[-1]
                text = pending[-1]  # the text node before this child ends here
                if text and not text.isspace():  # most are indentation: no call for them
                    _add_own_text(s, parent, text)
                pending[-1] = ""
                path_parent = paths[parent]
                parent_in_link = in_links[parent]
            else:
                parent = path_parent = -1
                parent_in_link = False
            i = len(elements)
            tag = node.tag.lower()
            key = (path_parent, tag)
            path = path_ids.get(key)
            if path is None:
                path = path_ids[key] = len(path_tags)
                path_parents.append(path_parent)
                path_tags.append(tag)
            is_link = tag == LINK_TAG
            elements.append(node)
            index[node] = i
            parents.append(parent)
            paths.append(path)
            in_links.append(is_link or parent_in_link)
            cn.append(0)
            lcn.append(0)
            text_nodes.append(0)
            own_len.append(0)
            own_nodes.append(0)
            tn.append(1)  # the block contains its own root tag
            ltn.append(1 if is_link else 0)
            stack.append(i)
            pending.append(node.text or "")
        elif event == "end":
            if node is skipped:
                skipped = None
                continue
            i = stack.pop()
            text = pending.pop()
            if text and not text.isspace():
                _add_own_text(s, i, text)
            if stack:
                # Post-order: the subtree of i is complete, fold it into the parent.
                parent = stack[-1]
                cn[parent] += cn[i]
                lcn[parent] += lcn[i]
                tn[parent] += tn[i]
                ltn[parent] += ltn[i]
                text_nodes[parent] += text_nodes[i]
                if node is not top and node.tail:
                    pending[-1] = node.tail
        elif stack and node is not top:
            # A comment or PI is not an element: its tail is direct text of the open element.
            _add_own_text(s, stack[-1], node.tail)
    return s


def _add_own_text(s: DomStats, i: int, text: str | None) -> None:
    """Count ``text`` as a direct text node of element ``i``."""
    length = text_length(text)
    if not length:
        return
    s.own_text_len[i] += length
    s.own_text_nodes[i] += 1
    s.cn[i] += length
    s.text_nodes[i] += 1
    if s.in_link[i]:
        s.lcn[i] += length
