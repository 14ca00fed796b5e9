"""Per-site templates (paper 004): leaf tags that recur across a site's pages, and their removal.

Paper 004 ("A Web Page Cleaning Method Based on Template and SVM", section 3) learns, per
site, the *common noise* of its pages: navigation links, copyright and licence lines,
"source:" and "editor:" lines. Every page's leaf tags are compared with a cache S; a tag
matches a cached one when the tag names are equal and the texts are close, which raises the
cached tag's frequency, otherwise the tag joins the cache. After every batch of N1 pages, the
cached tags with frequency >= N2 become templates and the cache is cleared. Cleaning deletes
every leaf tag of a page that matches one of its site's templates.

This package is the pure part (no I/O, no Scrapy): leaf tags, the closeness rule and a bucketed
index for fast matching (``leaves``), the batch cache, the templates and the drift monitor
(``learn``), the removal with its guard (``denoise``). Persistence and the per-site bookkeeping
live in ``templates_db.library``.

Readings chosen where the paper is silent (tested in ``tests/extraction/templates/``):

* **Leaf tag**: an element with non-empty visible text and no element children other than
  void ones (``br``, ``img``, ``wbr``...). Invisible elements (script, style, hidden) are
  skipped. Its text is the normalised text content (whitespace runs collapsed, ends
  stripped); case and punctuation are kept.
* **Sentences** (ours, beyond the paper): an element holding text of its own mixed with inline
  elements only (``<p>Copyright 2005 <a>CNN</a>. All rights reserved.</p>``) is a unit as
  well, with its whole text: such licence and "quotes are delayed" lines have no leaf that
  carries them. Guard rule 1 never deletes a word out of a sentence; this deletes a sentence
  only when the whole of it recurs. On msv-big5 it raised the non-gold text removed from 44%
  to 51% with the gold text removed unchanged (0.04%) (docs/evaluation/duplicates-and-templates.md).
* **Frequency counts pages**, not occurrences: a tag that appears three times on one page
  counts once. Counting occurrences (the literal reading of step 2) would make a "share"
  button repeated three times a template after a single page, against the paper's own Fig. 3
  argument that content never reaches frequency 3 within a batch.
* **Long leaves are not learned**: texts over ``MAX_TEMPLATE_CHARS`` characters are never
  templates (the longest boilerplate in the paper's example, a reprint disclaimer, has about
  90); this bounds the cost of fuzzy matching on long paragraphs.
* **Guard** (what the cleaning never removes, whatever the template says):
  1. a leaf inside running text (its parent has text of its own with a letter or digit, as in
     ``<p>officials in <a>Beijing</a> said</p>``): deleting it would cut a sentence;
  2. long text that is unique to the page: a leaf of ``GUARD_MIN_CHARS`` or more characters
     is removed only by a template that is site-wide, i.e. seen on at least
     ``GUARD_MIN_SHARE`` of the pages of a batch that promoted it. An article's lead quoted
     on the home page and two section pages reaches frequency 3 in a batch of 10 but stays
     under half of it; a reprint disclaimer or licence paragraph is on every page;
  3. the page's own headline: a leaf of ``TITLE_GUARD_MIN_CHARS`` or more characters that
     the page's ``<title>`` contains (fuzzy, rapidfuzz partial ratio >= ``TITLE_GUARD_SCORE``).
     Other pages link to an article under its headline ("most read" boxes), so the headline
     can become a template; on msv-big5 that removed nypost's ``<h1>`` headlines.

Removing a leaf keeps its tail text; a space is put where the leaf was so that the words
around it do not fuse.
"""

from __future__ import annotations

from extraction.templates.denoise import (
    GUARD_MIN_CHARS,
    GUARD_MIN_SHARE,
    TITLE_GUARD_MIN_CHARS,
    TITLE_GUARD_SCORE,
    Decision,
    DenoiseResult,
    GuardRule,
    denoise,
    in_running_text,
)
from extraction.templates.learn import (
    BATCH_PAGES,
    DRIFT_CORE_SHARE,
    DRIFT_MIN_TEMPLATES,
    DRIFT_RATIO,
    DRIFT_WINDOW,
    MIN_FREQUENCY,
    BatchCache,
    DriftMonitor,
    Template,
    TemplateSet,
)
from extraction.templates.leaves import (
    CHARS_PER_EDIT,
    EXACT_MAX_CHARS,
    INLINE_TAGS,
    MAX_LEAVES_PER_PAGE,
    MAX_TEMPLATE_CHARS,
    VOID_TAGS,
    Leaf,
    TagIndex,
    leaf_tags,
    max_distance,
    normalise_text,
    texts_close,
)

__all__ = [
    "BATCH_PAGES",
    "CHARS_PER_EDIT",
    "DRIFT_CORE_SHARE",
    "DRIFT_MIN_TEMPLATES",
    "DRIFT_RATIO",
    "DRIFT_WINDOW",
    "EXACT_MAX_CHARS",
    "GUARD_MIN_CHARS",
    "GUARD_MIN_SHARE",
    "INLINE_TAGS",
    "MAX_LEAVES_PER_PAGE",
    "MAX_TEMPLATE_CHARS",
    "MIN_FREQUENCY",
    "TITLE_GUARD_MIN_CHARS",
    "TITLE_GUARD_SCORE",
    "VOID_TAGS",
    "BatchCache",
    "Decision",
    "DenoiseResult",
    "DriftMonitor",
    "GuardRule",
    "Leaf",
    "TagIndex",
    "Template",
    "TemplateSet",
    "denoise",
    "in_running_text",
    "leaf_tags",
    "max_distance",
    "normalise_text",
    "texts_close",
]
