"""Template learning and cleaning (paper 004): leaves, the distance rule, batches, guard, drift."""

from __future__ import annotations

import random

import pytest

from crawler.sites import parse_site_list
from extraction.dom.html import parse_html
from extraction.dom.text import visible_text
from extraction.templates import (
    BatchCache,
    DriftMonitor,
    GuardRule,
    Leaf,
    TagIndex,
    Template,
    TemplateSet,
    denoise,
    leaf_tags,
    max_distance,
    texts_close,
)
from templates_db.library import TemplateLibrary, TemplatesConfig, site_key
from templates_db.store import SQLiteTemplateStore

NAV = "<ul><li><a>Home</a></li><li><a>World</a></li><li><a>Business</a></li><li><a>Contact us</a></li></ul>"
FOOTER = "<div><p>Copyright 2026 Example News Ltd. All rights reserved.</p></div>"
NAV_ZH = "<ul><li><a>首页</a></li><li><a>国际</a></li><li><a>军事</a></li><li><a>观点</a></li></ul>"
FOOTER_ZH = "<div><p>版权所有 参考消息网 京ICP备11013708号 京公网安备110402440030</p></div>"

_WORDS = ["river", "council", "budget", "harbour", "vote", "minister", "school", "storm", "farmers", "market",
          "bridge", "court", "museum", "railway", "festival", "election", "doctors", "hospital", "factory",
          "research", "drought", "coast", "league", "police"]


def _sentences(seed: int, count: int = 3) -> list[str]:
    """Distinct article paragraphs (no two pages share their wording)."""
    rng = random.Random(seed)
    return [" ".join(rng.choice(_WORDS) for _ in range(18)).capitalize() + "." for _ in range(count)]


def _page(seed: int, nav: str = NAV, footer: str = FOOTER, extra: str = "",
          source: str = "<span>Source: Reuters</span>") -> tuple[str, list[str]]:
    paragraphs = _sentences(seed)
    body = "".join(f"<p>{p}</p>" for p in paragraphs)
    return (f"<html><body>{nav}<div class='article'>{body}</div>{source}{extra}"
            f"{footer}</body></html>", paragraphs)


def _library(tmp_path, **config) -> TemplateLibrary:
    return TemplateLibrary(SQLiteTemplateStore(tmp_path / "templates.sqlite3"),
                           TemplatesConfig(refresh_interval=0, **config))


# -- leaves and the distance rule --------------------------------------------------------------

def test_leaf_tags_are_elements_without_element_children():
    root = parse_html("<body><ul><li><a>Home</a></li></ul><p>line one<br>line two</p>"
                      "<p>officials in <a>Beijing</a> said</p><script>var x = 1;</script>"
                      "<div style='display:none'><span>hidden</span></div><p>   </p></body>")
    assert [(leaf.tag, leaf.text) for leaf in leaf_tags(root, sentences=False)] == [
        ("a", "Home"), ("p", "line one line two"), ("a", "Beijing")]


def test_sentences_of_text_and_inline_elements_are_units():
    root = parse_html("<body><p>Copyright 2005 <a>CNN</a>. All <b>rights</b> reserved.</p>"
                      "<div>Intro text<p>a block inside</p></div>"  # a block descendant: not a sentence
                      "<li><a>Home</a> | </li>"  # no words of its own: not a sentence
                      "<p>Quotes <span>delayed <i>15</i> min</span></p></body>")
    assert [(leaf.tag, leaf.text) for leaf in leaf_tags(root)] == [
        ("p", "Copyright 2005 CNN. All rights reserved."), ("a", "CNN"), ("b", "rights"),
        ("p", "a block inside"), ("a", "Home"),
        ("p", "Quotes delayed 15 min"), ("span", "delayed 15 min"), ("i", "15")]


def test_a_sentence_removed_whole_takes_its_inline_leaves_along():
    templates = TemplateSet([Template(1, "p", "Copyright 2005 CNN. All rights reserved."), Template(2, "a", "CNN")])
    root = parse_html("<body><div><p>Copyright 2005 <a>CNN</a>. All rights reserved.</p><p>News text.</p></div>"
                      "<p>Reporting by <a>CNN</a> staff.</p></body>")
    result = denoise(root, templates)
    assert visible_text(root) == "News text.\nReporting by CNN staff."  # the link inside a sentence stays
    assert result.removed_nodes == 1 and result.kept == {"running_text": 2}


def test_leaf_tags_skip_long_text():
    root = parse_html(f"<body><p>{'x' * 501}</p><p>{'y' * 500}</p></body>")
    assert [len(leaf.text) for leaf in leaf_tags(root)] == [500]


