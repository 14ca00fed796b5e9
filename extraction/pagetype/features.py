"""Features of the DOM/URL page-type model (article / list / other), shared by training and crawl.

Paper 000 routes article pages and list pages to different extractors; the screenshot CNN types
pages it has a screenshot of, and this model types the rest (and is fused with the CNN where both
run). ``dom_features`` turns a parsed page and its URL into ``DOM_FEATURES``, a float32 vector;
``models/training/train_pagetype_dom.py`` trains on it and ``models/pagetype/dom.onnx`` reads it.

Groups (``FEATURE_GROUPS``):

* text: visible body text in the paragraphs of ``extraction.dom.blocks`` (one line of a block's own
  text): its size, the share inside links overall and per third of the text in document order,
  links per 1000 characters, the longest paragraph outside links and those >= 150 characters;
* anchors: the share of links whose text is headline-like (a list page links its entries by
  their headlines, an article's links are menu words and inline phrases);
* structure: the largest group of sibling elements with one tag+class signature that are list
  items (hold a link that carries >= ``ITEM_LINK_SHARE`` of their text), its size and text share;
  headings that hold links; <p> text share; <article> and <time> elements;
* metadata: og:type, JSON-LD @type classes, article:published_time / itemprop=datePublished;
* cues: form controls, code blocks and prices, which mark the "other" types (product, service,
  documentation, forum pages);
* url: path shape (depth, dates, numeric ids, slugs, index pages, pagination, extensions ...),
  zeros and ``has_url`` = 0 when the URL is unknown.

What each part adds, measured by leaving it out: grouped CV (GroupKFold(5) by site, three shuffles)
on the training pages (wcxb-dev training folds + demo sites) with the shipped kind of model
(histogram gradient boosting, learning rate 0.05, 15 leaves); all features: macro-F1 0.794,
article-vs-list accuracy 0.942. Change when left out (macro-F1 / article vs list): cues -0.027 /
-0.005; JSON-LD "other" types -0.016 / +0.001; anchors -0.010 / -0.010; headings with links -0.009 /
-0.001; repeated siblings -0.006 / -0.008; rare URL shapes (index, pagination, query, extension)
-0.005 / -0.002; <article>/<time> -0.004 / -0.004; <p> share -0.002 / -0.005; link share by thirds
-0.001 / -0.010; og:type other + JSON-LD WebSite -0.002 / +0.001 (a fold-to-fold spread of about
0.01: the last ones are within noise but none hurts). Without URL features macro-F1 drops by about
0.01-0.02 (``meta.json`` "dom.cv.no_url"). Tried and dropped: counts of elements whose class/id
names forum or shop parts (reply, thread, cart, price ...: +0.002); ``ITEM_LINK_SHARE`` from 0 to
0.3 changes macro-F1 by less than 0.007 (flat). Added after those runs: lengths in Latin-equivalent
characters (``CJK_CHAR_WEIGHT``): training CV 0.794 -> 0.798 (noise), gne-chinese (held out, Chinese
news) article vs list 0.42 -> 0.61. The trainer repeats the group ablation on every run
(``meta.json`` "dom.ablation", unshuffled folds).

Counts and lengths enter as log1p: their range spans orders of magnitude. ``root`` is never
modified; an empty or malformed page gives zeros (the URL features aside) and never raises.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Sequence
from urllib.parse import unquote, urlsplit

import numpy as np
import numpy.typing as npt
from lxml import html

from extraction.dom.blocks import Block, page_blocks, walk_top
from extraction.dom.table import page_table

# Bump when a feature's definition or the order of DOM_FEATURES changes (meta.json records it).
DOM_FEATURE_VERSION = 2

# Characters in lengths are Latin-equivalent (CJK_CHAR_WEIGHT); shares count plain characters.
TEXT_FEATURES: tuple[str, ...] = (
    "text_chars_log",  # log1p(visible characters)
    "links_log",  # log1p(<a> elements)
    "link_share",  # characters inside links / characters
    "link_share_first",  # ... within the first third of the text (document order)
    "link_share_middle",
    "link_share_last",
    "links_per_1000_chars",
    "longest_paragraph_log",  # log1p(longest paragraph's characters outside links)
    "long_paragraphs_log",  # log1p(paragraphs with >= LONG_PARAGRAPH_CHARS outside links)
    "long_paragraph_share",  # their characters / characters
)
RUN_FEATURES: tuple[str, ...] = (
    "run_chars_log",  # log1p(characters outside links of the longest run of running text, see RUN_LINK_SHARE)
    "run_share",  # its characters / characters
    "run_paragraphs_log",  # log1p(its paragraphs)
    "run_paragraph_chars_log",  # log1p(its mean characters per paragraph)
    "runs_log",  # log1p(runs of at least RUN_MIN_CHARS characters)
    "run_sentence_share",  # the share of its characters in paragraphs that end like a sentence
    "run_position",  # where it starts, as a share of the text before it
    "running_text_share",  # characters of every running-text paragraph / characters
)
ANCHOR_FEATURES: tuple[str, ...] = (
    "headline_link_share",  # links with headline-like text / links with text
    "headline_links_log",
)
STRUCTURE_FEATURES: tuple[str, ...] = (
    "repeat_group_size_log",  # log1p(size of the largest group of same-signature sibling items, see ITEM_LINK_SHARE)
    "repeat_group_text_share",  # its characters / characters
    "repeat_item_chars_log",  # log1p(its mean characters per sibling)
    "headings_with_links_log",
    "heading_link_share",  # headings that hold a link / headings
    "p_text_share",  # characters inside <p> / characters
    "article_elements_log",
    "time_elements_log",
)
META_FEATURES: tuple[str, ...] = (
    "og_article",
    "og_website",
    "og_video",  # og:type video.* or an og:video tag
    "og_other",  # og:type present, neither article nor website (video, product, profile ...)
    "jsonld_article",  # any @type *Article, BlogPosting, Report
    "jsonld_collection",  # CollectionPage, ItemList, SearchResultsPage
    "jsonld_website",  # WebSite (many CMSs add it to every page)
    "published_meta",  # article:published_time meta or itemprop=datePublished
    "jsonld_other",  # Product, Offer, DiscussionForumPosting, QAPage, FAQPage, SoftwareApplication, Service, ...
)
CUE_FEATURES: tuple[str, ...] = (
    "form_controls_log",  # log1p(input, select, textarea, button elements)
    "code_blocks_log",  # log1p(pre and code elements): documentation
    "prices_log",  # log1p(currency amounts in the visible text): products, services
    "videos_log",  # log1p(<video> and video-player <iframe> elements): video pages
    "images_log",  # log1p(<img> elements)
    "images_per_1000_chars_log",  # log1p(images per 1000 characters): galleries
)
URL_FEATURES: tuple[str, ...] = (
    "has_url",
    "url_depth",  # non-empty path segments, at most MAX_URL_DEPTH
    "url_root",  # the path is empty or "/"
    "url_trailing_slash",  # a non-root path ending in "/"
    "url_date",  # /2024/05/, 2024-05-10, 20240510, t20260210_757849, /202603/
    "url_numeric_id",  # a run of >= 5 digits in path or query besides the date
    "url_slug",  # last segment with >= SLUG_HYPHENS hyphens
    "url_index",  # last segment index/default/home/main[.ext]
    "url_page_query",  # page=2, p=2, /page/2 ...
    "url_last_segment_log",  # log1p(length of the last segment)
    "url_html_ext",  # .html, .htm, .shtml
    "url_list_word",  # a segment like tag, category, topics, section, archive, search
    "url_query",  # a query string is present
    "url_media_word",  # a segment or word like video, gallery, photos, pictures, slideshow, podcast
)
FEATURE_GROUPS: dict[str, tuple[str, ...]] = {
    "text": TEXT_FEATURES,
    "runs": RUN_FEATURES,
    "anchors": ANCHOR_FEATURES,
    "structure": STRUCTURE_FEATURES,
    "metadata": META_FEATURES,
    "cues": CUE_FEATURES,
    "url": URL_FEATURES,
}
DOM_FEATURES: tuple[str, ...] = tuple(name for group in FEATURE_GROUPS.values() for name in group)

# A paragraph of running text: the brief's threshold (about two lines of a news paragraph); the
# pipeline's rule uses a stricter 600 for "no article paragraph at all".
LONG_PARAGRAPH_CHARS = 150
# Headline-like anchor text: an English headline is rarely under 25 characters (4-5 words), a
# Chinese one rarely under 10 characters; menu items and "read more" links are shorter.
HEADLINE_CHARS = 25
HEADLINE_CJK_CHARS = 10
# A sibling is a list item when links carry at least this share of its text: a list entry's
# headline link, not an article paragraph's inline link (a few words in hundreds of characters).
# Grouped CV is flat from 0 to 0.3 (module docstring); 0.2 keeps linked paragraphs out of the group.
ITEM_LINK_SHARE = 0.2
# Lengths (text size, links per 1000 characters, paragraph lengths) count a CJK character as this
# many Latin ones, the ratio of the two headline thresholds above: a Chinese sentence carries in 10
# characters what an English one carries in about 25. Without it Chinese articles looked like link
# lists (short "paragraphs", 55-110 links per 1000 characters; gne-chinese, see the module docstring).
CJK_CHAR_WEIGHT = HEADLINE_CHARS / HEADLINE_CJK_CHARS
# A run of running text (the body of an article) is a sequence of paragraphs in document order with
# under RUN_LINK_SHARE of their characters in links and at least RUN_PARAGRAPH_CHARS outside them
# (Latin-equivalent); short link-free lines (captions, subheads, datelines) neither add to a run nor
# end it; it ends at a paragraph with at least RUN_BREAK_SHARE in links that is a headline-like link
# (>= RUN_PARAGRAPH_CHARS) or the second link line in a row. A list page's teasers sit between
# headline links, so its runs stay one teaser long; an article's body is one run however many links
# the portal puts around it (news portals: link shares of 0.5-0.7 on article pages).
RUN_LINK_SHARE = 0.3
RUN_BREAK_SHARE = 0.5
RUN_PARAGRAPH_CHARS = 40
RUN_MIN_CHARS = 300
# A slug of four or more words ("harbor-council-approves-budget") names one piece of content.
SLUG_HYPHENS = 3
MAX_URL_DEPTH = 12

_HEADINGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})
_CJK_RE = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")
_DIGITS_RE = re.compile(r"\d+")
_ARTICLE_TYPE_RE = re.compile(r"(?:Article|BlogPosting|Report)$")
_COLLECTION_TYPES = frozenset({"CollectionPage", "ItemList", "SearchResultsPage"})
_OTHER_TYPES = frozenset({"Product", "ProductGroup", "Offer", "AggregateOffer", "DiscussionForumPosting", "QAPage",
                          "Question", "FAQPage", "SoftwareApplication", "WebApplication", "Service", "Course"})
_PRICE_RE = re.compile(r"[$€£¥]\s?\d|\d\s?(?:USD|EUR|GBP|元)(?!\w)")
_DATE_RE = re.compile(
    r"(?<!\d)(?:19|20)\d\d(?:[/_.-]?(?:0[1-9]|1[0-2])(?:[/_.-]?(?:0[1-9]|[12]\d|3[01]))?(?!\d)"
    r"|/(?:[1-9]|1[0-2])/(?:[1-9]|[12]\d|3[01])?(?!\d))"
)
_SENTENCE_END_RE = re.compile(r"[.!?\u3002\uff01\uff1f\u2026\"\u201d\u300d\u300f)\uff09]$")
_MEDIA_RE = re.compile(r"(?:^|[/_.-])(?:video|videos|gallery|galleries|pictures|photos|slideshows?|podcasts?)"
                       r"(?:$|[/_.-])", re.IGNORECASE)
_PLAYER_SOURCES = ("youtube", "vimeo", "player")  # an <iframe> whose src holds one is a video
_OG_VIDEO_PROPERTIES = frozenset({"og:video", "og:video:url"})
_PUBLISHED_META = "article:published_time"
_NUMERIC_ID_RE = re.compile(r"\d{5,}")
_INDEX_RE = re.compile(r"^(?:index|default|home|main)(?:\.\w+)?$", re.IGNORECASE)
_PAGE_QUERY_RE = re.compile(r"(?:^|[&;])(?:page|pg|p|paged|start|offset|pn)=\d", re.IGNORECASE)
_PAGE_PATH_RE = re.compile(r"/(?:page|p)/\d+/?$", re.IGNORECASE)
_HTML_EXT_RE = re.compile(r"\.(?:html?|shtml)$", re.IGNORECASE)
_LIST_WORDS = frozenset(
    {"tag", "tags", "category", "categories", "topic", "topics", "section", "sections", "archive",
     "archives", "search", "list", "browse", "channel", "column", "author", "authors"}
)

FloatVector = npt.NDArray[np.float32]


def _log(value: float) -> float:
    return math.log1p(max(value, 0.0))


def _share(part: float, whole: float) -> float:
    return min(part / whole, 1.0) if whole > 0 else 0.0


def _text_features(blocks: Sequence[Block]) -> list[float]:
    """Return the text features and then the run features, in their tuples' order."""
    table = blocks[0].page.table if blocks else None
    if table is not None:  # the page's lines in order, their CJK characters counted in the pass
        counts, linked, cjk = table.line_chars.tolist(), table.line_link.tolist(), table.line_cjk.tolist()
        starts, text = table.line_start.tolist(), table.text
        lines = [(count, min(link, count), han, i) for i, (count, link, han) in enumerate(zip(counts, linked, cjk,
                                                                                            strict=True))]

        def read(i: int) -> str:
            return text[starts[i]:starts[i] + counts[i]]
    else:
        paragraphs = sorted((p for block in blocks for p in block.paragraphs), key=lambda p: p.line_start)
        lines = [(p.chars, p.link_chars, len(_CJK_RE.findall(p.text)), i) for i, p in enumerate(paragraphs)]
        texts = [p.text for p in paragraphs]

        def read(i: int) -> str:
            return texts[i]
    chars = sum(line[0] for line in lines)
    links = blocks[0].page.links if blocks else 0
    if chars == 0:
        return [0.0, _log(links)] + [0.0] * (len(TEXT_FEATURES) - 2 + len(RUN_FEATURES))
    link_chars = sum(line[1] for line in lines)
    third_chars = [0, 0, 0]
    third_links = [0, 0, 0]
    seen = 0
    latin_chars = 0.0  # Latin-equivalent characters (see CJK_CHAR_WEIGHT)
    longest = 0.0
    long_count = 0
    long_chars = 0
    runs = _Runs()
    for count, link, han, where in lines:
        third = min(2, int(3 * (seen + count / 2) / chars))  # by the paragraph's middle
        seen += count
        third_chars[third] += count
        third_links[third] += link
        weight = 1.0 + (CJK_CHAR_WEIGHT - 1.0) * han / count
        runs.add(count, link, weight, latin_chars, where, read)
        latin_chars += weight * count
        own = weight * (count - link)
        longest = max(longest, own)
        if own >= LONG_PARAGRAPH_CHARS:
            long_count += 1
            long_chars += count
    return [
        _log(latin_chars), _log(links), _share(link_chars, chars),
        *(_share(link, total) for link, total in zip(third_links, third_chars, strict=True)),
        1000.0 * links / latin_chars, _log(longest), _log(long_count), _share(long_chars, chars),
        *runs.features(latin_chars),
    ]


