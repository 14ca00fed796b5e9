"""The page flow in worker processes: same records as in-process, one worker per site, bounded pages."""

from __future__ import annotations

import logging
import os
import pickle
import subprocess
import sys
import textwrap
import time
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import pytest
from scrapy.utils.test import get_crawler

from demo import build_sites
from extraction.page import Page
from extraction.process import Context, process
from extraction.record import Record
from extraction.warc import read_capture
from extraction.workers import GC_THRESHOLDS, Outcome, PagePool, WorkersConfig, usable_cpus
from pipelines.process import ProcessPipeline, worker_handler, worker_settings
from tests.crawl_helpers import REPO

DEMO = "http://demo.test"
SLOW = "http://slow.test/"
CRASH = "http://crash.test/"


def _demo_pages(limit: int = 6) -> list[Page]:
    pages = [p for s in build_sites() for p in s.pages.values() if p.layout != "js-rendered"][:limit]
    return [Page(p.body_bytes, DEMO + p.path, site=p.site) for p in pages]


def _wait(futures: list[Future[Outcome]], timeout: float = 120.0) -> list[Outcome]:
    return [future.result(timeout=timeout) for future in futures]


class _Misbehaving:
    """A handler that hangs on SLOW, dies on CRASH, logs a warning and records its pid otherwise."""

    def __init__(self, count: Any) -> None:
        self.count = count

    def __call__(self, page: Page, record: Record) -> Record:
        if page.url == SLOW:
            time.sleep(600)
        if page.url == CRASH:
            os._exit(3)
        self.count("test/pages", 1)
        logging.getLogger("tests.worker").warning("worked on %s", page.url)
        record.flags.append(f"pid:{os.getpid()}")
        record.text = page.text
        return record


def misbehaving(count: Any) -> _Misbehaving:
    return _Misbehaving(count)


def test_config_defaults_and_checks() -> None:
    config = WorkersConfig.from_settings({})
    assert config.workers == -1 and config.processes == usable_cpus() >= 1
    assert WorkersConfig.from_settings({"EXTRACT_WORKERS": "0"}).processes == 0
    for bad in ({"EXTRACT_WORKERS": -2}, {"EXTRACT_TIMEOUT": 0}, {"EXTRACT_MAX_PAGES_PER_WORKER": -1}):
        with pytest.raises(ValueError, match=next(iter(bad))):
            WorkersConfig.from_settings(bad)


def test_a_page_travels_without_its_tree_and_keeps_its_decoding() -> None:
    text = "<html><body><p>记者周一从市统计局了解到，本市经济运行总体平稳，居民消费价格温和上涨。</p></body></html>"
    page = Page(text.encode("gbk"), "http://a.test/", site="a")
    assert page.tree is not None and page.decoded.encoding == "gb18030" and page.text == text
    copy = pickle.loads(pickle.dumps(page))
    assert "tree" not in copy.__dict__ and copy.__dict__["decoded"] == page.decoded
    assert copy.text == page.text and copy.site == "a" and copy.tree is not None


def test_records_from_workers_equal_the_flow_in_process(tmp_path: Path) -> None:
    settings = {"TEMPLATES_ENABLED": False, "ARCHIVE_ENABLED": False}
    pool = PagePool(WorkersConfig(workers=2), worker_handler, (worker_settings(settings),))
    try:
        pages = _demo_pages()
        outcomes = _wait([pool.submit(page, Record(url=page.url, site=page.site)) for page in pages])
    finally:
        pool.close()
    context = Context.from_settings(settings)
    for page, outcome in zip(_demo_pages(), outcomes, strict=True):
        expected = process(page, context, Record(url=page.url, site=page.site))
        assert outcome.record.as_dict() == expected.as_dict(), page.url
        counts = dict(outcome.counts)
        assert counts[f"extract/{expected.extraction_method}"] == 1 and counts[f"pagetype/{expected.page_type}"] == 1


