"""Chrome injection: training copies of pages with a news portal's link blocks added (DOM/URL page-type model).

The pages that may train the page-type model (wcxb-dev's training folds, chinese-wced-dev, the demo)
are mostly pages of small sites; the pages a news crawl types are mostly portal pages, whose articles
carry menus, "most read" boxes and related-link lists around the body (article pages of news portals
have 40-70% of their characters in links). A model that learned "many links = list" types those
articles as lists. Each training page therefore also enters once with ``MIN_BLOCKS``-``MAX_BLOCKS``
link blocks of *other* sites' list and other pages inserted at the start and the end of its body,
keeping its label: a link block is chrome, what makes an article is its running text. The copy is in
the CV group of its page (never validated on its own source).

Link blocks (``link_blocks``): ul, nav, div, table, section, aside, header and footer elements with at
least ``MIN_LINKS`` links, at most ``MAX_BLOCK_CHARS`` characters and at least ``MIN_LINK_SHARE`` of
them in links; at most ``BLOCKS_PER_PAGE`` per donor page. Seeded: the same pages give the same copies.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
from lxml import etree, html

from extraction.dom.encoding import decode_html
from extraction.dom.html import parse_html
from extraction.pagetype.features import dom_features

MIN_LINKS = 8
MAX_BLOCK_CHARS = 4000
MIN_LINK_SHARE = 0.7
BLOCKS_PER_PAGE = 12
POOL_SIZE = 3000  # donor blocks sampled for the copies
MIN_BLOCKS, MAX_BLOCKS = 3, 8
_CONTAINERS = ("ul", "nav", "div", "table", "section", "aside", "footer", "header")


def _text(element: html.HtmlElement) -> str:
    return " ".join(element.text_content().split())


def link_blocks(root: html.HtmlElement) -> list[str]:
    """Return the page's link blocks (see the module docstring) as HTML."""
    out: list[str] = []
    for element in root.iter(*_CONTAINERS):
        links = element.xpath(".//a")
        if len(links) < MIN_LINKS:
            continue
        text = _text(element)
        if not text or len(text) > MAX_BLOCK_CHARS:
            continue
        if sum(len(_text(link)) for link in links) < MIN_LINK_SHARE * len(text):
            continue
        out.append(html.tostring(element, encoding="unicode"))
        if len(out) >= BLOCKS_PER_PAGE:
            break
    return out


def parse(body: bytes, content_type: str | None) -> html.HtmlElement:
    """Decode and parse a page as the crawl does."""
    return parse_html(decode_html(body, content_type).text)


def donor_pool(pages: Sequence[tuple[str, bytes, str | None]], seed: int) -> list[tuple[str, str]]:
    """Return up to ``POOL_SIZE`` (group, block HTML) from the pages (group, body, content type), seeded."""
    pool = [(group, block) for group, body, content_type in pages for block in link_blocks(parse(body, content_type))]
    rng = random.Random(seed)
    return rng.sample(pool, min(POOL_SIZE, len(pool)))


def with_chrome(body: bytes, content_type: str | None, url: str | None, group: str, pool: Sequence[tuple[str, str]],
                seed: int) -> npt.NDArray[np.float32] | None:
    """Return the features of the page with other groups' link blocks inserted (None when it has no body)."""
    root = parse(body, content_type)
    target = root.find(".//body")
    if target is None:
        return None
    rng = random.Random(seed)
    count = rng.randint(MIN_BLOCKS, MAX_BLOCKS)
    picks = [block for donor, block in rng.sample(list(pool), min(len(pool), 4 * count)) if donor != group][:count]
    for k, block in enumerate(picks):
        try:
            element = html.fragment_fromstring(block)
        except (ValueError, TypeError, etree.ParserError):
            continue
        if k % 2 == 0:
            target.insert(0, element)
        else:
            target.append(element)
    return dom_features(root, url)


def chrome_features(args: tuple[bytes, str | None, str | None, str, Sequence[tuple[str, str]], int]) -> Any:
    """``with_chrome`` for a process pool; a page that fails gives None (it gets no copy)."""
    try:
        return with_chrome(*args)
    except Exception:  # a malformed page: no copy
        return None