@pytest.mark.parametrize(("a", "b", "close"), [
    ("12345678", "12345678", True),
    ("12345678", "1234567X", False),  # shorter text <= 8 chars: must be equal
    ("123456789", "12345678X", True),  # 9 chars: one edit
    ("123456789", "1234567XY", False),
    ("0123456789abcdef", "0123456789abcdXY", True),  # 16 chars: two edits
    ("0123456789abcdef", "0123456789abcXYZ", False),
    ("来源: 新华社 记者张越", "来源: 新华社 记者王越", True),  # 11 CJK-and-Latin chars: one edit
    ("来源: 新华社 记者张越", "来源: 新华社 记者王兵", False),
    ("123456789", "12345678", False),  # shorter has 8 chars -> exact, and they differ
])
def test_distance_rule(a, b, close):
    assert texts_close(a, b) is close
    assert texts_close(b, a) is close


def test_max_distance_boundaries():
    assert [max_distance(n, 100) for n in (8, 9, 15, 16, 23, 24)] == [0, 1, 1, 2, 2, 3]


def test_index_finds_what_the_rule_says_and_only_that():
    index = TagIndex()
    first = index.add("p", "Copyright 2026 Example News Ltd.")
    index.add("span", "Copyright 2026 Example News Ltd.")
    assert index.find("p", "Copyright 2025 Example News Ltd.") == first  # one edit in 32 chars
    assert index.find("div", "Copyright 2026 Example News Ltd.") is None  # other tag
    assert index.find("p", "Copyright 2025 Sample News Inc., all rights") is None
    # Length buckets: a text 9/8 longer is still found (distance = length difference).
    base = "a" * 64
    entry = index.add("p", base)
    assert index.find("p", base + "b" * 8) == entry
    assert index.find("p", base + "b" * 9) is None


# -- batches: N1 and N2 at their boundaries ----------------------------------------------------

def test_frequency_counts_pages_not_occurrences():
    cache = BatchCache()
    cache.add_page([("a", "Share"), ("a", "Share"), ("a", "Share")])
    assert cache.candidates(3) == []
    cache.add_page([("a", "Share")])
    cache.add_page([("a", "Share")])
    assert cache.candidates(3) == [("a", "Share", 3)]


def test_batch_promotes_after_n1_pages_with_frequency_at_least_n2(tmp_path):
    library = _library(tmp_path, batch_pages=4, min_frequency=3)
    pages = []
    for seed in range(4):
        # "Editor's pick" is on pages 0-2 (frequency 3 = N2), "Live blog" on 0-1 (2 < N2).
        extra = "<em>Editor's pick</em>" if seed < 3 else ""
        extra += "<b>Live blog</b>" if seed < 2 else ""
        pages.append(_page(seed, extra=extra)[0])
    for html in pages[:3]:
        assert library.observe("site", parse_html(html)).promoted == 0
    assert len(library.templates("site")) == 0
    assert library.observe("site", parse_html(pages[3])).promoted > 0  # the 4th page closes the batch
    texts = {t.text for t in library.templates("site").templates}
    assert {"Home", "Contact us", "Source: Reuters", "Editor's pick"} <= texts
    assert "Live blog" not in texts
    assert not any(p in texts for seed in range(4) for p in _sentences(seed))
    library.close()


def test_cache_is_cleared_after_each_batch(tmp_path):
    library = _library(tmp_path, batch_pages=3, min_frequency=3)
    # "Flash" on 2 pages of batch 1 and 1 page of batch 2: never 3 in one batch.
    for seed in range(6):
        extra = "<i>Flash</i>" if seed in (1, 2, 3) else ""
        library.observe("site", parse_html(_page(seed, extra=extra)[0]))
    assert "Flash" not in {t.text for t in library.templates("site").templates}
    library.close()


def test_chinese_templates_are_learned_and_removed(tmp_path):
    library = _library(tmp_path)
    paragraphs_of = {}
    for seed in range(11):
        rng = random.Random(seed)
        paragraphs = ["".join(rng.choice("经济发展城市居民政府会议报告学校医院科技农业交通") for _ in range(40)) + "。"
                      for _ in range(3)]
        paragraphs_of[seed] = paragraphs
        editor = ["张越", "王兵", "李明"][seed % 3]
        html = (f"<html><body>{NAV_ZH}<div>{''.join(f'<p>{p}</p>' for p in paragraphs)}</div>"
                f"<div><span>来源: 新华社</span><span>责任编辑: {editor}</span></div>{FOOTER_ZH}</body></html>")
        if seed < 10:
            library.observe("cankao", parse_html(html))
    root = parse_html(html)
    result = library.denoise("cankao", root)
    text = visible_text(root)
    for paragraph in paragraphs_of[10]:
        assert paragraph in text
    for noise in ("首页", "国际", "来源: 新华社", "版权所有"):
        assert noise not in text
    assert result.removed_nodes >= 6
    library.close()


