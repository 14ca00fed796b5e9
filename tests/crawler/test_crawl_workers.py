"""Several `scrapy crawl news_sites` workers sharing one crawl through a PostgreSQL crawl state (site leases).

Real workers (subprocesses, plain HTTP) against demo servers of their own on loopback addresses, each serving
two sites, and a throwaway PostgreSQL server (tests/conftest.py). The servers record every request with the
worker that sent it (a header) and its times, so the tests see which worker fetched a site when.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import psycopg
import pytest

from demo.server import DemoServer, Visit
from tests.crawl_helpers import FAST_SETTINGS, REPO, feed_lines, sites_yaml, start_crawl
from tests.crawler.test_crawl_demo import demo_sites

HEADER = "X-Crawl-Worker"
PER_SITE = 2  # CONCURRENT_REQUESTS_PER_DOMAIN of the workers: what one site may see at once
# A worker is killed when the workers' feeds hold this many records together (of 300): early, half-way, near the end.
KILL_AT_EXPORTED = (30, 140, 230)
# Each site waits this long between its requests (its own download slot): a site takes about 10 s, long enough for
# a kill to find its worker in the middle of it.
SITE_DELAY_S = 0.2
# The template test's sites are fetched one page at a time, this long apart: a page's links are scheduled before the
# next page is requested, so every run requests (and learns) a site's pages in one order.
ONE_BY_ONE_DELAY_S = 0.3
DEADLINE_S = 400


def _servers(stack: ExitStack, hosts: list[str]) -> list[DemoServer]:
    # Seeds of their own: every server's articles are other texts (no copies across sites).
    return [stack.enter_context(DemoServer(host, seed=100 + n, record_header=HEADER)) for n, host in enumerate(hosts)]


def _site_list(servers: list[DemoServer], only: str | None = None, **fields: Any) -> list[dict[str, Any]]:
    sites = []
    for n, server in enumerate(servers):
        for site in demo_sites(server.url, render=False):
            lang = str(site["name"]).split("-")[0]
            if only is None or lang == only:
                sites.append({**site, "name": f"{lang}-{n}", **fields})
    return sites


def _site_of(server: DemoServer, path: str) -> str | None:
    for site in server.sites:
        if path.startswith(site.prefix):
            return f"{server.url}{site.prefix}"
    return None


def _start(tmp_path: Path, name: str, run: str, uri: str, sites: Path, **settings: str) -> tuple[
        subprocess.Popen[str], Path]:
    feed = tmp_path / f"{name}-{run}.jsonl"  # the README's -o 'out/%(worker)s-%(time)s.jsonl', %(worker)s filled in
    merged = {**FAST_SETTINGS, "CRAWL_STATE_STORE": uri, "TEMPLATES_STORE": uri, "CRAWL_LEASE_WORKER": name,
              "CRAWL_LEASE_SITES": "1", "CRAWL_LEASE_CHECK": "0.2", "CRAWL_LEASE_POLL": "1", "EXTRACT_WORKERS": "1",
              "CONCURRENT_REQUESTS_PER_DOMAIN": str(PER_SITE), "ARCHIVE_DIR": str(tmp_path / f"archive-{run}"),
              "STATS_FILE": str(tmp_path / f"{run}.stats.json"), "LOG_LEVEL": "INFO",
              "DEFAULT_REQUEST_HEADERS": json.dumps({HEADER: run}), **settings}
    return start_crawl(tmp_path, run, sites, ["-o", str(tmp_path / f"%(worker)s-{run}.jsonl")], merged), feed


def _url(record: dict[str, Any]) -> str:
    """Return the page a record is of (links carry fragments; the fetched URL does not)."""
    return str(record["final_url"] or record["url"]).split("#", 1)[0]


def _query(uri: str, sql: str) -> list[tuple[Any, ...]]:
    with psycopg.connect(uri, autocommit=True, options="-c search_path=crawl_state") as conn:
        return conn.execute(sql).fetchall()


def _overlaps(visits: list[Visit]) -> list[tuple[Visit, Visit]]:
    """Return pairs of requests of different workers to one site that were answered at the same time."""
    ordered = sorted(visits, key=lambda visit: visit.started)
    found = []
    for i, visit in enumerate(ordered):
        for other in ordered[i + 1:]:
            if other.started >= visit.ended:
                break
            if other.client != visit.client:
                found.append((visit, other))
    return found


def _most_at_once(visits: list[Visit]) -> int:
    events = sorted([(visit.started, 1) for visit in visits] + [(visit.ended, -1) for visit in visits])
    level = peak = 0
    for _, step in events:  # an answer that ends as another starts is not counted twice (ends sort first)
        level += step
        peak = max(peak, level)
    return peak


def _stats(tmp_path: Path) -> list[dict[str, Any]]:
    return [json.loads(path.read_text(encoding="utf-8")) for path in sorted(tmp_path.glob("*.stats.json"))]


def _wait(processes: list[subprocess.Popen[str]], deadline: float) -> None:
    for process in processes:
        process.wait(timeout=max(1.0, deadline - time.monotonic()))


@pytest.fixture
def cleanup() -> Iterator[list[subprocess.Popen[str]]]:
    started: list[subprocess.Popen[str]] = []
    yield started
    for process in started:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def test_three_workers_one_killed_three_times_crawl_every_page_once(
        tmp_path: Path, pg_uri: str, cleanup: list[subprocess.Popen[str]]) -> None:
    deadline = time.monotonic() + DEADLINE_S
    with ExitStack() as stack:
        servers = _servers(stack, ["127.0.0.2", "127.0.0.3", "127.0.0.4"])
        sites_file = tmp_path / "sites.yaml"
        sites_file.write_text(sites_yaml(_site_list(servers, delay=SITE_DELAY_S)), encoding="utf-8")
        running: dict[str, tuple[subprocess.Popen[str], Path, str]] = {}

        def start(name: str, tag: str) -> None:
            process, feed = _start(tmp_path, name, tag, pg_uri, sites_file)
            cleanup.append(process)
            running[name] = (process, feed, tag)

        for name in ("w1", "w2", "w3"):  # at once: they never claim a site twice
            start(name, f"{name}-0")
        feeds = [feed for _, feed, _ in running.values()]
        in_flight: set[str] = set()
        for moment, exported in enumerate(KILL_AT_EXPORTED, start=1):
            while sum(len(feed_lines(feed)) for feed in feeds) < exported:
                assert time.monotonic() < deadline, "the crawl exported too little"
                time.sleep(0.05)
            # The worker that exported last is crawling a site now: it is killed (its whole process group: the
            # crawl, its extraction worker) and started again under its name.
            busy = [(feed.stat().st_mtime, name) for name, (process, feed, _) in running.items()
                    if process.poll() is None and feed.exists()]
            assert busy, "no worker was crawling at the kill"
            victim = max(busy)[1]
            process, _, tag = running[victim]
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            done = {url for (url,) in _query(pg_uri, "SELECT url FROM pages WHERE status = 'done'")}
            served = {server.url + visit.path for server in servers for visit in server.visits if visit.client == tag}
            in_flight |= served - done  # fetched by the killed run, not completed in the state
            start(victim, f"{victim}-{moment}")
            feeds.append(running[victim][1])
        _wait([process for process, _, _ in running.values()], deadline)
        for process, _, tag in running.values():
            assert process.returncode == 0, (tmp_path / f"{tag}.log").read_text(encoding="utf-8")[-3000:]

        pages = {server.url + path: page for server in servers for site in server.sites
                 for path, page in site.pages.items()}
        records = [record for feed in feeds for record in feed_lines(feed)]
        exported = [_url(record) for record in records]
        assert set(exported) == set(pages)  # every page of the six sites
        repeats = {url for url, n in Counter(exported).items() if n > 1}
        assert repeats <= in_flight, sorted(repeats - in_flight)  # only pages in flight at a kill went out twice

        rounds = _query(pg_uri, "SELECT s.site, s.round, s.completed, (SELECT COUNT(*) FROM pages p "
                                "WHERE p.site = s.site AND p.status = 'queued') FROM sites s ORDER BY s.site")
        assert [(site, number, completed, queued) for site, number, completed, queued in rounds] == [
            (site, 1, 1, 0) for site in sorted(f"{lang}-{n}" for n in range(3) for lang in ("en", "zh"))]
        assert _query(pg_uri, "SELECT COUNT(*) FROM leases WHERE owner IS NOT NULL") == [(0,)]

        corpus = subprocess.run([sys.executable, "-m", "scrapy", "corpus", *map(str, feeds), "-o",
                                 str(tmp_path / "corpus.jsonl")], cwd=REPO, capture_output=True, text=True,
                                stdin=subprocess.DEVNULL, timeout=300)
        assert corpus.returncode == 0, corpus.stderr[-3000:]
        kept = [_url(record) for record in feed_lines(tmp_path / "corpus.jsonl")]
        # The pages the crawl typed article (the page-type models decide, not the demo's truth), not copies.
        articles = {_url(record) for record in records if record["page_type"] == "article"
                    and record["error"] is None and record["duplicate_of"] is None}
        assert len(articles) > 200  # of the demo's 240
        assert len(kept) == len(set(kept)) and set(kept) == articles  # every article, once

        for server in servers:
            by_site: dict[str, list[Visit]] = defaultdict(list)
            for visit in server.visits:
                site = _site_of(server, visit.path)
                if site is not None and visit.client is not None:
                    by_site[site].append(visit)
            for site, visits in by_site.items():
                assert _overlaps(visits) == [], site  # one worker at a time
                assert _most_at_once(visits) <= PER_SITE, site

    stats = _stats(tmp_path)
    totals = Counter({key: value for run in stats for key, value in run.items() if isinstance(value, int)})
    assert totals["lease/taken_over"] >= 1 and totals["state/resumed"] >= 1
    # The runs that ended (the killed ones wrote no stats) released every site they claimed, and lost none.
    assert totals["lease/claimed"] == totals["lease/released"] and totals["lease/lost"] == 0


def test_two_workers_build_the_template_rows_one_worker_builds(
        tmp_path: Path, pg_uri: str, postgres: Any, cleanup: list[subprocess.Popen[str]]) -> None:
    """Each site's pages are learned from in one place, in the order they come, whoever crawls it. The pages of a
    site come one at a time, a fixed delay apart (longer than it takes to schedule a page's links), so that order
    is the same in both runs: the template library's batches, and its joining of close texts into one template
    ("Comments (3)" and "Comments (4)"), follow it. The site evidence for page types is off: what it knows when a
    page comes depends on timing, and a page's type decides what of its tree the metadata step leaves to the
    learner. (Pages shared out URL by URL among workers would each fill a part of a site's batches.)"""
    deadline = time.monotonic() + DEADLINE_S
    one_uri = postgres.create_database(f"one_{os.getpid()}_{int(time.time())}")
    with ExitStack() as stack:
        servers = _servers(stack, ["127.0.0.5", "127.0.0.6", "127.0.0.7", "127.0.0.8"])
        sites_file = tmp_path / "sites.yaml"
        sites_file.write_text(sites_yaml(_site_list(servers, only="en", delay=ONE_BY_ONE_DELAY_S, concurrency=1)),
                              encoding="utf-8")
        learning = {"RANDOMIZE_DOWNLOAD_DELAY": "False", "CRAWL_LEASE_SITES": "4", "PAGETYPE_SITE_ENABLED": "False"}
        single, _ = _start(tmp_path, "solo", "solo", one_uri, sites_file, **learning)
        cleanup.append(single)
        pair = [_start(tmp_path, name, name, pg_uri, sites_file, **{**learning, "CRAWL_LEASE_SITES": "2"})[0]
                for name in ("a", "b")]
        cleanup += pair
        _wait([single, *pair], deadline)
        assert [p.returncode for p in (single, *pair)] == [0, 0, 0]

    def rows(uri: str) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]], list[tuple[Any, ...]]]:
        with psycopg.connect(uri, autocommit=True, options="-c search_path=templates") as conn:
            templates = conn.execute(
                "SELECT site, generation, tag, text, frequency, batches, share, hits, retired_at IS NULL "
                "FROM templates ORDER BY site, generation, tag, text").fetchall()
            sites = conn.execute("SELECT site, generation, pages, batches, drift_events FROM sites ORDER BY site")
            parked = conn.execute("SELECT site, pages, tags FROM parked ORDER BY site, pages").fetchall()
            return templates, sites.fetchall(), parked

    one, two = rows(one_uri), rows(pg_uri)
    assert len(one[0]) > 40 and {row[0] for row in one[0]} == {f"en-{n}" for n in range(4)}
    assert [batches for *_, batches, _ in one[1]] == [5, 5, 5, 5]  # 50 pages a site, batches of 10
    assert set(one[0]) ^ set(two[0]) == set() and two[1:] == one[1:]
    claims = {path.name.split(".")[0]: json.loads(path.read_text(encoding="utf-8"))["lease/claimed"]
              for path in tmp_path.glob("*.stats.json")}
    assert claims["solo"] == 4 and claims["a"] + claims["b"] == 4 and min(claims["a"], claims["b"]) >= 1


