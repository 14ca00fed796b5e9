from __future__ import annotations

import re
from pathlib import Path

import pytest

from crawler.sites import (
    DEFAULT_MAX_DEPTH,
    DEFAULT_MAX_PAGES,
    SiteListError,
    load_site_list,
    parse_site_list,
)
from tests.crawl_helpers import REPO

GOOD = """
defaults:
  max_pages: 50
sites:
  - name: a
    start_urls: ["http://a.test/news/"]
    allowed_prefixes: ["http://a.test/news/"]
    deny: ["/print/"]
  - name: b
    feeds: ["https://b.test/rss.xml"]
    allowed_prefixes: ["https://b.test/", "https://b.test/world/"]
    follow: ["/20\\\\d\\\\d/"]
    render: false
    max_pages: 7
    max_depth: 2
    trailing_slash: strip
"""


def test_good_file_parses_with_defaults_merged() -> None:
    sites = parse_site_list(GOOD).sites
    assert [s.name for s in sites] == ["a", "b"]
    a, b = sites
    assert a.max_pages == 50 and a.max_depth == DEFAULT_MAX_DEPTH and a.render is True
    assert b.max_pages == 7 and b.max_depth == 2 and b.render is False
    assert b.feeds == ("https://b.test/rss.xml",) and b.start_urls == ()
    assert b.trailing_slash == "strip"


def test_allows_prefix_follow_and_deny() -> None:
    a, b = parse_site_list(GOOD).sites
    assert a.allows("http://a.test/news/x.html")
    assert not a.allows("http://a.test/sport/x.html")
    assert not a.allows("http://a.test/news/print/x.html")
    assert b.allows("https://b.test/2026/x")
    assert not b.allows("https://b.test/about")


def test_named_finds_each_site() -> None:
    site_list = parse_site_list(GOOD)
    assert [site_list.named(site.name) for site in site_list.sites] == list(site_list.sites)
    with pytest.raises(KeyError):
        site_list.named("missing")


def test_site_for_picks_longest_prefix() -> None:
    site_list = parse_site_list(GOOD)
    assert site_list.site_for("https://b.test/world/x").name == "b"  # type: ignore[union-attr]
    assert site_list.site_for("http://elsewhere.test/") is None


def test_variables_are_expanded() -> None:
    text = 'sites:\n  - name: d\n    start_urls: ["${DEMO_URL}/en/"]\n    allowed_prefixes: ["${DEMO_URL}/en/"]\n'
    site_list = parse_site_list(text, variables={"DEMO_URL": "http://127.0.0.1:9"})
    assert site_list.sites[0].start_urls == ("http://127.0.0.1:9/en/",)
    assert site_list.variables_used == {"DEMO_URL"}
    with pytest.raises(SiteListError, match=r"variable \$\{DEMO_URL\} is not set"):
        parse_site_list(text, variables={})


def test_a_file_read_again_unchanged_is_parsed_once(tmp_path: Path) -> None:
    # The crawl command validates the list and the spider loads it again: one parse serves both.
    text = 'sites:\n  - name: d\n    start_urls: ["${DEMO_URL}/en/"]\n    allowed_prefixes: ["${DEMO_URL}/en/"]\n'
    path = tmp_path / "sites.yaml"
    path.write_text(text, encoding="utf-8")
    first = load_site_list(path, {"DEMO_URL": "http://127.0.0.1:9"})
    assert load_site_list(path, {"DEMO_URL": "http://127.0.0.1:9", "UNUSED": "x"}) is first
    other = load_site_list(path, {"DEMO_URL": "http://127.0.0.1:8"})  # another value: another parse
    assert other.sites[0].start_urls == ("http://127.0.0.1:8/en/",)
    path.write_text(text.replace("name: d", "name: e"), encoding="utf-8")
    assert load_site_list(path, {"DEMO_URL": "http://127.0.0.1:9"}).sites[0].name == "e"