# -- the guard ---------------------------------------------------------------------------------

def _leaf(html: str, text: str) -> Leaf:
    return next(leaf for leaf in leaf_tags(parse_html(html)) if leaf.text == text)


def test_guard_keeps_leaves_inside_running_text():
    guard = GuardRule()
    template = Template(1, "a", "Beijing", share=1.0)
    assert guard.keeps(_leaf("<body><p>Officials in <a>Beijing</a> said</p></body>", "Beijing"), template) \
        == "running_text"
    assert guard.keeps(_leaf("<body><ul><li><a>Beijing</a> | </li></ul></body>", "Beijing"), template) is None


def test_guard_keeps_long_text_unless_the_template_is_site_wide():
    guard = GuardRule(min_chars=80, min_share=0.5)
    long_text = "x" * 80
    leaf = _leaf(f"<body><p>{long_text}</p></body>", long_text)
    assert guard.keeps(leaf, Template(1, "p", long_text, share=0.3)) == "long_unique"
    assert guard.keeps(leaf, Template(1, "p", long_text, share=0.5)) is None  # site-wide: removed
    short = "x" * 79
    assert guard.keeps(_leaf(f"<body><p>{short}</p></body>", short), Template(1, "p", short, share=0.3)) is None


def test_article_lead_quoted_on_a_few_pages_survives(tmp_path):
    """An article's lead on 3 of 10 pages is frequent enough to be learned, but the guard keeps it."""
    lead = ("The river council approved the harbour budget on Monday after a storm damaged the old "
            "railway bridge near the coast.")
    library = _library(tmp_path)
    for seed in range(10):
        library.observe("site", parse_html(_page(seed, extra=f"<div><p>{lead}</p></div>" if seed < 3 else "")[0]))
    assert lead in {t.text for t in library.templates("site").templates}  # learned (frequency 3)...
    html = f"<html><body>{NAV}<div><p>{lead}</p><p>{_sentences(99)[0]}</p></div>{FOOTER}</body></html>"
    root = parse_html(html)
    result = library.denoise("site", root)
    assert lead in visible_text(root)  # ...but kept: seen on 3/10 < half of the batch
    assert result.kept == {"long_unique": 1}
    assert "Copyright" not in visible_text(root)
    library.close()


def test_denoise_removes_matches_and_reports_them():
    templates = TemplateSet([Template(1, "a", "Home"), Template(2, "p", "Copyright 2026 Example News Ltd.")])
    html, paragraphs = _page(5, footer="<div><p>Copyright 2025 Example News Ltd.</p></div>")
    root = parse_html(html)
    result = denoise(root, templates)
    text = visible_text(root)
    assert "Home" not in text and "Copyright" not in text
    assert all(p in text for p in paragraphs)
    assert result.removed_nodes == 2
    assert result.removed_chars == len("Home") + len("Copyright 2025 Example News Ltd.")
    assert result.matched == {1, 2}


# -- drift -------------------------------------------------------------------------------------

def test_drift_monitor_fires_when_the_recent_rate_halves():
    templates = TemplateSet([Template(i, "a", f"link {i}", share=0.8) for i in range(10)])  # promises 0.8
    monitor = DriftMonitor(window=4, ratio=0.5)
    assert not any(monitor.observe(range(8), templates) for _ in range(10))
    # 0.4 = exactly half of 0.8: not below it.
    assert not any(monitor.observe(range(4), templates) for _ in range(4))
    assert [monitor.observe(range(3), templates) for _ in range(4)][-1] is True


def test_drift_monitor_watches_the_core_templates_only():
    """Chrome (on every page of its batch) decides; templates on few pages (headlines repeated across
    list pages) may vanish without a layout change. Fewer than 5 core templates: all count."""
    chrome = [Template(i, "a", f"nav {i}", share=1.0) for i in range(6)]
    headlines = [Template(10 + i, "a", f"headline {i}", share=0.3) for i in range(20)]
    templates = TemplateSet(chrome + headlines)
    assert templates.core == chrome and templates.expected_rate == 1.0
    monitor = DriftMonitor(window=4, ratio=0.5)
    # Articles: the whole chrome, no headline (6 of 26 templates, well under half the mean share).
    assert not any(monitor.observe(range(6), templates) for _ in range(10))
    # New layout: headlines of the day still found, the chrome gone.
    assert [monitor.observe(range(10, 30), templates) for _ in range(4)][-1] is True
    few = TemplateSet(chrome[:4] + headlines)
    assert few.core == few.templates and few.match_rate(range(4)) == 4 / 24


