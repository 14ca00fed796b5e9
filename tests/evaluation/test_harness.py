"""Evaluation harness: metric per dataset, same pages for every candidate, errors counted, CLI."""

from __future__ import annotations

import builtins
import gzip
import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from evaluation import baselines
from evaluation.baselines import BaselineUnavailable, load_baseline
from evaluation.datasets import Page, datasets_dir
from evaluation.harness import (
    BOW,
    PARSE_ONLY,
    SHINGLE,
    SHINGLE_ZH,
    SNIPPETS,
    evaluate,
    favor_methods,
    markdown_table,
    method_candidate,
    metric_for,
)
from tests.crawl_helpers import REPO

BODY = "The river flooded the old town on Monday and the mayor asked everyone to stay home tonight."


def _page(tmp_path: Path, page_id: str, html: str, **fields: Any) -> Page:
    path = tmp_path / f"{page_id}.html.gz"
    path.write_bytes(gzip.compress(html.encode("utf-8")))
    fields.setdefault("gold_text", BODY)
    return Page(dataset=fields.pop("dataset", "test"), page_id=page_id, html_path=path,
                url=f"http://a.test/{page_id}", **fields)


def _html(text: str) -> str:
    return f"<html><head><title>T</title></head><body><nav>Home News</nav><p>{text}</p></body></html>"


def _pages(tmp_path: Path, **fields: Any) -> list[Page]:
    return [_page(tmp_path, f"p{i}", _html(BODY + f" Page {i}."), **fields) for i in range(3)]


def test_metric_per_dataset() -> None:
    for name in ("cleaneval", "l3s-gn1", "dragnet", "cleanportaleval", "mozilla-readability"):
        assert metric_for(name) == SHINGLE
    assert metric_for("chinese-wced-dev") == SHINGLE_ZH
    assert metric_for("wcxb-dev") == BOW
    assert metric_for("trafilatura-eval") == SNIPPETS
    with pytest.raises(ValueError, match="no extraction metric"):
        metric_for("msv-big5")


def test_every_candidate_sees_the_same_pages_and_errors_are_counted(tmp_path: Path) -> None:
    seen: dict[str, list[str]] = {"a": [], "b": [], "boom": []}

    def recorder(name: str) -> Callable[[str, str | None], str]:
        def run(html: str, url: str | None) -> str:
            seen[name].append(url or "")
            if name == "boom" and url and url.endswith("p1"):
                raise RuntimeError("bad page")
            return BODY
        return run

    pages = [*_pages(tmp_path), _page(tmp_path, "nogold", _html("x"), gold_text=None)]
    result = evaluate(pages, "cleaneval", [(n, "method", recorder(n)) for n in seen])
    # The first page and the warm-up page (no URL) untimed to warm each candidate up, then every page timed.
    assert seen["a"] == seen["b"] == seen["boom"] == ["http://a.test/p0", ""] + [f"http://a.test/p{i}"
                                                                                 for i in range(3)]
    assert result.pages == 3 and result.skipped == 1 and result.metric == SHINGLE
    by_name = {c.name: c for c in result.candidates}
    assert by_name["a"].errors == 0 and by_name["boom"].errors == 1
    assert "p1: RuntimeError: bad page" in by_name["boom"].error_examples[0]
    assert by_name["boom"].scores["all"]["recall"] < by_name["a"].scores["all"]["recall"]
    assert by_name[PARSE_ONLY].kind == "floor" and by_name[PARSE_ONLY].pages == 3
    assert all(c.seconds > 0 for c in result.candidates)
    json.dumps(result.to_dict())  # serialisable


def test_limit_keeps_first_pages(tmp_path: Path) -> None:
    result = evaluate(_pages(tmp_path), "dragnet", [("a", "method", lambda h, u: BODY)], limit=2)
    assert result.pages == 2 and result.candidates[0].pages == 2


def test_wcxb_groups_by_page_type(tmp_path: Path) -> None:
    pages = [
        _page(tmp_path, "art", _html(BODY), page_type="article"),
        _page(tmp_path, "lst", _html("one two three"), page_type="list", gold_text="one two three"),
        _page(tmp_path, "oth", _html("alpha beta"), page_type="other", gold_text="alpha beta"),
    ]
    result = evaluate(pages, "wcxb-dev", [("perfect", "method", lambda h, u: BODY)])
    assert result.group_pages == {"all": 3, "article": 1, "list": 1}
    scores = result.candidates[0].scores
    assert scores["article"]["f1"] == pytest.approx(1.0)
    assert scores["list"]["f1"] == 0.0
    assert scores["all"]["f1"] == pytest.approx(1 / 3)
    table = markdown_table(result)
    assert "F1 article" in table and "F1 list" in table and "F1 all" in table


def test_chinese_has_word_and_jieba_rows(tmp_path: Path) -> None:
    gold = "江城日报今天报道了长江水位上涨的消息，市民需要注意安全。"
    pages = [_page(tmp_path, "zh", _html(gold), gold_text=gold, lang="zh")]
    result = evaluate(pages, "chinese-wced-dev", [("same", "method", lambda h, u: gold)])
    scores = result.candidates[0].scores
    assert set(scores) == {"word", "jieba"}
    assert scores["jieba"]["f1"] == pytest.approx(1.0)
    assert "F1 jieba" in markdown_table(result)