class _Runs:
    """The runs of running text of a page, fed its paragraphs in document order (see ``RUN_LINK_SHARE``)."""

    __slots__ = ("best", "current", "link_lines", "running", "runs")

    def __init__(self) -> None:
        self.runs = 0  # runs of at least RUN_MIN_CHARS, the open one excluded
        self.running = 0.0  # Latin-equivalent characters outside links of every running-text paragraph
        self.current = [0.0, 0, 0.0, 0.0]  # the open run: characters, paragraphs, sentence characters, start
        self.best = (0.0, 0, 0.0, 0.0)
        self.link_lines = 0

    def add(self, chars: int, link_chars: int, weight: float, before: float, where: int,
            text: Callable[[int], str]) -> None:
        """Add one paragraph of ``chars`` characters, ``link_chars`` in links; ``weight`` is its Latin-equivalent
        factor, ``before`` the characters before it; ``text(where)`` its text, read only for a paragraph of
        running text (does it end like a sentence)."""
        links = link_chars / chars
        own = weight * (chars - link_chars)
        if links < RUN_LINK_SHARE and own >= RUN_PARAGRAPH_CHARS:
            current = self.current
            if not current[1]:
                current[3] = before
            current[0] += own
            current[1] += 1
            current[2] += own if _SENTENCE_END_RE.search(text(where).rstrip()) else 0.0
            self.running += own
            self.link_lines = 0
        elif links >= RUN_BREAK_SHARE and chars >= 8:
            self.link_lines += 1
            if self.link_lines >= 2 or weight * chars >= RUN_PARAGRAPH_CHARS:
                self.close()

    def close(self) -> None:
        """End the open run."""
        current = self.current
        if current[1]:
            self.runs += current[0] >= RUN_MIN_CHARS
            if current[0] > self.best[0]:
                self.best = (current[0], int(current[1]), current[2], current[3])
        self.current = [0.0, 0, 0.0, 0.0]

    def features(self, total: float) -> list[float]:
        """Return the ``RUN_FEATURES`` (``total``: the page's Latin-equivalent characters); closes the open run."""
        self.close()
        chars, paragraphs, sentences, start = self.best
        if not paragraphs:
            return [0.0] * len(RUN_FEATURES)
        return [_log(chars), _share(chars, total), _log(paragraphs), _log(chars / paragraphs), _log(self.runs),
                _share(sentences, chars), _share(start, total), _share(self.running, total)]