def test_layout_change_retires_old_templates_and_learns_new_ones(tmp_path):
    library = _library(tmp_path, batch_pages=5, drift_window=5)
    new_nav = ("<nav><div><span>Front page</span><span>Politics</span><span>Opinion</span>"
               "<span>Podcasts</span></div></nav>")
    new_footer = "<footer><small>(c) 2030 Example Media Group</small></footer>"
    drift_at = []
    for seed in range(20):
        html = _page(seed)[0] if seed < 10 else _page(seed, nav=new_nav, footer=new_footer, source="")[0]
        if library.observe("site", parse_html(html)).drift:
            drift_at.append(seed)
    # Old pages find all templates (rate 1.0, as promised), new ones none: the window of 5 has
    # mean 0.4 < 0.5 x 1.0 at the third new page.
    assert drift_at == [12]
    texts = {t.text for t in library.templates("site").templates}
    assert "Front page" in texts and "Home" not in texts
    store = library.store
    assert store is not None
    state = store.site_state("site")
    assert state is not None and state.generation == 1 and state.drift_events == 1
    retired = [t for t in store.templates("site", include_retired=True) if t.retired_at is not None]
    assert "Home" in {t.text for t in retired}  # history kept
    library.close()


# -- persistence and sites ---------------------------------------------------------------------

def test_reopen_keeps_templates_and_parked_batch_continues(tmp_path):
    library = _library(tmp_path)
    for seed in range(13):  # one batch of 10 promoted, 3 pages parked at close
        library.observe("site", parse_html(_page(seed)[0]))
    count = len(library.templates("site"))
    library.close()
    again = _library(tmp_path)
    assert len(again.templates("site")) == count > 0
    promoted = [again.observe("site", parse_html(_page(100 + seed)[0])).promoted for seed in range(7)]
    assert promoted[-1] > 0 and not any(promoted[:-1])  # 3 parked + 7 new pages = a batch of 10
    again.close()


def test_site_key_prefers_the_site_list_then_scheme_and_host():
    sites = parse_site_list("sites:\n- name: gazette\n  start_urls: ['https://news.example.com/en/']\n"
                            "  allowed_prefixes: ['https://news.example.com/en/']\n", source="t", variables={})
    assert site_key("https://news.example.com/en/world/1.html", sites) == "gazette"
    assert site_key("https://News.Example.com/zh/1.html", sites) == "https://news.example.com"
    assert site_key("http://example.org:8080/a", None) == "http://example.org:8080"
    assert site_key("not a url", None) is None


def test_unusable_store_gives_a_library_without_templates(tmp_path):
    (tmp_path / "templates.sqlite3").write_bytes(b"this is not a database" * 100)
    counted: list[str] = []
    library = TemplateLibrary.open(TemplatesConfig(store=str(tmp_path)), count=counted.append)
    assert not library.available and counted == ["templates/store_unusable"]
    root = parse_html(_page(1)[0])
    assert library.observe("site", root).templates == 0
    assert library.denoise("site", root).removed_nodes == 0
    library.close()


def test_guard_keeps_the_pages_own_headline():
    guard = GuardRule()
    headline = "Mayor signs the harbour budget after a long night"
    template = Template(1, "a", headline, share=0.4)  # learned from a "most read" box of other pages
    page = f"<html><head><title>{headline} | Example News</title></head><body><h1><a>{headline}</a></h1></body>"
    assert guard.keeps(_leaf(page, headline), template, title=f"{headline} | Example News") == "page_title"
    other = "<html><head><title>Storm closes the coast road | Example News</title></head>"
    other += f"<body><h3><a>{headline}</a></h3></body>"
    assert guard.keeps(_leaf(other, headline), template, title="Storm closes the coast road | Example News") is None
    short = "Most read"  # under TITLE_GUARD_MIN_CHARS: a nav label in the title does not protect it
    assert guard.keeps(_leaf(f"<body><h2>{short}</h2></body>", short), Template(2, "h2", short), title=short) is None
    # Through denoise: the title is read from the page.
    root = parse_html(page)
    assert denoise(root, TemplateSet([template])).kept == {"page_title": 1}


class _NoGuard(GuardRule):
    def keeps(self, leaf, template, title=None):
        return None


def test_removed_leaf_does_not_fuse_the_words_around_it():
    root = parse_html("<body><div>Posted by<span>Staff</span>yesterday</div></body>")
    denoise(root, TemplateSet([Template(1, "span", "Staff")]), _NoGuard())
    assert visible_text(root) == "Posted by yesterday"
