"""Several workers on one PostgreSQL crawl state, beside one worker on SQLite: throughput and coordination cost.

``python -m bench.distributed_bench [--repeat 2] [--rendered-pages 15] [--out-dir bench/results]``
(``make bench-distributed``). Three demo servers on loopback addresses of their own (six sites, 300 pages,
seeds of their own so no text repeats across sites) and a throwaway PostgreSQL server
(``templates_db/pgcluster.py``, durable: fsync on, as a real server) serve every run. The configurations, plain
HTTP and rendered (``--rendered-pages`` pages per site, so a rendered run takes about a minute):

- ``sqlite-1``: one worker, the SQLite crawl state and template store (the one-machine default);
- ``pg-1``, ``pg-2``, ``pg-3``: one, two, three workers started together on a fresh database, each claiming
  6 / N sites at once (``CRAWL_LEASE_SITES``), so the sites crawled at once are the same in every run.

Runs are interleaved (every configuration once, then again), so the shared machine's load falls on all alike.
Per run: pages = the records of all workers; pages/s = pages / (the last worker's finish - the first one's start,
from their stats files); the crawl-state operations' time a page (``state/ms``: what the state costs the crawl's
thread, either backend) and, on PostgreSQL, the statements sent a page (``state/db/round_trips``) and the time
spent waiting for them (``state/db/ms``). On a 2-core machine more workers cannot add CPU: what the table shows is
the overhead of the leases and of a server round trip per statement, not the speed-up of added machines.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import shlex
import signal
import statistics
import subprocess
import sys
import tempfile
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from demo.server import DemoServer
from templates_db.pgcluster import Cluster

REPO = Path(__file__).resolve().parent.parent
HOSTS = ("127.0.0.2", "127.0.0.3", "127.0.0.4")
SITES = 6  # two per demo server
TIMEOUT_S = 900


@dataclass(frozen=True)
class Config:
    """One benchmarked configuration."""

    name: str
    backend: str  # sqlite | postgresql
    workers: int
    render: bool


def configurations() -> list[Config]:
    """Return the configurations, plain then rendered."""
    return [Config(f"{backend}-{n}", backend, n, render) for render in (False, True)
            for backend, n in (("sqlite", 1), ("pg", 1), ("pg", 2), ("pg", 3))]


def site_list(servers: list[DemoServer], render: bool, max_pages: int | None) -> str:
    """Return the site list (JSON, valid YAML) of the demo servers' sites."""
    sites = []
    for n, server in enumerate(servers):
        for prefix, feed in (("en", "feed.xml"), ("zh", "atom.xml")):
            base = f"{server.url}/{prefix}/"
            site: dict[str, Any] = {"name": f"{prefix}-{n}", "start_urls": [base], "allowed_prefixes": [base],
                                    "feeds": [base + feed], "sitemaps": [base + "sitemap.xml"], "render": render}
            if max_pages is not None:
                site["max_pages"] = max_pages
            sites.append(site)
    return json.dumps({"sites": sites}, indent=1)


