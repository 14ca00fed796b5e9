"""`scrapy templates` (list/show/export/clear/build) and template cleaning in `scrapy extract`.

Saved pages of two fake sites share their boilerplate (navigation, copyright and "source"
lines) and differ in their article paragraphs: a built library must remove the boilerplate
and keep every paragraph whole.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from crawler.commands.templates import iso_time
from templates_db.store import Candidate, open_store
from tests.crawl_helpers import REPO

EN_NAV = ["Home", "World", "Business", "Sports"]
EN_COPYRIGHT = "Copyright 2024 The Example Gazette. All rights reserved."
EN_SOURCE = "Source: Example Gazette News Service"
ZH_NAV = ["首页", "国际", "军事", "财经"]
ZH_COPYRIGHT = "版权所有 江城日报社 未经授权不得转载"
ZH_SOURCE = "来源：江城日报"

_EN_VOCABULARY = ("council plan river harbour museum railway engineers budget residents winter spring bridge market "
                 "school teachers doctors hospital farmers orchard harvest storm flood mayor election voters tunnel "
                 "airport pilots theatre actors festival music library books reservoir water drought scientists survey "
                 "birds forest fire volunteers police court judge ferry island workers factory strike wages")
_ZH_VOCABULARY = ("市政府 会议 决定 改造 港口 图书馆 铁路 果园 大桥 博物馆 市场 学校 医院 体育场 机场 剧院 水库 工程师 "
                 "居民 农民 丰收 暴雨 洪水 选举 隧道 飞行员 音乐节 科学家 调查 森林 志愿者 警方 法院 渡轮 工人 工厂 "
                 "工资 预算 春天 冬天 投资 噪音 欢迎 施工 专家 记者 表示 宣布")
EN_WORDS = _EN_VOCABULARY.split()
ZH_WORDS = _ZH_VOCABULARY.split()


def _paragraphs(i: int, words: list[str], sep: str, end: str) -> list[str]:
    # Seeded random word runs: paragraphs of different pages are far apart by paper 004's edit-distance rule.
    rng = random.Random(i)
    count = 3 if i % 2 else 2
    return [sep.join(rng.choice(words) for _ in range(rng.randint(14, 20))) + end for _ in range(count)]


def en_paragraphs(i: int) -> list[str]:
    """Return the unique article paragraphs (2 or 3) of English page ``i``."""
    return [p[0].upper() + p[1:] for p in _paragraphs(i, EN_WORDS, " ", ".")]


def zh_paragraphs(i: int) -> list[str]:
    """Return the unique article paragraphs (2 or 3) of Chinese page ``i``."""
    return ["本报讯" + p for p in _paragraphs(1000 + i, ZH_WORDS, "", "。")]


def page(title: str, nav: list[str], paragraphs: list[str], copyright_line: str, source: str,
         lang: str = "en") -> str:
    """Return a small news page with the site's boilerplate around its paragraphs."""
    links = "".join(f'<li><a href="/{n}">{n}</a></li>' for n in nav)
    body = "".join(f"<p>{p}</p>" for p in paragraphs)
    return (f'<html lang="{lang}"><head><meta charset="utf-8"><title>{title}</title></head><body>'
            f"<div class='header'><ul>{links}</ul></div><div class='article'><h1>{title}</h1>{body}"
            f"<p class='source'>{source}</p></div><div class='footer'><p>{copyright_line}</p></div></body></html>")


def write_site(folder: Path, lang: str, count: int = 12) -> Path:
    """Write ``count`` saved pages of the English or Chinese fake site into ``folder``; return it."""
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(count):
        if lang == "en":
            html = page(" ".join(en_paragraphs(i)[0].split()[:5]), EN_NAV, en_paragraphs(i), EN_COPYRIGHT, EN_SOURCE)
        else:
            html = page(zh_paragraphs(i)[0][3:15], ZH_NAV, zh_paragraphs(i), ZH_COPYRIGHT, ZH_SOURCE, "zh")
        (folder / f"page{i:02d}.html").write_text(html, encoding="utf-8")
    return folder


