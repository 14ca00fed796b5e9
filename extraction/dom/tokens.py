"""Word tokens of a text: runs of word characters, or jieba's words for Chinese.

Shared by the block features (``extraction.blockclf.features``) and the evaluation metrics
(``evaluation.metrics``), so that both count words the same way. jieba is imported on first
use only (loading its dictionary takes about a second), so importing this module stays cheap.
"""

from __future__ import annotations

import functools
import logging
import os
import re
import tempfile
from pathlib import Path
from typing import Any

# Runs of Unicode word characters: the tokens of the article-extraction-benchmark's shingle
# metric and of WCXB's bag-of-words F1 (both use re.findall(r"\w+") on str, where \w is Unicode-aware).
_WORD_RE = re.compile(r"\w+")
# Environment variable that overrides where jieba writes its prefix-dictionary cache.
JIEBA_CACHE_ENV = "JIEBA_CACHE_DIR"
# Default cache folder for jieba, under the system temp dir (jieba's own default is that dir).
JIEBA_CACHE_SUBDIR = "newscorpus-jieba"


def word_tokens(text: str | None) -> list[str]:
    """Return the `\\w+` matches of the text, case kept (the benchmark's tokenizer)."""
    return _WORD_RE.findall(text or "")


@functools.cache
def _jieba() -> Any:
    """Return the jieba module, its cache folder set to a writable place and its logging quiet."""
    import jieba  # lazy: loading the dictionary takes about a second

    cache_dir = Path(os.environ.get(JIEBA_CACHE_ENV) or Path(tempfile.gettempdir()) / JIEBA_CACHE_SUBDIR)
    cache_dir.mkdir(parents=True, exist_ok=True)
    jieba.setLogLevel(logging.WARNING)
    jieba.dt.tmp_dir = str(cache_dir)
    return jieba


def jieba_tokens(text: str | None, hmm: bool = True) -> list[str]:
    """Return jieba's words of the text (jieba.lcut, default mode; ``hmm`` False turns off its HMM
    for words missing from the dictionary, about twice as fast), keeping only tokens that
    contain at least one `\\w` character (punctuation and whitespace are dropped)."""
    if not text:
        return []
    return [token for token in _jieba().lcut(text, HMM=hmm) if _WORD_RE.search(token)]
