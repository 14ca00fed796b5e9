"""Page clean-up done before content extraction (papers 000 and 001).

``preprocess`` edits the tree **in place** and returns the same root; callers that must keep
the original (for instance when several methods run on one parse) pass a deep copy. Removing an
element keeps its tail text, which belongs to the parent, not to the removed element.

Both papers clean the page before extracting: CETD-TPC (paper 001) works on the parsed body, and
I-AWCE (paper 000, section "去噪", tables 1-2) deletes script, style, head, nav and link (ad)
blocks. The page title lives in <head>: read it with ``extraction.dom.html.page_title`` first.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from lxml import etree, html

from extraction.dom.stats import compute_stats
from extraction.dom.text import is_hidden

SCRIPT_TAGS = frozenset({"script", "style", "noscript", "template"})
FORM_TAGS = frozenset({"form", "input", "select", "option", "datalist", "button", "textarea"})
EMBED_TAGS = frozenset({"iframe", "frame", "object", "embed", "svg", "canvas", "applet"})
NAV_TAGS = frozenset({"nav"})
# Blocks that paper 000's noise removal may delete as link (ad) blocks; never html/body.
LINK_BLOCK_TAGS = frozenset({"div", "ul", "ol", "dl", "table", "section", "aside", "header", "footer",
                             "nav", "menu", "span", "td", "tr", "p"})
# Paper 000 removes blocks that are "mostly links" but gives no number: a block whose link text
# is at least this share of its text is noise (our choice; real paragraphs rarely reach 70%).
LINK_HEAVY_SHARE = 0.7
# Characters lxml's parser lets into text but refuses when text is assigned (control characters,
# lone surrogates); moving a tail re-assigns text, so they are dropped then.
_XML_INVALID_RE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


@dataclass(frozen=True)
class PreprocessOptions:
    """Which kinds of noise ``preprocess`` removes; the defaults are what both papers remove."""

    scripts: bool = True  # script, style, noscript, template
    comments: bool = True  # comments and processing instructions
    head: bool = True  # <head> (title, meta, links)
    hidden: bool = True  # elements hidden by markup (extraction.dom.text.is_hidden)
    forms: bool = True  # form controls
    embeds: bool = True  # iframe, object, embed, svg, canvas
    nav: bool = False  # <nav> and role="navigation" (paper 000's noise removal)
    link_heavy: bool = False  # blocks whose text is mostly link text (paper 000, article pages)


# Paper 000's clean-up: article pages lose nav and link blocks, list pages keep their links
# (the list *is* links) and lose only nav and ads in embeds.
ARTICLE_NOISE = PreprocessOptions(nav=True, link_heavy=True)
LIST_NOISE = PreprocessOptions(nav=True)


def preprocess(root: html.HtmlElement, options: PreprocessOptions | None = None) -> html.HtmlElement:
    """Remove the noise ``options`` selects from ``root`` in place; return ``root``."""
    opts = options or PreprocessOptions()
    for node in noise_nodes(root, opts):
        remove_keep_tail(node)
    if opts.link_heavy:
        for node in link_heavy_blocks(root):
            remove_keep_tail(node)
    return root


def noise_nodes(root: html.HtmlElement, options: PreprocessOptions | None = None) -> list[etree._Element]:
    """Return the nodes under ``root`` that ``preprocess`` removes first, in document order (``link_heavy``
    aside: it is measured after them). The tree is not changed: ``compute_stats(top, skip=...)`` reads
    the page as if they were gone."""
    opts = options or PreprocessOptions()
    tags: set[str] = set()
    if opts.scripts:
        tags |= SCRIPT_TAGS
    if opts.forms:
        tags |= FORM_TAGS
    if opts.embeds:
        tags |= EMBED_TAGS
    if opts.head:
        tags.add("head")
    if opts.nav:
        tags |= NAV_TAGS
    doomed: list[etree._Element] = []
    for node in root.iter():
        if node is root:
            continue
        if not isinstance(node.tag, str):
            if opts.comments:
                doomed.append(node)
        elif (node.tag.lower() in tags or (opts.hidden and is_hidden(node))
              or (opts.nav and node.get("role") == "navigation")):
            doomed.append(node)
    return doomed


def link_heavy_blocks(root: html.HtmlElement) -> list[html.HtmlElement]:
    """Return the outermost blocks whose link text is >= LINK_HEAVY_SHARE of their text."""
    stats = compute_stats(root)
    found: list[html.HtmlElement] = []
    removed = [False] * len(stats)
    for i, element in enumerate(stats.elements):
        parent = stats.parent[i]
        if parent >= 0 and removed[parent]:
            removed[i] = True  # inside a block already removed
            continue
        if (element.tag in LINK_BLOCK_TAGS and stats.lcn[i] > 0
                and stats.lcn[i] >= LINK_HEAVY_SHARE * stats.cn[i]):
            removed[i] = True
            found.append(element)
    return found


def remove_keep_tail(node: etree._Element) -> None:
    """Detach ``node`` from its parent, moving its tail text to where the node was."""
    parent = node.getparent()
    if parent is None:
        return
    tail = node.tail
    if tail:
        previous = node.getprevious()
        if previous is not None:
            previous.tail = _XML_INVALID_RE.sub("", (previous.tail or "") + tail)
        else:
            parent.text = _XML_INVALID_RE.sub("", (parent.text or "") + tail)
    parent.remove(node)
