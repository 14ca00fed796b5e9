"""One flow for every page: ``process(page, context) -> Record``, for the crawl and ``scrapy extract``.

The steps, in order, on the page's one parsed tree (:attr:`extraction.page.Page.tree`):

0. **source**: a page the crawl rendered has two HTMLs, the fetched bytes and the browser's DOM.
   The flow reads the fetched HTML (what every model here learned from and every benchmark
   measures). When that gives less than ``SOURCE_RENDERED_BELOW`` characters of text and the DOM
   shows at least ``SOURCE_RENDERED_ADDED`` more characters of visible text than the fetched HTML
   (content built by scripts), the flow reads the DOM too and keeps the longer text. The choice is
   ``text_source`` in the record and ``extract/source/<raw|rendered>`` in stats (docs/guides/rendering.md,
   "Raw or rendered"); the step counts of such a page are those of its first reading;
1. **door**: a page that is empty or not HTML gets ``error`` ("empty", "not_html") and nothing
   else runs (:func:`extraction.page.sniff`); a page lxml cannot parse gets "unparsable";
2. **page type** (paper 000, :mod:`extraction.pagetype.models`) on the whole page, with the
   screenshot when there is one and ``PAGETYPE_FUSION`` is on; off when the context has no page-type
   models; in a crawl, the site's evidence (:mod:`extraction.pagetype.site`, ``Page.site_hint``)
   overrides it when sure;
3. **entries** of a list page (p(list) at least the models' route threshold) from the list
   extractor, before template cleaning (a list's headlines recur on the site's other lists);
4. **templates** (paper 004): the page's leaf tags teach the site's library (when it learns),
   then the site's templates are removed from the tree (skipped on list pages routed to the list
   extractor, ``ROUTE_LISTS``);
5. **metadata** (:mod:`extraction.metadata`: headline, authors, dates, description, section,
   tags, image, canonical URL, site name, declared language) from the whole page, before the
   templates are removed (a byline recurs in form across the site's pages);
6. **text**: method ``pipeline`` (the default) keeps the blocks the stacked block model passes
   (``models/stack/``, ``extraction_method`` "stack"; the SVM of papers 003/004 when no stacked
   model is shipped, "svm"), with the like siblings of kept blocks and the blocks inside a kept one,
   less comment threads and the unsure blocks outside the main region or after the page's declared
   article body, trimmed by the paragraph denoiser and, on pages not typed list, of a kept block's
   trailing link lines; or routes list pages to the list extractor
   ("list"); any other registered method runs instead when asked for. A step that fails flags the
   record (``<step>_failed``) and the page keeps the full text;
7. **language** of the extracted text (py3langid; the declared one when the text is too short);
8. **article gate** (:mod:`extraction.gate`, ``PAGETYPE_GATE``): from the record as the steps left it (text
   shape, metadata found, entries, page-type probabilities, URL, a web archive's toolbar: flag
   ``archive_chrome``), the probability that the record is an article's text (``article_probability``);
   the page type is made to agree with it (``page_type_source`` "gate" where it changed).

Each event is counted through ``context.count(key, n)`` (the crawl's stats; keys are
``component/event[/reason]``). Nothing here imports Scrapy.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field, fields, replace
from typing import Any, ClassVar, Protocol

from lxml import html

from extraction.blockclf.classifier import BALANCED, FAVORS, MAX_BLOCKS, BlockModels, classify
from extraction.blockclf.classifier import shared_models as shared_block_models
from extraction.config import ComponentConfig
from extraction.dom.blocks import Block, page_blocks
from extraction.dom.html import declared_lang, page_title, parse_html
from extraction.dom.lang import identify_language, script_language
from extraction.dom.repair import repair_text
from extraction.dom.text import tidy_text, visible_text
from extraction.gate import ARCHIVE_CHROME_FLAG, ARCHIVE_TOOLBAR_ID, ArticleGate, has_archive_chrome, shared_gate
from extraction.lists import list_page_entries
from extraction.metadata.authors import text_authors, without_outlet
from extraction.metadata.fields import page_metadata
from extraction.methods import Extraction, ListEntry, extract_tree, register
from extraction.page import Page
from extraction.pagetype.models import PageTypeDecision, PageTypeModels
from extraction.pagetype.models import shared_models as shared_page_models
from extraction.record import Record
from extraction.templates import DenoiseResult, Leaf, leaf_tags
from extraction.title import TitleModel
from extraction.title import shared_model as shared_title_model

logger = logging.getLogger(__name__)

PIPELINE = "pipeline"  # the default method: page type, then the block classifier or the list extractor
LIST_METHOD = "list"
# Take list pages' text from the list extractor too (their entries always come from it). Off:
# on held-out pages it raised WCXB list F1 0.548 -> 0.555 but cost L3S-GN1's news articles
# 0.912 -> 0.894 (link-heavy articles typed list; docs/evaluation/page-type.md).
ROUTE_LISTS = False

Count = Callable[[str, int], Any]
# Metadata fields copied into the record as they are (title and canonical_url have fallbacks; lang is
# identified from the extracted text).
RECORD_METADATA = ("authors", "date_published", "date_modified", "description", "section", "tags", "image",
                   "site_name", "lang_declared")


class SiteTemplates(Protocol):
    """What the flow needs of a template library (``templates_db.library.TemplateLibrary``)."""

    @property
    def available(self) -> bool: ...

    @property
    def learns(self) -> bool: ...

    def templates(self, site: str) -> Any: ...

    def observe(self, site: str, root: html.HtmlElement | None = None, leaves: list[Leaf] | None = None) -> Any: ...

    def denoise(self, site: str, root: html.HtmlElement, leaves: list[Leaf] | None = None) -> DenoiseResult: ...


@dataclass(frozen=True)
class PageTypeConfig(ComponentConfig):
    """PAGETYPE_* settings."""

    prefix: ClassVar[str] = "PAGETYPE"
    enabled: bool = True  # off: pages are not typed (page_type null, no list entries)
    model_dir: str = ""  # folder with meta.json and the ONNX models (empty: models/pagetype/)
    # On: a page with a screenshot is typed by the screenshot CNN fused with the DOM/URL model. Off by default:
    # on the validation sites the fusion did not type more pages right than the DOM/URL model alone
    # (docs/how-it-works/page-type.md).
    fusion: bool = False
    # The article gate (extraction.gate) decides last whether the record is an article's text, and the page type
    # follows it. Off by default: on held-out sites it keeps many of the articles the page type alone lost
    # (L3S-GN1 69 -> 91%), but lets in more list and other pages (WCXB's lists 4.3 -> 6.5%, its other pages
    # 30 -> 49%) and every list page of the Chinese demo site (docs/corpus-gate.md). Off: article_probability is
    # null and the page type is the page-level model's.
    gate: bool = False
    gate_dir: str = ""  # folder with the gate's meta.json and model.onnx (empty: models/gate/)


@dataclass(frozen=True)
class BlocksConfig(ComponentConfig):
    """BLOCKS_* settings."""

    prefix: ClassVar[str] = "BLOCKS"
    enabled: bool = True  # off: the text is the full visible text (extraction_method "fulltext")
    model_dir: str = ""  # folder with meta.json, blocks.onnx, paragraphs.onnx (empty: models/)
    favor: str = BALANCED  # the stacked model's thresholds: balanced, precision or recall (BlockModels.favoring)

    def validate(self) -> None:
        if self.favor not in FAVORS:
            raise ValueError(f"BLOCKS_FAVOR must be one of {', '.join(FAVORS)}, got {self.favor!r}")


@dataclass(frozen=True)
class TitleConfig(ComponentConfig):
    """TITLE_* settings: the learned title chooser (``extraction.title``)."""

    prefix: ClassVar[str] = "TITLE"
    enabled: bool = True  # off: the title rule of extraction.metadata.fields.choose_title
    model_dir: str = ""  # folder with meta.json and model.onnx (empty: models/title/)


@dataclass(frozen=True)
class Web2TextConfig(ComponentConfig):
    """WEB2TEXT_* settings."""

    prefix: ClassVar[str] = "WEB2TEXT"
    model_dir: str = ""  # folder with meta.json, unary.onnx, pairwise.onnx (empty: models/web2text/)


@dataclass(frozen=True)
class SourceConfig(ComponentConfig):
    """SOURCE_* settings: which HTML of a rendered page the flow reads (module docstring, step 0)."""

    prefix: ClassVar[str] = "SOURCE"
    # Text (characters) under which the fetched HTML may "have no content" ...
    rendered_below: int = 500
    # ... when the rendered DOM shows at least this many characters of visible text more than it.
    rendered_added: int = 200
    prefer: str = "raw"  # "raw": the rule above; "rendered": the DOM whenever there is one

    def validate(self) -> None:
        if self.prefer not in ("raw", "rendered"):
            raise ValueError(f"SOURCE_PREFER must be raw or rendered, got {self.prefer!r}")
        for name, value in (("SOURCE_RENDERED_BELOW", self.rendered_below),
                            ("SOURCE_RENDERED_ADDED", self.rendered_added)):
            if value < 0:
                raise ValueError(f"{name} must be 0 or more characters, got {value}")


def _no_count(key: str, count: int = 1) -> None:
    """The default ``count``: events are not counted."""


@dataclass
class Context:
    """What ``process`` needs besides the page: models, the template library, the method, stats."""

    page_models: PageTypeModels | None = None  # None: pages are not typed
    block_models: BlockModels | None = None  # None with method "pipeline": the full text
    templates: SiteTemplates | None = None  # None: no template learning or cleaning
    method: str = PIPELINE
    route_lists: bool = ROUTE_LISTS
    count: Count = field(default=_no_count)
    method_models: dict[str, Any] = field(default_factory=dict)  # keywords of a method other than pipeline
    source: SourceConfig = field(default_factory=SourceConfig)
    fusion: bool = False  # PAGETYPE_FUSION: the screenshot CNN joins the page type (else the DOM/URL model alone)
    title_model: TitleModel | None = None  # None: the title rule (extraction.metadata.fields.choose_title)
    gate: ArticleGate | None = None  # None: no article gate (article_probability null)

    @classmethod
    def from_settings(cls, settings: Any, *, templates: SiteTemplates | None = None, method: str = PIPELINE,
                      count: Count = _no_count) -> Context:
        """Load the models the settings ask for (a missing or mismatched model raises its ModelError)."""
        typing = PageTypeConfig.from_settings(settings)
        blocks = BlocksConfig.from_settings(settings)
        title = TitleConfig.from_settings(settings)
        page_models = shared_page_models(typing.model_dir or None) if typing.enabled else None
        block_models = shared_block_models(blocks.model_dir or None).favoring(blocks.favor) \
            if blocks.enabled and method == PIPELINE else None
        title_model = shared_title_model(title.model_dir or None) if title.enabled else None
        # The gate trained on the default flow's records (block stats, the stack's text): other methods' records
        # are not its inputs, and keep the page-level type.
        gate = shared_gate(typing.gate_dir or None) if typing.enabled and typing.gate and method == PIPELINE else None
        return cls(page_models, block_models, templates, method, count=count,
                   method_models=method_models(method, settings), source=SourceConfig.from_settings(settings),
                   fusion=typing.fusion, title_model=title_model, gate=gate)

    @staticmethod
    def pipeline_versions(settings: Any) -> dict[str, str]:
        """Return what ``Context.from_settings(settings).versions()`` returns, from the models' meta.json files
        alone (no model loaded): for a crawl process whose extraction workers load the models."""
        typing = PageTypeConfig.from_settings(settings)
        blocks = BlocksConfig.from_settings(settings)
        title = TitleConfig.from_settings(settings)
        versions = {"pagetype": PageTypeModels.version_of(typing.model_dir or None) if typing.enabled else None,
                    "blocks": BlockModels.version_of(blocks.model_dir or None, blocks.favor)
                    if blocks.enabled else None,
                    "title": TitleModel.version_of(title.model_dir or None) if title.enabled else None,
                    "gate": ArticleGate.version_of(typing.gate_dir or None) if typing.enabled and typing.gate else None}
        return {name: version for name, version in versions.items() if version is not None}

    def versions(self) -> dict[str, str]:
        """Return the versions of the models this context runs, for the record."""
        extra = self.method_models
        models = {"pagetype": self.page_models,
                  "blocks": self.block_models or extra.get("models") or extra.get("block_models"),
                  "web2text": extra.get("model"), "title": self.title_model, "gate": self.gate}
        return {name: str(model.version) for name, model in models.items() if model is not None}


def method_models(method: str, settings: Any) -> dict[str, Any]:
    """Return the models a ``scrapy extract --method`` needs, loaded from the settings' model folders."""
    blocks_dir = BlocksConfig.from_settings(settings).model_dir or None
    web2text_dir = Web2TextConfig.from_settings(settings).model_dir or None
    if method == "svm":
        return {"models": shared_block_models(blocks_dir)}
    if method in ("web2text", "svm-web2text"):
        from extraction.web2text.model import shared_models as shared_web2text_models  # onnxruntime on use

        models: dict[str, Any] = {"model": shared_web2text_models(web2text_dir)}
        if method == "svm-web2text":
            models["block_models"] = shared_block_models(blocks_dir)
        return models
    return {}