def test_one_worker_per_site_stats_and_logs_come_back() -> None:
    pool = PagePool(WorkersConfig(workers=2), misbehaving, log_level=logging.INFO)
    try:
        pages = [Page(b"<p>x</p>", f"http://{site}.test/{i}", site=site) for i in range(6) for site in "abcd"]
        outcomes = _wait([pool.submit(page, Record(url=page.url)) for page in pages])
    finally:
        pool.close()
    pids: dict[str, set[str]] = {}
    for page, outcome in zip(pages, outcomes, strict=True):
        assert page.site is not None
        pids.setdefault(page.site, set()).update(flag for flag in outcome.record.flags if flag.startswith("pid:"))
        assert outcome.counts == [("test/pages", 1)]
        assert outcome.logs == [("tests.worker", logging.WARNING, f"worked on {page.url}")]
    assert all(len(found) == 1 for found in pids.values()), pids  # a site's pages: one worker
    assert len(set().union(*pids.values())) == 2  # the sites spread over both workers


def test_a_hung_page_and_a_dying_worker_fail_alone() -> None:
    pool = PagePool(WorkersConfig(workers=1, timeout=2.0), misbehaving)
    try:
        futures = [pool.submit(Page(b"<p>x</p>", url, site="s"), Record(url=url))
                   for url in (SLOW, "http://ok.test/1", CRASH, "http://ok.test/2")]
        slow, first, crash, second = futures
        from concurrent.futures import TimeoutError as FutureTimeout

        from pebble import ProcessExpired

        with pytest.raises(FutureTimeout):
            slow.result(timeout=60)
        with pytest.raises(ProcessExpired):
            crash.result(timeout=60)
        assert first.result(timeout=60).record.text == second.result(timeout=60).record.text == "<p>x</p>"
    finally:
        pool.stop()


def test_workers_are_replaced_after_their_page_budget() -> None:
    pool = PagePool(WorkersConfig(workers=1, max_pages_per_worker=2), misbehaving)
    try:
        outcomes = _wait([pool.submit(Page(b"<p>x</p>", f"http://a.test/{i}", site="a"), Record())
                          for i in range(6)])
    finally:
        pool.close()
    pids = [next(flag for flag in outcome.record.flags if flag.startswith("pid:")) for outcome in outcomes]
    assert len(set(pids)) == 3 and pids[0] == pids[1] != pids[2] == pids[3]


def _body(record: Record) -> bytes:
    """Return the page body a record's WARC capture holds."""
    assert record.warc_file is not None and record.warc_offset is not None
    capture = read_capture(record.warc_file, record.warc_offset)
    assert capture is not None
    return capture.body


def _pipeline(tmp_path: Path, **settings: Any) -> tuple[ProcessPipeline, Any]:
    crawler = get_crawler(settings_dict={"TEMPLATES_ENABLED": False, "ARCHIVE_DIR": str(tmp_path), **settings})
    assert crawler.stats is not None
    crawler.stats.open_spider()
    return ProcessPipeline.from_crawler(crawler), crawler.stats


async def _through(pipeline: ProcessPipeline, item: Record) -> Record:
    result = pipeline.process_item(item)
    return result if isinstance(result, Record) else await result


def test_pipeline_with_workers_fills_items_like_the_thread_does(tmp_path: Path) -> None:
    import asyncio

    threaded, threaded_stats = _pipeline(tmp_path / "a", EXTRACT_WORKERS=0)
    pooled, pooled_stats = _pipeline(tmp_path / "b", EXTRACT_WORKERS=2)
    assert threaded.pool is None and pooled.pool is not None
    try:
        for page in _demo_pages(4):
            one = Record(url=page.url, site=page.site, page=page)
            two = Record(url=page.url, site=page.site, page=Page(page.body, page.url, site=page.site))
            one, two = asyncio.run(_through(threaded, one)), asyncio.run(_through(pooled, two))
            # Each process writes WARC files of its own: the same capture, in two files.
            assert one.warc_file and two.warc_file and one.warc_file != two.warc_file
            assert _body(one) == _body(two) == page.body
            where = {"warc_file": None, "warc_offset": None, "warc_length": None}
            assert {**one.as_dict(), **where} == {**two.as_dict(), **where}
            assert one.page is None and two.page is None
    finally:
        pooled.close_pool()
    same = ("extract/stack", "pagetype/article", "pagetype/list", "archive/warc/captures", "blocks/kept")
    assert {k: threaded_stats.get_value(k) for k in same} == {k: pooled_stats.get_value(k) for k in same}


