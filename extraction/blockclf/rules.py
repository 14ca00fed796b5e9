"""The rules the default flow applies after the block model's decision (``classify`` calls them in order).

The stacked model reads each block with its neighbours, and some of its errors are decisions that the page's
own structure settles. Each rule is a function of the page's blocks and the decision so far, returning the
blocks (or paragraphs) to add or drop; ``classify`` applies them and counts each
(``BlockDecision``, the crawl's ``blocks/<rule>`` stats):

* ``sibling_blocks``: a dropped block like two or more kept siblings (the same tag and class) is kept;
* ``nested_blocks``: a dropped block inside a kept one, between its paragraphs (a list in a body);
* ``comment_blocks``: blocks inside a readers' comment thread are dropped;
* ``outside_main_region``: unsure blocks outside the main block's region are dropped;
* ``after_article_body``: unsure blocks and teaser cards after the page's declared article body
  (``declared_body``) are dropped;
* ``lead_blocks``: on article pages, the lead the page names before its main block is kept;
* ``named_related``: on article pages, kept blocks in a container named as related articles, a newsletter's
  sign-up, the author's box or share buttons are dropped;
* ``link_lists``: on article pages, kept lists of links apart from the main block are dropped;
* ``teaser_bodies``: on article pages, kept excerpts of other posts, each in its own declared body, are dropped
  when one body holds most of the kept text (these four also run on a page typed list that has a declared body:
  a blog post with sidebars of links);
* ``missed_body``: on article pages, the page's one declared body is kept when the model kept none of it;
* ``named_sidebars``: kept blocks in a container named as a sidebar, not around the main block, are dropped;
* ``enclosing_block``: the dropped block around the main block, with more text than it, is kept;
* ``repeated_blocks``: a kept block whose text a kept block before it already has is dropped;
* ``trim_ends_lazily``: the paragraph model's leading and trailing noise lines of a kept block go (paper 003);
* ``trim_link_tail``: a kept block's trailing link lines go (not on list pages);
* ``trailing_headings``: on article pages, headings (and short lines that end with a colon) at the end of the text,
  with nothing kept after them, go.

docs/history/block-rules.md gives each rule's measurements (docs/how-it-works/block-classifier.md sums them up).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
from lxml import html

from extraction.dom.blocks import Block, Paragraph

MAIN_SHARE = 0.5  # the main block outside comment threads has at least this share of the longest block's text
# A block whose element has this many children named as comments (WordPress's <ol class="commentlist">
# of <li class="comment">) is a thread however long: it is not the page's main block.
MIN_THREAD_ITEMS = 2
# The elements that are one comment when alone in a thread-named container: a list's item, an <article> (not the
# thread's own list, ``<dl id="comment_list">`` in ``<div id="comments">``).
_LONE_COMMENT_TAGS = frozenset({"li", "article"})
_COMMENT_RE = re.compile(r"comment|disqus|respond|replies|talkback|discussion|pinglun", re.I)
# One comment of a thread: "comment" as a word of its own ("comment", "comment-38027", "comment_851634") or
# a comment's text ("comments-body", "commentBody", "comment-content": threads laid out flat as head, body,
# head, body), not a container's state ("has-comments", "commentsOpen").
_COMMENT_ITEM_RE = re.compile(r"(?<![a-z])comment(?:s?[-_]?(?:body|content|text))?(?![a-z])", re.I)
# A thread's heading: "Comments", "3 Responses to ...", "Leave a Reply", "Reader comments", "网友评论".
_COMMENT_HEADING_RE = re.compile(
    r"^\W*(?:\d+\s+)?(?:comments?|responses?|replies|reader comments|discussion|leave a (?:comment|reply)|"
    r"join the discussion)\b|评论|留言|跟帖", re.I)
_COMMENT_HEADING_CHARS = 80
_HEADINGS = ("h1", "h2", "h3", "h4", "h5", "h6")


SIBLING_MAX_LINK_DENSITY = 0.2  # a block pulled in by its kept siblings, or from inside a kept block, is not links


def sibling_blocks(blocks: Sequence[Block], kept: Sequence[bool]) -> list[int]:
    """Return the dropped blocks to keep because they are one of a run of like siblings that is kept:
    a block whose element has the tag and class of kept siblings under the same parent (paragraph
    ``div``s of one article body), with little of its text in links. The stacked model reads a block
    with its neighbours, so the last paragraph of a body (next to whatever follows it) can fall under
    the threshold while its like siblings pass."""
    kept_kinds: dict[tuple[Any, str, str], int] = {}
    for block, keep in zip(blocks, kept, strict=True):
        if keep:
            key = _sibling_key(block)
            kept_kinds[key] = kept_kinds.get(key, 0) + 1
    found = []
    for block, keep in zip(blocks, kept, strict=True):
        if keep or not block.chars or block.link_chars > SIBLING_MAX_LINK_DENSITY * block.chars:
            continue
        if kept_kinds.get(_sibling_key(block), 0) >= 2:
            found.append(block.index)
    return found


NESTED_MIN_CHARS = 50  # characters outside links: shorter blocks inside an article are labels, buttons and datelines


def nested_blocks(blocks: Sequence[Block], kept: Sequence[bool]) -> list[int]:
    """Return the dropped blocks to keep because they lie inside a kept block, between its paragraphs:
    a list, table or quote in an article's body (the block's element a descendant of the kept block's
    element, which has paragraphs before and after it in document order), with little of its text in
    links and at least ``NESTED_MIN_CHARS`` characters outside them. The stacked model reads such a
    block with its neighbours as a list among paragraphs and can drop it (an ``<ol>`` of questions in a
    German essay, a table of figures in a report). A list (``<ul>``, ``<ol>``) may also close the kept
    block, with paragraphs before it only: a recipe's ingredients, key points, references. A table's cells
    are blocks of a few characters each ("Vermont", "80.8"): those that no rule keeps alone are read as
    their table, one block of their text together."""
    kept_elements = {block.element: block for block, keep in zip(blocks, kept, strict=True) if keep}
    found = []
    tables: dict[html.HtmlElement, list[Block]] = {}
    for block, keep in zip(blocks, kept, strict=True):
        if keep or not block.paragraphs:
            continue
        if _nested(kept_elements, block.element, [block]):
            found.append(block.index)
        elif block.element.tag in ("td", "th"):
            table = next(block.element.iterancestors("table"), None)
            if table is not None:
                tables.setdefault(table, []).append(block)
    for table, cells in tables.items():
        if _nested(kept_elements, table, cells):
            found.extend(cell.index for cell in cells)
    return sorted(found)


def _nested(kept_elements: dict[html.HtmlElement, Block], element: html.HtmlElement, parts: Sequence[Block]) -> bool:
    """Whether ``parts`` (one block, or a table's cells in document order) under ``element`` are kept as lying
    inside a kept block (``nested_blocks``)."""
    chars = sum(part.chars for part in parts)
    if sum(part.link_chars for part in parts) > SIBLING_MAX_LINK_DENSITY * chars \
            or sum(part.text_chars for part in parts) < NESTED_MIN_CHARS:
        return False
    outer = next((kept_elements[node] for node in element.iterancestors() if node in kept_elements), None)
    # A block's paragraphs are in document order: its first line and its last are its ends.
    return (outer is not None and bool(outer.paragraphs)
            and outer.paragraphs[0].line_end < parts[0].paragraphs[0].line_start
            and (outer.paragraphs[-1].line_start > parts[-1].paragraphs[-1].line_end
                 or element.tag in ("ul", "ol")))


REGION_SURE = 0.8  # a block this probable is the page's content: the main region holds every such block
REGION_UNSURE = 0.5  # a kept block outside the main region under this probability is dropped


def outside_main_region(blocks: Sequence[Block], probabilities: npt.NDArray[np.float32],
                        kept: Sequence[bool]) -> list[int]:
    """Return the kept blocks to drop because they lie outside the page's main region with a probability
    under ``REGION_UNSURE``: sidebars, blogrolls and boxes of related links the model was unsure of, on a
    page whose content it is sure of (readability's one top candidate, for the unsure blocks only).

    The main block is the kept block with the most probable text (probability times characters outside
    links). When it reaches ``REGION_SURE``, the main region is its nearest ancestor below ``<body>`` that
    holds every kept block of at least ``REGION_SURE`` and at least one other kept block (the article's
    container: headline, byline and body). A page without such an ancestor keeps its blocks, and so does a
    block of an ancestor of the region (its text lies around the region: a page's text straight in ``<body>``).
    """
    rows = [i for i, keep in enumerate(kept) if keep]
    if len(rows) < 2:
        return []
    main = max(rows, key=lambda i: float(probabilities[i]) * blocks[i].text_chars)
    if probabilities[main] < REGION_SURE:
        return []
    # Each kept block's element with its ancestors (elements as keys: lxml keeps their proxies alive).
    lineage = {i: {blocks[i].element, *blocks[i].element.iterancestors()} for i in rows}
    sure = [i for i in rows if probabilities[i] >= REGION_SURE]
    for node in blocks[main].element.iterancestors():
        if node.tag in ("body", "html"):
            return []
        if sum(node in lineage[i] for i in rows) >= 2 and all(node in lineage[i] for i in sure):
            around = set(node.iterancestors())  # a block of these has its text around the region, not beside it
            return [i for i in rows if node not in lineage[i] and blocks[i].element not in around
                    and probabilities[i] < REGION_UNSURE]
    return []


# The page's own mark on its article's body: schema.org's itemprop="articleBody", or a class or id token that
# CMSs give it (WordPress's entry-content, Blogger's post-body, td-post-content, article__body, ...; the names
# trafilatura's BODY_XPATH reads first).
_ARTICLE_BODY_RE = re.compile(
    r"(?:^|\s)(?:(?:entry|post|article|story|td-post|single-post|blog-post|news)[-_]?(?:content|body|text|inner)"
    r"|article__(?:body|content)|articlebody|body-text|post[-_]?entry|text-content|storycontent)(?:\s|$)", re.I)
ARTICLE_BODY_MIN_CHARS = 200  # kept characters outside links inside the declared body: less is a teaser's
# Teaser cards of other stories after the declared body (a date, a linked headline, a sentence): at least
# CARD_MIN_RUN kept blocks of one tag and class, each with a link and under CARD_MAX_CHARS characters.
CARD_MAX_CHARS = 500
CARD_MIN_RUN = 3
_BODY_TAGS = frozenset({"article", "div", "main", "section"})


def _declares_body(element: html.HtmlElement) -> bool:
    """Return whether ``element`` is marked as an article's body (``_ARTICLE_BODY_RE``, ``itemprop``)."""
    return element.tag in _BODY_TAGS and (
        element.get("itemprop") == "articleBody"
        or _ARTICLE_BODY_RE.search(f"{element.get('class') or ''} {element.get('id') or ''}") is not None)


def declared_body(blocks: Sequence[Block], kept: Sequence[bool]) -> tuple[html.HtmlElement, list[int]] | None:
    """Return the page's declared article body and the kept blocks inside it, or None: the outermost
    ``<article>``, ``<div>``, ``<main>`` or ``<section>`` around kept blocks with ``itemprop="articleBody"`` or a
    class or id token of ``_ARTICLE_BODY_RE``. A page with several such elements apart (a blog's index of
    posts) has none, and neither has one whose kept blocks hold under ``ARTICLE_BODY_MIN_CHARS`` characters
    outside links (a teaser's). Only the kept blocks' ancestors are read (a few dozen elements, not the page's
    every ``<div>``)."""
    bodies = _by_body(blocks, [i for i, keep in enumerate(kept) if keep], {})
    if len(bodies) != 1:
        return None
    body, inside = next(iter(bodies.items()))
    if sum(blocks[i].text_chars for i in inside) < ARTICLE_BODY_MIN_CHARS:
        return None
    return body, inside


def _outermost_body(element: html.HtmlElement,
                    marked: dict[html.HtmlElement, html.HtmlElement | None]) -> html.HtmlElement | None:
    """Return the outermost ancestor-or-self of ``element`` marked as an article's body (``_declares_body``; a
    mark further up wins), or None; ``marked`` is ``_named_ancestor``'s memo, one per page."""
    found = None
    node = _named_ancestor(element, marked, _declares_body)
    while node is not None:
        found = node
        parent = node.getparent()
        node = _named_ancestor(parent, marked, _declares_body) if parent is not None else None
    return found


def _by_body(blocks: Sequence[Block], rows: Sequence[int],
             marked: dict[html.HtmlElement, html.HtmlElement | None]) -> dict[html.HtmlElement, list[int]]:
    """Return the blocks of ``rows`` that lie in a declared article body, by their outermost body
    (``_outermost_body``, with its memo ``marked``), in document order; blocks in no body are left out."""
    found: dict[html.HtmlElement, list[int]] = {}
    for i in rows:
        body = _outermost_body(blocks[i].element, marked)
        if body is not None:
            found.setdefault(body, []).append(i)
    return found


MISSED_BODY_MIN_CHARS = 150  # characters outside links in the declared body the model kept none of
MISSED_BODY_MAX_LINK_DENSITY = 0.5  # and at most this share of them in links (its blocks each too)


def missed_body(blocks: Sequence[Block], kept: Sequence[bool]) -> list[int]:
    """Return the blocks to keep because they are the page's one declared article body (``_declares_body``)
    and the model kept none of it while it kept something else: an author box or a sidebar's text widget
    beside a short post it was unsure of. The body holds at least ``MISSED_BODY_MIN_CHARS`` characters
    outside links, at most ``MISSED_BODY_MAX_LINK_DENSITY`` of its text in links; its blocks above that
    density stay out. A page with several declared bodies (an index of posts) gets nothing."""
    marked: dict[html.HtmlElement, html.HtmlElement | None] = {}
    rows = [i for i, keep in enumerate(kept) if keep]
    if not rows or any(_outermost_body(blocks[i].element, marked) is not None for i in rows):
        return []  # the kept blocks first (a few): most pages with a body have some of it kept
    bodies = _by_body(blocks, range(len(blocks)), marked)
    if len(bodies) != 1:
        return []
    rows = next(iter(bodies.values()))
    chars = sum(blocks[i].chars for i in rows)
    links = sum(blocks[i].link_chars for i in rows)
    if chars - links < MISSED_BODY_MIN_CHARS or links > MISSED_BODY_MAX_LINK_DENSITY * chars:
        return []
    return [i for i in rows if blocks[i].link_chars <= MISSED_BODY_MAX_LINK_DENSITY * blocks[i].chars]


TEASER_BODY_SHARE = 3.0  # the post's body holds this many times the next declared body's kept text
TEASER_BODY_RUN = 2  # other posts' excerpts come several: one other body is a lead the page marks apart


def teaser_bodies(blocks: Sequence[Block], kept: Sequence[bool]) -> list[int]:
    """Return the kept blocks to drop because they lie in another post's declared body (``_declares_body``), on
    a page whose kept text is mostly in one: the excerpts of recent or related posts, each in its own
    ``entry-content``, around the post. The post's body holds at least ``TEASER_BODY_SHARE`` times the kept
    text of any other."""
    by_body = _by_body(blocks, [i for i, keep in enumerate(kept) if keep], {})
    if len(by_body) < 1 + TEASER_BODY_RUN:
        return []
    sizes = sorted(((sum(blocks[i].text_chars for i in rows), rows) for rows in by_body.values()),
                   key=lambda item: -item[0])
    if sizes[0][0] < TEASER_BODY_SHARE * sizes[1][0]:
        return []
    return sorted(i for _, rows in sizes[1:] for i in rows)


def after_article_body(blocks: Sequence[Block], probabilities: npt.NDArray[np.float32],
                       kept: Sequence[bool]) -> list[int]:
    """Return the kept blocks to drop because they come after the page's declared article body with a
    probability under ``REGION_UNSURE``: the author box, share lines, related posts and sidebars a CMS prints
    after the post, which the model was unsure of. Teaser cards of other stories after the body go whatever
    their probability: ``CARD_MIN_RUN`` or more kept blocks of one tag and class, each with a link and under
    ``CARD_MAX_CHARS`` characters. The headline and lead above the body stay (news sites print them there),
    and so does everything inside it. The body is ``declared_body``'s; a page without one loses nothing here.
    """
    found = declared_body(blocks, kept)
    if found is None:
        return []
    rows = [i for i, keep in enumerate(kept) if keep]
    inside = found[1]
    # Blocks are in document order of their elements: a kept block outside the body and after a block inside
    # it comes after the body (an ancestor of the body comes before it).
    after = [i for i in rows if i > inside[-1]]
    kinds: dict[tuple[str, str], list[int]] = {}  # the short linked blocks after the body, by tag and class
    for i in after:
        if blocks[i].link_chars and blocks[i].chars < CARD_MAX_CHARS:
            kinds.setdefault(_kind(blocks[i].element), []).append(i)
    cards = {i for run in kinds.values() if len(run) >= CARD_MIN_RUN for i in run}
    return [i for i in after if probabilities[i] < REGION_UNSURE or i in cards]


def _main_block(blocks: Sequence[Block], rows: Sequence[int]) -> int:
    """Return the kept block (of ``rows``) with the most characters outside links."""
    return max(rows, key=lambda i: blocks[i].text_chars)


ENCLOSING_LEVELS = 2  # blocks around the main block read, nearest first, for one with more text than it


def enclosing_block(blocks: Sequence[Block], kept: Sequence[bool]) -> list[int]:
    """Return the dropped blocks around the main block (``_main_block``) to keep: of its nearest
    ``ENCLOSING_LEVELS`` enclosing blocks, the first with more text outside links than the main block, and the
    one between, when each is dropped and has at most ``SIBLING_MAX_LINK_DENSITY`` of its text in links. The
    model kept a quote, a recipe box or one paragraph ``<div>`` of the article and dropped the article's own
    text around it (and a recipe's title box between them); a page's text straight in ``<body>`` is not an
    article's."""
    rows = [i for i, keep in enumerate(kept) if keep]
    if not rows:
        return []
    main = _main_block(blocks, rows)
    ancestors = set(blocks[main].element.iterancestors())
    own = blocks[main].text_chars
    between: list[int] = []  # dropped blocks around the main block with less text than it (a recipe's box)
    for i in range(main - 1, -1, -1):
        block = blocks[i]
        if block.element in ancestors:
            if kept[i] or block.element.tag in ("body", "html") \
                    or block.link_chars > SIBLING_MAX_LINK_DENSITY * block.chars:
                return []
            if block.text_chars > own:
                return [i, *between]
            if len(between) + 1 >= ENCLOSING_LEVELS:
                return []
            between.append(i)
    return []


REPEAT_MIN_CHARS = 100  # a shorter block may repeat on purpose (a label, a price, a heading)


def repeated_blocks(blocks: Sequence[Block], kept: Sequence[bool]) -> list[int]:
    """Return the kept blocks of ``REPEAT_MIN_CHARS`` or more whose text is that of a kept block before them.

    A page sends some of its text twice for two layouts, one hidden by its style sheet (a shop's description
    for the phone and for the desktop, a carousel's cloned slides), and a corpus wants it once. Shorter lines
    repeat on purpose, and the gold keeps them (dropping repeated lines of at most 100 characters cost
    WCXB-dev 0.004)."""
    seen: set[str] = set()
    repeated = []
    for i, block in enumerate(blocks):
        if kept[i] and block.chars >= REPEAT_MIN_CHARS:
            if block.text in seen:
                repeated.append(i)
            seen.add(block.text)
    return repeated


# A lead's (standfirst's) own name, as the last word of a class or id token split at "-", "_" and camelCase, or
# followed only by generic words: news CMSs' "article__intro", "a-lead", "leadIn", "intro-text", "standfirst",
# "header-dek-wrapper", Spanish "bajada", French "chapo", German "Vorspann" and "Einleitung". A word inside a
# longer name ("summary-credit", "NavPromoDrawer-module_intro__uvMjk", "cart__summary-item") is not one.
_LEAD_WORDS = frozenset({"lead", "intro", "standfirst", "subtitle", "subline", "dek", "bajada", "epigraph", "vorspann",
                         "einleitung", "chapo", "chapeau", "sottotitolo"})
_GENERIC_WORDS = frozenset({"text", "content", "wrapper", "wrap", "inner", "body", "container", "box", "in", "header",
                            "field", "block"})
_WORD_RE = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])")
LEAD_MIN_CHARS = 40  # a lead is a sentence, not a label
LEAD_LEVELS = 2  # the block's element and this many ancestors may carry the name
# A lead ends a sentence; a headline, a caption's credit or a site's slogan does not, and a teaser ends cut off.
_SENTENCE_END_RE = re.compile(r"(?<![.…])[.!?。！？][\"'”’»)]*\s*$")


def _names_lead(node: html.HtmlElement) -> bool:
    """Return whether a class token or the id of ``node`` names a lead: a lead word followed by generic words only
    ("lead", "intro-text", "DefaultEinleitung"; not "lead-author")."""
    for token in f"{node.get('class') or ''} {node.get('id') or ''}".split():
        words = [word.lower() for word in _WORD_RE.findall(token)]
        for at, word in enumerate(words):
            if word in _LEAD_WORDS and _GENERIC_WORDS.issuperset(words[at + 1:]):
                return True
    return False


def _lead_text(block: Block) -> str | None:
    """Return the text of the lead ``block`` holds: the block's own when its element or one of its ``LEAD_LEVELS``
    nearest ancestors is named as a lead, else that of its first descendant within ``LEAD_LEVELS`` levels so named
    when that text is at least half of the block's (a block is often the lead paragraph's wrapper, with the headline
    or a label beside it, and may hold the whole article below: the search stays near the block's element); None
    when nothing is named so."""
    node: html.HtmlElement | None = block.element
    for _ in range(LEAD_LEVELS + 1):
        if node is None or node.tag in ("body", "html", "article", "main"):
            break
        if _names_lead(node):
            return block.text
        node = node.getparent()
    text = " ".join(block.text.split())
    level: list[html.HtmlElement] = [block.element]
    near: list[html.HtmlElement] = []  # the descendants within LEAD_LEVELS levels, level by level
    for _ in range(LEAD_LEVELS):
        level = [child for parent in level for child in parent.iterchildren("*")]
        near += level
    for descendant in near:
        if _names_lead(descendant):
            lead = " ".join(descendant.text_content().split())
            # The lead must be this block's text, most of it: not a paragraph of a block nested inside.
            return lead if lead in text and 2 * len(lead) >= len(text) else None
    return None


def lead_blocks(blocks: Sequence[Block], kept: Sequence[bool]) -> list[int]:
    """Return the dropped blocks before the main block that the page names as its lead (``_LEAD_WORDS``):
    the standfirst between headline and body, which news sites print in the article's header and the model,
    reading it with the header's links and bylines, leaves out."""
    rows = [i for i, keep in enumerate(kept) if keep]
    if not rows:
        return []
    main = _main_block(blocks, rows)
    return [i for i in range(main) if not kept[i] and blocks[i].chars >= LEAD_MIN_CHARS
            and blocks[i].link_chars <= SIBLING_MAX_LINK_DENSITY * blocks[i].chars
            and (lead := _lead_text(blocks[i])) is not None and len(lead) >= LEAD_MIN_CHARS
            and _SENTENCE_END_RE.search(lead) is not None]


# A container of links to other articles, named as a word of a class or id token (split as for a lead): "related",
# Jetpack's "jp-relatedposts", YARPP, Outbrain and Taboola widgets, "most popular", "trending" and "recent posts"
# boxes.
_RELATED_WORDS = frozenset({"related", "relatedposts", "recommended", "recommendations", "recommendation", "outbrain",
                            "taboola", "yarpp", "trending", "popular", "mostread", "mostpopular", "promo", "recent"})
# A newsletter's sign-up box, named so: "newsletter-signup", Mailchimp's "mc_embed_signup", "optin-form", "subscribe".
_SIGNUP_WORDS = frozenset({"newsletter", "subscribe", "optin", "mailchimp", "signup"})
# The author's box: a bio after the post ("about-author", "author-bio", "postauthor", "author_description") and a
# byline set apart from the body; the record has the authors apart (``extraction.metadata``).
_AUTHOR_WORDS = frozenset({"author", "postauthor", "bio", "authorbio"})
# Share and like buttons: "share-buttons", Jetpack's "sharedaddy" ("Like this: Be the first to like this."), Shariff,
# AddToAny, AddThis.
_SHARE_WORDS = frozenset({"share", "sharing", "sharedaddy", "shariff", "addtoany", "addthis"})
_BOX_WORDS = _RELATED_WORDS | _SIGNUP_WORDS | _AUTHOR_WORDS | _SHARE_WORDS
_SLUG_HYPHENS = 3  # an id with this many hyphens is a heading's anchor ("how-popular-are-..."), not a name


def _container_words(element: html.HtmlElement) -> list[str]:
    """Return the lower-cased words of ``element``'s class tokens and id, WordPress's "category-*" and "tag-*"
    post classes (the post's categories, not the element's kind) and a heading's slug id left out."""
    tokens = [token for token in (element.get("class") or "").split() if not token.startswith(("category-", "tag-"))]
    identifier = element.get("id") or ""
    if identifier.count("-") < _SLUG_HYPHENS:
        tokens.append(identifier)
    return [word.lower() for word in _WORD_RE.findall(" ".join(tokens))]


def _names_box(element: html.HtmlElement) -> bool:
    return not _BOX_WORDS.isdisjoint(_container_words(element))


def named_related(blocks: Sequence[Block], kept: Sequence[bool],
                  probabilities: npt.NDArray[np.float32] | None = None) -> list[int]:
    """Return the kept blocks to drop because they lie in a container the page names as related articles
    (``_RELATED_WORDS``), a newsletter's sign-up (``_SIGNUP_WORDS``), the author's box (``_AUTHOR_WORDS``) or share
    buttons (``_SHARE_WORDS``): the boxes of other stories a CMS prints beside or after the article, whose teasers
    the model reads as text, the prompts to subscribe, the author's bio and the buttons' labels. The main block
    (``_main_block``) stays, and so do the containers around it (an article wrapper with "related" in its classes):
    a block goes when its nearest such container (``_named_ancestor``) is not an ancestor-or-self of the main
    block. A box that holds the longest block does not hold the main one when it lies in a kept block with text of
    its own, or, given the model's ``probabilities``, when a block of the declared article body is outside it
    (``_in_named_containers``, as for sidebars)."""
    return _in_named_containers(blocks, kept, _names_box, _in_declared_body(blocks, probabilities))


def _in_named_containers(blocks: Sequence[Block], kept: Sequence[bool], names: Callable[[html.HtmlElement], bool],
                         body: Callable[[int], bool] | None = None) -> list[int]:
    """Return the kept blocks whose nearest container that ``names`` accepts (``_named_ancestor``) is not the main
    block's element (``_main_block``) or one of its ancestors.

    When the main block lies in such a container, the main one is instead: the nearest kept block whose element holds
    that container, with ``ARTICLE_BODY_MIN_CHARS`` of text outside links of its own (the box is in the article's
    body); else, given ``body``, the largest kept block outside every such container that ``body`` accepts (the
    article's body beside the container)."""
    rows = [i for i, keep in enumerate(kept) if keep]
    if len(rows) < 2:
        return []
    main = _main_block(blocks, rows)
    named: dict[html.HtmlElement, html.HtmlElement | None] = {}  # memo of _named_ancestor's walk
    box = _named_ancestor(blocks[main].element, named, names)
    if box is not None:
        # A named box inside a kept block with text of its own is a box in the article's body (a slideshow's
        # captions in "promo_holder" inside "articleBody"), not the article's wrapper: that block is the main one.
        by_element = {blocks[i].element: i for i in rows}
        enclosing = next((by_element[element] for element in box.iterancestors() if element in by_element
                          and blocks[by_element[element]].text_chars >= ARTICLE_BODY_MIN_CHARS), None)
        if enclosing is not None:
            main = enclosing
        elif body is not None:
            free = [i for i in rows if _named_ancestor(blocks[i].element, named, names) is None and body(i)]
            if free:
                main = _main_block(blocks, free)
    around = {blocks[main].element, *blocks[main].element.iterancestors()}
    return [i for i in rows if (container := _named_ancestor(blocks[i].element, named, names)) is not None
            and container not in around]


# A container beside the content named as a sidebar: "sidebar", "side-bar", WordPress's "widget-area" (not
# "has-sidebar", "no-sidebar", Genesis's "content-sidebar-wrap": a layout's name for the content beside one). Not
# "widget" alone, nor WordPress's widget classes ("widget_text"), nor ``<aside>``: page builders (Elementor,
# SiteOrigin) and editors set content in widgets, and articles set their notes and callouts in ``<aside>``
# (measured on wcxb-dev).
_SIDEBAR_WORDS = frozenset({"sidebar", "sidebars"})
_SIDEBAR_PAIRS = frozenset({("side", "bar"), ("widget", "area"), ("widget", "areas")})
_LAYOUT_WORDS = frozenset({"has", "with", "no", "without", "content"})


def _names_sidebar(element: html.HtmlElement) -> bool:
    words = _container_words(element)
    for i, word in enumerate(words):
        if (word in _SIDEBAR_WORDS or (word, words[i + 1] if i + 1 < len(words) else "") in _SIDEBAR_PAIRS) \
                and (i == 0 or words[i - 1] not in _LAYOUT_WORDS):
            return True
    return False


def named_sidebars(blocks: Sequence[Block], kept: Sequence[bool],
                   probabilities: npt.NDArray[np.float32] | None = None) -> list[int]:
    """Return the kept blocks to drop because they lie in a container named as a sidebar (``_names_sidebar``) that
    is not around the main block (``_main_block``), as ``named_related`` does for boxes of related articles.

    A sidebar whose widgets outweigh a short post holds the longest block: given the model's ``probabilities``, a
    kept block outside every sidebar, inside the page's declared article body (``_outermost_body``) and at least
    ``REGION_UNSURE`` probable, is then the main one. Not any block outside: "sidebar" also names the layout around
    the content ("c-layout-sidebar-left", a ``<main>``'s "ct-main-sidebar"), and a header's block outside it would
    take the article's place."""
    return _in_named_containers(blocks, kept, _names_sidebar, _in_declared_body(blocks, probabilities))


def _in_declared_body(blocks: Sequence[Block],
                      probabilities: npt.NDArray[np.float32] | None) -> Callable[[int], bool] | None:
    """Return the test of a block's index: whether the block lies in the page's declared article body
    (``_outermost_body``) and is at least ``REGION_UNSURE`` probable; None without ``probabilities``."""
    if probabilities is None:
        return None
    marked: dict[html.HtmlElement, html.HtmlElement | None] = {}  # memo of _outermost_body's walk

    def in_body(i: int) -> bool:
        return float(probabilities[i]) >= REGION_UNSURE and _outermost_body(blocks[i].element, marked) is not None

    return in_body


# More headings than this at the end of the text are the items of a list (a listicle's pictures, each under its
# heading), not the headings of sections the model dropped: they stay.
TRAILING_HEADINGS_MAX = 3
# A paragraph that introduces what follows ("Related posts:", "Lesen Sie auch:", "相关阅读：") is a heading too when
# it is this short: a section's title set as a paragraph.
LEAD_IN_MAX_WORDS = 8
LEAD_IN_MAX_CHARS = 80
_LEAD_IN_END = (":", "：")


def _lead_in(text: str) -> bool:
    """Return whether ``text`` is a short line that ends with a colon (``LEAD_IN_MAX_WORDS``, ``LEAD_IN_MAX_CHARS``)."""
    return text.endswith(_LEAD_IN_END) and len(text) <= LEAD_IN_MAX_CHARS and len(text.split()) <= LEAD_IN_MAX_WORDS


def trailing_headings(root: html.HtmlElement, blocks: Sequence[Block], kept: Sequence[bool],
                      paragraphs: Sequence[Sequence[bool]]) -> list[tuple[int, int]]:
    """Return the kept paragraphs (block, paragraph) to drop because they are headings (the whole text of an
    ``<h1>``-``<h6>`` of the page, or a short paragraph that ends with a colon: ``_lead_in``) at the end of the text,
    with nothing kept after them: the heading of a section the model dropped ("Related posts:", "Leave a Reply",
    "Ähnliche Beiträge"). A heading that ends like a sentence stays (a report's closing line set as a heading),
    and so does the text's only paragraph; more than ``TRAILING_HEADINGS_MAX`` in a row all stay.
    ``paragraphs``: per block, the paragraphs kept."""
    lines = sorted(((paragraph.line_start, i, j) for i, block in enumerate(blocks) if kept[i]
                    for j, paragraph in enumerate(block.paragraphs) if paragraphs[i][j]), reverse=True)
    if len(lines) < 2:
        return []
    headings = {" ".join(element.text_content().split()) for element in root.iter(*_HEADINGS)}
    found = []
    for _, i, j in lines[:-1]:
        text = blocks[i].paragraphs[j].text
        if (text not in headings and not _lead_in(text)) or _SENTENCE_END_RE.search(text):
            break
        found.append((i, j))
    return found if len(found) <= TRAILING_HEADINGS_MAX else []


# A list of links beside the article (a blogroll, "latest posts", a category menu): at least this share of its
# characters in links, over at least this many lines, and apart from the main block: no element of the list's
# lineage is the main block's element or one of its LINK_LIST_APART - 1 nearest ancestors (a list in the
# article's own container, a course or product list the article is about, stays).
LINK_LIST_DENSITY = 0.9
LINK_LIST_LINES = 3
LINK_LIST_APART = 3


def link_lists(blocks: Sequence[Block], kept: Sequence[bool]) -> list[int]:
    """Return the kept blocks to drop because they are lists of links apart from the main block (``_main_block``):
    every line a link (``LINK_LIST_DENSITY``, ``LINK_LIST_LINES``), in a part of the page that shares with the
    main block none of its element's ``LINK_LIST_APART`` nearest containers. The model keeps such lists of
    headlines beside a post it is sure of."""
    rows = [i for i, keep in enumerate(kept) if keep]
    if len(rows) < 2:
        return []
    main = _main_block(blocks, rows)
    near = {blocks[main].element, *itertools.islice(blocks[main].element.iterancestors(), LINK_LIST_APART - 1)}
    return [i for i in rows if i != main and len(blocks[i].paragraphs) >= LINK_LIST_LINES
            and blocks[i].link_chars >= LINK_LIST_DENSITY * blocks[i].chars
            and near.isdisjoint(itertools.chain((blocks[i].element,), blocks[i].element.iterancestors()))]


def _text_chars(block: Block) -> int:
    return block.text_chars


def _kind(element: html.HtmlElement) -> tuple[str, str]:
    """Return an element's tag and whitespace-normalised class: blocks of one kind are a run of like items."""
    return str(element.tag), " ".join((element.get("class") or "").split())


def _sibling_key(block: Block) -> tuple[Any, str, str]:
    return block.element.getparent(), *_kind(block.element)


def comment_blocks(blocks: Sequence[Block]) -> list[int]:
    """Return the indices of the blocks inside a readers' comment thread.

    A thread is an element whose class or id names one (``_COMMENT_RE``: comment, disqus, respond,
    replies, talkback, discussion, pinglun) and that does not hold the page's main block: the
    longest block (most characters outside links) outside every such element when it has at least
    ``MAIN_SHARE`` of the longest block's characters, else the longest block. A container such as
    ``<article class="post has-comments">`` around the article itself is therefore not a thread,
    and a long comment does not make its thread the article. When the main block is the longest
    block and lies in a list of posts (at least ``MIN_THREAD_ITEMS`` items named as
    comments), the page is the thread, a forum topic, and its posts are not dropped (``_thread_posts``).
    """
    if not blocks:
        return []
    named: dict[html.HtmlElement, html.HtmlElement | None] = {}  # element -> its nearest named ancestor-or-self
    nearest = [_named_ancestor(block.element, named) for block in blocks]
    longest = max(blocks, key=_text_chars)
    outside = max((block for block, found in zip(blocks, nearest, strict=True) if found is None), key=_text_chars,
                  default=None)
    thread = (_comment_items(longest.element) >= MIN_THREAD_ITEMS or _one_comment_of_a_thread(longest.element)
              or _headed_thread(longest.element, named))
    main = (outside if outside is not None and (outside.text_chars >= MAIN_SHARE * longest.text_chars or thread)
            else longest).element
    main_path = {main, *main.iterancestors()}  # elements as keys: lxml keeps their proxies alive
    # A page that is a thread (a forum topic): its longest post is the main block and the other posts are content.
    posts = _thread_posts(main) if main is longest.element else None
    found = []
    for block, container in zip(blocks, nearest, strict=True):
        while container is not None and container in main_path:  # a named ancestor of the main block
            parent = container.getparent()
            container = _named_ancestor(parent, named) if parent is not None else None
        if container is not None and (posts is None or not _inside(block.element, posts)):
            found.append(block.index)
    return found


def _thread_posts(element: html.HtmlElement) -> html.HtmlElement | None:
    """Return the element that holds the posts of the thread ``element`` lies in, or None.

    The list of posts is the parent of ``element``'s nearest ancestor-or-self named as a comment (``_COMMENT_RE``)
    with at least ``MIN_THREAD_ITEMS`` like children so named, of its tag and sharing a class (Invision's
    ``<article id="elComment_4399704" class="ipsEntry">`` posts, Vanilla's ``<li class="Item ItemComment">``), so
    an article's ``<div class="post has-comments">`` beside ``<div id="comments">`` is none. The posts are in the
    list's nearest ancestor-or-self not named as a comment, which holds the opening post too (Vanilla's ``<div
    class="ItemDiscussion">`` before ``<div class="CommentsWrap">``), or in the list itself when that ancestor is
    the ``<body>`` or ``<html>``."""
    for node in itertools.chain((element,), element.iterancestors()):
        parent = node.getparent()
        if parent is None or not _names_comment(node):
            continue
        classes = set((node.get("class") or "").split())
        alike = sum(1 for child in parent.iterchildren(node.tag) if _names_comment(child)
                    and (classes & set((child.get("class") or "").split()) or (not classes and not child.get("class"))))
        if alike >= MIN_THREAD_ITEMS:
            region = next(up for up in itertools.chain((parent,), parent.iterancestors()) if not _names_comment(up)
                          or up.getparent() is None)
            return parent if region.tag in ("body", "html") else region
    return None


def _inside(element: html.HtmlElement, container: html.HtmlElement) -> bool:
    """Return whether ``container`` is ``element`` or one of its ancestors."""
    return any(node is container for node in itertools.chain((element,), element.iterancestors()))


def _names_comment(element: html.HtmlElement, pattern: re.Pattern[str] = _COMMENT_RE) -> bool:
    """Return whether the element's class or id names a comment or a thread (``pattern``: ``_COMMENT_RE``;
    ``_COMMENT_ITEM_RE`` for a single comment)."""
    return pattern.search(f"{element.get('class') or ''} {element.get('id') or ''}") is not None


def _one_comment_of_a_thread(element: html.HtmlElement) -> bool:
    """Return whether ``element`` lies inside one comment of a thread: an ancestor-or-self named as a single
    comment (``_COMMENT_ITEM_RE``: ``<li class="comment">``, ``<dd id="comment-851634">``) among at least
    ``MIN_THREAD_ITEMS`` siblings so named, or, an item (``_LONE_COMMENT_TAGS``), alone in a container named as a
    thread (WordPress's ``<ol class="commentlist">`` of one ``<li class="comment">``). A long reader comment is then
    the page's longest block, not its main one."""
    for node in itertools.chain((element,), element.iterancestors()):
        parent = node.getparent()
        if parent is not None and _names_comment(node, _COMMENT_ITEM_RE) and (
                (node.tag in _LONE_COMMENT_TAGS and _names_comment(parent)) or sum(
                    _names_comment(child, _COMMENT_ITEM_RE) for child in parent.iterchildren("*")) >= MIN_THREAD_ITEMS):
            return True
    return False


def _headed_thread(element: html.HtmlElement, named: dict[html.HtmlElement, html.HtmlElement | None]) -> bool:
    """Return whether ``element``'s nearest comment-named ancestor-or-self opens with a heading that names a
    thread (``_COMMENT_HEADING_RE``: "Comments", "12 Responses", "Leave a reply", "评论"): ``<div
    id="comments"><h2>Comments</h2><dl>...`` with nothing in the items' markup naming a single comment."""
    container = _named_ancestor(element, named)
    heading = next(container.iter(*_HEADINGS), None) if container is not None else None
    if heading is None:
        return False
    text = heading.text_content()
    return len(text) <= _COMMENT_HEADING_CHARS and _COMMENT_HEADING_RE.search(text) is not None


# A flat thread's heading, its whole text: "Comments", "1 Comment", "12 Comments »", "Comments (26)", "16 Responses
# to “...”", "Leave a Reply", "网友评论"; not "Discussion" (a documentation page's section) nor a bare "Comment" (an
# article's section: "Comment", "Briefing", "Access" in a list of tips).
_THREAD_HEADING_RE = re.compile(
    r"^\W*(?:\d+\s+(?:comments?|responses?|replies)|comments|responses|replies|reader comments|"
    r"leave a (?:comment|reply))(?:\s*\(\d+\))?(?:\s+to\s.*)?\W*$|^\W*(?:网友)?评论\W*$", re.I)
FLAT_THREAD_MIN_BEFORE = 100  # kept characters before a flat thread's heading: the article it follows


def flat_threads(root: html.HtmlElement, blocks: Sequence[Block],
                 kept: Sequence[bool]) -> tuple[list[int], list[tuple[int, int]]]:
    """Return the kept blocks and the paragraphs (block, paragraph) of a readers' thread laid out flat after its
    heading, in no container of its own: Movable Type's ``<h2 id="comments">Comments</h2>`` followed, in the
    article's own ``<div>``, by each comment's ``<div>`` and its "Posted by: ... at ..." line. The thread is the
    heading (``_THREAD_HEADING_RE``, its whole text) and what follows it in its parent: the blocks inside the
    heading's later siblings and, when the parent is a block, the parent's own lines from the heading on. Only
    after a kept article: at least ``FLAT_THREAD_MIN_BEFORE`` kept characters before the heading."""
    index: dict[html.HtmlElement, int] | None = None  # block element -> block, made when a heading names a thread
    drop_blocks: set[int] = set()
    drop_lines: list[tuple[int, int]] = []
    for heading in root.iter(*_HEADINGS):
        text = " ".join(heading.text_content().split())
        parent = heading.getparent()
        if parent is None or len(text) > _COMMENT_HEADING_CHARS or not _THREAD_HEADING_RE.match(text):
            continue
        later = set(heading.itersiblings())
        inside = [i for i, block in enumerate(blocks) if kept[i] and _below(block.element, parent, later)]
        first_inside = min((blocks[i].paragraphs[0].line_start for i in inside), default=None)
        # The heading's own line, when the parent is a block whose lines hold it: the last line of that text before
        # the thread's first block (an earlier "12 Comments" link of the article's own line is not the heading).
        index = index if index is not None else {block.element: i for i, block in enumerate(blocks)}
        owner = index.get(parent)
        line = max((p.line_start for p in blocks[owner].paragraphs if p.text == text
                    and (first_inside is None or p.line_start < first_inside)), default=None) \
            if owner is not None else None
        starts = ([first_inside] if first_inside is not None else []) + ([line] if line is not None else [])
        if not starts:
            continue
        start = min(starts)
        before = sum(p.chars for i, block in enumerate(blocks) if kept[i]
                     for p in block.paragraphs if p.line_start < start)
        if before < FLAT_THREAD_MIN_BEFORE:
            continue
        drop_blocks.update(inside)
        if owner is not None and line is not None:
            drop_lines.extend((owner, j) for j, p in enumerate(blocks[owner].paragraphs) if p.line_start >= line)
        break  # the first thread heading: what follows it is the thread
    return sorted(drop_blocks), drop_lines


def _below(element: html.HtmlElement, parent: html.HtmlElement, later: set[html.HtmlElement]) -> bool:
    """Return whether ``element`` is one of ``later`` (children of ``parent``) or inside one."""
    node: html.HtmlElement | None = element
    while node is not None:
        up = node.getparent()
        if up is parent:
            return node in later
        node = up
    return False


def _comment_items(element: html.HtmlElement) -> int:
    """Return how many element children of ``element`` have a class or id that names a comment."""
    return sum(1 for child in element.iterchildren("*") if _names_comment(child))


def _named_ancestor(element: html.HtmlElement, named: dict[html.HtmlElement, html.HtmlElement | None],
                    names: Callable[[html.HtmlElement], bool] = _names_comment) -> html.HtmlElement | None:
    """Return the nearest ancestor-or-self of ``element`` that ``names`` accepts (by default: whose class or
    id names a comment thread; memoised in ``named``, one memo per ``names``; iterative, so deep pages are
    fine)."""
    chain = []
    node: html.HtmlElement | None = element
    result = None
    while node is not None:
        if node in named:
            result = named[node]
            break
        chain.append(node)
        if names(node):
            result = node
            break
        node = node.getparent()
    for visited in chain:
        named[visited] = result
    return result


def trim_ends_lazily(features: Sequence[np.ndarray], probability: Callable[[np.ndarray], np.ndarray],
                     threshold: float) -> list[list[bool]]:
    """Return which paragraphs of each block stay (``features``: one array of rows per block): leading and
    trailing ones whose ``probability`` is under ``threshold`` go, the middle stays, and a block with none at or
    over it stays whole (it was judged content: kept rather than emptied). Only the paragraphs this reads are
    scored: from each end inward up to the first at or over the threshold. The paragraph SVM's
    cost is its rows (thousands of support vectors each); most blocks keep their end lines, so a few rows a
    block are scored instead of all. Rounds of one ``probability`` call for every open end of every block,
    each taking twice the rows of the one before from an end still under the threshold."""
    scored: dict[tuple[int, int], float] = {}  # (block, paragraph) -> probability, the lines read so far
    ends = [[0, len(rows) - 1] for rows in features]  # per block: its first and last paragraph not known to be under
    open_ends = [(b, end) for b in range(len(features)) for end in (0, 1)]  # end 0 moves forward, end 1 back
    width = 1
    while open_ends:  # each round scores at least one line of each open end: at most log2(lines) + 1 rounds
        wanted: set[tuple[int, int]] = set()
        for b, end in open_ends:
            (first, last), at = ends[b], ends[b][end]
            stop = min(at + width, last + 1) if end == 0 else max(at - width, first - 1)
            wanted.update((b, i) for i in range(at, stop, 1 - 2 * end) if (b, i) not in scored)
        batch = sorted(wanted)
        if batch:
            scored.update(zip(batch, probability(np.stack([features[b][i] for b, i in batch])).tolist(), strict=True))
        still: list[tuple[int, int]] = []
        for b, end in open_ends:  # "not >=": a NaN is under the threshold, as reading every line had it
            bounds = ends[b]
            while bounds[0] <= bounds[1] and (b, bounds[end]) in scored and not scored[b, bounds[end]] >= threshold:
                bounds[end] += 1 - 2 * end
            if bounds[0] <= bounds[1] and (b, bounds[end]) not in scored:
                still.append((b, end))
        open_ends = still
        width *= 2
    # A block with every paragraph under the threshold was judged content: kept whole.
    return [[first <= i <= last for i in range(len(rows))] if first <= last else [True] * len(rows)
            for rows, (first, last) in zip(features, ends, strict=True)]


LINK_TAIL_DENSITY = 0.8  # a kept block's last lines with this share of their characters in links are a link tail


def trim_link_tail(paragraphs: Sequence[Paragraph], flags: list[bool]) -> list[bool]:
    """Return ``flags`` without the block's trailing run of link lines: the last kept paragraphs with at least
    ``LINK_TAIL_DENSITY`` of their characters in links ("Read also: <headline>", "More on this topic", a
    tag list), which the block model, reading the block whole, kept with the text above them. A tail is
    shorter than the kept text above it: a block that is mostly link lines (a table of contents, cards that
    are links) stays whole, and so does its first kept paragraph."""
    kept = [i for i, flag in enumerate(flags) if flag]
    tail: set[int] = set()
    for i in reversed(kept[1:]):
        paragraph = paragraphs[i]
        if not paragraph.chars or paragraph.link_chars < LINK_TAIL_DENSITY * paragraph.chars:
            break
        tail.add(i)
    tail_chars = sum(paragraphs[i].chars for i in tail)
    if not tail or tail_chars >= sum(paragraphs[i].chars for i in kept) - tail_chars:
        return list(flags)
    return [flag and i not in tail for i, flag in enumerate(flags)]
