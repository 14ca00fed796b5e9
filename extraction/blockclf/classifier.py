"""The SVM block classifier and paragraph denoiser at inference time (papers 003 and 004).

Every block of the page (``extraction.dom.blocks``) gets its features (``extraction.blockclf.features``,
the same code that made the training data) and the block model's calibrated probability of
being content; blocks at or over the threshold in ``meta.json`` are kept (the stacked model has one per
page type, the type its page-type input decides). Inside each kept block the paragraph model trims
noise at the head and the tail (paper 003: in-block noise "usually sits at the head or the tail of
the content block and does not appear among the content paragraphs"): leading and trailing
paragraphs under the threshold are dropped, middle ones stay.
When no block reaches the threshold, the most probable block is kept, with every block at least
``FALLBACK_SHARE`` as probable (an empty text is never the better answer for a page that has text, and
on a page the model is that unsure of, its order among near-equal blocks is noise; the decision is
counted as ``fallback``), outside readers' comment threads when the page has a block elsewhere.

Models are ONNX files exported by ``models/training/train_blocks.py`` and run with onnxruntime
(no scikit-learn at crawl time), loaded by ``extraction.onnx``. ``meta.json`` names the features in
order and their version; a model whose features do not match this code is refused with a message
saying so.

The work per page is bounded: at most ``MAX_BLOCKS`` blocks are scored (those with the most text
outside links) and the model runs on ``BATCH_ROWS`` rows at a time, so a 17 MB page of 400,000
link blocks is classified in seconds and well under 1 GB (an unbatched call on it asked
onnxruntime for a 14.7 GB buffer).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import onnxruntime as ort
from lxml import html

from extraction.blockclf.context import CONTEXT_VERSION, FEATURES, context_features
from extraction.blockclf.features import (
    BLOCK_FEATURES,
    FEATURE_VERSION,
    PARAGRAPH_FEATURES,
    block_features,
    paragraph_features,
)
from extraction.blockclf.rules import (
    after_article_body,
    comment_blocks,
    declared_body,
    enclosing_block,
    flat_threads,
    lead_blocks,
    link_lists,
    missed_body,
    named_related,
    named_sidebars,
    nested_blocks,
    outside_main_region,
    repeated_blocks,
    sibling_blocks,
    teaser_bodies,
    trailing_headings,
    trim_ends_lazily,
    trim_link_tail,
)
from extraction.dom.blocks import Block, blocks_text, page_blocks
from extraction.dom.html import page_title
from extraction.methods import Extraction, register
from extraction.onnx import META_FILE, ModelError, meta_version, read_meta, session, shared
from extraction.pagetype.models import CLASSES, decide
from extraction.paths import MODELS_DIR

NAME = "svm"
TRAIN_COMMAND = "make train-blocks"
STACK_NAME = "stack"  # extraction_method of the text the stacked model chose
STACK_FOLDER = "stack"  # the stacked block model's folder, inside the block models' folder
STACK_TRAIN_COMMAND = "make train-stack"
# What the stacked model's thresholds favor (BLOCKS_FAVOR): balanced is the best characters-weighted F1 of
# the training's grouped CV, precision its F0.5 (fewer blocks kept: less boilerplate, some text lost),
# recall its F2 (more kept), as trafilatura's favor_precision / favor_recall.
BALANCED = "balanced"
FAVORS = (BALANCED, "precision", "recall")
# Blocks scored per page. The largest of 2,213 dataset pages (CleanEval final, WCXB dev,
# Chinese-WCED) has 2,500 blocks (99th percentile 557), so real pages stay whole. A page over the
# cap (the test page: 400,000 link blocks in 17 MB) keeps the MAX_BLOCKS blocks with the most
# characters outside links -- where an article's text is -- and the rest are dropped unscored.
# Scoring 5,000 blocks (features, CETD, inference) takes about 2 s of CPU; CETD then runs on the
# page without the dropped blocks' regions (``extraction.blockclf.features.block_features``).
MAX_BLOCKS = 5_000
# The fallback (module docstring) keeps the blocks at least this share as probable as the most probable
# one. Fixed at a half before measuring: against the most probable block alone, 14 of 3,445 held-out and
# Dragnet training pages changed, 6 better, 5 worse and 3 equal (docs/how-it-works/block-classifier.md).
FALLBACK_SHARE = 0.5
# Rows per onnxruntime call. The RBF graph holds a few (rows x support vectors) float64 matrices at
# once: with 4,594 support vectors, measured +38 MB of memory at 256 rows, +150 MB at 1,024 and
# +300 MB at 2,048, with no gain in speed from the larger batches.
BATCH_ROWS = 512


@dataclass(frozen=True)
class _Model:
    session: ort.InferenceSession
    input_name: str
    threshold: float

    def content_probability(self, features: np.ndarray) -> np.ndarray:
        """Return P(content) for each row of ``features``, run ``BATCH_ROWS`` rows at a time."""
        rows = features.astype(np.float32, copy=False)
        parts = [np.asarray(self.session.run(None, {self.input_name: rows[start:start + BATCH_ROWS]})[1])[:, 1]
                 for start in range(0, len(rows), BATCH_ROWS)]
        return np.concatenate(parts) if parts else np.zeros(0, dtype=np.float32)


@dataclass(frozen=True)
class _StackModel(_Model):
    """The default block model: gradient-boosted trees over blocks in context (``extraction.blockclf.context``),
    run like the SVMs (``_Model.content_probability``).

    ``type_thresholds``: a threshold per page type (article, list, other) that its model's input decides,
    the page-type model's probabilities with ``type_margin`` as ``extraction.pagetype.models.decide``
    reads them (``meta.json`` "thresholds"; each chosen by the training's grouped CV on the pages of that
    type); ``threshold`` stays for pages without page-type probabilities and for models without them."""

    version: str = ""
    type_thresholds: tuple[float, float, float] | None = None
    type_margin: float = 0.0
    # Per favor other than balanced (``FAVORS``): its threshold for untyped pages and per page type (``meta.json``
    # "favor"), each the best characters-weighted F-beta of the training's grouped-CV probabilities (0.5 / 2).
    favors: tuple[tuple[str, float, tuple[float, float, float]], ...] = ()

    def threshold_for(self, page_probabilities: Sequence[float] | None, page_type: str | None = None) -> float:
        """Return the threshold of a page with these page-type probabilities (article, list, other), or of
        ``page_type`` when the caller decided it otherwise (the crawl's site evidence)."""
        decided = self.page_type(page_probabilities, page_type)
        if self.type_thresholds is None or decided is None:
            return self.threshold
        return self.type_thresholds[CLASSES.index(decided)]

    def page_type(self, page_probabilities: Sequence[float] | None, page_type: str | None = None) -> str | None:
        """Return the page's type: ``page_type`` when the caller decided it, else what the probabilities decide
        with ``type_margin``; None for a page with neither."""
        if page_type in CLASSES:
            return page_type
        if page_probabilities is None:
            return None
        return CLASSES[decide(page_probabilities, self.type_margin)]


@dataclass(frozen=True)
class BlockModels:
    """The block model, the paragraph model and their meta data; the stacked block model when shipped."""

    blocks: _Model
    paragraphs: _Model
    meta: dict[str, Any]
    version: str = ""  # extraction.onnx.meta_version of the folder, recorded with the text
    stack: _StackModel | None = None  # models/stack/: decides the blocks in the SVM's place when present

    @staticmethod
    def version_of(directory: str | Path | None = None, favor: str = BALANCED) -> str:
        """Return the version the models of ``directory`` (None or empty: the shipped ``models/``) load with,
        from the meta.json files alone: the folder's, with its stacked model's after a "+" and a favor other
        than balanced after an "@" (``favoring``)."""
        folder = Path(directory or MODELS_DIR)
        stack = folder / STACK_FOLDER
        if not (stack / META_FILE).exists():
            return meta_version(folder)
        return _favored(f"{meta_version(folder)}+{meta_version(stack)}", favor)

    def favoring(self, favor: str) -> BlockModels:
        """Return these models with the stacked model's thresholds of ``favor`` (``FAVORS``): ``precision``
        keeps fewer blocks, ``recall`` more; ``balanced`` (its F1) is these models. Without a stacked model
        the favor changes nothing (the SVM has one threshold)."""
        if favor not in FAVORS:
            raise ValueError(f"favor must be one of {', '.join(FAVORS)}, got {favor!r}")
        if favor == BALANCED or self.stack is None:
            return self
        found = next((entry for entry in self.stack.favors if entry[0] == favor), None)
        if found is None:
            raise ModelError(f"the stacked block model has no {favor} thresholds (meta.json \"favor\"): retrain "
                             f"with `{STACK_TRAIN_COMMAND}`")
        _, threshold, by_type = found
        return replace(self, stack=replace(self.stack, threshold=threshold, type_thresholds=by_type),
                       version=_favored(self.version, favor))

    @classmethod
    def load(cls, directory: str | Path | None = None) -> BlockModels:
        """Load and validate the models of ``directory`` (None or empty: the shipped ``models/``) and the
        stacked block model of its ``stack/`` folder when there is one."""
        folder = Path(directory or MODELS_DIR)
        meta = read_meta(folder, TRAIN_COMMAND)
        stack = _stack_model(folder / STACK_FOLDER) if (folder / STACK_FOLDER / META_FILE).exists() else None
        version = cls.version_of(folder)
        return cls(_model(folder, meta, "blocks", BLOCK_FEATURES),
                   _model(folder, meta, "paragraphs", PARAGRAPH_FEATURES), meta, version, stack)


def _model(folder: Path, meta: dict[str, Any], kind: str, names: tuple[str, ...]) -> _Model:
    entry = meta.get(kind) or {}
    where = folder / META_FILE
    if entry.get("feature_version") != FEATURE_VERSION:
        raise ModelError(f"{where}: {kind} model has feature version {entry.get('feature_version')!r}, this code "
                         f"computes version {FEATURE_VERSION}: retrain with `{TRAIN_COMMAND}`")
    if tuple(entry.get("features", ())) != names:
        raise ModelError(f"{where}: {kind} model's feature names differ from this code's: retrain with "
                         f"`{TRAIN_COMMAND}`")
    loaded = session(folder / entry.get("file", f"{kind}.onnx"))
    return _Model(loaded, loaded.get_inputs()[0].name, float(entry.get("threshold", 0.5)))


def _stack_model(folder: Path) -> _StackModel:
    meta = read_meta(folder, STACK_TRAIN_COMMAND)
    where = folder / META_FILE
    if meta.get("context_version") != CONTEXT_VERSION or tuple(meta.get("features", ())) != FEATURES:
        raise ModelError(f"{where}: the stacked block model's features (version {meta.get('context_version')!r}) "
                         f"differ from this code's ({CONTEXT_VERSION}): retrain with `{STACK_TRAIN_COMMAND}`")
    loaded = session(folder / meta.get("file", "model.onnx"))
    favors = tuple((name, float(entry["threshold"]), thresholds) for name, entry in (meta.get("favor") or {}).items()
                   if name in FAVORS and (thresholds := _by_type(entry.get("thresholds"))) is not None)
    return _StackModel(loaded, loaded.get_inputs()[0].name, float(meta.get("threshold", 0.5)), meta_version(folder),
                       _by_type(meta.get("thresholds")), float(meta.get("type_margin", 0.0)), favors)


def _favored(version: str, favor: str) -> str:
    """Return the version of models with a stacked model run with ``favor``: "@favor" after it unless balanced."""
    return version if favor == BALANCED else f"{version}@{favor}"


def _by_type(thresholds: dict[str, Any] | None) -> tuple[float, float, float] | None:
    """Return a meta.json entry of thresholds by page type as (article, list, other), None for none."""
    if not thresholds:
        return None
    return float(thresholds["article"]), float(thresholds["list"]), float(thresholds["other"])


def shared_models(directory: str | Path | None = None) -> BlockModels:
    """Return the models of ``directory`` (None or empty: the shipped ``models/``), loaded once per
    process (``extraction.onnx.shared``)."""
    return shared(BlockModels.load, directory, MODELS_DIR)


@dataclass
class BlockDecision:
    """What the classifier decided on one page."""

    blocks: list[Block]
    probabilities: np.ndarray  # per block; 0 for the blocks over MAX_BLOCKS, which are not scored
    kept: list[bool]
    paragraphs: list[list[bool]] = field(default_factory=list)  # per block: paragraphs kept
    fallback: bool = False
    capped: int = 0  # blocks dropped unscored (MAX_BLOCKS)
    model: str = NAME  # which block model decided: "svm", or "stack" (the stacked model)
    comments: int = 0  # kept blocks dropped as a comment thread (``comment_blocks``, ``flat_threads``)
    thread_lines: int = 0  # kept paragraphs dropped in a thread laid out flat after its heading (``flat_threads``)
    siblings: int = 0  # blocks kept for their kept siblings (``sibling_blocks``)
    nested: int = 0  # blocks kept for lying inside a kept block, between its paragraphs (``nested_blocks``)
    outside: int = 0  # kept blocks dropped outside the main region (``outside_main_region``)
    after_body: int = 0  # kept blocks dropped after the page's declared article body (``after_article_body``)
    lead: int = 0  # blocks kept as the lead the page names before its main block (``lead_blocks``)
    related: int = 0  # kept blocks dropped in a box named as related, a sign-up, the author (``named_related``)
    read_as_article: bool = False  # typed list, declares one article body: the article rules ran (``declared_body``)
    enclosing: int = 0  # dropped blocks kept around the main block (``enclosing_block``)
    link_lists: int = 0  # kept lists of links apart from the main block dropped (``link_lists``)
    sidebars: int = 0  # kept blocks dropped in a container named as a sidebar (``named_sidebars``)
    teasers: int = 0  # kept blocks dropped in other posts' declared bodies (``teaser_bodies``)
    missed_body: int = 0  # blocks kept as the page's one declared body the model kept none of (``missed_body``)
    link_tail: int = 0  # paragraphs trimmed as a kept block's trailing link lines (``trim_link_tail``)
    headings: int = 0  # headings dropped at the end of the text (``trailing_headings``)
    repeats: int = 0  # kept blocks dropped as a repeat of a kept block's text (``repeated_blocks``)

    def rule_counts(self) -> dict[str, int]:
        """Return the decisions of the rules after the model that happened on this page, by the name of the
        crawl's ``blocks/<name>`` stat (``fallback`` and ``read_as_article`` 1 when taken)."""
        counts = {"fallback": int(self.fallback), "read_as_article": int(self.read_as_article),
                  "comments": self.comments, "siblings": self.siblings,
                  "nested": self.nested, "outside": self.outside, "after_body": self.after_body, "lead": self.lead,
                  "related": self.related, "link_lists": self.link_lists, "sidebars": self.sidebars,
                  "teasers": self.teasers, "missed_body": self.missed_body, "enclosing": self.enclosing,
                  "link_tail": self.link_tail, "headings": self.headings, "thread_lines": self.thread_lines,
                  "repeats": self.repeats}
        return {name: value for name, value in counts.items() if value}

    @property
    def text(self) -> str:
        """Return the kept paragraphs of the kept blocks, one per line, in document order."""
        return blocks_text(self.blocks, self.kept, self.paragraphs)

    def stats(self) -> dict[str, int]:
        """Return counts per decision for the item and the crawl stats (``blocks_capped`` only on
        pages over ``MAX_BLOCKS``), and the characters of the kept paragraphs and of their links."""
        kept_paragraphs = sum(sum(flags) for flags, keep in zip(self.paragraphs, self.kept, strict=True) if keep)
        all_paragraphs = sum(len(b.paragraphs) for b, keep in zip(self.blocks, self.kept, strict=True) if keep)
        kept_chars = kept_link_chars = 0  # of the text kept (the article gate reads its link share)
        for block, flags, keep in zip(self.blocks, self.paragraphs, self.kept, strict=True):
            if keep:
                for paragraph, kept in zip(block.paragraphs, flags, strict=True):
                    if kept:
                        kept_chars += paragraph.chars
                        kept_link_chars += paragraph.link_chars
        counts = {"blocks": len(self.blocks), "blocks_kept": sum(self.kept),
                  "paragraphs_trimmed": all_paragraphs - kept_paragraphs, "fallback": int(self.fallback),
                  "kept_chars": kept_chars, "kept_link_chars": kept_link_chars}
        if self.capped:
            counts["blocks_capped"] = self.capped
        return counts


def scored_blocks(blocks: Sequence[Block], limit: int = MAX_BLOCKS) -> npt.NDArray[np.intp]:
    """Return the indices, ascending, of the blocks to score: all of them when there are at most
    ``limit``, else the ``limit`` with the most characters outside links (ties: earlier first)."""
    if len(blocks) <= limit:
        return np.arange(len(blocks))
    own = np.fromiter((block.text_chars for block in blocks), dtype=np.int64, count=len(blocks))
    return np.sort(np.argsort(-own, kind="stable")[:limit])


def classify(root: html.HtmlElement, models: BlockModels | None = None,
             blocks: list[Block] | None = None, trim: bool = True,
             page_probabilities: Sequence[float] | None = None, stack: bool = True,
             drop_comments: bool = True, siblings: bool = True, page_type: str | None = None) -> BlockDecision:
    """Classify the blocks of a parsed page (not modified) and trim their paragraphs.

    ``blocks``: ``page_blocks(root)`` when the caller already has them; ``trim`` False skips the
    paragraph model (every paragraph of a kept block stays). At most ``MAX_BLOCKS`` blocks are
    scored (``scored_blocks``); the others are not kept. The stacked model decides when the models
    have one and ``stack`` is on (the ``svm`` method turns it off); ``page_probabilities`` are the
    page-type model's (article, list, other) it reads; they decide the page's type, and with it the
    stacked model's threshold, unless ``page_type`` says otherwise (the crawl's site evidence).

    After the model, in order: the stacked model's decision gains the like siblings
    (``sibling_blocks``) and the blocks inside (``nested_blocks``) of the blocks it kept, unless
    ``siblings`` is off; comment threads are dropped (``comment_blocks``, unless ``drop_comments`` is
    off); the stacked model's unsure blocks outside the main region are dropped
    (``outside_main_region``), and so are those after the page's declared article body
    (``after_article_body``); on pages the stacked model's input types article, and on those it types list
    that declare one article body (``declared_body``: a blog post its sidebars of links made read as a list;
    ``read_as_article``), the lead the page names
    before its main block is kept (``lead_blocks``), the kept blocks in a container named as related
    articles are dropped (``named_related``) and so are kept lists of links apart from the main block
    (``link_lists``) and other posts' excerpts in their own declared bodies (``teaser_bodies``), and the page's
    one declared body is kept when the model kept none of it (``missed_body``); on every
    page the stacked model decides, the dropped block around the main block with more text than it is kept
    (``enclosing_block``); a page left with no block keeps its most probable one outside the threads
    (``fallback``). Then the paragraph model trims each kept block's ends (``trim_ends_lazily``, unless
    ``trim`` is off) and, on pages the stacked model's input does not type list, a kept block's trailing
    link lines go (``trim_link_tail``).
    """
    models = models or shared_models()
    blocks = page_blocks(root) if blocks is None else blocks
    scored = scored_blocks(blocks, MAX_BLOCKS)
    rows = scored.tolist()
    own = block_features(blocks, root) if len(scored) == len(blocks) else block_features(blocks, root, rows)
    decider: _Model | _StackModel = models.blocks
    threshold = models.blocks.threshold
    if stack and models.stack is not None:
        decider = models.stack
        threshold = models.stack.threshold_for(page_probabilities, page_type)
        scores = models.stack.content_probability(context_features(blocks, own, page_probabilities, rows))
    else:
        scores = models.blocks.content_probability(own)
    probabilities = np.zeros(len(blocks), dtype=np.float32)
    probabilities[scored] = scores
    kept = [False] * len(blocks)
    for i in rows:
        kept[i] = bool(probabilities[i] >= threshold)
    stacked = decider is models.stack
    decision = BlockDecision(blocks, probabilities, kept, capped=len(blocks) - len(scored),
                             model=STACK_NAME if stacked else NAME)
    if siblings and stacked:  # both read the model's own decision
        like, inside = sibling_blocks(blocks, kept), nested_blocks(blocks, kept)
        for i in like:
            kept[i] = True
            decision.siblings += 1
        for i in inside:
            if not kept[i]:
                kept[i] = True
                decision.nested += 1
    # On every page type: the main-block guard keeps a forum's own thread.
    in_threads = set(comment_blocks(blocks)) if drop_comments else set()
    for i in in_threads:
        if kept[i]:
            kept[i] = False
            decision.comments += 1
    if stacked:
        for i in outside_main_region(blocks, probabilities, kept):
            kept[i] = False
            decision.outside += 1
        for i in after_article_body(blocks, probabilities, kept):
            kept[i] = False
            decision.after_body += 1
    typed_as = models.stack.page_type(page_probabilities, page_type) if stacked and models.stack is not None else None
    # A page typed list that declares one article body (a blog post whose sidebars of links made it read as a
    # list) gets the article rules; the list threshold it was decided with stays.
    if typed_as == "article" or (typed_as == "list" and declared_body(blocks, kept) is not None):
        decision.read_as_article = typed_as == "list"
        article_rules = ((lead_blocks, True, "lead"),
                         (partial(named_related, probabilities=probabilities), False, "related"),
                         (link_lists, False, "link_lists"), (teaser_bodies, False, "teasers"),
                         (missed_body, True, "missed_body"))
        for rule, keep, counter in article_rules:  # in this order: each reads the decision the last left
            for i in rule(blocks, kept):
                kept[i] = keep
                setattr(decision, counter, getattr(decision, counter) + 1)
    if stacked:
        for i in named_sidebars(blocks, kept, probabilities):
            kept[i] = False
            decision.sidebars += 1
        for i in enclosing_block(blocks, kept):
            kept[i] = True
            decision.enclosing += 1
    # On an article, a thread laid out flat after its heading, read on what the rules above kept (the article's own
    # block, which holds the thread's lines, is often kept by enclosing_block). Not on forums and Q&A pages: their
    # "76 Replies" are the content.
    flat = drop_comments and (typed_as == "article" or decision.read_as_article)
    flat_blocks, thread_lines = flat_threads(root, blocks, kept) if flat else ([], [])
    for i in flat_blocks:
        kept[i] = False
        decision.comments += 1
    in_threads.update(flat_blocks)
    for i in repeated_blocks(blocks, kept) if stacked else ():
        kept[i] = False
        decision.repeats += 1
    if blocks and not any(kept):
        # The fallback's block is not one the comment rule dropped, while the page has another.
        candidates = [i for i in rows if i not in in_threads] or rows
        best = max(float(probabilities[i]) for i in candidates)
        for i in candidates:
            kept[i] = float(probabilities[i]) >= FALLBACK_SHARE * best
        decision.fallback = True
    # A list page's entries are link lines: the link tail is trimmed on the other pages the stacked model decides.
    link_tail = stacked and models.stack is not None and models.stack.page_type(page_probabilities, page_type) != "list"
    chosen = [block for block, keep in zip(blocks, kept, strict=True)
              if trim and keep and len(block.paragraphs) > 1]
    # The paragraph model's calls for every kept block at once, on the lines its ends need.
    ends = iter(trim_ends_lazily([paragraph_features(block) for block in chosen],
                                 models.paragraphs.content_probability, models.paragraphs.threshold))
    for block, keep in zip(blocks, kept, strict=True):
        if trim and keep and len(block.paragraphs) > 1:
            flags = next(ends)
            if link_tail:
                trimmed = trim_link_tail(block.paragraphs, flags)
                decision.link_tail += sum(flags) - sum(trimmed)
                flags = trimmed
            decision.paragraphs.append(flags)
        else:
            decision.paragraphs.append([True] * len(block.paragraphs))
    for i, j in thread_lines:  # the thread's lines in the article's own block (read before the rules above)
        if kept[i] and decision.paragraphs[i][j]:
            decision.paragraphs[i][j] = False
            decision.thread_lines += 1
    if typed_as == "article" or decision.read_as_article:
        for i, j in trailing_headings(root, blocks, kept, decision.paragraphs):
            decision.paragraphs[i][j] = False
            decision.headings += 1
    return decision


def extract_svm(root: html.HtmlElement, url: str | None, models: BlockModels | None = None) -> Extraction:
    """The ``svm`` method: blocks classified, paragraphs trimmed (``models``: default the shipped ones)."""
    return Extraction(method=NAME, text=classify(root, models, stack=False).text, title=page_title(root),
                      page_type="article")


register(NAME, extract_svm)
