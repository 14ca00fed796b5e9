"""Crawl benchmark: rendered (Chromium + screenshots) vs plain HTTP on the bundled demo sites.

``python -m bench.crawl_bench [--repeat 3] [--concurrency 4] [--no-screenshot-variant]``.
Each run is ``scrapy crawl news_sites`` in its own subprocess (own session, fresh archive
dir) with AutoThrottle off; runs of the configurations are interleaved. pages/s is
``crawl/page / elapsed_time_seconds`` from the crawl's STATS_FILE. While a crawl runs, a
thread sums every 0.2 s the PSS of the Chromium processes descending from it. Results go
to ``<out-dir>/crawl.json`` and ``<out-dir>/crawl.md``; see bench/README.md.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from importlib.metadata import version as package_version
from pathlib import Path
from typing import Any

from bench.procs import MIB, SAMPLE_INTERVAL, MemorySampler, cpu_seconds, foreign_crawlers, kill_tree, other_cores
from crawler.render import chromium_path

REPO = Path(__file__).resolve().parent.parent
CHROMIUM = chromium_path()
DISTURBED = 0.15  # a run is "disturbed" when other processes used this share of all CPUs
STAT_PREFIXES = ("log_count/", "crawl/", "render/", "finish_reason", "downloader/response_status")


@dataclass(frozen=True)
class Config:
    """One benchmarked crawl configuration."""

    name: str
    render: bool
    settings: dict[str, str] = field(default_factory=dict)


def crawl_command(config: Config, work: Path, concurrency: int) -> list[str]:
    """Return the ``scrapy crawl`` command line of one run of ``config`` under ``work``."""
    settings = {"AUTOTHROTTLE_ENABLED": "False", "PLAYWRIGHT_MAX_PAGES_PER_CONTEXT": str(concurrency),
                "STATS_FILE": str(work / "stats.json"), "ARCHIVE_DIR": str(work / "archive"),
                "TEMPLATES_STORE": str(work / "templates_db"),  # every run learns from scratch
                "LOG_LEVEL": "INFO", **config.settings}
    command = [sys.executable, "-m", "scrapy", "crawl", "news_sites", "-a", f"sites={work / 'sites.yaml'}",
               "-O", str(work / "items.jsonl")]
    for key, value in settings.items():
        command += ["-s", f"{key}={value}"]
    return command


def sites_yaml(base: str, render: bool) -> str:
    """Return the site list (JSON, which is YAML) of the two demo sites at ``base``."""
    sites = [{"name": name, "start_urls": [f"{base}/{lang}/"], "allowed_prefixes": [f"{base}/{lang}/"],
              "render": render} for name, lang in (("en-gazette", "en"), ("zh-jiangcheng", "zh"))]
    return json.dumps({"sites": sites}, indent=1)


def run_crawl(config: Config, base: str, concurrency: int, timeout: float) -> dict[str, Any]:
    """Run one crawl of ``config`` and return its raw measurements (see README)."""
    work = Path(tempfile.mkdtemp(prefix=f"crawl-bench-{config.name}-"))
    try:
        (work / "sites.yaml").write_text(sites_yaml(base, config.render), encoding="utf-8")
        started, cpu_before = time.monotonic(), cpu_seconds()
        with (work / "crawl.log").open("wb") as log:
            process = subprocess.Popen(crawl_command(config, work, concurrency), cwd=REPO, stdout=log,
                                       stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                       start_new_session=True)
            sampler = MemorySampler(process.pid)
            sampler.start()
            timed_out = False
            try:
                process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                timed_out = True
                kill_tree(process)
            except BaseException:  # Ctrl-C: leave no crawl and no Chromium behind
                kill_tree(process)
                raise
            finally:
                sampler.stop()
        wall = time.monotonic() - started
        cpu = {key: value - cpu_before[key] for key, value in cpu_seconds().items()}
        tree_cpu = sampler.cpu_s()
        crawl_cpu = round(sum(tree_cpu.values()), 1)
        others_cpu = cpu["machine"] - crawl_cpu - cpu["self"]
        stats_file = work / "stats.json"
        stats = json.loads(stats_file.read_text(encoding="utf-8")) if stats_file.exists() else {}
        lines = (work / "crawl.log").read_text(encoding="utf-8", errors="replace").splitlines()
        elapsed = float(stats.get("elapsed_time_seconds") or 0)
        pages = int(stats.get("crawl/page", 0))
        ok = (process.returncode == 0 and not timed_out and pages > 0 and elapsed > 0
              and stats.get("finish_reason") == "finished")  # "shutdown": stopped by a signal
        notable = [line for line in lines if " WARNING: " in line or " ERROR: " in line or
                   line.startswith("Traceback")]
        return {
            "config": config.name, "ok": ok, "returncode": process.returncode, "timed_out": timed_out,
            "wall_s": round(wall, 2), "elapsed_s": elapsed, "pages": pages,
            "pages_per_s": round(pages / elapsed, 3) if ok else None,
            "items": stats.get("item_scraped_count", 0), "rendered": stats.get("render/page", 0),
            "screenshots": stats.get("render/screenshot", 0),
            "chromium_peak_pss_mib": round(sampler.chromium_peak_kib / MIB, 1),
            "chromium_procs_max": sampler.chromium_procs_max,
            "driver_peak_pss_mib": round(sampler.driver_peak_kib / MIB, 1),
            "crawl_peak_rss_sampled_mib": round(sampler.crawl_peak_kib / MIB, 1),
            "memusage_max_mib": round(int(stats.get("memusage/max", 0)) / MIB / MIB, 1),
            "disturbed": others_cpu > DISTURBED * wall * len(os.sched_getaffinity(0)),
            "cpu_s": {**tree_cpu, "crawl_tree": crawl_cpu, "benchmark_and_demo_server": round(cpu["self"], 1),
                      "others": round(others_cpu, 1),
                      "machine_utilisation": round(cpu["machine"] / wall / len(os.sched_getaffinity(0)), 3)},
            "playwright_max_concurrent": stats.get("playwright/page_count/max_concurrent"),
            "stats": {k: v for k, v in stats.items() if k.startswith(STAT_PREFIXES)},
            "log_notable": notable[:30], "log_tail": [] if ok else lines[-60:],
        }
    finally:
        shutil.rmtree(work, ignore_errors=True)


def summarize(runs: list[dict[str, Any]], configs: list[Config]) -> list[dict[str, Any]]:
    """Return one summary row per configuration (median/min/max pages/s, ratio, memory peaks)."""
    rows: list[dict[str, Any]] = []
    for config in configs:
        mine = [run for run in runs if run["config"] == config.name]
        good = [run for run in mine if run["ok"]]
        rates = [run["pages_per_s"] for run in good]
        rows.append({
            "config": config.name, "runs": f"{len(good)}/{len(mine)}",
            "disturbed_runs": sum(1 for run in good if run["disturbed"]),
            "median_cpu_s": statistics.median([run["cpu_s"]["crawl_tree"] for run in good]) if good else None,
            "pages": sorted({run["pages"] for run in good}),
            "median_pages_per_s": statistics.median(rates) if rates else None,
            "median_elapsed_s": statistics.median([run["elapsed_s"] for run in good]) if good else None,
            "min_pages_per_s": min(rates, default=None), "max_pages_per_s": max(rates, default=None),
            "chromium_peak_pss_mib": max((run["chromium_peak_pss_mib"] for run in mine), default=0),
            "driver_peak_pss_mib": max((run["driver_peak_pss_mib"] for run in mine), default=0),
            "glitches": sum(run["stats"].get("render/screenshot_glitch", 0) for run in mine),
            "crawl_peak_rss_mib": max((max(run["memusage_max_mib"], run["crawl_peak_rss_sampled_mib"])
                                       for run in mine), default=0),
        })
    plain = next((row["median_pages_per_s"] for row in rows if row["config"] == "plain"), None)
    for row in rows:
        median = row["median_pages_per_s"]
        row["ratio_to_plain"] = round(median / plain, 4) if median and plain else None
    return rows


def markdown_table(rows: list[dict[str, Any]]) -> str:
    """Return the summary rows as a Markdown table."""
    def num(value: float | None, fmt: str = "{:.2f}") -> str:
        return "n/a" if value is None else fmt.format(value)

    out = ["| Configuration | Runs ok | Pages | Median pages/s | Min–max pages/s | × plain | CPU s/page "
           "| Glitched captures | Chromium peak PSS MiB | Playwright driver peak PSS MiB "
           "| Crawl process peak RSS MiB |",
           "|---|---|---|---|---|---|---|---|---|---|---|"]
    for row in rows:
        pages = "–".join(str(p) for p in row["pages"][:: max(1, len(row["pages"]) - 1)]) or "n/a"
        runs = row["runs"] + (f" ({row['disturbed_runs']} disturbed)" if row["disturbed_runs"] else "")
        spread = f"{num(row['min_pages_per_s'])}–{num(row['max_pages_per_s'])}"
        per_page = row["median_cpu_s"] / row["pages"][0] if row["pages"] and row["median_cpu_s"] else None
        chromium = num(row["chromium_peak_pss_mib"] or None, "{:.0f}")
        driver = num(row["driver_peak_pss_mib"] or None, "{:.0f}")
        out.append(f"| {row['config']} | {runs} | {pages} | {num(row['median_pages_per_s'])} | {spread} | "
                   f"{num(row['ratio_to_plain'], '{:.3g}')} | {num(per_page, '{:.3f}')} | {row['glitches']} | "
                   f"{chromium} | {driver} | {num(row['crawl_peak_rss_mib'], '{:.0f}')} |")
    return "\n".join(out)


def machine_info() -> dict[str, Any]:
    """Return nproc, CPU model, memory, Python/Scrapy/Playwright/Chromium versions and the date."""
    cpu = [line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
           if line.startswith("model name")]
    version = subprocess.run([CHROMIUM, "--version"], capture_output=True, text=True, check=False)
    return {
        "nproc": len(os.sched_getaffinity(0)), "cpu_count": os.cpu_count(),
        "cpu_model": cpu[0] if cpu else platform.processor(),
        "mem_total_mib": os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") // MIB // MIB,
        "python": platform.python_version(), "platform": platform.platform(),
        "scrapy": package_version("scrapy"), "scrapy_playwright": package_version("scrapy-playwright"),
        "playwright": package_version("playwright"), "chromium": version.stdout.strip(),
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
    }


def write_report(args: argparse.Namespace, argv: list[str] | None, configs: list[Config],
                 runs: list[dict[str, Any]]) -> None:
    """Print the table; write ``crawl.json`` and ``crawl.md`` under ``args.out_dir``; return None."""
    rows = summarize(runs, configs)
    table = markdown_table(rows)
    command = shlex.join(["python", "-m", "bench.crawl_bench", *(sys.argv[1:] if argv is None else argv)])
    example = shlex.join(crawl_command(configs[0], Path("$WORK"), args.concurrency))
    settings = {"AUTOTHROTTLE_ENABLED": False, "PLAYWRIGHT_MAX_PAGES_PER_CONTEXT": args.concurrency,
                "repeat": args.repeat, "order": "interleaved", "configs": [vars(c) for c in configs],
                "memory_sample_interval_s": SAMPLE_INTERVAL, "timeout_s": args.timeout,
                "wait_quiet_s": args.wait_quiet}
    machine = machine_info()
    disturbed = sum(1 for run in runs if run["disturbed"])
    other_cpu = sum(max(0.0, run["cpu_s"]["others"]) for run in runs)
    args.out_dir.mkdir(parents=True, exist_ok=True)
    report = {"command": command, "crawl_command": example.replace(sys.executable, "python"),
              "settings": settings, "machine": machine, "summary": rows, "runs": runs}
    (args.out_dir / "crawl.json").write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n",
                                             encoding="utf-8")
    machine_line = (f"{machine['nproc']} CPU(s) {machine['cpu_model']}, {machine['mem_total_mib']} MiB RAM, "
                    f"Python {machine['python']}, {machine['chromium']}, {machine['date']}")
    markdown = (f"# Crawl benchmark\n\n{table}\n\n"
                "AutoThrottle off in every run (capacity, not polite speed); pages/s = crawl/page / "
                "elapsed_time_seconds of each run; memory columns are the peak over all runs.\n"
                f"Disturbed runs (other processes used > {DISTURBED:.0%} of the CPUs): {disturbed} of {len(runs)};"
                f" CPU seconds used by other processes during all runs: {other_cpu:.0f} (cpu_s in crawl.json)."
                " CPU s/page: CPU time of the crawl process tree (crawl, driver, Chromium) per page."
                f"\n\nCommand: `{command}`\n\nEach run (rendered; plain sets `render: false` in sites.yaml, "
                f"no-screenshots adds `-s RENDER_SCREENSHOTS=False`):\n`{report['crawl_command']}`"
                f"\n\nSettings: `{json.dumps(settings)}`\n\nMachine: {machine_line}\n")
    (args.out_dir / "crawl.md").write_text(markdown, encoding="utf-8")
    print(table)
    print(f"\nwritten: {args.out_dir / 'crawl.json'}, {args.out_dir / 'crawl.md'}", file=sys.stderr)


def _interrupt(signum: int, frame: object) -> None:
    """Turn SIGINT/SIGTERM into KeyboardInterrupt so that the crawl tree is cleaned up."""
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; return the exit status (0 when every run succeeded)."""
    parser = argparse.ArgumentParser(prog="python -m bench.crawl_bench", description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=3, help="runs per configuration (default 3)")
    parser.add_argument("--out-dir", type=Path, default=REPO / "bench" / "results")
    parser.add_argument("--concurrency", type=int, default=4, help="PLAYWRIGHT_MAX_PAGES_PER_CONTEXT")
    parser.add_argument("--no-screenshot-variant", action="store_true", help="skip rendered-no-screenshots")
    parser.add_argument("--templates-variant", action="store_true",
                        help="add plain-no-templates (TEMPLATES_ENABLED=False): the template stage's cost")
    parser.add_argument("--glitch-guard-variant", action="store_true",
                        help="add rendered-parallel-captures (RENDER_SERIALIZE_SCREENSHOTS=False)")
    parser.add_argument("--timeout", type=float, default=900, help="seconds before a crawl is killed")
    parser.add_argument("--wait-quiet", type=float, default=0, metavar="S",
                        help="before each run, wait up to S seconds for other crawls/Chromiums to end")
    args = parser.parse_args(argv)
    if not Path(CHROMIUM).exists():
        print(f"error: Chromium not found at {CHROMIUM} (make setup installs Debian's chromium; "
              "or set CHROMIUM_PATH)", file=sys.stderr)
        return 2
    configs = [Config("rendered", True), Config("plain", False)]
    if not args.no_screenshot_variant:
        configs.append(Config("rendered-no-screenshots", True, {"RENDER_SCREENSHOTS": "False"}))
    if args.templates_variant:
        configs.append(Config("plain-no-templates", False, {"TEMPLATES_ENABLED": "False"}))
    if args.glitch_guard_variant:
        # What the serialised-capture guard costs (the glitch check and retake stay on).
        configs.append(Config("rendered-parallel-captures", True, {"RENDER_SERIALIZE_SCREENSHOTS": "False"}))
    try:
        from demo.server import DemoServer
    except ImportError as exc:
        print(f"error: the demo sites are not importable ({exc})", file=sys.stderr)
        return 2
    print("AutoThrottle is OFF in every run: this measures capacity, not polite speed.", file=sys.stderr)
    for sig in (signal.SIGINT, signal.SIGTERM):  # also when started with SIGINT ignored (`cmd &`)
        signal.signal(sig, _interrupt)
    runs: list[dict[str, Any]] = []
    schedule = [config for _ in range(args.repeat) for config in configs]
    server = DemoServer()
    base = server.start()
    try:
        for number, config in enumerate(schedule, 1):
            deadline = time.monotonic() + args.wait_quiet
            while (others := foreign_crawlers()) and time.monotonic() < deadline and other_cores() > 0.2:
                pass  # other_cores() waits 2 s; idle leftovers (a hung test crawl) do not count
            load = os.getloadavg()[0]
            busy = f"[busy: {len(others)} other crawl/Chromium processes] " if others else ""
            print(f"run {number}/{len(schedule)}: {config.name} {busy}...", end=" ", file=sys.stderr,
                  flush=True)
            run = run_crawl(config, base, args.concurrency, args.timeout)
            run.update(repeat=(number - 1) // len(configs) + 1, loadavg_1m_before=load,
                       other_crawl_processes=max(len(others), len(foreign_crawlers())))
            runs.append(run)
            if run["ok"]:
                print(f"{run['pages_per_s']:.2f} pages/s ({run['pages']} pages in {run['elapsed_s']:.1f} s, "
                      f"Chromium {run['chromium_peak_pss_mib']:.0f} MiB, CPU s: crawl {run['cpu_s']['crawl_tree']}"
                      f", others {run['cpu_s']['others']}){' DISTURBED' if run['disturbed'] else ''}",
                      file=sys.stderr)
            else:
                print(f"FAILED (exit {run['returncode']}, finish_reason {run['stats'].get('finish_reason')}, "
                      f"{run['pages']} pages); last log lines:", file=sys.stderr)
                print("\n".join(run["log_tail"][-15:]), file=sys.stderr)
    except KeyboardInterrupt:
        print("\ninterrupted: crawl stopped, nothing written", file=sys.stderr)
        return 130
    finally:
        server.stop()
    write_report(args, argv, configs, runs)
    return 0 if all(run["ok"] for run in runs) else 1


if __name__ == "__main__":
    sys.exit(main())
