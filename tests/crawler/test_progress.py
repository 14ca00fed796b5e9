"""Progress of the offline commands: a bar with rate and time left on a terminal, plain log lines elsewhere."""

from __future__ import annotations

import fcntl
import io
import logging
import os
import pty
import select
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest

from crawler.progress import Progress, duration
from tests.crawl_helpers import REPO

PAGE = "<html><head><title>T</title></head><body><p>{n} Some text of a page to extract, long enough.</p></body></html>"


def _pages(folder: Path, count: int = 3) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for n in range(count):
        (folder / f"{n}.html").write_text(PAGE.format(n=n), encoding="utf-8")
    return folder


def _in_terminal(command: list[str], columns: int, timeout: float = 120) -> tuple[int, str]:
    """Run ``command`` with its standard error (and output) on a pseudo-terminal ``columns`` wide (0: one that
    reports no size, as under script(1) or some CI runners); return its status and output."""
    controller, terminal = pty.openpty()
    fcntl.ioctl(terminal, termios.TIOCSWINSZ, struct.pack("HHHH", 40 if columns else 0, columns, 0, 0))
    process = subprocess.Popen(command, cwd=REPO, stdin=subprocess.DEVNULL, stdout=terminal, stderr=terminal,
                               close_fds=True)
    os.close(terminal)
    chunks = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([controller], [], [], 0.5)
        if ready:
            try:
                data = os.read(controller, 65536)
            except OSError:  # the terminal closed: the command ended
                break
            if not data:
                break
            chunks.append(data)
        elif process.poll() is not None:
            break
    os.close(controller)
    return process.wait(timeout=10), b"".join(chunks).decode("utf-8", "replace")


@pytest.mark.parametrize("columns", [120, 0])
def test_extract_shows_a_bar_with_rate_and_eta_on_a_terminal(tmp_path: Path, columns: int) -> None:
    folder = _pages(tmp_path / "pages")
    status, output = _in_terminal([sys.executable, "-m", "scrapy", "extract", str(folder), "-o",
                                   str(tmp_path / "out.jsonl"), "-s", "TEMPLATES_ENABLED=False"], columns)
    assert status == 0, output
    assert "Extracting: 100%" in output and "3/3" in output and " pages/s]" in output, output
    assert "Extracting: 3/3 pages (" not in output  # no plain line when there is a bar


def test_extract_writes_plain_lines_when_not_a_terminal(tmp_path: Path) -> None:
    folder = _pages(tmp_path / "pages")
    done = subprocess.run([sys.executable, "-m", "scrapy", "extract", str(folder), "-o", str(tmp_path / "out.jsonl"),
                           "-s", "TEMPLATES_ENABLED=False"], cwd=REPO, capture_output=True, text=True, timeout=120,
                          stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    assert "[crawler.progress] NOTICE: Extracting: 3/3 pages (" in done.stderr and "failed 0" in done.stderr
    assert "\r" not in done.stderr and "%|" not in done.stderr


def test_plain_lines_come_every_interval_with_rate_and_time_left(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="crawler.progress"):
        with Progress(10, "Working", unit="page", every=0.0, terminal=False) as progress:
            for _ in range(4):
                progress.update(failed=0)
        lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 5  # one per update (every 0 s) and the last one at the end
    assert lines[0].startswith("Working: 1/10 pages (") and "pages/s" in lines[0] and "left" in lines[0]
    assert lines[-1].startswith("Working: 4/10 pages (")


def test_a_bar_on_a_terminal_stream() -> None:
    stream = io.StringIO()
    with Progress(5, "Working", stream=stream, terminal=True) as progress:
        for _ in range(5):
            progress.update(failed=1)
    shown = stream.getvalue()
    assert "Working: 100%" in shown and "5/5" in shown and "failed=1" in shown


def test_bytes_progress_and_durations() -> None:
    progress = Progress(2048 * 1024, "Reading", unit="B", terminal=False)
    progress.update(1024 * 1024)
    assert progress.line().startswith("Reading: 1.00MB/2.00MB (") and "left" in progress.line()
    assert duration(45) == "45 s" and duration(156) == "2 min 36 s" and duration(3900) == "1 h 05 min"


def test_a_bar_keeps_the_logs_level(capsys: pytest.CaptureFixture[str]) -> None:
    """tqdm's redirect replaces the console handler: the replacement keeps its level (Scrapy's LOG_LEVEL)."""
    root = logging.getLogger()
    handler = logging.StreamHandler(sys.stderr)
    handler.setLevel(logging.INFO)
    saved = root.handlers[:], root.level
    root.handlers, root.level = [handler], logging.NOTSET
    try:
        with Progress(2, "Working", terminal=True) as progress:
            logging.getLogger("x").debug("not shown at INFO")
            logging.getLogger("x").info("shown at INFO")
            progress.update(2)
    finally:
        root.handlers, root.level = saved
    err = capsys.readouterr().err
    assert "shown at INFO" in err and "not shown at INFO" not in err
