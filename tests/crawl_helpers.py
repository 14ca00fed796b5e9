"""Runs real crawls (`scrapy crawl news_sites` in a subprocess) for the crawl tests.

A subprocess per crawl: Twisted's reactor cannot be restarted inside one test process,
and the subprocess exercises exactly what a user runs.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from scrapy import signals
from scrapy.crawler import Crawler

from crawler.render import chromium_path
from extraction.record import schema
from extraction.warc import Capture, read_capture

REPO = Path(__file__).resolve().parent.parent
WARCIO = str(Path(sys.executable).parent / "warcio")  # warcio's own command (check, index, extract)
CHROMIUM = chromium_path()

needs_chromium = pytest.mark.skipif(
    shutil.which(CHROMIUM) is None and not Path(CHROMIUM).exists(),
    reason=f"Chromium not installed at {CHROMIUM} (make setup installs Debian's chromium)",
)

# Settings for test crawls: no politeness delays against our own loopback server, no
# retries (each bad case must show its own failure once), short timeouts.
FAST_SETTINGS = {
    "AUTOTHROTTLE_ENABLED": "False",
    "RETRY_ENABLED": "False",
    "LOG_LEVEL": "INFO",
}

# A timeout a slow page is sure to pass, and such a page: the extraction workers' pool (pebble) looks at its running
# pages every 0.1 s, so a page that finishes within that may beat any smaller timeout (CI's fast cores extracted the
# tests' one-paragraph pages before a 1 ms timeout was looked at). The slow page takes about 4 s on the 2-core dev
# machine, over ten times SLOW_PAGE_TIMEOUT and the pool's look on a machine several times faster.
SLOW_PAGE_TIMEOUT = 0.1


def slow_page(blocks: int = 40_000) -> bytes:
    """Return a page of ``blocks`` paragraphs, each with a link (4.5 MB): its extraction takes seconds."""
    body = "".join(f"<div><p>Sentence {n} of a long article, with words enough to be text.</p>"
                   f"<a href='/x{n}'>link {n}</a></div>" for n in range(blocks))
    return f"<html><head><title>T</title></head><body>{body}</body></html>".encode()


@dataclass
class CrawlResult:
    items: list[dict[str, Any]]
    stats: dict[str, Any]
    log: str
    returncode: int
    archive: Path


def sites_yaml(sites: list[dict[str, Any]]) -> str:
    """Return a site-list YAML text (JSON is valid YAML) for ``sites``."""
    return json.dumps({"sites": sites}, ensure_ascii=False, indent=1)


def run_crawl(
    tmp_path: Path, sites: list[dict[str, Any]] | None, settings: dict[str, str] | None = None,
    timeout: float = 600, name: str = "crawl", spider_args: dict[str, str] | None = None,
) -> CrawlResult:
    """Run `scrapy crawl news_sites` over ``sites`` (None: the default demo file), with ``-a`` ``spider_args``."""
    work = tmp_path / name
    work.mkdir(parents=True, exist_ok=True)
    feed, stats_file, archive = work / "items.jsonl", work / "stats.json", work / "archive"
    command = [sys.executable, "-m", "scrapy", "crawl", "news_sites", "-O", str(feed)]
    if sites is not None:
        sites_file = work / "sites.yaml"
        sites_file.write_text(sites_yaml(sites), encoding="utf-8")
        command += ["-a", f"sites={sites_file}"]
    for key, value in (spider_args or {}).items():
        command += ["-a", f"{key}={value}"]
    merged = {**FAST_SETTINGS, "STATS_FILE": str(stats_file), "ARCHIVE_DIR": str(archive),
              "TEMPLATES_STORE": str(work / "templates_db"), **(settings or {})}
    for key, value in merged.items():
        command += ["-s", f"{key}={value}"]
    with subprocess.Popen(command, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          stdin=subprocess.DEVNULL, start_new_session=True) as process:
        try:
            log, _ = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)  # the crawl and its browser
            log, _ = process.communicate()
            raise AssertionError(f"crawl did not finish in {timeout} s:\n{log[-5000:]}") from None
    items = []
    if feed.exists():
        items = [json.loads(line) for line in feed.read_text(encoding="utf-8").split("\n") if line.strip()]
        for item in items:  # every record of every test crawl has the documented schema
            jsonschema.validate(item, schema())
    stats = json.loads(stats_file.read_text(encoding="utf-8")) if stats_file.exists() else {}
    return CrawlResult(items, stats, log, process.returncode, archive)


def capture(item: dict[str, Any]) -> Capture:
    """Return the WARC capture a crawl record names (``warc_file``, ``warc_offset``)."""
    found = read_capture(item["warc_file"], item["warc_offset"])
    assert found is not None, (item["warc_file"], item["warc_offset"])
    return found


def screenshot(item: dict[str, Any]) -> bytes | None:
    """Return the screenshot of a crawl record, from the WARC archive (or ARCHIVE_FORMAT files)."""
    if item.get("screenshot_file"):
        return Path(item["screenshot_file"]).read_bytes()
    return capture(item).screenshot if item.get("warc_file") else None


class KillBrowserAfterItems:
    """Test-only extension: SIGKILLs the Chromium browser process after N scraped items.

    Simulates a browser crash in the middle of a crawl (KILL_BROWSER_AFTER_ITEMS).
    """

    def __init__(self, after: int) -> None:
        self.after = after
        self.seen = 0

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> KillBrowserAfterItems:
        extension = cls(crawler.settings.getint("KILL_BROWSER_AFTER_ITEMS", 5))
        crawler.signals.connect(extension.item_scraped, signal=signals.item_scraped)
        return extension

    def item_scraped(self) -> None:
        self.seen += 1
        if self.seen == self.after:
            for pid in _browser_pids(os.getpid()):
                os.kill(pid, signal.SIGKILL)


def _browser_pids(ancestor: int) -> list[int]:
    """Chromium main processes (no --type=) descending from ``ancestor``."""
    parents: dict[int, int] = {}
    commands: dict[int, str] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            commands[int(entry.name)] = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        parents[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])

    def descends(pid: int) -> bool:
        while pid > 1:
            pid = parents.get(pid, 0)
            if pid == ancestor:
                return True
        return False

    return [pid for pid, cmd in commands.items()
            if "chrom" in cmd.split(" ")[0] and "--type=" not in cmd and descends(pid)]


def start_crawl(tmp_path: Path, log_name: str, sites: Path, feed_args: list[str],
                settings: dict[str, str]) -> subprocess.Popen[str]:
    """Start ``scrapy crawl news_sites`` on ``sites`` in its own process group (so a test can kill all of it: crawl,
    extraction workers, browser), its output in ``tmp_path/<log_name>.log``."""
    command = [sys.executable, "-m", "scrapy", "crawl", "news_sites", "-a", f"sites={sites}", *feed_args]
    for key, value in settings.items():
        command += ["-s", f"{key}={value}"]
    log = (tmp_path / f"{log_name}.log").open("w")
    return subprocess.Popen(command, cwd=REPO, stdout=log, stderr=subprocess.STDOUT, text=True,
                            stdin=subprocess.DEVNULL, start_new_session=True)


def feed_lines(feed: Path) -> list[dict[str, Any]]:
    """Return a feed's records so far ([] before it exists). A line cut by a kill would fail to parse here: feeds
    are written one whole line at a time."""
    if not feed.exists():
        return []
    return [json.loads(line) for line in feed.read_text(encoding="utf-8").split("\n") if line.strip()]
