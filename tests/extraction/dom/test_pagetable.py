"""The compiled page table (extraction/dom/pagetable.pyx) against the Python walks it replaced.

The runtime has one implementation, the compiled one; ``page_blocks_reference`` and ``compute_stats_reference``
(``reference.py`` beside this file) are kept only as the oracles of these tests. The fixture pages are generated
(seeded): nested blocks, links, figures with captions and credits, elements hidden by style, attribute or class,
scripts, comments, processing instructions, CJK text, entities, NUL bytes and unclosed tags, parsed by the crawl's
own ``parse_html``. Real pages of the datasets are compared too when ../shared/datasets is there. The whole-flow
parity on every dataset page is ``bench/table_parity.py`` (bench/results/table-parity.md).
"""

from __future__ import annotations

import random
from dataclasses import fields

import pytest
from lxml import etree, html

from extraction.dom.blocks import page_blocks, walk_top
from extraction.dom.html import parse_html
from extraction.dom.stats import DomStats, compute_stats

from .reference import compute_stats_reference, page_blocks_reference

TAGS = ("div", "p", "span", "a", "b", "i", "em", "li", "ul", "td", "tr", "table", "h1", "h2", "figure",
        "figcaption", "section", "article", "br", "img", "script", "style", "noscript", "form", "blockquote", "pre")
CLASSES = ("", "", "", "", "", "", "content", "lead", "d-none", "credit", "caption", "sr-only", "hidden", "nav menu",
           "  story  body ", "visually-hidden", "photo-credit")
WORDS = ("news", "the", "城市", "新闻报道", "  ", "\n\t", "a&amp;b", "&#12354;", "x\x00y", "Ünïcode", "—", "...")


def _page(rng: random.Random, elements: int) -> str:
    """Return a random page of about ``elements`` elements (some left unclosed, as pages do)."""
    out = ["<html><head><title>t</title></head><body>"]
    open_tags: list[str] = []
    for _ in range(elements):
        roll = rng.random()
        if roll < 0.15:
            out.append(rng.choice(WORDS))
        elif roll < 0.2:
            out.append(rng.choice(("<!-- a comment -->", "<?php echo 1 ?>", "<br>", "<img src='a.png'>")))
        elif roll < 0.55 and open_tags:
            tag = open_tags.pop()
            if rng.random() < 0.9:
                out.append(f"</{tag}>")
        else:
            tag = rng.choice(TAGS)
            attributes = ""
            if rng.random() < 0.15:
                attributes += f" class='{rng.choice(CLASSES)}'"
            if rng.random() < 0.01:
                attributes += rng.choice((" style='display:none'", " hidden", " aria-hidden='true'",
                                          " style='visibility: hidden'", " id='main'"))
            if tag in ("br", "img"):
                out.append(f"<{tag}{attributes}>")
                continue
            if tag in ("script", "style", "noscript"):  # raw text: left open, it would hold the rest of the page
                out.append(f"<{tag}{attributes}>{rng.choice(WORDS)}</{tag}>")
                continue
            out.append(f"<{tag}{attributes}>")
            open_tags.append(tag)
            out.append(" ".join(rng.choice(WORDS) for _ in range(rng.randrange(4))))
    out.append("</body></html>")
    return "".join(out)


def _stats_fields(stats: DomStats) -> dict[str, object]:
    return {f.name: getattr(stats, f.name) for f in fields(stats) if f.name != "index"}


def _assert_same(root: html.HtmlElement) -> None:
    blocks = page_blocks(root)
    assert blocks == page_blocks_reference(root)
    top = walk_top(root)
    assert _stats_fields(compute_stats(top)) == _stats_fields(compute_stats_reference(top))
    skip = {element for element in top.iter() if _hidden(element)}  # skipped with their subtrees, as CETD's are
    assert _stats_fields(compute_stats(top, skip)) == _stats_fields(compute_stats_reference(top, skip))


def _hidden(element: html.HtmlElement) -> bool:
    return isinstance(element.tag, str) and ("d-none" in (element.get("class") or "") or element.tag == "script")


@pytest.mark.parametrize("seed", range(40))
def test_generated_pages_give_the_python_walks_blocks_and_statistics(seed: int) -> None:
    rng = random.Random(seed)
    _assert_same(parse_html(_page(rng, rng.choice((5, 60, 400)))))


def test_trees_built_by_hand_with_comments_entities_and_no_body() -> None:
    root = html.Element("div")
    etree.SubElement(root, "p").text = "one"
    root.append(etree.Comment("c"))
    root[-1].tail = "tail of a comment"
    root.append(etree.ProcessingInstruction("pi", "x"))
    root[-1].tail = " and of a PI "
    link = etree.SubElement(root, "a")
    link.text, link.tail = "link", "after"
    etree.SubElement(link, "span").text = "inside"
    _assert_same(root)
    for page in ("", "<p>no body</p>", "<html><body></body></html>", "<body>" + "<div>x" * 3000 + "</body>",
                 "<body><figure><img><figcaption class='credit'>AP</figcaption>text</figure></body>",
                 "<body>\x00<p>nul\x00 bytes\x00</p>\x00</body>"):
        _assert_same(parse_html(page))


@pytest.mark.datasets
@pytest.mark.parametrize("dataset", ["wcxb-dev", "chinese-wced-dev", "msv-big5"])
def test_dataset_pages_give_the_python_walks_blocks_and_statistics(dataset: str) -> None:
    from evaluation.datasets import DatasetNotFound, iter_pages
    from extraction.page import Page

    try:
        pages = iter_pages(dataset)
        for number, page in enumerate(pages):
            if number == 25:
                break
            _assert_same(Page(page.html_bytes(), page.url).tree)
    except DatasetNotFound as missing:
        pytest.skip(str(missing))