def process(page: Page, context: Context, record: Record | None = None) -> Record:
    """Run the flow of the module docstring on ``page``; fill and return ``record`` (a new one by default)."""
    record = record if record is not None else Record(url=page.url)
    rendered = page.rendered_page()
    if rendered is not None and context.source.prefer == "rendered":
        return _read(rendered, context, record, "rendered")
    before = replace(record, flags=list(record.flags)) if rendered is not None else None
    _read(page, context, record, "raw")
    if rendered is None or before is None or record.error is not None:
        return record
    if len(record.text) >= context.source.rendered_below or rendered.refusal is not None:
        return record
    added = len(visible_text(rendered.tree)) - len(visible_text(parse_html(page.text)))
    if added < context.source.rendered_added:
        return record
    # The scripts built the content: read the DOM too (its templates were observed with the fetched HTML).
    second = _read(rendered, replace(context, count=_no_count), before, "rendered", observe=False)
    if len(second.text) > len(record.text):
        for spec in fields(Record):
            setattr(record, spec.name, getattr(second, spec.name))
        context.count("extract/source/raw", -1)
        context.count("extract/source/rendered", 1)
    return record


def _read(page: Page, context: Context, record: Record, source: str, observe: bool = True) -> Record:
    """The flow on one HTML of the page (``source``: raw or rendered)."""
    count = context.count
    if page.refusal is not None:
        record.error = page.refusal
        count(f"page/refused/{page.refusal}", 1)
        return record
    record.encoding, record.encoding_source = page.decoded.encoding, page.decoded.source
    count(f"page/encoding/{page.decoded.source}", 1)
    try:
        root = page.tree
    except Exception as exc:  # lxml gives up on some garbage; the page is reported, the run goes on
        logger.warning("Cannot parse %s: %s", page.url, exc)
        record.error = "unparsable"
        count("page/refused/unparsable", 1)
        return record
    record.text_source = source
    count(f"extract/source/{source}", 1)
    if _archive_chrome(page, root):  # a web archive's copy: the gate reads the page as its original
        record.flags.append(ARCHIVE_CHROME_FLAG)
    record.models = context.versions()
    typed, blocks = _page_type(page, root, context, record)
    listed = typed is not None and typed.page_type == "list" and context.page_models is not None \
        and typed.confidence >= context.page_models.list_route_threshold
    routed = listed and context.route_lists and context.method == PIPELINE
    if listed and context.method == PIPELINE:
        if blocks is not None and len(blocks) > MAX_BLOCKS:
            # A page over the block cap (real pages stay far under it) is no list to read whole: the entries'
            # walk over its hundreds of thousands of links would cost more than the capped text path.
            record.flags.append("entries_skipped")
            count("pagetype/list_entries_skipped", 1)
        else:
            entries = list_page_entries(root, page.url)  # reads the tree without changing it
            record.entries = entry_dicts(entries)
            count("pagetype/list_entries", len(entries))
    _metadata(page, root, context, record, blocks, typed)
    _templates(page, root, context, record, skip_cleaning=routed, observe=observe)
    if record.template_cleaning and record.template_cleaning["removed_nodes"]:
        blocks = None  # the tree changed: the text step segments it again
    dom = typed.dom_probabilities if typed is not None else None
    _text(page, root, context, record, routed, blocks,
          None if dom is None else [float(dom.get(name, 0.0)) for name in ("article", "list", "other")],
          typed.page_type if typed is not None and typed.source != "dom" else None)
    _repair(record, count)
    _tidy(record)
    if not record.authors and record.text and "metadata_failed" not in record.flags:
        record.authors = without_outlet(text_authors(record.text), record.site_name, page.url)
        if record.authors:
            record.metadata_sources["authors"] = "text"
            count("metadata/authors/text", 1)
    record.lang = identify_language(record.text, record.lang_declared) or record.lang_declared \
        or script_language(record.text)
    count(f"extract/{record.extraction_method}", 1)
    if not record.text:
        count("extract/empty", 1)
    _gate(context, record)
    return record


