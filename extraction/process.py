"""The default extraction: page type, then the extractor for that type (``--method pipeline``).

Template cleaning (paper 004's common noise) happens before this, where the page's site has a
library (the crawl's ``TemplateDenoisePipeline``, ``scrapy extract`` with a site). Then:

1. page type (paper 000) by the page-type models (``extraction.pagetype.models``): the screenshot CNN
   fused with the DOM/URL model when there is a screenshot, the DOM/URL model alone otherwise;
   the crawl's ``PageTypePipeline`` types the page before template cleaning and passes the
   type in (``page_type=``);
2. list pages get the list extractor's entries (``LIST_METHOD``: titles with their link URLs);
   the text of every page comes from the SVM block classifier with the paragraph denoiser
   (``extraction.blockclf.classifier``), or for list pages from the list extractor when ``ROUTE_LISTS``.

``page_type_rule``, the DOM rule that typed pages before the models, stays as the baseline of
the page-type report.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from lxml import html

from extraction.blockclf.classifier import BlockDecision, BlockModels, classify
from extraction.dom.blocks import Block, page_blocks
from extraction.dom.html import page_title
from extraction.methods import Extraction, ListEntry, extract_tree, register
from extraction.pagetype.features import jsonld_types
from extraction.pagetype.models import PageTypeDecision, PageTypeModels
from extraction.pagetype.models import shared_models as shared_page_models

NAME = "pipeline"
# DOM rule for list pages (ours, until the page-type model): links carry at least this share of
# the body's text...
LIST_LINK_SHARE = 0.35
# ...and no paragraph has this many characters outside links (an article paragraph). Chosen by a
# grid on the wcxb-dev training fold (article vs list pages, 786): accuracy 0.883, 11 of 622
# articles routed as lists, 81 of 164 lists as articles (the cheaper error: the block classifier
# still returns the list's text); the page-type model replaces the rule.
LIST_MAX_PARAGRAPH = 600
# Take list pages' text from the list extractor too (their entries always come from it). Off:
# on held-out pages it raised WCXB list F1 0.548 -> 0.555 but cost L3S-GN1's news articles
# 0.912 -> 0.894 (link-heavy articles typed list; README, page-type section).
ROUTE_LISTS = False
LIST_METHOD = "list"
_ARTICLE_TYPES = re.compile(r"(?:^|\W)(?:\w*Article|BlogPosting|Report)(?:\W|$)")


def declared_article(root: html.HtmlElement) -> bool:
    """Return True when og:type or JSON-LD declare the page an article."""
    for value in root.xpath("//meta[@property='og:type']/@content"):
        if value.strip().lower() == "article":
            return True
    return any(_ARTICLE_TYPES.search(kind) for kind in jsonld_types(root))


def page_type_rule(root: html.HtmlElement, blocks: list[Block] | None = None) -> str:
    """Return "article" or "list" by the DOM rule of the module docstring (``root`` unchanged).

    ``blocks``: ``page_blocks(root)`` when the caller has them (the rule needs nothing else).
    """
    if declared_article(root):
        return "article"
    blocks = page_blocks(root) if blocks is None else blocks
    chars = sum(block.chars for block in blocks)
    if chars == 0 or sum(block.link_chars for block in blocks) < LIST_LINK_SHARE * chars:
        return "article"
    longest = max((p.chars - p.link_chars for block in blocks for p in block.paragraphs), default=0)
    return "list" if longest < LIST_MAX_PARAGRAPH else "article"


def is_list(page_type: str | None, confidence: float | None, page_models: PageTypeModels | None = None) -> bool:
    """Return True for a list page sure enough to get entries (p(list) at least the route threshold;
    a type given without a confidence counts)."""
    if page_type != "list":
        return False
    return confidence is None or confidence >= (page_models or shared_page_models()).list_route_threshold


def routed_to_list(page_type: str | None, confidence: float | None, page_models: PageTypeModels | None = None,
                   route_lists: bool | None = None) -> bool:
    """Return True when a page of this type and confidence gets its text from the list extractor."""
    return (ROUTE_LISTS if route_lists is None else route_lists) and is_list(page_type, confidence, page_models)


def list_entries(root: html.HtmlElement, url: str | None) -> tuple[ListEntry, ...]:
    """Return the list extractor's entries of a page (``root`` is not modified)."""
    return extract_tree(root, LIST_METHOD, url).entries  # list methods work on their own copy


@dataclass(frozen=True)
class PipelineResult:
    """The extraction, what typed the page, and what the block classifier decided (None on lists)."""

    extraction: Extraction
    decision: BlockDecision | None
    page_type: PageTypeDecision | None = None  # None when the caller gave the type


def run(root: html.HtmlElement, url: str | None = None, models: BlockModels | None = None, *,
        page_type: str | None = None, confidence: float | None = None, screenshot: bytes | None = None,
        page_models: PageTypeModels | None = None, route_lists: bool | None = None) -> PipelineResult:
    """Type the page (unless ``page_type`` is given) and run its extractor (``root`` is not modified).

    ``screenshot``: the page's PNG, for the image model and the fusion; ``page_models``: the
    page-type models (default: the shipped ones, loaded once); ``route_lists``: default ``ROUTE_LISTS``.
    A list page (``confidence`` = p(list) at least the models' ``list_route_threshold``, or a type
    given without a confidence) gets the list extractor's entries; its text comes from the list
    extractor too when ``route_lists``, else from the block classifier.
    """
    typed = None
    typer = page_models or shared_page_models()
    blocks = page_blocks(root)  # shared by the DOM/URL model and the block classifier
    if page_type is None:
        typed = typer.classify(root, url, screenshot, blocks)
        page_type, confidence = typed.page_type, typed.confidence
    if routed_to_list(page_type, confidence, typer, route_lists):
        listed = extract_tree(root, LIST_METHOD, url)  # list methods work on their own copy
        return PipelineResult(replace(listed, method=NAME, page_type="list"), None, typed)
    entries = list_entries(root, url) if is_list(page_type, confidence, typer) else ()
    decision = classify(root, models, blocks)
    return PipelineResult(Extraction(method=NAME, text=decision.text, title=page_title(root),
                                     page_type=page_type, entries=entries), decision, typed)


def extract_pipeline(root: html.HtmlElement, url: str | None) -> Extraction:
    """The ``pipeline`` method."""
    return run(root, url).extraction


register(NAME, extract_pipeline)
