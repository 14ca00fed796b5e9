"""Replay benchmark: real dataset pages crawled at their original URLs, rendered and over plain HTTP.

``python -m bench.replay_bench [--pages 2000] [--render on|off|both] [--out bench/results/replay]``.
The pages come from several datasets (``evaluation.replay``), round-robin over the sets in reader
order, one site per original site (a host; msv-big5's web-archive copies: original host and year).
Per mode, :class:`evaluation.replay.ReplayServer` serves them as an HTTP proxy and ``scrapy crawl
news_sites -a sites=F -O out.jsonl -s STATS_FILE=stats.json -s LOG_LEVEL=INFO`` runs in a subprocess
with ``http_proxy`` set; the project's settings otherwise (the archive and the template store go to
a temporary folder; templates off unless ``--templates on``, since their learning depends on page
order and the offline reference runs without them). Measured: pages/s, crawl RSS and Chromium PSS
over time (and at 10/50/90/100% of the pages), screenshot bytes per page, F1 of the crawl's text
against gold beside the offline F1 of ``process()`` on the same bytes and URL (the harness's metric
per dataset), how many texts equal the offline text, and the pages with mojibake. Results:
``<out>/replay.json`` and ``<out>/replay.md``; see bench/README.md.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.crawl_bench import machine_info
from bench.procs import MIB, MemorySampler, descendants, kill_tree, memory_kib, process_table, python_workers
from evaluation.datasets import datasets_dir
from evaluation.harness import GROUPS, _Scorer
from evaluation.replay import ReplayPage, ReplayServer, charset_kind, mojibake, replay_pages, write_site_list

REPO = Path(__file__).resolve().parent.parent
BENCH_DATASETS = ("wcxb-dev", "l3s-gn1", "cleaneval", "dragnet", "trafilatura-eval", "msv-big5",
                  "chinese-wced-dev", "gne-chinese")
TIMELINE_INTERVAL = 1.0  # s between timeline samples (the peaks come from MemorySampler, every 0.2 s)
PROGRESS_EVERY = 10.0  # s between progress lines
STAT_PREFIXES = ("crawl/", "render/", "page/", "extract/", "downloader/response_status", "log_count/", "memusage/")
FLATNESS_POINTS = (0.1, 0.5, 0.9, 1.0)  # shares of the pages at which RSS is reported


def log(message: str) -> None:
    """Print a progress line to stderr."""
    print(message, file=sys.stderr, flush=True)


def bench_pages(total: int, names: tuple[str, ...], guess_urls: bool) -> list[ReplayPage]:
    """Return ``total`` pages (fewer if the sets have fewer), round-robin over ``names`` in reader order."""
    root = datasets_dir()
    pools = [replay_pages([name], limit_per_dataset=total, guess_urls=guess_urls)
             for name in names if (root / name).is_dir()]
    chosen: list[ReplayPage] = []
    index = 0
    while len(chosen) < total and any(index < len(pool) for pool in pools):
        chosen.extend(pool[index] for pool in pools if index < len(pool))
        index += 1
    return chosen[:total]


class Timeline(threading.Thread):
    """Samples (seconds, pages served, crawl RSS KiB, Chromium PSS KiB, workers PSS KiB) of a crawl every second."""

    def __init__(self, root: int, server: ReplayServer, total: int, label: str) -> None:
        super().__init__(daemon=True)
        self.root, self.server, self.total, self.label = root, server, total, label
        self.samples: list[tuple[float, int, int, int, int]] = []
        self._stop_event = threading.Event()
        self.started = time.monotonic()
        self._last_progress = -PROGRESS_EVERY

    def sample(self) -> None:
        """Append one sample; print a progress line every PROGRESS_EVERY seconds."""
        tree = descendants(self.root, process_table())
        chromium = sum(memory_kib(pid) for pid, exe in tree.items() if "chrom" in os.path.basename(exe))
        workers = sum(memory_kib(pid) for pid in python_workers(tree))
        now = time.monotonic() - self.started
        served = self.server.pages_served()
        self.samples.append((now, served, memory_kib(self.root, pss=False), chromium, workers))
        if now - self._last_progress >= PROGRESS_EVERY:
            self._last_progress = now
            rate = served / now if now > 0 else 0.0
            log(f"[{self.label}] {now:6.0f} s: {served}/{self.total} pages served ({rate:.1f}/s), crawl RSS "
                f"{self.samples[-1][2] / MIB:.0f} MiB, workers PSS {workers / MIB:.0f} MiB, Chromium PSS "
                f"{chromium / MIB:.0f} MiB")

    def run(self) -> None:
        while not self._stop_event.is_set():
            self.sample()
            self._stop_event.wait(TIMELINE_INTERVAL)

    def stop(self) -> None:
        """Stop sampling and wait for the thread."""
        self._stop_event.set()
        self.join()

    def steady_rate(self) -> float | None:
        """Return pages served per second between the samples that first saw 10% and 90% of the pages (the
        start-up, the first round of robots.txt and sitemaps and the last, politeness-bound pages left out)."""
        first = next((s for s in self.samples if s[1] >= 0.1 * self.total), None)
        last = next((s for s in self.samples if s[1] >= 0.9 * self.total), None)
        if first is None or last is None or last[0] <= first[0]:
            return None
        return round((last[1] - first[1]) / (last[0] - first[0]), 2)

    def flatness(self) -> dict[str, dict[str, float] | None]:
        """Return crawl RSS and Chromium PSS (MiB) at the first sample with 10/50/90/100% of the pages served
        (100%: the crawl's last sample when it ended before a sample saw every page)."""
        out: dict[str, dict[str, float] | None] = {}
        for share in FLATNESS_POINTS:
            need = max(1, round(share * self.total))
            alive = [s for s in self.samples if s[2] > 0]  # the crawl process still running
            hit = next((s for s in alive if s[1] >= need), alive[-1] if alive and share == 1.0 else None)
            out[f"{round(share * 100)}%"] = None if hit is None else {
                "s": round(hit[0], 1), "pages": hit[1], "crawl_rss_mib": round(hit[2] / MIB, 1),
                "chromium_pss_mib": round(hit[3] / MIB, 1), "workers_pss_mib": round(hit[4] / MIB, 1)}
        return out


def crawl_command(work: Path, templates: bool, extra: list[str]) -> list[str]:
    """Return the ``scrapy crawl`` command line of one mode's run under ``work``."""
    settings = {"STATS_FILE": str(work / "stats.json"), "LOG_LEVEL": "INFO", "ARCHIVE_DIR": str(work / "archive"),
                "TEMPLATES_STORE": str(work / "templates_db"), "TEMPLATES_ENABLED": str(templates)}
    command = [sys.executable, "-m", "scrapy", "crawl", "news_sites", "-a", f"sites={work / 'sites.yaml'}",
               "-O", str(work / "out.jsonl")]
    for key, value in settings.items():
        command += ["-s", f"{key}={value}"]
    for setting in extra:
        command += ["-s", setting]
    return command


def parse_time(value: str | None) -> float | None:
    """Return an ISO timestamp as POSIX seconds, or None."""
    if not value:
        return None
    try:
        return dt.datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def run_mode(pages: list[ReplayPage], render: bool,
             args: argparse.Namespace) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Crawl ``pages`` in one mode; return the measurements and the records."""
    label = "rendered" if render else "plain"
    work = Path(tempfile.mkdtemp(prefix=f"replay-bench-{label}-"))
    write_site_list(pages, work / "sites.yaml", render=render)
    env = {key: value for key, value in os.environ.items()
           if key.lower() not in ("http_proxy", "https_proxy", "no_proxy")}
    command = crawl_command(work, args.templates == "on", args.set)
    timed_out = False
    try:
        with ReplayServer(pages) as server:
            env["http_proxy"] = server.proxy_url
            log(f"[{label}] crawling {len(pages)} pages of {len(server.sitemaps)} sites through {server.proxy_url}")
            started = time.monotonic()
            with (work / "crawl.log").open("wb") as crawl_log:
                process = subprocess.Popen(command, cwd=REPO, env=env, stdout=crawl_log, stderr=subprocess.STDOUT,
                                           stdin=subprocess.DEVNULL, start_new_session=True)
                sampler, timeline = MemorySampler(process.pid), Timeline(process.pid, server, len(pages), label)
                sampler.start()
                timeline.start()
                try:
                    process.wait(timeout=args.timeout)
                except subprocess.TimeoutExpired:
                    timed_out = True
                    kill_tree(process)
                except BaseException:  # Ctrl-C: leave no crawl and no Chromium behind
                    kill_tree(process)
                    raise
                finally:
                    sampler.stop()
                    timeline.stop()
            wall = time.monotonic() - started
            requests = server.outcome_counts()
        records = [json.loads(line) for line in (work / "out.jsonl").read_text(encoding="utf-8").split("\n")
                   if line.strip()] if (work / "out.jsonl").exists() else []
        stats = json.loads((work / "stats.json").read_text(encoding="utf-8")) if (work / "stats.json").exists() else {}
        lines = (work / "crawl.log").read_text(encoding="utf-8", errors="replace").splitlines()
        good = [r for r in records if r.get("status") == 200 and not r.get("error")]
        times = sorted(t for t in (parse_time(r.get("fetched_at")) for r in good) if t is not None)
        shots = [r for r in good if r.get("screenshot_height")]  # captured (the screenshot is in the WARC archive)
        shot_bytes = int(stats.get("render/screenshot_bytes") or 0)
        elapsed = float(stats.get("elapsed_time_seconds") or 0)
        result = {
            "mode": label, "returncode": process.returncode, "timed_out": timed_out,
            "finish_reason": stats.get("finish_reason"), "pages": len(pages), "records": len(records),
            "records_200": len(good), "errors": dict(Counter(str(r.get("error")) for r in records if r.get("error"))),
            "wall_s": round(wall, 1), "elapsed_s": round(elapsed, 1),
            "pages_per_s_wall": round(len(good) / wall, 3) if wall else None,
            "pages_per_s_elapsed": round(len(good) / elapsed, 3) if elapsed else None,
            "pages_per_s_first_to_last": round((len(times) - 1) / (times[-1] - times[0]), 3)
            if len(times) > 1 and times[-1] > times[0] else None,
            "crawl_peak_rss_mib": round(sampler.crawl_peak_kib / MIB, 1),
            "chromium_peak_pss_mib": round(sampler.chromium_peak_kib / MIB, 1),
            "driver_peak_pss_mib": round(sampler.driver_peak_kib / MIB, 1),
            "chromium_procs_max": sampler.chromium_procs_max, "cpu_s": sampler.cpu_s(),
            "flatness": timeline.flatness(),
            "pages_per_s_steady": timeline.steady_rate(),
            "timeline": [[round(t, 1), n, round(rss / MIB, 1), round(pss / MIB, 1), round(workers / MIB, 1)]
                         for t, n, rss, pss, workers in timeline.samples],
            "workers_peak_pss_mib": round(sampler.workers_peak_kib / MIB, 1),
            "rendered": sum(1 for r in good if r.get("rendered")),
            "screenshots": len(shots), "screenshot_bytes_per_page": round(shot_bytes / len(good)) if good else None,
            "requests": requests, "command": command,
            "stats": {k: v for k, v in stats.items() if k.startswith(STAT_PREFIXES)},
            "log_notable": [line for line in lines if " WARNING: " in line or " ERROR: " in line][:40],
            "log_tail": lines[-40:] if process.returncode or timed_out else [],
        }
        log(f"[{label}] done: {len(good)}/{len(pages)} pages with status 200 in {wall:.0f} s "
            f"({result['pages_per_s_wall']} pages/s), crawl peak RSS {result['crawl_peak_rss_mib']} MiB, "
            f"Chromium peak PSS {result['chromium_peak_pss_mib']} MiB")
        return result, records
    finally:
        if args.keep:
            log(f"[{label}] kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


def offline_texts(pages: list[ReplayPage], templates: bool, overrides: Sequence[str] = ()) -> dict[str, str]:
    """Return ``{url: text}`` from ``process()`` in this process on each page's bytes and URL, with the crawl's
    ``--set`` settings (``NAME=VALUE``, as ``scrapy crawl -s`` reads them)."""
    from scrapy.utils.conf import arglist_to_dict
    from scrapy.utils.project import get_project_settings

    from extraction.page import Page
    from extraction.process import Context, process

    settings = get_project_settings()
    settings.setdict(arglist_to_dict(list(overrides)), priority="cmdline")  # as `scrapy crawl -s` reads them
    context = Context.from_settings(settings, templates=None)
    if templates:
        log("offline: without templates (their learning depends on crawl order)")
    texts: dict[str, str] = {}
    started = time.monotonic()
    for done, page in enumerate(pages, start=1):
        texts[page.url] = process(Page(page.body, page.url, "text/html"), context).text
        if done % 200 == 0 or done == len(pages):
            log(f"offline: {done}/{len(pages)} pages ({done / (time.monotonic() - started):.1f}/s)")
    return texts


def scores(pages: list[ReplayPage], texts: dict[str, str]) -> dict[str, Any]:
    """Return the harness's scores per dataset (pages with a metric and ground truth; a missing text is "")."""
    out: dict[str, Any] = {}
    for dataset in dict.fromkeys(page.dataset for page in pages):
        mine = [p for p in pages if p.dataset == dataset and p.metric and p.source is not None]
        if not mine:
            continue
        metric = mine[0].metric
        assert metric is not None
        scorer = _Scorer(metric)
        counted = 0
        for page in mine:
            source = page.source
            assert source is not None
            if page.gold is None and not (source.with_snippets or source.without_snippets):
                continue
            scorer.add(source, texts.get(page.url, ""))
            counted += 1
        if counted:
            summary = scorer.summary()
            f1 = {group: round(summary[group]["f1"], 4) for group in GROUPS[metric] if group in summary}
            out[dataset] = {"metric": metric, "pages": counted, "f1": f1}
    return out


def text_checks(pages: list[ReplayPage], crawl: dict[str, str], offline: dict[str, str]) -> dict[str, Any]:
    """Return mojibake counts (crawl and offline), equality with offline, and examples."""
    kinds = {page.url: charset_kind(page.body) for page in pages}
    moji = [p for p in pages if p.url in crawl and mojibake(crawl[p.url])]
    moji_offline = [p for p in pages if mojibake(offline.get(p.url, ""))]
    differ = [p for p in pages if p.url in crawl and crawl[p.url] != offline.get(p.url)]
    return {
        "mojibake_pages": len(moji), "mojibake_pages_offline": len(moji_offline),
        "mojibake_only_in_crawl": [f"{p.dataset}/{p.key} ({kinds[p.url]}): {mojibake(crawl[p.url])[:3]}"
                                   for p in moji if p not in moji_offline][:20],
        "mojibake_by_kind": dict(Counter(kinds[p.url] for p in moji)),
        "equal_to_offline": sum(1 for p in pages if p.url in crawl and crawl[p.url] == offline.get(p.url)),
        "differ_from_offline": len(differ),
        "differ_by_kind": dict(Counter(kinds[p.url] for p in differ)),
        "differ_examples": [f"{p.dataset}/{p.key} ({kinds[p.url]}) {p.url}" for p in differ[:15]],
        "missing": sum(1 for p in pages if p.url not in crawl),
    }


def markdown(report: dict[str, Any]) -> str:
    """Return the report as Markdown."""
    modes = report["modes"]
    lines = [f"# Replay benchmark ({report['date']})", "",
             f"{report['pages']} real pages of {report['hosts']} hosts from {', '.join(report['datasets'])}, "
             f"crawled at their original URLs through the replay proxy (`{report['argv']}`). "
             f"Templates {report['templates']}. Machine: {report['machine']['nproc']} CPUs, "
             f"{report['machine']['cpu_model']}, {report['machine']['chromium']}.", "",
             "| | " + " | ".join(m["mode"] for m in modes) + " |", "|---|" + "---:|" * len(modes)]

    def row(name: str, key: str | Any) -> None:
        cells = [str(key(m) if callable(key) else m.get(key)) for m in modes]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")

    row("records with status 200 / pages", lambda m: f"{m['records_200']} / {m['pages']}")
    row("pages/s (wall)", "pages_per_s_wall")
    row("pages/s (Scrapy elapsed)", "pages_per_s_elapsed")
    row("pages/s (first to last record)", "pages_per_s_first_to_last")
    row("crawl peak RSS MiB", "crawl_peak_rss_mib")
    row("extraction workers peak PSS MiB", "workers_peak_pss_mib")
    row("Chromium peak PSS MiB", "chromium_peak_pss_mib")
    for point in [f"{round(share * 100)}%" for share in FLATNESS_POINTS]:
        row(f"crawl RSS / workers PSS / Chromium PSS MiB at {point}", lambda m, p=point: "—"
            if not m["flatness"].get(p) else f"{m['flatness'][p]['crawl_rss_mib']} / "
            f"{m['flatness'][p]['workers_pss_mib']} / {m['flatness'][p]['chromium_pss_mib']}")
    row("pages/s between 10% and 90% of the pages", "pages_per_s_steady")
    row("CPU s per page: crawl / workers / Chromium / driver", lambda m: " / ".join(
        f"{m['cpu_s'][k] / max(m['records_200'], 1):.3f}" for k in ("crawl", "other", "chromium", "driver")))
    row("screenshot bytes per page", "screenshot_bytes_per_page")
    row("text equal to offline", lambda m: f"{m['checks']['equal_to_offline']} / {m['pages']}")
    row("mojibake pages (offline)",
        lambda m: f"{m['checks']['mojibake_pages']} ({m['checks']['mojibake_pages_offline']})")
    row("errors", lambda m: ", ".join(f"{k} {v}" for k, v in m["errors"].items()) or "—")
    lines += ["", "F1 against gold, crawl (offline `process()` on the same bytes and URL):", "",
              "| dataset | metric | pages | " + " | ".join(m["mode"] for m in modes) + " | offline |",
              "|---|---|---:|" + "---:|" * (len(modes) + 1)]
    for dataset, offline in report["offline_scores"].items():
        groups = list(offline["f1"])
        for group in groups:
            cells = [f"{m['scores'].get(dataset, {}).get('f1', {}).get(group, float('nan')):.3f}" for m in modes]
            lines.append(f"| {dataset} ({group}) | {offline['metric']} | {offline['pages']} | " + " | ".join(cells)
                         + f" | {offline['f1'][group]:.3f} |")
    for mode in modes:
        checks = mode["checks"]
        if checks["differ_examples"] or checks["mojibake_only_in_crawl"]:
            lines += ["", f"{mode['mode']}: texts differing from offline by charset kind {checks['differ_by_kind']}; "
                      f"mojibake by kind {checks['mojibake_by_kind']}", ""]
            lines += [f"- {example}" for example in checks["differ_examples"][:10]]
            lines += [f"- mojibake: {example}" for example in checks["mojibake_only_in_crawl"][:10]]
    lines += ["", "The JSON beside this file has the timelines, stats, commands and log warnings."]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; return 0, 1 when a crawl failed, 2 when no page could be loaded."""
    parser = argparse.ArgumentParser(prog="python -m bench.replay_bench", description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=2000, help="pages to replay (default 2000)")
    parser.add_argument("--render", choices=("on", "off", "both"), default="both")
    parser.add_argument("--out", default="bench/results/replay", help="folder for replay.json and replay.md")
    parser.add_argument("--datasets", nargs="+", default=list(BENCH_DATASETS), metavar="NAME")
    parser.add_argument("--guess-urls", action="store_true", help="pages without a URL get one (evaluation.replay)")
    parser.add_argument("--templates", choices=("on", "off"), default="off",
                        help="TEMPLATES_ENABLED of the crawls (a fresh store; offline always runs without)")
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE", help="extra crawl setting")
    parser.add_argument("--timeout", type=float, default=3600.0, help="s per crawl before it is stopped")
    parser.add_argument("--keep", action="store_true", help="keep each crawl's folder (feed, log, archive)")
    args = parser.parse_args(argv)
    log(f"loading up to {args.pages} pages from {', '.join(args.datasets)}")
    pages = bench_pages(args.pages, tuple(args.datasets), args.guess_urls)
    if not pages:
        log(f"error: no replayable page under {datasets_dir()}")
        return 2
    hosts = len({page.host for page in pages})
    per_dataset = Counter(p.dataset for p in pages)
    log(f"{len(pages)} pages of {hosts} hosts: " + ", ".join(f"{k} {v}" for k, v in per_dataset.items()))
    offline = offline_texts(pages, args.templates == "on", args.set)
    modes = []
    failed = False
    for render in {"on": [True], "off": [False], "both": [False, True]}[args.render]:
        result, records = run_mode(pages, render, args)
        crawl = {r["url"]: r.get("text") or "" for r in records if r.get("status") == 200 and not r.get("error")}
        result["scores"] = scores(pages, crawl)
        result["checks"] = text_checks(pages, crawl, offline)
        failed |= bool(result["returncode"] or result["timed_out"])
        modes.append(result)
    report = {
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "argv": "python -m bench.replay_bench " + " ".join(argv if argv is not None else sys.argv[1:]),
        "pages": len(pages), "hosts": hosts, "datasets": list(dict.fromkeys(p.dataset for p in pages)),
        "pages_per_dataset": dict(Counter(p.dataset for p in pages)),
        "charset_kinds": dict(Counter(charset_kind(p.body) for p in pages)),
        "templates": args.templates, "offline_scores": scores(pages, offline),
        "modes": modes, "machine": machine_info(),
    }
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "replay.json").write_text(json.dumps(report, indent=1, ensure_ascii=False), encoding="utf-8")
    (out / "replay.md").write_text(markdown(report), encoding="utf-8")
    print(markdown(report))
    log(f"wrote {out / 'replay.md'} and {out / 'replay.json'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
