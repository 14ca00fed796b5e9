"""Grouped train / held-out splits (evaluation.folds): synthetic pages, then the real datasets."""

from __future__ import annotations

import gzip
from collections import Counter
from functools import cache
from pathlib import Path

import pytest

from crawler.urls import linked_site, registered_domain
from evaluation.datasets import Page, datasets_dir, iter_pages
from evaluation.folds import (
    FOLDS,
    HELD_OUT_FOLD,
    TRAIN_DATASETS,
    data_hash,
    fold_of,
    group_domain,
    held_out,
    held_out_pages,
    site_of,
    training_pages,
)

# Groups hashed to check that folds are used about evenly.
SPREAD_GROUPS = 5000
# Each fold should get 20% +- 2 points of them (the binomial sd is 0.6 points).
SPREAD_TOLERANCE = 0.02
# The held-out share of CleanEval's final split, pages (about 1/FOLDS, site groups vary in size).
CLEANEVAL_FINAL_HELD_OUT = (0.15, 0.25)
# Pages of Dragnet's test split, L3S-GN1 and MSV (all held out).
EVAL_COUNTS = {"dragnet": 415, "l3s-gn1": 621, "msv-big5": 720}


def make_page(
    tmp_path: Path,
    page_id: str = "p1",
    dataset: str = "wcxb-dev",
    html: bytes = b"<p>x</p>",
    gold: str | None = "x",
    url: str | None = None,
    site: str | None = None,
) -> Page:
    """Return a Page whose gzip-compressed HTML is written under ``tmp_path``."""
    path = tmp_path / f"{dataset}-{page_id.replace('/', '_')}.html.gz"
    path.write_bytes(gzip.compress(html))
    return Page(dataset=dataset, page_id=page_id, html_path=path, url=url, gold_text=gold, site=site)


# --- synthetic --------------------------------------------------------------------------------


def test_registered_domain() -> None:
    assert registered_domain("news.bbc.co.uk") == "bbc.co.uk"
    assert registered_domain("www.nytimes.com") == "nytimes.com"
    assert registered_domain("sport.guardian.co.uk") == "guardian.co.uk"
    assert registered_domain("abc.net.au") == "abc.net.au"
    assert registered_domain("cn.news.yahoo.com") == "yahoo.com"
    assert registered_domain("finance.sina.com.cn") == "sina.com.cn"
    assert registered_domain("Example.ORG.") == "example.org"
    assert registered_domain("10.0.0.1") == "10.0.0.1"
    assert registered_domain("bbc") == "bbc"


def test_group_domain_is_the_frozen_heuristic_of_the_split() -> None:
    # The folds keep the grouping the shipped models were trained with (evaluation/folds.py, group_domain), where the
    # crawl now reads the Public Suffix List: one group for every blogspot.com host, two for the list.
    assert group_domain("aseigo.blogspot.com") == group_domain("oddoaks.blogspot.com") == "blogspot.com"
    assert registered_domain("aseigo.blogspot.com") == "aseigo.blogspot.com"
    assert group_domain("news.bbc.co.uk") == registered_domain("news.bbc.co.uk") == "bbc.co.uk"
    assert site_of(Page(dataset="dragnet", page_id="x", html_path=Path("/nonexistent"), url=None, gold_text=None,
                        site="googlenewsblog.blogspot.com")) == "blogspot.com"


def test_fold_of_is_stable_and_in_range() -> None:
    # Pinned: sha256-based, the same in every process and on every machine.
    assert fold_of("bbc.co.uk") == 1
    assert fold_of("nytimes.com") == 4
    assert fold_of("yahoo.com") == 2
    assert fold_of("bbc.co.uk", 3) == 2
    assert {fold_of(f"site{i}.com") for i in range(100)} == set(range(FOLDS))


def test_folds_are_used_evenly() -> None:
    counts = Counter(fold_of(f"group-{i}") for i in range(SPREAD_GROUPS))
    for fold in range(FOLDS):
        assert abs(counts[fold] / SPREAD_GROUPS - 1 / FOLDS) <= SPREAD_TOLERANCE


def test_linked_site_skips_generic_hosts_and_breaks_ties_alphabetically() -> None:
    html = b'<a href="http://www.w3.org/TR/x">w3</a><a href="http://cn.news.yahoo.com/a">a</a>'
    html += b'<img src="https://cn.yimg.com/i.png"><a href="http://CN.Biz.Yahoo.com/b">b</a>'
    assert linked_site(html) == "yahoo.com"
    assert linked_site(b'<a href="http://b.org/">b</a><a href="http://a.org/">a</a>') == "a.org"
    assert linked_site(b'<a href="/relative">r</a><a href="https://beian.miit.gov.cn/">icp</a>') is None