def _structure_features(counts: dict[str, int]) -> list[float]:
    """Return the anchor features and then the structure features, in their tuples' order, from the page
    table's counts (``extraction.dom.pagetable``: its structure walk skips ``INVISIBLE_TAGS`` and the elements
    hidden by markup, top included; an anchor's text is its ``text_content()``, headline-like with
    ``HEADLINE_CHARS`` characters or ``HEADLINE_CJK_CHARS`` CJK ones; the items of a parent are its children
    that hold a link carrying at least ``ITEM_LINK_SHARE`` of their text, grouped by
    ``extraction.dom.table.item_signature``)."""
    anchors, headline_anchors = counts["anchors"], counts["headline_anchors"]
    best_size, best_chars, total = counts["best_size"], counts["best_chars"], counts["total"]
    headings, linked_headings = counts["headings"], counts["linked_headings"]
    return [
        _share(headline_anchors, anchors), _log(headline_anchors),
        _log(best_size), _share(best_chars, total), _log(best_chars / best_size) if best_size else 0.0,
        _log(linked_headings), _share(linked_headings, headings), _share(counts["p_chars"], total),
        _log(counts["articles"]), _log(counts["times"]),
    ]


def jsonld_types(root: html.HtmlElement) -> set[str]:
    """Return the @type names of the page's JSON-LD, "schema:"/URL prefixes dropped."""
    found: set[str] = set()
    scripts = root.getroottree().getroot().iter("script")  # not an XPath query: "//" is a walk in libxml2
    for script in (script for script in scripts if script.get("type") == "application/ld+json"):
        try:
            data = json.loads(script.text or "")
        except (ValueError, RecursionError):
            continue
        stack: list[object] = [data]
        while stack and len(found) < 100:
            item = stack.pop()
            if isinstance(item, dict):
                kind = item.get("@type")
                for name in kind if isinstance(kind, list) else [kind]:
                    if isinstance(name, str) and name:
                        found.add(name.rsplit("/", 1)[-1].rsplit(":", 1)[-1])
                stack.extend(v for v in item.values() if isinstance(v, (dict, list)))
            elif isinstance(item, list):
                stack.extend(item)
    return found