def _one_site(extra: str) -> str:
    return (
        "sites:\n  - name: s\n    start_urls: [\"http://s.test/\"]\n"
        "    allowed_prefixes: [\"http://s.test/\"]\n" + extra
    )


@pytest.mark.parametrize(
    ("extra", "field", "problem"),
    [
        ("    max_pages: 0\n", "max_pages", "positive integer"),
        ("    max_pages: ten\n", "max_pages", "positive integer"),
        ("    max_depth: true\n", "max_depth", "positive integer"),
        ("    render: maybe\n", "render", "true or false"),
        ("    trailing_slash: sometimes\n", "trailing_slash", "must be one of"),
        ("    deny: ['(unclosed']\n", "deny", "bad regular expression"),
        ("    feeds: ['ftp://s.test/rss']\n", "feeds", "not an absolute http"),
        ("    colour: red\n", "colour", "unknown field"),
        ("    delay: -1\n", "delay", "seconds >= 0"),
        ("    delay: soon\n", "delay", "seconds >= 0"),
        ("    concurrency: 0\n", "concurrency", "positive integer"),
        ("    javascript: sometimes\n", "javascript", "true, false or auto"),
        ("    redirect_domains: ['https://x.test/']\n", "redirect_domains", "domain names"),
        ("    redirect_domains: [localhost]\n", "redirect_domains", "domain names"),
        ("    redirect_domains: 7\n", "redirect_domains", "domain names"),
    ],
)
def test_bad_field_is_named_with_entry(extra: str, field: str, problem: str) -> None:
    with pytest.raises(SiteListError) as caught:
        parse_site_list(_one_site(extra), source="x.yaml")
    message = str(caught.value)
    assert message.startswith("x.yaml: site #1 's': ")
    assert f"field '{field}'" in message and problem in message


def test_start_url_outside_prefixes_is_refused() -> None:
    text = 'sites:\n  - name: s\n    start_urls: ["http://other.test/"]\n    allowed_prefixes: ["http://s.test/"]\n'
    with pytest.raises(SiteListError, match=re.escape("field 'start_urls': http://other.test/ is outside")):
        parse_site_list(text)


def test_missing_prefixes_and_start_points() -> None:
    with pytest.raises(SiteListError, match="field 'allowed_prefixes': at least one URL"):
        parse_site_list('sites:\n  - name: s\n    start_urls: ["http://s.test/"]\n')
    with pytest.raises(SiteListError, match="needs start_urls, feeds or sitemaps"):
        parse_site_list('sites:\n  - name: s\n    allowed_prefixes: ["http://s.test/"]\n')


def test_whole_file_errors() -> None:
    with pytest.raises(SiteListError, match="not valid YAML"):
        parse_site_list("sites: [", source="f.yaml")
    with pytest.raises(SiteListError, match="non-empty 'sites' list"):
        parse_site_list("sites: []")
    with pytest.raises(SiteListError, match="site #2: field 'name'"):
        parse_site_list(_one_site("") + "  - start_urls: ['http://t.test/']\n")
    with pytest.raises(SiteListError, match="duplicate name"):
        parse_site_list(_one_site("") + _one_site("").replace("sites:\n", ""))


def test_load_reports_unreadable_file(tmp_path: Path) -> None:
    with pytest.raises(SiteListError, match="cannot read site list"):
        load_site_list(tmp_path / "missing.yaml")


def test_default_demo_file_is_valid() -> None:
    site_list = load_site_list(REPO / "sites/demo.yaml", {"DEMO_URL": "http://h:1"})
    assert {s.name for s in site_list.sites} == {"en-gazette", "zh-jiangcheng"}
    assert all(s.max_pages <= DEFAULT_MAX_PAGES for s in site_list.sites)


def test_javascript_is_a_site_choice_or_left_to_the_setting() -> None:
    assert parse_site_list(_one_site("")).sites[0].javascript is None
    assert parse_site_list(_one_site("    javascript: auto\n")).sites[0].javascript is None
    assert parse_site_list(_one_site("    javascript: true\n")).sites[0].javascript is True
    assert parse_site_list(_one_site("    javascript: false\n")).sites[0].javascript is False