def _archive_chrome(page: Page, root: html.HtmlElement) -> bool:
    """Return whether the page carries a web archive's toolbar (its HTML's marker; a page given as a tree: the
    toolbar's element)."""
    if page.decoded.source == "tree":
        return root.get_element_by_id(ARCHIVE_TOOLBAR_ID, None) is not None
    return has_archive_chrome(page.text)


def _gate(context: Context, record: Record) -> None:
    """The article gate's decision (:mod:`extraction.gate`), last: ``article_probability``, and the page type made
    to agree with it (``page_type_source`` "gate" where it changed: an article the page type missed is typed
    article, a page typed article the gate does not pass the likelier of list and other)."""
    gate, count = context.gate, context.count
    if gate is None or record.page_type is None:
        return
    try:
        probability = gate.probability(record)
    except Exception as exc:  # the record keeps its page type
        logger.warning("The article gate failed on %s: %s", record.url, exc)
        count("gate/error", 1)
        record.flags.append("gate_failed")
        return
    record.article_probability = round(probability, 4)
    article = probability >= gate.threshold
    count(f"gate/{'article' if article else 'not_article'}", 1)
    if article == (record.page_type == "article"):
        count("gate/agree", 1)
        return
    if article:
        record.page_type, record.page_type_confidence = "article", round(probability, 4)
    else:
        probabilities = record.page_type_probabilities or {}
        margin = context.page_models.other_margin if context.page_models is not None else 0.0
        other = probabilities.get("other", 0.0) > probabilities.get("list", 0.0) + margin
        record.page_type, record.page_type_confidence = "other" if other else "list", round(1.0 - probability, 4)
    record.page_type_source = "gate"
    count(f"gate/override/{record.page_type}", 1)