def test_pipeline_keeps_a_page_whose_worker_died(tmp_path: Path) -> None:
    import asyncio

    pipeline, stats = _pipeline(tmp_path, EXTRACT_WORKERS=1)
    assert pipeline.pool is not None
    pipeline.pool.stop()  # no worker left: every page fails, and is archived by the crawl itself
    item = asyncio.run(_through(pipeline, Record(url="http://a.test/", page=Page(b"<p>kept</p>", "http://a.test/"))))
    assert item.error == "extract_failed" and _body(item) == b"<p>kept</p>"
    assert stats.get_value("extract/error/failed") == 1


IMPORTED_IN = os.getpid()  # the process that imported this module: a fork server's when it preloaded it


class _Origin:
    def __init__(self, count: Any) -> None:
        pass

    def __call__(self, page: Page, record: Record) -> Record:
        record.flags.append(f"preloaded:{os.getpid() != IMPORTED_IN}")
        return record


def origin(count: Any) -> _Origin:
    return _Origin(count)


def test_warm_up_preloads_the_factory_module_in_the_fork_server() -> None:
    # In a fresh process, so that warm_up starts the fork server (this one may have started it already).
    code = textwrap.dedent("""
        from extraction.page import Page
        from extraction.record import Record
        from extraction.workers import PagePool, WorkersConfig, warm_up
        from tests.extraction.test_workers import origin
        warm_up(origin)  # what the crawl command does before Scrapy starts
        from multiprocessing import forkserver
        assert forkserver._forkserver._forkserver_pid is not None  # running before any pool
        pool = PagePool(WorkersConfig(workers=1), origin)
        pool.start()
        print(pool.submit(Page(b"<p>x</p>", "http://a.test/"), Record()).result(timeout=60).record.flags)
        pool.close()
    """)
    result = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip() == "['preloaded:True']"


class _GCReport:
    def __init__(self, count: Any) -> None:
        pass

    def __call__(self, page: Page, record: Record) -> Record:
        import gc

        record.flags += [f"thresholds:{gc.get_threshold()}", f"frozen:{gc.get_freeze_count() > 0}"]
        return record


def gc_report(count: Any) -> _GCReport:
    return _GCReport(count)


def test_workers_leave_what_they_start_with_out_of_the_collector() -> None:
    pool = PagePool(WorkersConfig(workers=1), gc_report)
    try:
        record = pool.submit(Page(b"<p>x</p>", "http://a.test/"), Record()).result(timeout=60).record
    finally:
        pool.close()
    assert record.flags == [f"thresholds:{GC_THRESHOLDS}", "frozen:True"]


def broken(count: Any) -> Any:
    raise OSError("no such model folder: /nowhere")


def test_a_worker_that_cannot_start_says_why() -> None:
    pool = PagePool(WorkersConfig(workers=1), broken)
    with pytest.raises(RuntimeError, match="worker failed to start: OSError: no such model folder"):
        pool.start()
    pool = PagePool(WorkersConfig(workers=1), broken)
    try:
        with pytest.raises(RuntimeError, match="could not start: OSError: no such model folder"):
            pool.submit(Page(b"<p>x</p>", "http://a.test/"), Record()).result(timeout=60)
    finally:
        pool.stop()
