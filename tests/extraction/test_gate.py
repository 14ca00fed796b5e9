"""The article gate (extraction/gate.py): its features from a record, archive URLs and toolbars, the model."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from extraction.gate import (
    GATE_DIR,
    GATE_FEATURES,
    ArticleGate,
    GateModelError,
    gate_features,
    has_archive_chrome,
    original_url,
    shared_gate,
)
from extraction.record import Record

PROSE = "\n".join(["Harbor council approves the budget after a long night of debate over the new pier."] + [
    f"Paragraph {i} tells what the council members said about the harbor, the ferries and the new pier. "
    "It runs for several sentences, as the paragraphs of a news story do. Then it ends." for i in range(8)])
TEASERS = "\n".join(f"Headline number {i} of the section\n12:3{i % 10}\nRead more" for i in range(25))


def _record(text: str, **fields: object) -> dict[str, object]:
    record: dict[str, object] = {"url": "https://news.example.com/2024/05/10/harbor-council-approves-budget.html",
                                 "text": text, "title": "Harbor council approves budget", "flags": [],
                                 "metadata_sources": {"title": "h1", "date_published": "json-ld"},
                                 "date_published": "2024-05-10", "authors": ["A. Writer"],
                                 "page_type": "article", "page_type_source": "dom",
                                 "page_type_probabilities": {"article": 0.7, "list": 0.2, "other": 0.1},
                                 "extraction_method": "stack",
                                 "block_stats": {"blocks": 40, "blocks_kept": 9, "kept_chars": 1500,
                                                 "kept_link_chars": 30, "fallback": 0}}
    record.update(fields)
    return record


def _features(record: object) -> dict[str, float]:
    return dict(zip(GATE_FEATURES, gate_features(record).tolist(), strict=True))


def test_original_url_of_an_archived_copy() -> None:
    assert original_url("http://web.archive.org/web/20050409130612/http://www.forbes.com/2005/04/08/amd.html") \
        == "http://www.forbes.com/2005/04/08/amd.html"
    assert original_url("http://web.archive.org/web/20090301020158id_/http://arstechnica.com:80/news/x.ars") \
        == "http://arstechnica.com:80/news/x.ars"
    assert original_url("http://archive.example/web/2013/http:/www.cnn.com/x") == "http://www.cnn.com/x"
    assert original_url("https://news.example.com/web/2024/05/story.html") == "https://news.example.com/web/2024/05/story.html"
    assert original_url(None) is None


def test_archive_chrome_marker() -> None:
    assert has_archive_chrome('<html><body><!-- BEGIN WAYBACK TOOLBAR INSERT --><div id="wm-ipp">x</div>')
    assert has_archive_chrome("<div id=wm-ipp-base></div>")
    assert has_archive_chrome("x" * 300_000 + '<div id="wm-ipp">')  # at the end of a long page
    assert not has_archive_chrome("<html><body><p>web archive wm ipp</p></body></html>")


def test_text_features_tell_prose_from_teasers() -> None:
    prose, teasers = _features(_record(PROSE)), _features(_record(TEASERS))
    assert prose["long_paragraph_share"] > 0.8 > 0.0 == teasers["long_paragraph_share"]
    assert prose["sentence_share"] > 0.8 > teasers["sentence_share"]
    assert teasers["short_line_share"] == 1.0 and prose["short_line_share"] < 0.2
    assert teasers["repeated_line_share"] > 0.3 and prose["repeated_line_share"] == 0.0
    assert teasers["digit_share"] > prose["digit_share"]


def test_features_of_a_record_and_of_its_json_agree() -> None:
    record = Record(url="http://web.archive.org/web/20050409130612/http://www.forbes.com/2005/04/08/amd.html",
                    text=PROSE, title="AMD", flags=["archive_chrome"], page_type="list", page_type_source="site",
                    page_type_probabilities={"article": 0.4, "list": 0.5, "other": 0.1},
                    entries=[{"title": "One entry", "url": "http://x/1"}], extraction_method="stack")
    from_json = gate_features(json.loads(record.json_line()))
    assert np.array_equal(gate_features(record), from_json)
    named = _features(record)
    assert named["archived_url"] == named["archive_chrome"] == named["site_list"] == 1.0
    assert named["url_date"] == 1.0 and named["url_depth"] == 4.0  # the original URL's shape
    assert named["entries_log"] > 0 and named["p_list"] == pytest.approx(0.5)


def test_empty_record_gives_zeros_for_its_text() -> None:
    values = _features({"url": None, "text": ""})
    assert len(values) == len(GATE_FEATURES)
    assert all(values[name] == 0.0 for name in ("text_chars_log", "paragraphs_log", "p_article", "has_url"))
    assert values["fulltext"] == 1.0  # no block classifier ran


def _copy_gate(tmp_path: Path) -> Path:
    folder = tmp_path / "gate"
    shutil.copytree(GATE_DIR, folder)
    return folder


@pytest.mark.skipif(not (GATE_DIR / "meta.json").exists(), reason="no shipped gate (make train-gate)")
def test_shipped_gate_loads_and_tells_an_article_from_a_list() -> None:
    gate = shared_gate()
    assert 0.0 < gate.threshold < 1.0 and gate.meta["features"] == list(GATE_FEATURES)
    article = gate.probability(_record(PROSE))
    listing = gate.probability(_record(TEASERS, title="News", metadata_sources={"title": "meta"}, date_published=None,
                                       authors=[], url="https://news.example.com/politics/",
                                       page_type="list", page_type_probabilities={"article": 0.1, "list": 0.85,
                                                                                  "other": 0.05},
                                       entries=[{"title": f"Headline number {i} of the section", "url": None}
                                                for i in range(25)],
                                       block_stats={"blocks": 80, "blocks_kept": 30, "kept_chars": 900,
                                                    "kept_link_chars": 800, "fallback": 0}))
    assert article >= gate.threshold > listing


@pytest.mark.skipif(not (GATE_DIR / "meta.json").exists(), reason="no shipped gate (make train-gate)")
def test_a_gate_of_other_features_or_without_threshold_fails_to_load(tmp_path: Path) -> None:
    folder = _copy_gate(tmp_path)
    meta = json.loads((folder / "meta.json").read_text())
    (folder / "meta.json").write_text(json.dumps({**meta, "features": meta["features"][:-1]}))
    with pytest.raises(GateModelError, match="features"):
        ArticleGate.load(folder)
    (folder / "meta.json").write_text(json.dumps({**meta, "threshold": 1.5}))
    with pytest.raises(GateModelError, match="threshold"):
        ArticleGate.load(folder)
    (folder / "meta.json").write_text(json.dumps(meta))
    (folder / "model.onnx").unlink()
    with pytest.raises(GateModelError, match=r"model\.onnx"):
        ArticleGate.load(folder)
    with pytest.raises(GateModelError, match="make train-gate"):
        ArticleGate.load(tmp_path / "nowhere")