def scrapy(command: str, *args: str, store: Path) -> subprocess.CompletedProcess[str]:
    """Run ``scrapy <command> ...`` in the project with TEMPLATES_STORE=store, without stdin."""
    return subprocess.run(
        [sys.executable, "-m", "scrapy", command, *args, "-s", f"TEMPLATES_STORE={store}", "-L", "WARNING"],
        cwd=REPO, capture_output=True, text=True, timeout=120, check=False, stdin=subprocess.DEVNULL,
    )


def extract_records(page_path: Path, *args: str, store: Path) -> list[dict[str, Any]]:
    """Run ``scrapy extract --method fulltext`` on one page (the template stage alone) and return its records."""
    process = scrapy("extract", str(page_path), "--method", "fulltext", *args, store=store)
    assert process.returncode == 0, process.stderr
    return [json.loads(line) for line in process.stdout.splitlines()]


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Pages of both sites and a store built from them (English: batches of 6; Chinese: defaults)."""
    root = tmp_path_factory.mktemp("templates")
    store = root / "store"
    en = write_site(root / "en", "en")
    zh = write_site(root / "zh", "zh")
    process = scrapy("templates", "build", "--site", "gazette", str(en), "--batch-pages", "6",
                     "--min-frequency", "3", store=store)
    assert process.returncode == 0, process.stderr
    assert "12 pages read, 0 failed, 2 batches" in process.stdout
    process = scrapy("templates", "build", "--site", "jiangcheng", str(zh / "*.html"), store=store)
    assert process.returncode == 0, process.stderr
    # 12 pages in batches of 10: the 2 left over are too few to promote and are parked.
    assert "12 pages read, 0 failed, 1 batches" in process.stdout and "2 pages parked" in process.stdout
    return {"root": root, "store": store, "en": en, "zh": zh}


def test_list_shows_built_sites_with_template_counts(built: dict[str, Path]) -> None:
    process = scrapy("templates", "list", store=built["store"])
    assert process.returncode == 0, process.stderr
    lines = process.stdout.splitlines()
    assert lines[0].split() == ["site", "generation", "active", "retired", "pages", "batches", "drift", "updated"]
    rows = {line.split()[0]: line.split() for line in lines[1:]}
    assert set(rows) == {"gazette", "jiangcheng"}
    # 4 nav links + copyright + source line, nothing from the articles.
    assert rows["gazette"][1:7] == ["0", "6", "0", "12", "2", "0"]
    assert rows["jiangcheng"][1:7] == ["0", "6", "0", "10", "1", "0"]
    assert rows["gazette"][7].startswith("20")  # ISO time


def test_list_of_a_missing_store_says_no_sites_and_creates_nothing(tmp_path: Path) -> None:
    process = scrapy("templates", "list", store=tmp_path / "none")
    assert process.returncode == 0 and "No sites" in process.stdout
    assert not (tmp_path / "none").exists()
    # A zero-length file is no store yet: the readers leave it as it is (opening it wrote the schema into it).
    empty = tmp_path / "empty.sqlite3"
    empty.touch()
    assert "No sites" in scrapy("templates", "list", store=empty).stdout
    assert scrapy("templates", "show", "gazette", store=empty).returncode == 1
    assert empty.stat().st_size == 0


def test_show_lists_the_boilerplate_templates(built: dict[str, Path]) -> None:
    process = scrapy("templates", "show", "gazette", store=built["store"])
    assert process.returncode == 0, process.stderr
    assert "Active templates (6)" in process.stdout and "Drift events (0)" in process.stdout
    for text in [*EN_NAV, EN_COPYRIGHT[:50], EN_SOURCE]:
        assert text in process.stdout
    assert en_paragraphs(0)[0][:40] not in process.stdout  # no article text
    zh = scrapy("templates", "show", "jiangcheng", "--all", store=built["store"])
    assert zh.returncode == 0, zh.stderr
    assert all(text in zh.stdout for text in [*ZH_NAV, ZH_COPYRIGHT, ZH_SOURCE])
    assert "Retired templates (0)" in zh.stdout


def test_export_writes_the_templates_as_json(built: dict[str, Path]) -> None:
    process = scrapy("templates", "export", "jiangcheng", store=built["store"])
    assert process.returncode == 0, process.stderr
    data = json.loads(process.stdout)
    assert data["site"] == "jiangcheng" and data["state"]["pages"] == 10 and data["parked_batches"] == 1
    assert {t["text"] for t in data["templates"]} == {*ZH_NAV, ZH_COPYRIGHT, ZH_SOURCE}
    assert "首页" in process.stdout  # not \u-escaped
    out = built["root"] / "gazette.json"
    assert scrapy("templates", "export", "gazette", "-o", str(out), store=built["store"]).returncode == 0
    assert len(json.loads(out.read_text(encoding="utf-8"))["templates"]) == 6


@pytest.mark.parametrize(("lang", "site", "nav", "boilerplate"), [
    ("en", "gazette", EN_NAV, [EN_COPYRIGHT, EN_SOURCE]),
    ("zh", "jiangcheng", ZH_NAV, [ZH_COPYRIGHT, ZH_SOURCE]),
])
def test_extract_with_site_removes_boilerplate_and_keeps_paragraphs(
        built: dict[str, Path], lang: str, site: str, nav: list[str], boilerplate: list[str]) -> None:
    # A page the library was not built from (index 12) and one it was (index 3).
    folder = write_site(built["root"] / f"{lang}-new", lang, count=13)
    for index in (12, 3):
        (record,) = extract_records(folder / f"page{index:02d}.html", "--site", site, store=built["store"])
        assert record["error"] is None and record["site"] == site
        paragraphs = en_paragraphs(index) if lang == "en" else zh_paragraphs(index)
        for paragraph in paragraphs:
            assert paragraph in record["text"]
        lines = record["text"].splitlines()
        assert not set(nav) & set(lines)
        assert not any(line in record["text"] for line in boilerplate)
        cleaning = record["template_cleaning"]
        assert cleaning["removed_nodes"] == 6 and cleaning["templates_matched"] == 6
        assert cleaning["kept_by_guard"] == 0


def test_extract_without_site_is_unchanged(built: dict[str, Path]) -> None:
    page_path = built["en"] / "page00.html"
    (plain,) = extract_records(page_path, store=built["store"])
    (off,) = extract_records(page_path, "--site", "gazette", "--no-templates", store=built["store"])
    assert plain["site"] is None and plain["template_cleaning"] is None
    assert off["site"] == "gazette" and off["template_cleaning"] is None
    assert plain["text"] == off["text"] and EN_COPYRIGHT in plain["text"]
    # A URL outside the site list is keyed by scheme + host, which has no templates here.
    (by_url,) = extract_records(page_path, "--url", "https://gazette.example/a", store=built["store"])
    assert by_url["site"] == "https://gazette.example" and by_url["template_cleaning"] is None
    assert by_url["text"] == plain["text"]


def test_extract_with_url_of_a_built_host_uses_its_templates(built: dict[str, Path], tmp_path: Path) -> None:
    store = tmp_path / "store.sqlite3"
    process = scrapy("templates", "build", "--site", "https://gazette.example", str(built["en"]),
                     "--batch-pages", "6", store=store)
    assert process.returncode == 0, process.stderr
    (record,) = extract_records(built["en"] / "page01.html", "--url", "https://gazette.example/news/1",
                                store=store)
    assert record["site"] == "https://gazette.example" and record["template_cleaning"]["removed_nodes"] == 6
    assert EN_COPYRIGHT not in record["text"]


def test_extract_with_url_in_the_site_list_uses_the_entry_name(built: dict[str, Path], tmp_path: Path) -> None:
    sites = tmp_path / "sites.yaml"
    sites.write_text("sites:\n  - name: gazette\n    start_urls: ['https://gazette.example/news/']\n"
                     "    allowed_prefixes: ['https://gazette.example/news/']\n", encoding="utf-8")
    (record,) = extract_records(built["en"] / "page02.html", "--url", "https://gazette.example/news/2",
                                "-s", f"NEWS_SITES_FILE={sites}", store=built["store"])
    assert record["site"] == "gazette" and record["template_cleaning"]["removed_nodes"] == 6
    assert all(paragraph in record["text"] for paragraph in en_paragraphs(2))


def test_clear_removes_the_site(built: dict[str, Path], tmp_path: Path) -> None:
    store = tmp_path / "store"
    assert scrapy("templates", "build", "--site", "gazette", str(built["en"]), store=store).returncode == 0
    # --store overrides the setting (which points at the shared store here).
    process = scrapy("templates", "clear", "gazette", "--store", str(store), store=built["store"])
    assert process.returncode == 0, process.stderr
    assert "6 templates deleted" in process.stdout
    assert "gazette" in scrapy("templates", "list", store=built["store"]).stdout
    listed = scrapy("templates", "list", store=store)
    assert listed.returncode == 0 and "gazette" not in listed.stdout and "No sites" in listed.stdout


@pytest.mark.parametrize("action", ["show", "export", "clear"])
def test_unknown_site_exits_1_listing_known_sites(built: dict[str, Path], action: str) -> None:
    process = scrapy("templates", action, "no-such-site", store=built["store"])
    assert process.returncode == 1
    assert "no-such-site" in process.stderr and "gazette, jiangcheng" in process.stderr


def test_corrupt_store_exits_2_and_extract_goes_on(built: dict[str, Path], tmp_path: Path) -> None:
    store = tmp_path / "store"
    store.mkdir()
    (store / "templates.sqlite3").write_bytes(b"this is not an SQLite database, just garbage" * 100)
    process = scrapy("templates", "list", store=store)
    assert process.returncode == 2
    assert "corrupt" in process.stderr and "Traceback" not in process.stderr
    assert scrapy("templates", "show", "gazette", store=store).returncode == 2
    assert scrapy("templates", "build", "--site", "gazette", str(built["en"]), store=store).returncode == 2
    extracted = scrapy("extract", str(built["en"] / "page00.html"), "--method", "fulltext", "--site", "gazette",
                       store=store)
    assert extracted.returncode == 0, extracted.stderr
    (record,) = [json.loads(line) for line in extracted.stdout.splitlines()]
    assert record["template_cleaning"] is None and EN_COPYRIGHT in record["text"]
    assert extracted.stderr.count("Template store unusable") == 1


def test_bad_usage(built: dict[str, Path], tmp_path: Path) -> None:
    store = built["store"]
    for args in ([], ["frobnicate"], ["show"], ["list", "extra"], ["build", str(built["en"])],
                 ["build", "--site", "x"], ["list", "--all"], ["show", "gazette", "--site", "x"],
                 ["build", "--site", "x", str(built["en"]), "--min-frequency", "0"]):
        process = scrapy("templates", *args, store=store)
        lines = process.stderr.strip().splitlines()
        assert process.returncode == 2 and len(lines) == 1 and lines[0].startswith("error: "), (args, process.stderr)
    empty = scrapy("templates", "build", "--site", "x", str(tmp_path / "nothing*.html"), store=store)
    assert empty.returncode == 1 and "no .html" in empty.stderr


def test_show_all_marks_retired_templates_and_drift_events(tmp_path: Path) -> None:
    long_text = "Reprinted with permission; all rights to this article remain with the original publisher."
    store = open_store(tmp_path)
    try:
        store.promote("site", 10, [Candidate("a", "Old home", 10), Candidate("p", long_text, 9)])
        store.retire("site", "match rate 0.1 over the last 10 pages")
        store.promote("site", 10, [Candidate("a", "New home", 8)])
    finally:
        store.close()
    process = scrapy("templates", "show", "site", "--all", store=tmp_path)
    assert process.returncode == 0, process.stderr
    out = process.stdout
    assert "generation 1" in out and "Active templates (1)" in out and "Retired templates (2)" in out
    retired = out.split("Retired templates (2)")[1].splitlines()
    assert retired[1].split()[:2] == ["generation", "retired"] and retired[2].split()[0] == "0"
    assert retired[2].split()[-2:] == ["Old", "home"]
    assert long_text not in out and long_text[:50] in out  # cut to 60 characters
    assert "Drift events (1)" in out and "match rate 0.1 over the last 10 pages" in out
    active_only = scrapy("templates", "show", "site", store=tmp_path).stdout
    assert "Old home" not in active_only and "New home" in active_only
    listed = scrapy("templates", "list", store=tmp_path).stdout.splitlines()[1].split()
    assert listed[:8] == ["site", "1", "1", "2", "20", "2", "1", listed[7]]


def test_iso_time_of_a_value_that_is_no_time_is_the_value() -> None:
    assert iso_time(None) == "-" and iso_time(0) == "1970-01-01T00:00:00+00:00"
    assert iso_time("yesterday") == "yesterday" and iso_time(1e300) == "1e+300"  # type: ignore[arg-type]