def _meta_features(root: html.HtmlElement) -> list[float]:
    # One pass over the <meta> elements and one over the itemprop values, not one XPath query per name: each
    # "//" query walks the whole page in libxml2 (about 1 ms a page less).
    og: set[str] = set()
    og_video = published = False
    for meta in root.getroottree().getroot().iter("meta"):
        prop, name = meta.get("property"), meta.get("name")
        if prop == "og:type" or name == "og:type":
            content = meta.get("content")
            if content is not None:
                og.add(content.strip().lower())
        og_video = og_video or prop in _OG_VIDEO_PROPERTIES or name == "og:video"
        published = published or prop == _PUBLISHED_META or name == _PUBLISHED_META
    published = published or "datePublished" in root.xpath("//@itemprop")
    og_article = any(value.startswith("article") for value in og)
    og_website = "website" in og
    og_video = og_video or any(value.startswith("video") for value in og)
    og_other = bool(og) and not og_article and not og_website
    types = jsonld_types(root)
    return [float(og_article), float(og_website), float(og_video), float(og_other),
            float(any(_ARTICLE_TYPE_RE.search(name) for name in types)),
            float(not _COLLECTION_TYPES.isdisjoint(types)), float("WebSite" in types), float(published),
            float(not _OTHER_TYPES.isdisjoint(types))]


