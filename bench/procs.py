"""Process-tree helpers for the benchmarks (see bench/README.md).

This module holds the process-tree helpers the benchmarks share: finding the processes
below a crawl, sampling their memory from /proc, and killing the whole tree.
"""

from __future__ import annotations

import contextlib
import os
import resource
import signal
import subprocess
import threading
import time
from pathlib import Path

SAMPLE_INTERVAL = 0.2  # s between memory samples
MIB = 1024  # KiB per MiB
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def process_table() -> dict[int, tuple[int, str]]:
    """Return ``{pid: (parent pid, first cmdline token)}`` for every readable process."""
    table: dict[int, tuple[int, str]] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            stat = Path(entry.path, "stat").read_text()
            argv0 = Path(entry.path, "cmdline").read_bytes().split(b"\0", 1)[0]
        except OSError:
            continue
        table[int(entry.name)] = (int(stat.rsplit(")", 1)[1].split()[1]), argv0.decode(errors="replace"))
    return table


def descendants(root: int, table: dict[int, tuple[int, str]]) -> dict[int, str]:
    """Return ``{pid: executable}`` of every process below ``root`` in ``table``."""
    children: dict[int, list[int]] = {}
    for pid, (parent, _) in table.items():
        children.setdefault(parent, []).append(pid)
    found: dict[int, str] = {}
    stack = [root]
    while stack:
        for child in children.get(stack.pop(), []):
            found[child] = table[child][1]
            stack.append(child)
    return found


def memory_kib(pid: int, pss: bool = True) -> int:
    """Return the PSS of ``pid`` in KiB (its RSS if smaps_rollup is unreadable; 0 if gone)."""
    files = ([(f"/proc/{pid}/smaps_rollup", "Pss:")] if pss else []) + [(f"/proc/{pid}/status", "VmRSS:")]
    for path, key in files:
        try:
            with open(path) as handle:
                for line in handle:
                    if line.startswith(key):
                        return int(line.split()[1])
        except (OSError, ValueError):
            continue
    return 0


def cpu_seconds() -> dict[str, float]:
    """Return CPU seconds used so far by the whole machine (non-idle time of all CPUs, from
    /proc/stat) as ``machine`` and by this process (benchmark + demo server) as ``self``."""
    fields = [int(value) for value in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:9]]
    user, nice, system, _idle, _iowait, irq, softirq, steal = fields
    own = resource.getrusage(resource.RUSAGE_SELF)
    return {"machine": (user + nice + system + irq + softirq + steal) / CLOCK_TICKS,
            "self": own.ru_utime + own.ru_stime}


def other_cores(interval: float = 2.0) -> float:
    """Return how many CPUs' worth of time processes other than this one used over ``interval`` s."""
    before = cpu_seconds()
    time.sleep(interval)
    after = cpu_seconds()
    return (after["machine"] - before["machine"] - (after["self"] - before["self"])) / interval


def cpu_ticks(pid: int) -> tuple[int, int]:
    """Return ``(start time, CPU time used)`` of ``pid`` in clock ticks; (0, 0) if it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0, 0
    return int(fields[19]), int(fields[11]) + int(fields[12])


def python_workers(tree: dict[int, str]) -> list[int]:
    """Return the Python processes among ``tree`` (a crawl's extraction workers and their fork server)."""
    return [pid for pid, exe in tree.items() if os.path.basename(exe).startswith("python")]


def foreign_crawlers() -> list[int]:
    """Return the pids of Scrapy crawls and Chromiums not below this process (they skew timings)."""
    table = process_table()
    mine = descendants(os.getpid(), table)
    found = []
    for pid, (_, exe) in table.items():
        if pid in mine or pid == os.getpid():
            continue
        with contextlib.suppress(OSError):
            command = Path(f"/proc/{pid}/cmdline").read_bytes()
            if "chrom" in os.path.basename(exe) or b"scrapy\0crawl" in command or b"scrapy crawl" in command:
                found.append(pid)
    return found


class MemorySampler(threading.Thread):
    """Samples the memory of a crawl process tree until :meth:`stop`; keeps the peaks."""

    def __init__(self, root: int) -> None:
        super().__init__(daemon=True)
        self.root = root
        self.chromium_peak_kib = self.driver_peak_kib = self.crawl_peak_kib = self.workers_peak_kib = 0
        self.chromium_procs_max = 0
        self.cpu: dict[tuple[int, int], tuple[str, int]] = {}  # (pid, start) -> (kind, CPU ticks)
        self._stop_event = threading.Event()

    def sample(self) -> None:
        """Take one sample and update the peaks (sums over processes alive at this instant)."""
        tree = descendants(self.root, process_table())
        chromium = [pid for pid, exe in tree.items() if "chrom" in os.path.basename(exe)]
        driver = [pid for pid, exe in tree.items() if os.path.basename(exe) == "node"]
        self.chromium_peak_kib = max(self.chromium_peak_kib, sum(memory_kib(pid) for pid in chromium))
        self.driver_peak_kib = max(self.driver_peak_kib, sum(memory_kib(pid) for pid in driver))
        self.crawl_peak_kib = max(self.crawl_peak_kib, memory_kib(self.root, pss=False))
        self.workers_peak_kib = max(self.workers_peak_kib, sum(memory_kib(pid) for pid in python_workers(tree)))
        self.chromium_procs_max = max(self.chromium_procs_max, len(chromium))
        kinds = {pid: "chromium" if pid in chromium else "driver" if pid in driver else "other" for pid in tree}
        for pid, kind in [(self.root, "crawl"), *kinds.items()]:
            start, ticks = cpu_ticks(pid)
            known = self.cpu.get((pid, start))
            if known and kind == "other":  # cmdline unreadable for a moment (exec, exit)
                kind = known[0]
            self.cpu[pid, start] = (kind, max(ticks, known[1] if known else 0))

    def cpu_s(self) -> dict[str, float]:
        """Return the CPU seconds used by the crawl, Chromium, the driver and other descendants
        (as of each process's last sample: up to SAMPLE_INTERVAL of each one's life is missed)."""
        totals = dict.fromkeys(("crawl", "chromium", "driver", "other"), 0)
        for kind, ticks in self.cpu.values():
            totals[kind] += ticks
        return {kind: round(ticks / CLOCK_TICKS, 1) for kind, ticks in totals.items()}

    def run(self) -> None:
        """Sample every SAMPLE_INTERVAL seconds until stopped; return None."""
        while not self._stop_event.is_set():
            self.sample()
            self._stop_event.wait(SAMPLE_INTERVAL)

    def stop(self) -> None:
        """Stop sampling and wait for the thread."""
        self._stop_event.set()
        self.join()


def kill_tree(process: subprocess.Popen[bytes], grace: float = 5.0) -> None:
    """Stop a crawl and everything below it; return once the crawl process is reaped.

    SIGTERM to the crawl first (Scrapy's graceful shutdown closes the browser), then after
    ``grace`` seconds SIGKILL to its process group and to every process seen below it.
    Playwright starts Chromium in a process group of its own and an orphaned Chromium is
    no longer below the crawl, so the tree is recorded while the crawl is still alive.
    """
    tree = descendants(process.pid, process_table())
    with contextlib.suppress(OSError):
        process.terminate()
    deadline = time.monotonic() + grace
    while process.poll() is None and time.monotonic() < deadline:
        tree.update(descendants(process.pid, process_table()))
        time.sleep(SAMPLE_INTERVAL)
    with contextlib.suppress(OSError):
        os.killpg(process.pid, signal.SIGKILL)
    for pid, (_, exe) in process_table().items():
        if tree.get(pid) == exe:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
    process.wait()