def _metadata(page: Page, root: html.HtmlElement, context: Context, record: Record, blocks: list[Block] | None,
              typed: PageTypeDecision | None) -> None:
    """Fill the record's metadata fields (title, authors, dates, ...) from the whole page."""
    try:
        lines = [line for block in blocks for line in block.text.split("\n")] if blocks is not None \
            else visible_text(root).split("\n")
        found = page_metadata(root, page.url, lines, listed_date=page.listed_date, fetched_at=record.fetched_at,
                              dates_by_htmldate=typed is None or typed.page_type == "article",
                              headline=typed is None or typed.page_type == "article",
                              thread=typed is not None and typed.page_type == "other", title_model=context.title_model)
    except Exception as exc:  # the page goes on with its <title> only
        logger.warning("Metadata failed on %s: %s", page.url, exc)
        context.count("metadata/error", 1)
        record.flags.append("metadata_failed")
        record.title = page_title(root)
        record.lang_declared = declared_lang(root)
        return
    for name in RECORD_METADATA:  # the fields Metadata and Record share, by name
        setattr(record, name, getattr(found, name))
    record.title = found.title or page_title(root)
    if found.canonical_url:
        record.canonical_url = found.canonical_url
    record.metadata_sources = found.sources
    for name, source in found.sources.items():
        context.count(f"metadata/{name}/{source}", 1)