def test_per_site_politeness_gets_a_slot_of_its_own() -> None:
    from scrapy.settings import Settings

    from crawler.spiders.fetching import politeness
    from crawler.spiders.news_sites import NewsSitesSpider

    text = _one_site("    delay: 2.5\n    concurrency: 1\n") + (
        "  - name: t\n    start_urls: [\"http://t.test/\"]\n    allowed_prefixes: [\"http://t.test/\"]\n"
        "    concurrency: 8\n"
        "  - name: u\n    start_urls: [\"http://u.test/\"]\n    allowed_prefixes: [\"http://u.test/\"]\n")
    s, t, u = parse_site_list(text).sites
    assert (s.delay, s.concurrency, s.download_slot) == (2.5, 1, "site:s")
    assert (t.delay, t.concurrency, t.download_slot) == (None, 8, "site:t")
    assert u.download_slot is None and politeness(u) == {}
    # A fixed delay is the site's own: AutoThrottle does not adapt it; a concurrency alone keeps AutoThrottle.
    assert politeness(s) == {"download_slot": "site:s", "autothrottle_dont_adjust_delay": True}
    assert politeness(t) == {"download_slot": "site:t"}
    spider = NewsSitesSpider()
    spider.site_list = parse_site_list(text)
    settings = Settings({"DOWNLOAD_SLOTS": {"render": {"concurrency": 64}}, "CONCURRENT_REQUESTS_PER_DOMAIN": 4,
                         "DOWNLOAD_DELAY": 0.5})
    spider._site_slots(settings)
    assert settings.getdict("DOWNLOAD_SLOTS") == {
        "render": {"concurrency": 64},
        "site:s": {"concurrency": 1, "delay": 2.5},
        "site:t": {"concurrency": 8, "delay": 0.5},
    }


def test_revisit_and_recrawl_are_site_choices() -> None:
    site = parse_site_list(_one_site("")).sites[0]
    assert site.revisit is None and site.recrawl is None  # the CRAWL_STATE_* settings decide
    assert parse_site_list(_one_site("    revisit: 90\n")).sites[0].revisit == 90
    assert parse_site_list(_one_site("    revisit: 6h\n")).sites[0].revisit == 6 * 3600
    assert parse_site_list(_one_site("    revisit: 1.5d\n")).sites[0].revisit == 1.5 * 86400
    assert parse_site_list(_one_site("    recrawl: changed\n")).sites[0].recrawl == "changed"
    with pytest.raises(SiteListError, match="field 'revisit': must be seconds or a duration"):
        parse_site_list(_one_site("    revisit: soon\n"))
    with pytest.raises(SiteListError, match="field 'recrawl': must be one of new, changed"):
        parse_site_list(_one_site("    recrawl: always\n"))


def test_redirect_scope_is_the_prefixes_the_registered_domain_and_the_redirect_domains() -> None:
    site = parse_site_list("""
sites:
  - name: s
    start_urls: ["http://news.bbc.co.uk/en/"]
    allowed_prefixes: ["http://news.bbc.co.uk/en/"]
    redirect_domains: ["BBC.com.", "新华网.中国"]
""").sites[0]
    assert site.domains == {"bbc.co.uk"}
    assert site.redirect_domains == ("bbc.com", "xn--xkrr14bows.xn--fiqs8s")
    inside = ["http://news.bbc.co.uk/en/a", "https://www.bbc.co.uk/news/a", "http://bbc.co.uk/", "https://bbc.com/x",
              "https://www.bbc.com/x", "http://xn--xkrr14bows.xn--fiqs8s/a"]
    outside = ["http://bbc.co.uk.evil.test/", "http://notbbc.co.uk/", "http://127.0.0.1/", "ftp://news.bbc.co.uk/en/",
               "http://bbc.com.evil.test/", "http://[::1/"]
    assert [site.in_scope(url) for url in inside] == [True] * len(inside)
    assert [site.in_scope(url) for url in outside] == [False] * len(outside)
