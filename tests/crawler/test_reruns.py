"""A corpus builder's day as the README tells it, where nothing may be lost: the demo twice, then their own site
list on the same pages, run again as a scheduled crawl; the corpus of each. Plain HTTP (RENDER_ENABLED off):
what is tested is where each crawl's records, state and files go, which rendering does not change."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

from demo.server import DemoServer
from tests.crawl_helpers import FAST_SETTINGS, REPO

PLAIN = {**FAST_SETTINGS, "RENDER_ENABLED": "False", "LOG_LEVEL": "NOTICE"}


def crawl(cwd: Path, *arguments: str, env: dict[str, str] | None = None,
          settings: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run ``scrapy crawl news_sites`` from ``cwd`` (the project named by its settings module, as newscorpus does)."""
    command = [sys.executable, "-m", "scrapy", "crawl", "news_sites", *arguments]
    for key, value in {**PLAIN, "TEMPLATES_STORE": str(cwd / "templates"), **(settings or {})}.items():
        command += ["-s", f"{key}={value}"]
    environment = {**os.environ, "SCRAPY_SETTINGS_MODULE": "crawler.settings", "PYTHONPATH": str(REPO),
                   **(env or {})}
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=600,
                          env=environment)


def corpus(cwd: Path, *arguments: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "scrapy", "corpus", *arguments], cwd=REPO, capture_output=True,
                          text=True, stdin=subprocess.DEVNULL, timeout=300)


def records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def test_a_second_demo_crawl_gets_its_whole_corpus(tmp_path: Path) -> None:
    """The demo's server is on a new port each run: each run keeps a state of its own (in its folder, named like
    its feed), so the second run's pages are no duplicates of the first run's."""
    feeds = []
    for run in range(2):
        done = crawl(tmp_path)
        assert done.returncode == 0, done.stderr[-3000:]
        new = sorted(set((tmp_path / "output").glob("news_sites-*.jsonl")) - set(feeds))
        assert len(new) == 1, new
        feeds.append(new[0])
        folder = new[0].with_suffix("")
        assert (folder / "state").is_dir() and list((folder / "warc").glob("*.warc.gz")), sorted(folder.rglob("*"))
        assert new[0].with_name(folder.name + ".report.html").is_file()
        # Quiet by default: the demo's address, the progress line at most, the summary; no settings or stats dumps.
        lines = done.stderr.strip().splitlines()
        assert len(lines) <= 6, done.stderr
        assert "Crawled 100 pages" in done.stderr and "Overridden settings" not in done.stderr
        kept = corpus(tmp_path, str(new[0]), "-o", str(tmp_path / f"corpus-{run}.jsonl"))
        assert kept.returncode == 0, kept.stderr
        assert "Kept 80 of 100 records; left out: other page types 20." in kept.stderr, kept.stderr
    assert not (REPO / "sites" / "demo.state").exists()


def test_a_users_crawl_of_the_demo_pages_run_twice_keeps_everything(tmp_path: Path) -> None:
    """The README's re-run command twice keeps every record of the first run; a crawl of the bundled list before it
    (the same pages, the same template store) is no other crawl's duplicate source; -O over an earlier run's records
    is refused. The user's list has no feeds or sitemaps: the ones its pages link to are read for their entries, not
    exported as pages."""
    with DemoServer() as server:
        env = {"DEMO_URL": server.url}
        demo = crawl(tmp_path, env=env)
        assert demo.returncode == 0, demo.stderr[-3000:]
        assert (tmp_path / "output" / "demo.state").is_dir()  # the bundled list's state, under output/

        listed = yaml.safe_load((REPO / "sites" / "demo.yaml").read_text(encoding="utf-8"))
        for site in listed["sites"]:
            site.pop("feeds")
            site.pop("sitemaps")
        (tmp_path / "my-sites.yaml").write_text(yaml.safe_dump(listed), encoding="utf-8")
        command = ("-a", "sites=my-sites.yaml", "-o", "corpus/%(time)s.jsonl")
        first = crawl(tmp_path, *command, env=env, settings={"STATS_FILE": str(tmp_path / "first.json")})
        assert first.returncode == 0, first.stderr[-3000:]
        (feed,) = sorted((tmp_path / "corpus").glob("*.jsonl"))
        exported = records(feed)
        assert len(exported) == 100 and not [r for r in exported if r["error"]], [r["url"] for r in exported
                                                                                    if r["error"]]
        stats = json.loads((tmp_path / "first.json").read_text(encoding="utf-8"))
        assert stats["crawl/discovered/feed"] >= 1 and stats["crawl/discovered/sitemap"] >= 1
        assert (tmp_path / "my-sites.state").is_dir()
        before = feed.read_bytes()

        again = crawl(tmp_path, *command, "-L", "INFO", env=env)
        assert again.returncode == 0, again.stderr[-3000:]
        assert "Dumping Scrapy stats" in again.stderr  # -L INFO brings Scrapy's lines back
        assert feed.read_bytes() == before  # the first run's records, all of them
        assert "known pages were not fetched again" in again.stderr

        refused = crawl(tmp_path, "-a", "sites=my-sites.yaml", "-O", str(feed), env=env)
        assert refused.returncode == 2
        assert refused.stderr.strip().startswith("error: -O") and len(refused.stderr.strip().splitlines()) == 1
        assert feed.read_bytes() == before

    kept = corpus(tmp_path, str(tmp_path / "corpus"), "-o", str(tmp_path / "articles.jsonl"))
    assert kept.returncode == 0, kept.stderr
    assert kept.stderr.startswith("Kept 80 of 100 records"), kept.stderr
    assert len(records(tmp_path / "articles.jsonl")) == 80