def test_site_of_fallbacks(tmp_path: Path) -> None:
    assert site_of(make_page(tmp_path, site="news.bbc.co.uk", url="http://other.org/")) == "bbc.co.uk"
    assert site_of(make_page(tmp_path, url="https://www.example.com/a")) == "example.com"
    linked = make_page(tmp_path, html=b'<a href="http://www.people.com.cn/n/1">x</a>')
    assert site_of(linked) == "people.com.cn"
    assert site_of(make_page(tmp_path, page_id="final/7", dataset="cleaneval")) == "cleaneval:final/7"


def test_held_out_follows_the_group_fold(tmp_path: Path) -> None:
    held = next(f"s{i}.com" for i in range(100) if fold_of(f"s{i}.com") == HELD_OUT_FOLD)
    kept = next(f"s{i}.com" for i in range(100) if fold_of(f"s{i}.com") != HELD_OUT_FOLD)
    assert held_out(make_page(tmp_path, site=held))
    assert not held_out(make_page(tmp_path, site=kept))
    # Same site in another training set: same decision.
    assert held_out(make_page(tmp_path, site=held, dataset="cleaneval"))
    # Eval-only sets are held out whatever the site.
    assert held_out(make_page(tmp_path, site=kept, dataset="l3s-gn1"))


def test_data_hash_ignores_order_and_sees_changes(tmp_path: Path) -> None:
    a = make_page(tmp_path, page_id="a", html=b"<p>a</p>")
    b = make_page(tmp_path, page_id="b", html=b"<p>b</p>")
    digest = data_hash([a, b])
    assert len(digest) == 64
    assert data_hash([b, a]) == digest
    assert data_hash([a]) != digest
    regold = Page(dataset=b.dataset, page_id="b", html_path=b.html_path, url=None, gold_text="other")
    assert data_hash([a, regold]) != digest
    b.html_path.write_bytes(gzip.compress(b"<p>changed</p>"))
    assert data_hash([a, b]) != digest


def test_training_pages_refuses_eval_only_sets() -> None:
    with pytest.raises(ValueError, match="may not train"):
        next(training_pages(["dragnet"]))


# --- real datasets ----------------------------------------------------------------------------


def _require(*names: str) -> None:
    root = datasets_dir()
    for name in names:
        if not (root / name).is_dir():
            pytest.skip(f"dataset folder {root / name} is absent (set DATASETS_DIR)")


@cache
def _training() -> tuple[Page, ...]:
    _require(*TRAIN_DATASETS)
    return tuple(training_pages())


@pytest.mark.datasets
def test_training_pages_have_gold_and_are_not_held_out() -> None:
    pages = _training()
    assert pages
    assert all(page.gold_text for page in pages)
    assert not any(held_out(page) for page in pages)
    assert {page.dataset for page in pages} == set(TRAIN_DATASETS)
    assert {page.split for page in pages if page.dataset == "cleaneval"} == {"dev", "final"}


@pytest.mark.datasets
def test_no_group_in_both_training_and_held_out() -> None:
    train_groups = {site_of(page) for page in _training()}
    held_groups = {site_of(page) for name in TRAIN_DATASETS for page in held_out_pages(name)}
    assert held_groups
    assert not train_groups & held_groups


@pytest.mark.datasets
def test_cleaneval_final_held_out_share() -> None:
    _require("cleaneval")
    final = list(iter_pages("cleaneval", split="final"))
    held = list(held_out_pages("cleaneval"))
    assert {page.split for page in held} == {"final"}
    low, high = CLEANEVAL_FINAL_HELD_OUT
    assert low <= len(held) / len(final) <= high


@pytest.mark.datasets
@pytest.mark.parametrize("name", sorted(EVAL_COUNTS))
def test_eval_only_sets_are_held_out_entirely(name: str) -> None:
    _require(name)
    assert sum(1 for _ in held_out_pages(name)) == EVAL_COUNTS[name]


@pytest.mark.datasets
def test_exclude_groups_drops_those_sites() -> None:
    _require("cleaneval")
    pages = list(training_pages(["cleaneval"]))
    group = Counter(site_of(page) for page in pages).most_common(1)[0][0]
    kept = list(training_pages(["cleaneval"], exclude_groups={group}))
    assert len(kept) < len(pages)
    assert all(site_of(page) != group for page in kept)