def worker_command(config: Config, work: Path, name: str, store: str) -> list[str]:
    """Return one worker's ``scrapy crawl`` command line."""
    settings = {"AUTOTHROTTLE_ENABLED": "False", "LOG_LEVEL": "INFO", "STATS_FILE": str(work / f"{name}.stats.json"),
                "ARCHIVE_DIR": str(work / f"archive-{name}"), "REPORT_ENABLED": "False"}
    if config.backend == "sqlite":
        settings["TEMPLATES_STORE"] = str(work / "templates_db")
    else:
        settings.update({"CRAWL_STATE_STORE": store, "TEMPLATES_STORE": store, "CRAWL_LEASE_WORKER": name,
                         "CRAWL_LEASE_SITES": str(-(-SITES // config.workers))})
    command = [sys.executable, "-m", "scrapy", "crawl", "news_sites", "-a", f"sites={work / 'sites.yaml'}",
               "-O", str(work / f"{name}.jsonl")]
    for key, value in settings.items():
        command += ["-s", f"{key}={value}"]
    return command


def _time(text: str) -> float:
    return dt.datetime.fromisoformat(text).timestamp()


def run(config: Config, servers: list[DemoServer], cluster: Cluster, rendered_pages: int, number: int) -> dict[
        str, Any]:
    """Run one configuration once; return its measures."""
    with tempfile.TemporaryDirectory(prefix=f"distributed-{config.name}-") as folder:
        work = Path(folder)
        (work / "sites.yaml").write_text(site_list(servers, config.render, rendered_pages if config.render else None),
                                         encoding="utf-8")
        store = cluster.create_database(f"bench_{number}") if config.backend == "pg" else ""
        names = [f"w{n}" for n in range(config.workers)]
        processes = [subprocess.Popen(worker_command(config, work, name, store), cwd=REPO, stdin=subprocess.DEVNULL,
                                      stdout=(work / f"{name}.log").open("w"), stderr=subprocess.STDOUT,
                                      start_new_session=True) for name in names]
        try:
            for process in processes:
                process.wait(TIMEOUT_S)
        finally:
            for process in processes:
                if process.poll() is None:
                    os.killpg(process.pid, signal.SIGKILL)
        failed = [name for name, process in zip(names, processes, strict=True) if process.returncode != 0]
        if failed:
            raise RuntimeError(f"{config.name}: worker(s) {failed} failed; logs in {work}")
        stats = [json.loads((work / f"{name}.stats.json").read_text(encoding="utf-8")) for name in names]
        pages = sum(int(s.get("item_scraped_count", 0)) + int(s.get("item_dropped_count", 0)) for s in stats)
        started = min(_time(s["start_time"]) for s in stats)
        finished = max(_time(s["finish_time"]) for s in stats)
        total = {key: sum(int(s.get(key, 0)) for s in stats)
                 for key in ("state/calls", "state/ms", "state/db/round_trips", "state/db/ms", "lease/claimed",
                             "lease/taken_over")}
    return {"config": config.name, "render": config.render, "workers": config.workers, "pages": pages,
            "seconds": round(finished - started, 2), "pages_per_s": round(pages / (finished - started), 2),
            "state_calls_per_page": round(total["state/calls"] / pages, 2),
            "state_ms_per_page": round(total["state/ms"] / pages, 3),
            "round_trips_per_page": round(total["state/db/round_trips"] / pages, 2),
            "db_ms_per_page": round(total["state/db/ms"] / pages, 3),
            "claims": total["lease/claimed"], "per_worker_pages": [
                int(s.get("item_scraped_count", 0)) + int(s.get("item_dropped_count", 0)) for s in stats]}


def summarize(runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Return the median of each measure per configuration, with the pages/s ratio to ``sqlite-1``."""
    rows = []
    for render in (False, True):
        base = None
        for config in [c for c in configurations() if c.render == render]:
            mine = [r for r in runs if r["config"] == config.name and r["render"] == render]
            if not mine:
                continue
            row: dict[str, Any] = {"config": config.name, "render": render, "runs": len(mine)}
            for key in ("pages", "pages_per_s", "state_calls_per_page", "state_ms_per_page", "round_trips_per_page",
                        "db_ms_per_page"):
                row[key] = round(statistics.median(r[key] for r in mine), 3)
            base = base or row["pages_per_s"]
            row["vs_sqlite"] = round(row["pages_per_s"] / base, 2) if base else None
            rows.append(row)
    return rows


def markdown(rows: list[dict[str, Any]]) -> str:
    """Return the summary as a Markdown table."""
    lines = ["| run | workers | pages | pages/s | x sqlite-1 | state ops/page | state ms/page | DB round trips/page |"
             " DB wait ms/page |", "|---|---|---|---|---|---|---|---|---|"]
    for row in rows:
        lines.append(f"| {row['config']} {'rendered' if row['render'] else 'plain'} | {row['config'].split('-')[1]} |"
                     f" {row['pages']:.0f} | {row['pages_per_s']:.2f} | {row['vs_sqlite']:.2f} |"
                     f" {row['state_calls_per_page']:.1f} | {row['state_ms_per_page']:.2f} |"
                     f" {row['round_trips_per_page']:.1f} | {row['db_ms_per_page']:.2f} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and write ``distributed.json`` and ``distributed.md``; return the exit status."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--rendered-pages", type=int, default=15, help="max_pages per site of the rendered runs")
    parser.add_argument("--out-dir", type=Path, default=REPO / "bench" / "results")
    parser.add_argument("--only", choices=("plain", "rendered"), help="run one of the two halves")
    args = parser.parse_args(argv)
    configs = [c for c in configurations() if args.only is None or c.render == (args.only == "rendered")]
    runs: list[dict[str, Any]] = []
    with ExitStack() as stack:
        cluster = stack.enter_context(Cluster(durable=True))
        servers = [stack.enter_context(DemoServer(host, seed=300 + n)) for n, host in enumerate(HOSTS)]
        number = 0
        for repeat in range(args.repeat):
            for config in configs:
                number += 1
                result = run(config, servers, cluster, args.rendered_pages, number)
                result["repeat"] = repeat
                runs.append(result)
                print(json.dumps(result), file=sys.stderr, flush=True)
    rows = summarize(runs)
    table = markdown(rows)
    command = shlex.join(["python", "-m", "bench.distributed_bench", *(sys.argv[1:] if argv is None else argv)])
    machine = (f"{len(os.sched_getaffinity(0))} CPU(s), Python {platform.python_version()}, "
               f"{dt.datetime.now(dt.UTC).isoformat(timespec='seconds')}, load average before the run "
               f"{os.getloadavg()[0]:.1f}")
    args.out_dir.mkdir(parents=True, exist_ok=True)
    (args.out_dir / "distributed.json").write_text(json.dumps({"command": command, "machine": machine,
                                                               "summary": rows, "runs": runs}, indent=1) + "\n",
                                                   encoding="utf-8")
    (args.out_dir / "distributed.md").write_text(f"# Several workers on one crawl\n\n{table}\n\nCommand: `{command}`"
                                                 f"\n\nMachine: {machine}\n", encoding="utf-8")
    print(table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