def _repair(record: Record, count: Count) -> None:
    """Undo the mojibake the page carried in its own bytes, in the text, title and entries (flag, stat)."""
    text, title = repair_text(record.text), repair_text(record.title or "") or record.title
    entries = [{**entry, "title": repair_text(entry["title"] or "") or entry["title"]}
               for entry in record.entries or ()]
    if text == record.text and title == record.title and entries == (record.entries or []):
        return
    record.text, record.title = text, title
    if record.entries is not None:
        record.entries = entries
    record.flags.append("mojibake_repaired")
    count("extract/mojibake_repaired", 1)


def _tidy(record: Record) -> None:
    """Write the record's text fields in NFC without invisible characters (``tidy_text``)."""
    record.text = tidy_text(record.text)
    record.title, record.description, record.section, record.site_name = map(
        _tidy_optional, (record.title, record.description, record.section, record.site_name))
    record.authors = [name for name in map(tidy_text, record.authors) if name]
    record.tags = [tag for tag in map(tidy_text, record.tags) if tag]
    if record.entries:
        record.entries = [{**entry, "title": _tidy_optional(entry["title"])} for entry in record.entries]


def _tidy_optional(value: str | None) -> str | None:
    """Return an optional text field tidied, None when nothing is left of it (an empty one as it is)."""
    return tidy_text(value) or None if value else value


