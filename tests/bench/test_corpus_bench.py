"""bench/corpus_bench.py's page-level variant: the page type before the article gate, recovered from the record."""

from __future__ import annotations

import json
from pathlib import Path

from bench.corpus_bench import compare_feeds, page_level_feed, page_level_type, share_cell


def _record(page_type: str, source: str, list_p: float = 0.3, other_p: float = 0.1) -> dict[str, object]:
    return {"url": f"http://x.example/{page_type}-{source}", "page_type": page_type, "page_type_source": source,
            "text": "Some text.", "article_probability": 0.5,
            "page_type_probabilities": {"article": 0.6, "list": list_p, "other": other_p}}


def test_page_level_type_undoes_only_the_gates_change() -> None:
    assert page_level_type(_record("article", "dom")) == "article"
    assert page_level_type(_record("list", "site")) == "list"
    assert page_level_type(_record("list", "gate")) == "article"  # the gate did not pass a page typed article
    assert page_level_type(_record("other", "gate")) == "article"
    assert page_level_type(_record("article", "gate")) == "list"  # the gate passed a page typed list or other
    assert page_level_type(_record("article", "gate", list_p=0.1, other_p=0.3)) == "other"


def test_page_level_feed_keeps_every_record_and_its_text(tmp_path: Path) -> None:
    records = [_record("article", "gate"), _record("list", "gate"), _record("article", "dom")]
    feed = tmp_path / "feed.jsonl"
    feed.write_text("".join(json.dumps(r) + "\n" for r in records) + "not json\n", encoding="utf-8")
    out = [json.loads(line) for line in page_level_feed(feed, tmp_path / "out.jsonl").read_text().splitlines()]
    assert [r["page_type"] for r in out] == ["list", "article", "article"]
    assert all(r["article_probability"] is None and r["page_type_source"] != "gate" for r in out)
    assert [r["text"] for r in out] == [r["text"] for r in records]


def test_share_cell_has_its_wilson_interval() -> None:
    assert share_cell(0, 0) == ""
    cell = share_cell(97, 100)
    assert cell.startswith("97.0% (97/100) [") and cell.endswith("]")


def test_compare_feeds_counts_what_the_gate_changed(tmp_path: Path) -> None:
    gated = [_record("article", "gate"), _record("article", "dom"), _record("other", "dom")]
    off = [{**gated[0], "page_type": "list", "page_type_source": "dom"}, {**gated[1], "text": "Other text."}]
    (tmp_path / "a.jsonl").write_text("".join(json.dumps(r) + "\n" for r in gated), encoding="utf-8")
    (tmp_path / "b.jsonl").write_text("".join(json.dumps(r) + "\n" for r in off) + "{cut", encoding="utf-8")
    assert compare_feeds(tmp_path / "a.jsonl", tmp_path / "b.jsonl") == {
        "urls_with_gate": 3, "urls_gate_off": 2, "urls_in_both": 2, "text_differs": 1, "title_differs": 0,
        "date_published_differs": 0, "page_type_differs": 0}