def test_snippet_metric_and_table(tmp_path: Path) -> None:
    pages = [_page(tmp_path, "s", _html(BODY), gold_text=None,
                   with_snippets=("river flooded",), without_snippets=("Home News",)),
             _page(tmp_path, "none", _html(BODY), gold_text=None)]
    result = evaluate(pages, "trafilatura-eval", [("body", "baseline", lambda h, u: BODY)])
    assert result.pages == 1 and result.skipped == 1
    scores = result.candidates[0].scores["all"]
    assert scores["precision"] == scores["recall"] == scores["accuracy"] == 1.0
    table = markdown_table(result)
    lines = table.splitlines()
    assert lines[2] == "| candidate | P | R | F1 | Acc | pages/s | errors |"
    assert lines[4].startswith("| body | 1.000 | 1.000 | 1.000 | 1.000 |")
    assert lines[5].startswith("| parse-only | — |")


def test_missing_baseline_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    real_import = builtins.__import__

    def failing(name: str, *args: Any, **kwargs: Any) -> Any:
        if name.split(".")[0] == "justext":
            raise ImportError("No module named 'justext'")
        return real_import(name, *args, **kwargs)

    monkeypatch.delitem(sys.modules, "justext", raising=False)
    monkeypatch.setattr(builtins, "__import__", failing)
    monkeypatch.setattr(baselines.importlib, "import_module", lambda name: failing(name))
    with pytest.raises(BaselineUnavailable, match=r"make extras"):
        load_baseline("justext")
    with pytest.raises(BaselineUnavailable, match="unknown baseline"):
        load_baseline("nope")


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "scrapy", "evaluate", *args, "--nolog"], cwd=REPO,
                          capture_output=True, text=True, timeout=120, check=False)


def test_cli_on_cleaneval(tmp_path: Path) -> None:
    if not (datasets_dir() / "cleaneval").is_dir():
        pytest.skip(f"dataset folder {datasets_dir() / 'cleaneval'} is absent")
    process = _cli("--dataset", "cleaneval", "--limit", "5", "--method", "fulltext", "--out-dir", str(tmp_path))
    assert process.returncode == 0, process.stderr
    assert "| fulltext |" in process.stdout and "| parse-only |" in process.stdout
    data = json.loads((tmp_path / "eval-cleaneval.json").read_text(encoding="utf-8"))
    assert data["pages"] == 5 and data["candidates"][0]["name"] == "fulltext"
    assert (tmp_path / "eval-cleaneval.md").read_text(encoding="utf-8").startswith("**cleaneval**")


def test_a_favored_pipeline_is_a_candidate_of_its_own() -> None:
    # pipeline@precision runs the flow a crawl with BLOCKS_FAVOR=precision runs; on a plain article it keeps the
    # article, and never keeps more than the balanced default.
    assert favor_methods() == ["pipeline@precision", "pipeline@recall"]
    html = ("<html><body><div class='menu'><a href='/'>Home</a> <a href='/w'>World</a></div><div class='story'>"
            + "".join(f"<p>{BODY} Paragraph {i}.</p>" for i in range(4)) + "</div></body></html>")
    balanced, precision = method_candidate("pipeline")(html, "http://a.test/x"), method_candidate(
        "pipeline@precision")(html, "http://a.test/x")
    assert "Paragraph 3." in precision and set(precision.split("\n")) <= set(balanced.split("\n"))
    process = _cli("--dataset", "cleaneval", "--method", "pipeline@fast", "--limit", "1")
    assert process.returncode != 0 and "unknown --method pipeline@fast" in process.stderr


def test_cli_missing_dataset_exits_2(tmp_path: Path) -> None:
    process = subprocess.run(
        [sys.executable, "-m", "scrapy", "evaluate", "--dataset", "cleaneval", "--method", "fulltext",
         "--out-dir", str(tmp_path), "--nolog"],
        cwd=REPO, capture_output=True, text=True, timeout=120, check=False,
        env={**__import__("os").environ, "DATASETS_DIR": str(tmp_path / "nowhere")},
    )
    assert process.returncode == 2
    assert "error: dataset 'cleaneval' not found" in process.stderr


def test_trafilatura_metadata_baseline_times_the_same_text() -> None:
    pytest.importorskip("trafilatura", reason="trafilatura is a baseline extra (make extras)")
    page = ("<html><head><title>Flood in the valley</title><meta name='author' content='Ann Lee'></head><body>"
            "<nav><a href='/'>Home</a> <a href='/news'>News</a></nav><article><h1>Flood in the valley</h1>"
            + "".join(f"<p>The river flooded the lower town for the {n} time this spring, and the people "
                      f"who live by the bridge moved their cars to the hill before the night came.</p>"
                      for n in ("first", "second", "third", "fourth"))
            + "</article><footer>Copyright 2026 Valley News</footer></body></html>")
    text = load_baseline("trafilatura")(page, "https://example.com/news/flood")
    assert "river flooded the lower town for the fourth time" in text
    assert load_baseline("trafilatura-metadata")(page, "https://example.com/news/flood") == text
    assert load_baseline("trafilatura-metadata")("<html><body></body></html>", None) == ""