def entry_dicts(entries: tuple[ListEntry, ...]) -> list[dict[str, str | None]]:
    """Return list entries as the record holds them."""
    return [{"title": entry.text, "url": entry.url} for entry in entries]


def _page_type(page: Page, root: html.HtmlElement, context: Context,
               record: Record) -> tuple[PageTypeDecision | None, list[Block] | None]:
    """Type the page; returns the decision and the page's blocks (segmented once for the DOM/URL model and
    the block classifier)."""
    if context.page_models is None:
        return None, None
    try:
        blocks = page_blocks(root)
        typed = context.page_models.classify(root, page.url, page.screenshot if context.fusion else None, blocks)
    except Exception as exc:  # one page must not stop the run: it goes on untyped
        logger.warning("Page type failed on %s: %s", page.url, exc)
        context.count("pagetype/error", 1)
        record.flags.append("pagetype_failed")
        return None, None
    record.crawl["page_type_page"] = [typed.page_type, round(typed.confidence, 4)]  # the site evidence's vote
    hint = page.site_hint
    if hint is not None:  # the crawl's site evidence is sure of the page's URL shape (extraction.pagetype.site)
        if hint.page_type != typed.page_type:
            context.count("pagetype/site/override", 1)
            # The DOM model's own probabilities stay (the block model reads them); the decision is the site's.
            typed = replace(typed, page_type=hint.page_type, confidence=hint.share, source="site")
        else:
            context.count("pagetype/site/agree", 1)
    record.page_type = typed.page_type
    record.page_type_confidence = round(typed.confidence, 4)
    record.page_type_source = typed.source
    record.page_type_probabilities = {name: round(float(p), 4) for name, p in typed.probabilities.items()}
    context.count(f"pagetype/{typed.page_type}", 1)
    context.count(f"pagetype/source/{typed.source}", 1)
    return typed, blocks


