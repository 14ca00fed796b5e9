"""The page type's site evidence (extraction/pagetype/site.py): URL shapes, votes, sure hints."""

from __future__ import annotations

import pytest

from extraction.pagetype import site as site_module
from extraction.pagetype.site import ENTRY_WEIGHT, MIN_VOTES, SiteTypes, url_shapes

SITE = "news.example"


@pytest.mark.parametrize(("url", "fine", "coarse"), [
    ("https://x.org/2024/05/harbor-council-approves-budget.html", "D4/D2/S.html", "D4/D2/S.html"),
    ("https://www.bbc.com/news/world-asia-48395241", "news/S", "W/S"),
    ("https://www.bbc.com/news/business-48405481", "news/M", "W/M"),
    ("https://x.org/news/", "news/", "W/"),
    ("https://x.org/", "", ""),
    ("https://x.org/article?id=12&from=rss", "article?from&id", "W?from&id"),
    ("https://news.163.com/26/0210/t20260210_757849.shtml", "D2/D4/M.shtml", "D2/D4/M.shtml"),
    ("https://x.org/%E6%96%B0%E9%97%BB/123456", "新闻/D+", "W/D+"),
])
def test_url_shapes(url: str, fine: str, coarse: str) -> None:
    assert url_shapes(url) == (fine, coarse)


def test_unparsable_url_has_no_shape() -> None:
    assert url_shapes("http://[::1") is None


def _vote(types: SiteTypes, urls: list[str], kind: str) -> None:
    for url in urls:
        types.observe(SITE, url, kind, 0.95)


def test_a_shape_is_sure_only_after_enough_agreeing_votes() -> None:
    types = SiteTypes()
    articles = [f"https://news.example/news/story-number-{i}-here" for i in range(12)]
    _vote(types, articles[:8], "article")
    assert types.hint(SITE, articles[11]) is None  # 8 votes: (8 + 0.5) / 9.5 = 0.895 < 0.9
    _vote(types, articles[8:9], "article")
    hint = types.hint(SITE, articles[11])
    assert hint is not None and (hint.page_type, hint.shape, hint.votes) == ("article", "f:news/S", 9.0)
    assert hint.share == pytest.approx(9.5 / 10.5, abs=1e-4)
    assert types.hint("other.site", articles[11]) is None
    assert types.hint(SITE, "https://news.example/news/") is None  # another shape


def test_low_confidence_decisions_do_not_vote() -> None:
    types = SiteTypes()
    for i in range(20):
        assert types.observe(SITE, f"https://news.example/a/slug-words-here-{i}", "list", 0.6) == 0
    assert types.hint(SITE, "https://news.example/a/slug-words-here-99") is None


def test_disagreeing_fine_shape_is_not_sure_and_does_not_fall_back() -> None:
    types = SiteTypes()
    _vote(types, [f"https://news.example/news/story-number-{i}" for i in range(6)], "article")
    _vote(types, [f"https://news.example/news/other-story-{i}-x" for i in range(4)], "list")
    _vote(types, [f"https://news.example/sport/story-number-{i}" for i in range(40)], "article")
    assert types.hint(SITE, "https://news.example/news/a-b-c") is None  # 6 vs 4 on news/S
    hint = types.hint(SITE, "https://news.example/world/a-b-c")  # world/S unseen: the coarse W/S
    assert hint is not None and (hint.page_type, hint.shape) == ("article", "c:W/S")


def test_feeds_and_list_entries_vote_for_articles() -> None:
    types = SiteTypes()
    for i in range(9):
        assert types.observe(SITE, f"https://news.example/2025/01/{i:02d}/feed-listed-story", None, None,
                             listed=True) == 1
    hint = types.hint(SITE, "https://news.example/2025/02/03/new-story-today")
    assert hint is not None and hint.page_type == "article"
    entries = [f"https://news.example/p/{1000 + i}" for i in range(int(MIN_VOTES / ENTRY_WEIGHT) + 20)]
    cast = types.observe(SITE, "https://news.example/latest", "list", 0.99, entries=entries)
    assert cast == 1 + len(entries)
    hint = types.hint(SITE, "https://news.example/p/5555")
    assert hint is not None and hint.page_type == "article"
    # an article's links are no entries: an article page casts its own vote only
    assert types.observe(SITE, "https://news.example/q/a-b-c", "article", 0.99, entries=entries) == 1


def test_pending_votes_are_handed_over_once_and_loaded_votes_count() -> None:
    types = SiteTypes()
    types.observe(SITE, "https://news.example/news/a-b-c", "article", 0.9)
    pending = types.take_pending()
    assert pending == {SITE: {"f:news/S": [1.0, 0.0, 0.0], "c:W/S": [1.0, 0.0, 0.0]}}
    assert types.take_pending() == {}
    fresh = SiteTypes()
    assert not fresh.loaded(SITE)
    fresh.load(SITE, {"f:news/S": (8.0, 0.0, 0.0)})
    fresh.observe(SITE, "https://news.example/news/d-e-f", "article", 0.9)
    hint = fresh.hint(SITE, "https://news.example/news/g-h-i")
    assert fresh.loaded(SITE) and hint is not None and hint.votes == 9.0


def test_shapes_per_site_are_capped(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(site_module, "MAX_SHAPES", 10)
    types = SiteTypes()
    for i in range(30):
        types.observe(SITE, f"https://news.example/section{chr(97 + i % 26)}{i}/x", "list", 0.9)
    assert len(types.votes[SITE]) <= 10
