"""Word tokens (extraction.dom.tokens): \\w+ runs, jieba words, jieba's cache folder, lazy import."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from extraction.dom import tokens
from extraction.dom.tokens import han_tokens, jieba_tokens, word_tokens

HAS_JIEBA = importlib.util.find_spec("jieba") is not None
needs_jieba = pytest.mark.skipif(not HAS_JIEBA, reason="jieba is not installed (requirements.txt: jieba==0.42.1)")


def test_word_tokens_keep_case_and_drop_punctuation() -> None:
    assert word_tokens("The cat, the café!") == ["The", "cat", "the", "café"]
    assert word_tokens("北京，上海") == ["北京", "上海"]
    assert word_tokens(None) == []


@needs_jieba
def test_han_tokens_are_jiebas_words_but_inside_runs_without_han() -> None:
    for text in ("新华社北京3月5日电 国务院总理李克强5日在十三届全国人大一次会议上作政府工作报告。",
                 "记者从市交通委了解到，地铁十号线将于明年通车。", "我爱北京天安门。天安门上太阳升。"):
        assert han_tokens(text) == jieba_tokens(text)
        assert han_tokens(text, hmm=False) == jieba_tokens(text, hmm=False)
    # jieba-rs keeps a number range or a host name whole; jieba splits it at the punctuation.
    assert han_tokens("CopyRight@2004-2008 新浪网") == ["CopyRight", "2004-2008", "新浪网"]
    assert jieba_tokens("CopyRight@2004-2008 新浪网") == ["CopyRight", "2004", "2008", "新浪网"]
    assert han_tokens("。，  ") == [] and han_tokens(None) == []


@needs_jieba
def test_jieba_tokens_drop_punctuation() -> None:
    assert jieba_tokens("我爱北京天安门。天安门上太阳升。") == ["我", "爱", "北京", "天安门", "天安门", "上", "太阳升"]
    assert jieba_tokens("。，  ") == []
    assert jieba_tokens(None) == []


@needs_jieba
def test_jieba_cache_dir_from_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import jieba

    monkeypatch.setenv(tokens.JIEBA_CACHE_ENV, str(tmp_path / "cache"))
    tokens._jieba.cache_clear()
    try:
        assert jieba_tokens("北京") == ["北京"]
        assert jieba.dt.tmp_dir == str(tmp_path / "cache")
        assert (tmp_path / "cache").is_dir()
    finally:
        tokens._jieba.cache_clear()


def test_import_is_lazy() -> None:
    code = "import sys, extraction.dom.tokens; assert 'jieba' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True, cwd=Path(__file__).resolve().parents[3])