def _cue_features(counts: dict[str, int], blocks: Sequence[Block], text_chars_log: float) -> list[float]:
    """Return the cue features; the elements among the descendants of the walk's top, as the page table counts
    them (form controls: input, select, textarea, button; code: pre, code; videos: <video> and the <iframe>s whose
    src names a player, ``_is_player``; <img>)."""
    prices = sum(len(_PRICE_RE.findall(block.text)) for block in blocks)
    images = counts["images"]
    chars = math.expm1(text_chars_log)  # Latin-equivalent characters
    return [_log(float(counts["controls"])), _log(float(counts["code"])), _log(prices), _log(float(counts["videos"])),
            _log(float(images)), _log(1000.0 * float(images) / max(chars, 1.0))]


def _is_player(src: str | None) -> bool:
    return src is not None and any(word in src for word in _PLAYER_SOURCES)


def url_features(url: str | None) -> list[float]:
    """Return the ``URL_FEATURES`` of ``url``: all zeros when it is None, empty or unparsable."""
    zeros = [0.0] * len(URL_FEATURES)
    if not url or not url.strip():
        return zeros
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return zeros
    path = unquote(parts.path)
    query = parts.query
    segments = [segment for segment in path.split("/") if segment]
    last = segments[-1] if segments else ""
    dateless = _DATE_RE.sub("/", f"{path}?{query}")
    return [
        1.0,
        float(min(len(segments), MAX_URL_DEPTH)),
        float(not segments),
        float(bool(segments) and path.endswith("/")),
        float(bool(_DATE_RE.search(path))),
        float(bool(_NUMERIC_ID_RE.search(dateless))),
        float(last.count("-") >= SLUG_HYPHENS),
        float(bool(_INDEX_RE.match(last))),
        float(bool(_PAGE_QUERY_RE.search(query) or _PAGE_PATH_RE.search(path))),
        _log(len(last)),
        float(bool(_HTML_EXT_RE.search(last))),
        float(any(segment.lower() in _LIST_WORDS for segment in segments)),
        float(bool(query)),
        float(bool(_MEDIA_RE.search(path))),
    ]


def dom_features(root: html.HtmlElement, url: str | None, blocks: Sequence[Block] | None = None) -> FloatVector:
    """Return the ``DOM_FEATURES`` of a parsed page and its URL as a float32 vector (``root`` unchanged).

    ``blocks``: ``page_blocks(root)`` when the caller has them already (their page table holds the structure
    counts). A page without body or text gives zeros for the page features; ``url`` None gives zeros for the URL
    features.
    """
    blocks = page_blocks(root) if blocks is None else blocks
    top = walk_top(root)
    page = blocks[0].page if blocks else None
    table = page.table if page is not None and page.top is top and page.table is not None else page_table(top)
    text = _text_features(blocks)
    values = [*text, *_structure_features(table.counts), *_meta_features(root),
              *_cue_features(table.counts, blocks, text[0]), *url_features(url)]
    vector = np.asarray(values, dtype=np.float32)
    return np.nan_to_num(vector, nan=0.0, posinf=0.0, neginf=0.0)