def test_a_worker_whose_database_goes_away_stops_and_the_next_run_resumes(
        tmp_path: Path, pg_uri: str, postgres: Any, cleanup: list[subprocess.Popen[str]]) -> None:
    deadline = time.monotonic() + DEADLINE_S
    with ExitStack() as stack:
        (server,) = _servers(stack, ["127.0.0.9"])
        sites_file = tmp_path / "sites.yaml"
        sites_file.write_text(sites_yaml(_site_list([server], delay=0.1)), encoding="utf-8")
        first, first_feed = _start(tmp_path, "w1", "cut", pg_uri, sites_file, CRAWL_LEASE_SITES="2")
        cleanup.append(first)
        while first.poll() is None and len(feed_lines(first_feed)) < 10:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        assert postgres.terminate(pg_uri.rsplit("/", 1)[1]) >= 2  # the server ends every session: a restart, to it
        first.wait(timeout=120)
        log = (tmp_path / "cut.log").read_text(encoding="utf-8")
        assert first.returncode == 1, log[-3000:]
        assert "Crawl state lost, this worker stops" in log and "crawl state database could not be used" in log
        (stats,) = _stats(tmp_path)
        assert stats["finish_reason"] == "crawl_state_lost" and stats["state/error/connection"] >= 1

        second, second_feed = _start(tmp_path, "w1", "again", pg_uri, sites_file, CRAWL_LEASE_SITES="2")
        cleanup.append(second)
        second.wait(timeout=max(1.0, deadline - time.monotonic()))
        assert second.returncode == 0, (tmp_path / "again.log").read_text(encoding="utf-8")[-3000:]
        pages = {server.url + path for site in server.sites for path in site.pages}
        exported = [_url(record) for feed in (first_feed, second_feed) for record in feed_lines(feed)]
        assert set(exported) == pages
        assert _query(pg_uri, "SELECT COUNT(*) FROM pages WHERE status = 'queued'") == [(0,)]
        assert _query(pg_uri, "SELECT COUNT(*) FROM sites WHERE completed = round") == [(2,)]
