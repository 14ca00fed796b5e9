"""The learned title chooser: candidates, features, the shipped model and its place in the metadata."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from extraction.dom.html import parse_html
from extraction.metadata.fields import page_metadata
from extraction.onnx import ModelError
from extraction.title import (
    FEATURES,
    TITLE_DIR,
    Candidate,
    TitleModel,
    candidate_features,
    pick,
    shared_model,
    title_candidates,
)


def test_candidates_merge_the_same_text_and_split_the_title_into_parts() -> None:
    found = title_candidates(["Council approves budget"], ["Related stories"], "Council approves budget | City News",
                             "Council approves budget", None, None, None)
    texts = {candidate.text: candidate for candidate in found}
    assert set(texts) == {"Council approves budget", "Related stories", "Council approves budget | City News",
                          "City News"}
    assert texts["Council approves budget"].places == {"h1_0", "title_part", "og"}
    assert (texts["Council approves budget"].part_index, texts["City News"].part_index) == (1, 2)
    assert texts["Council approves budget"].source == "h1"  # the h1 is named before the meta tags
    assert texts["Related stories"].source == "h2"
    assert title_candidates([], [], None, "x" * 301, "", None, None) == []  # too long, empty


def test_features_describe_each_candidate() -> None:
    found = title_candidates(["Council approves budget"], [], "Council approves budget | City News", None, None,
                             None, None)
    rows = candidate_features(found, 1, "City News", "https://city.test/2024/council-approves-budget")
    assert rows.shape == (len(found), len(FEATURES)) and rows.dtype == np.float32
    column = {name: index for index, name in enumerate(FEATURES)}
    headline, site = rows[0], rows[[c.text for c in found].index("City News")]
    assert headline[column["in_h1_0"]] == 1 and headline[column["url_share_of_words"]] == 1.0
    assert site[column["is_site_name"]] == 1 and site[column["last_part"]] == 1
    assert candidate_features([], 0, None, None).shape == (0, len(FEATURES))


def test_the_shipped_model_takes_the_headline_not_the_site_or_section() -> None:
    model = shared_model()
    page = parse_html("<html><head><title>Council approves budget | Politics | City News</title>"
                      "<meta property='og:site_name' content='City News'></head><body>"
                      "<h1>Council approves budget</h1><h2>Most read</h2><p>The council approved it.</p></body></html>")
    found = page_metadata(page, "https://city.test/politics/council-approves-budget", dates_by_htmldate=False,
                          title_model=model)
    assert (found.title, found.sources["title"]) == ("Council approves budget", "h1")
    # The site's name first in the <title>: never the site's name while another candidate is there.
    page = parse_html("<html><head><title>City News | Council approves budget</title>"
                      "<meta property='og:site_name' content='City News'></head><body><p>Text.</p></body></html>")
    assert page_metadata(page, None, dates_by_htmldate=False, title_model=model).title == "Council approves budget"


def test_the_model_and_the_rule_differ_where_the_rule_keeps_a_section_title() -> None:
    # A list page: the rule keeps the whole <title> (its <h1> is only read on articles); WCXB's gold for such
    # pages is most often the <h1>, which the model takes.
    page = parse_html("<html><head><title>Climbing Shoes: Rock Climbing, Bouldering &amp; Indoor | Gear Shop</title>"
                      "</head><body><h1>Climbing Shoes</h1><ul><li><a href='/a'>Shoe A</a></li></ul></body></html>")
    url = "https://shop.test/climbing-shoes"
    rule = page_metadata(page, url, dates_by_htmldate=False, headline=False).title
    model = page_metadata(page, url, dates_by_htmldate=False, headline=False, title_model=shared_model()).title
    assert rule == "Climbing Shoes: Rock Climbing, Bouldering & Indoor" and model == "Climbing Shoes"


def test_a_pick_the_model_is_not_sure_of_is_left_to_the_rule() -> None:
    page = parse_html("<html><body><h2>Sign up</h2><p>Text.</p></body></html>")  # no <title>, no <h1>
    found = page_metadata(page, None, dates_by_htmldate=False, title_model=shared_model())
    assert found.title is None and "title" not in found.sources  # the rule has no candidate either
    scores = np.array([0.9, 0.5, 0.2], dtype=np.float32)
    candidates = [Candidate("City News"), Candidate("Budget"), Candidate("Other")]
    assert pick(candidates, scores, "City News") == 1 and pick(candidates, scores, None) == 0
    assert pick(candidates[:1], scores[:1], "City News") == 0  # only the site's name: that one


def test_the_chooser_decides_and_without_one_the_rule_does() -> None:
    class Last:
        def choose(self, candidates: list[Candidate], h1_count: int, site_name: str | None,
                   url: str | None) -> Candidate | None:
            return candidates[-1]

    page = parse_html("<html><head><title>Budget | City News</title></head><body><h1>Budget</h1></body></html>")
    assert page_metadata(page, None, dates_by_htmldate=False, title_model=Last()).title == "City News"
    assert page_metadata(page, None, dates_by_htmldate=False).title == "Budget"


def test_a_model_trained_on_other_features_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "title"
    shutil.copytree(TITLE_DIR, folder)
    meta = json.loads((folder / "meta.json").read_text(encoding="utf-8"))
    assert TitleModel.load(folder).version == TitleModel.version_of(folder)
    meta["features"] = meta["features"][:-1]
    (folder / "meta.json").write_text(json.dumps(meta), encoding="utf-8")
    with pytest.raises(ModelError, match="make train-title"):
        TitleModel.load(folder)