def _templates(page: Page, root: html.HtmlElement, context: Context, record: Record, skip_cleaning: bool,
               observe: bool = True) -> None:
    library, site, count = context.templates, page.site, context.count
    if library is None or not library.available or not site:
        return
    try:
        leaves = leaf_tags(root)
        if library.learns and observe:
            observation = library.observe(site, leaves=leaves)
            count("templates/pages", 1)
            if observation.matched:
                count("templates/pages_matched", 1)
            if observation.promoted:
                count("templates/promoted", observation.promoted)
        if skip_cleaning:  # the list extractor finds the repeated entries itself
            count("templates/skipped_list", 1)
            return
        if not library.templates(site):
            count("templates/no_templates", 1)
            return
        result = library.denoise(site, root, leaves)
    except Exception as exc:  # the page goes on uncleaned
        logger.warning("Templates failed on %s: %s", page.url, exc)
        count("templates/error", 1)
        record.flags.append("templates_failed")
        return
    record.template_cleaning = result.as_dict()
    if result.removed_nodes:
        count("templates/denoised", 1)
        count("templates/removed_nodes", result.removed_nodes)
        count("templates/removed_chars", result.removed_chars)
    for reason, kept in result.kept.items():
        count(f"templates/guard/{reason}", kept)


def _text(page: Page, root: html.HtmlElement, context: Context, record: Record, routed: bool,
          blocks: list[Block] | None, page_probabilities: list[float] | None = None,
          page_type: str | None = None) -> None:
    """The text step; ``page_type``: the page's type when more than its DOM probabilities decided it (the
    site evidence, the screenshot), which then chooses the block model's threshold in their place."""
    method, count = context.method, context.count
    step = "blocks" if method == PIPELINE else "method"
    try:
        if method == PIPELINE and routed:
            listed = extract_tree(root, LIST_METHOD, page.url)
            record.text, record.extraction_method = listed.text, LIST_METHOD
        elif method == PIPELINE and context.block_models is not None:
            decision = classify(root, context.block_models, blocks, page_probabilities=page_probabilities,
                                page_type=page_type)
            record.text, record.extraction_method = decision.text, decision.model
            record.block_stats = decision.stats()
            count("blocks/kept", record.block_stats["blocks_kept"])
            count("blocks/dropped", record.block_stats["blocks"] - record.block_stats["blocks_kept"])
            count("blocks/paragraphs_trimmed", record.block_stats["paragraphs_trimmed"])
            for name, value in decision.rule_counts().items():
                count(f"blocks/{name}", value)
            if decision.capped:  # a page over MAX_BLOCKS: the rest were dropped unscored
                record.flags.append("blocks_capped")
                count("blocks/capped", decision.capped)
        elif method in (PIPELINE, "fulltext"):
            record.text, record.extraction_method = visible_text(root), "fulltext"
        else:
            extraction = extract_tree(root, method, page.url, **context.method_models)
            record.text, record.extraction_method = extraction.text, method
            if extraction.entries:
                record.entries = entry_dicts(extraction.entries)
    except Exception as exc:  # one page must not stop the run: it keeps its full text
        logger.warning("Text extraction (%s) failed on %s: %s", method, page.url, exc)
        count(f"{step}/error", 1)
        record.flags.append(f"{step}_failed")
        record.text, record.extraction_method = visible_text(root), "fulltext"


def extract_pipeline(root: html.HtmlElement, url: str | None, favor: str = BALANCED) -> Extraction:
    """The ``pipeline`` method for the method registry: the flow without templates, on the shipped models (the
    block model's thresholds of ``favor``, as ``BLOCKS_FAVOR``)."""
    context = Context(shared_page_models(), shared_block_models().favoring(favor), title_model=shared_title_model())
    record = process(Page.from_tree(root, url), context)
    entries = tuple(ListEntry(e["title"] or "", e["url"]) for e in record.entries or ())
    return Extraction(method=PIPELINE, text=record.text, title=record.title, page_type=record.page_type,
                      entries=entries)


register(PIPELINE, extract_pipeline)
