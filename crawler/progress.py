"""Progress of the long offline commands (``extract``, ``reextract``, ``evaluate``, ``templates build``).

On a terminal (standard error is a TTY) a tqdm bar shows the count, the rate and the time left, and the
command's log lines are written above it (``logging_redirect_tqdm``). Anywhere else (a log file, a pipe, cron,
CI) there is no bar: a plain log line every :data:`PLAIN_EVERY_SECONDS` seconds and one at the end, e.g.
``Extracting: 1200/5000 pages (24.3 pages/s, 2 min 36 s left; failed 3)``.

    with Progress(len(paths), "Extracting", unit="page") as progress:
        for path in paths:
            ...
            progress.update(failed=failed)
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import time
from types import TracebackType
from typing import IO, Any

from tqdm import tqdm
from tqdm.contrib.logging import logging_redirect_tqdm

from crawler.logs import notice

logger = logging.getLogger(__name__)

PLAIN_EVERY_SECONDS = 10.0  # between plain progress lines (no terminal)
FALLBACK_COLUMNS, FALLBACK_ROWS = 100, 40  # the size of a terminal that reports none (tqdm hides bars without)


def _console(handler: logging.Handler) -> bool:
    """Whether ``handler`` writes to the terminal (the one tqdm's redirect replaces)."""
    return isinstance(handler, logging.StreamHandler) and getattr(handler, "stream", None) in (sys.stdout, sys.stderr)


def duration(seconds: float) -> str:
    """Return a short human duration: ``45 s``, ``2 min 36 s``, ``1 h 05 min``."""
    seconds = max(0, round(seconds))
    if seconds < 60:
        return f"{seconds} s"
    if seconds < 3600:
        return f"{seconds // 60} min {seconds % 60:02d} s"
    return f"{seconds // 3600} h {seconds % 3600 // 60:02d} min"


class Progress:
    """A progress bar on a terminal, periodic plain log lines elsewhere (see the module docstring)."""

    def __init__(self, total: int | None, description: str, unit: str = "page", stream: IO[str] | None = None,
                 every: float = PLAIN_EVERY_SECONDS, terminal: bool | None = None) -> None:
        """``unit`` "B" counts bytes (shown as kB, MB, ...), anything else items named ``<unit>s``."""
        self.total = total
        self.description = description
        self.unit = unit
        self.stream = stream if stream is not None else sys.stderr
        self.every = every
        self.terminal = self._isatty() if terminal is None else terminal
        self.done = 0
        self.started = time.monotonic()
        self._last_line = self.started
        self._postfix: dict[str, Any] = {}
        self._bar: tqdm[Any] | None = None
        self._redirect: contextlib.ExitStack | None = None
        self._closed = False

    def _isatty(self) -> bool:
        try:
            return bool(self.stream.isatty())
        except (AttributeError, ValueError):  # a closed or unusual stream
            return False

    def _columns(self) -> int:
        try:
            return os.get_terminal_size(self.stream.fileno()).columns
        except (AttributeError, OSError, ValueError):  # not a real file (a test's stream)
            return 0

    def __enter__(self) -> Progress:
        if self.terminal:
            self._redirect = contextlib.ExitStack()
            root = logging.getLogger()
            levels = [handler.level for handler in root.handlers if _console(handler)]
            self._redirect.enter_context(logging_redirect_tqdm())
            for handler in root.handlers:  # tqdm's handler replaces the console one: give it that one's level
                if type(handler).__name__ == "_TqdmLoggingHandler" and levels:
                    handler.setLevel(levels[0])
            scaled = self.unit == "B"
            width = self._columns()  # a terminal that reports no size (some ptys) gets a fixed width
            sized = width > 0
            self._bar = tqdm(total=self.total, desc=self.description, unit="B" if scaled else f" {self.unit}s",
                             file=self.stream, dynamic_ncols=sized, ncols=None if sized else FALLBACK_COLUMNS,
                             nrows=None if sized else FALLBACK_ROWS, smoothing=0.05, unit_scale=scaled,
                             unit_divisor=1024 if scaled else 1000)
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 traceback: TracebackType | None) -> None:
        self.close()

    def update(self, n: int = 1, **postfix: Any) -> None:
        """Count ``n`` more done; ``postfix`` (e.g. ``failed=3``) is shown beside the rate."""
        self.done += n
        self._postfix.update(postfix)
        if self._bar is not None:
            if postfix:
                self._bar.set_postfix(self._postfix, refresh=False)
            self._bar.update(n)
            return
        now = time.monotonic()
        if now - self._last_line >= self.every:
            self._last_line = now
            notice(logger, "%s", self.line())

    def line(self) -> str:
        """Return the plain progress line: count, rate, time left, postfix."""
        elapsed = time.monotonic() - self.started
        rate = self.done / elapsed if elapsed > 0 else 0.0
        if self.unit == "B":
            size = tqdm.format_sizeof
            count = f"{size(self.done, 'B', 1024)}/{size(self.total, 'B', 1024)}" if self.total is not None \
                else size(self.done, "B", 1024)
            parts = [f"{size(rate, 'B', 1024)}/s"]
        else:
            count = f"{self.done}/{self.total} {self.unit}s" if self.total is not None else f"{self.done} {self.unit}s"
            parts = [f"{rate:.1f} {self.unit}s/s"]
        if self.total is not None and rate > 0 and self.done < self.total:
            parts.append(f"{duration((self.total - self.done) / rate)} left")
        elif self.total is not None and self.done >= self.total:
            parts.append(f"done in {duration(elapsed)}")
        extra = "; " + ", ".join(f"{key} {value}" for key, value in self._postfix.items()) if self._postfix else ""
        return f"{self.description}: {count} ({', '.join(parts)}{extra})"

    def close(self) -> None:
        """End the bar (or write the last plain line); once."""
        if self._closed:
            return
        self._closed = True
        if self._bar is not None:
            self._bar.close()
        elif self.done:
            notice(logger, "%s", self.line())
        if self._redirect is not None:
            self._redirect.close()
