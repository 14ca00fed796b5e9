"""The page flow in worker processes: every core extracts, and every page is bounded in time.

:func:`extraction.process.process` is pure CPU work (parsing, features, ONNX models). Run in the
calling thread it caps a crawl at one core, and a page that makes it loop would hold everything.
A :class:`PagePool` runs it in ``EXTRACT_WORKERS`` worker processes instead (pebble's process
pools):

- **One site, one worker.** Each site (``Page.site``) is given to one worker when its first page
  comes (the worker with the least work queued) and keeps it, so a site's pages are learned from
  in the order they come, in one template cache: the template library behaves as in one process
  (a site's first batch of ``TEMPLATES_BATCH_PAGES`` pages gives its templates, and every later
  page of the site is cleaned with them). Many sites spread over all workers; one site uses one
  worker, which its politeness limits (a few requests at a time to one host) leave enough.
- **Workers** start from a fork server (no copy of the crawl's threads, browser connections or
  event loop) and build their own page handler with the factory they are given: the crawl's
  (``pipelines.process.PageHandler``) archives the page and runs :func:`~extraction.process.process`
  with a :class:`~extraction.process.Context` of the worker's own (models loaded once per worker,
  a template library of its own on the shared store).
  Each worker is replaced after ``EXTRACT_MAX_PAGES_PER_WORKER`` pages, so memory that a library
  keeps or fragments cannot grow without bound over a long crawl.
- **A page over** ``EXTRACT_TIMEOUT`` seconds has its worker killed and replaced; its record
  gets ``error: "extract_timeout"``. A worker that dies under a page (a crash, the kernel's OOM
  killer) gives ``error: "extract_crashed"``. Either way the crawl goes on and the page's HTML is
  in the archive for later re-extraction.
- **Stats and logs** made in a worker travel back with the record: :class:`Outcome` carries the
  ``(key, n)`` counts of :func:`process` and the log lines, which the caller adds to its stats and
  logs under the original logger names.

``EXTRACT_WORKERS = 0`` runs the flow in the calling thread, as before (tests, debugging). Nothing
here imports Scrapy.
"""

from __future__ import annotations

import gc
import logging
import multiprocessing
import os
from collections import Counter, deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field
from multiprocessing.util import Finalize
from typing import Any, ClassVar, Generic, Protocol, TypeVar

from pebble import ProcessExpired, ProcessPool

from extraction.config import ComponentConfig
from extraction.page import Page
from extraction.record import Record

logger = logging.getLogger(__name__)

# The collector's thresholds once a process has started (Python's: 700, 10, 10). Pages make objects by the
# hundred thousand that their reference counts free; with 700 the collector ran about 4,000 young and 30 full
# collections over 5,000 replayed pages in the crawl process (8 s of its 43 s of CPU), with these about 50 young
# ones (1 s), and a worker's share went from 0.46 to 0.02 ms a page. A full collection may come after 3 middle
# ones, every 1.5 million allocations or so (CPython also waits until the objects new to the oldest generation
# are a quarter of those it held at the last full one), so cyclic garbage stays bounded over a long crawl.
GC_THRESHOLDS = (50_000, 10, 3)

# Imported once in the fork server, so a new worker starts with them loaded.
PRELOAD = ["numpy", "lxml.html", "onnxruntime", "extraction.process", "extraction.workers"]



class Handler(Protocol):
    """What a worker runs on each page: fills ``record`` from ``page`` and returns it."""

    def __call__(self, page: Page, record: Record) -> Record: ...


# A factory builds a worker's handler: ``factory(count, *args)`` with ``count(key, n)`` the worker's stats
# callback. It must be a module-level function (pickled by reference), its args picklable. A handler with
# a ``close()`` method has it called when its worker exits.
HandlerFactory = Callable[..., Handler]


@dataclass(frozen=True)
class WorkersConfig(ComponentConfig):
    """EXTRACT_* settings of the worker pool."""

    prefix: ClassVar[str] = "EXTRACT"
    workers: int = -1  # worker processes; -1: one per CPU this process may use; 0: in the calling thread
    timeout: float = 120.0  # s one page may take in a worker before the worker is killed
    # Pages after which a worker is replaced by a fresh one (0: never). Measured: a worker's memory grows by
    # about 190 MB over its first 250 real pages (caches, the jieba dictionary) and is flat from there.
    max_pages_per_worker: int = 5000

    def validate(self) -> None:
        if self.workers < -1:
            raise ValueError(f"EXTRACT_WORKERS must be -1 (one per CPU), 0 (in-process) or more, got {self.workers}")
        if self.timeout <= 0:
            raise ValueError(f"EXTRACT_TIMEOUT must be a positive number of seconds, got {self.timeout}")
        if self.max_pages_per_worker < 0:
            raise ValueError(f"EXTRACT_MAX_PAGES_PER_WORKER must be 0 or more, got {self.max_pages_per_worker}")

    @property
    def processes(self) -> int:
        """The number of worker processes (0: the flow runs in the calling thread)."""
        return usable_cpus() if self.workers == -1 else self.workers


def usable_cpus() -> int:
    """Return how many CPUs this process may run on (its affinity mask, not the machine's count)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # not Linux
        return max(1, os.cpu_count() or 1)


@dataclass
class Outcome:
    """A processed page: its record, the stats counts and the log lines made on the way."""

    record: Record
    counts: list[tuple[str, int]] = field(default_factory=list)
    logs: list[tuple[str, int, str]] = field(default_factory=list)  # (logger name, level, message)


# -- the worker side ------------------------------------------------------------------------------

_handler: Handler | None = None
_failure: str | None = None
_counts: Counter[str] = Counter()
_logs: list[tuple[str, int, str]] = []


class _Collect(logging.Handler):
    """Keeps the worker's log lines for the current page (sent back with its outcome)."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            _logs.append((record.name, record.levelno, record.getMessage()))
        except Exception:  # a bad format string must not fail the page
            _logs.append((record.name, record.levelno, str(record.msg)))


def _count(key: str, n: int = 1) -> None:
    _counts[key] += n


def _start_worker(factory: HandlerFactory, args: tuple[Any, ...], log_level: int) -> None:
    """Pool initializer: logging to the collector, then the handler (models, template library, archive).

    A factory that raises leaves the worker without a handler and the reason in ``_failure``: its pages
    fail with that reason (and :meth:`PagePool.start` reports it) instead of the worker dying at every start.
    """
    global _handler, _failure
    root = logging.getLogger()
    root.handlers[:] = [_Collect()]
    root.setLevel(log_level)
    try:
        _handler = factory(_count, *args)
    except Exception as exc:
        _failure = f"{type(exc).__name__}: {exc}"
        return
    closer = getattr(_handler, "close", None)
    if callable(closer):  # e.g. parks the unfinished template batches when the worker exits
        Finalize(_handler, closer, exitpriority=10)
    settle_gc()


def settle_gc() -> None:
    """Tune the garbage collector of a process that has started: what lives as long as it (models, modules,
    settings, the site list) leaves the collector's generations (``gc.freeze``), so full collections no longer
    walk it (30.7 -> 29.3 ms a WCXB page in a worker), and young collections run every ``GC_THRESHOLDS[0]``
    allocations. Garbage from start-up is collected first, so none of it is frozen."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLDS)


def _release(site: str) -> None:
    """Let this worker's handler write what it keeps of ``site`` (its template batch) and forget it."""
    releaser = getattr(_handler, "release", None)
    if callable(releaser):
        releaser(site)


def _ready() -> str | None:
    """Return None when this worker can process pages, else why it cannot."""
    return None if _handler is not None else _failure or "worker not initialised"


def _run(page: Page, record: Record) -> Outcome:
    """Process one page in a worker."""
    if _handler is None:
        raise RuntimeError(f"the extraction worker could not start: {_failure}")
    _counts.clear()
    _logs.clear()
    try:
        done = _handler(page, record)
    finally:
        counts, logs = list(_counts.items()), list(_logs)
    return Outcome(done, counts, logs)


# -- the caller's side ----------------------------------------------------------------------------


def _forkserver_context(modules: list[str]) -> Any:
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(PRELOAD + [name for name in modules if name not in PRELOAD])
    return context


def warm_up(factory: HandlerFactory) -> None:
    """Start the fork server now: it imports ``PRELOAD`` and the module of ``factory`` (about 1.3 s for the
    crawl's), beside the caller's own start-up instead of before the first worker. A :class:`PagePool` made
    later with that factory forks its workers from it, and they start with all of it loaded. (The preload
    list counts only when the server starts: a server already running keeps its own, and a factory's module
    it lacks is then imported by each worker.)"""
    from multiprocessing import forkserver

    _forkserver_context([factory.__module__])
    forkserver.ensure_running()


class PagePool:
    """Processes pages in worker processes (module docstring); ``submit`` returns a future of an Outcome.

    ``submit`` and ``close`` are called from one thread (the crawl's reactor thread).
    """

    def __init__(self, config: WorkersConfig, factory: HandlerFactory, args: tuple[Any, ...] = (),
                 log_level: int = logging.INFO, pin_sites: bool = True) -> None:
        self.config = config
        # A site's pages go to one worker (its templates are learned in order); off when nothing is learned, so
        # that the pages of one site spread over every worker (``scrapy extract --site``).
        self.pin_sites = pin_sites
        self.processes = config.processes
        if self.processes < 1:
            raise ValueError("PagePool needs at least one worker (EXTRACT_WORKERS=0 runs in the calling thread)")
        # Its module is imported once in the fork server, not in every worker, when the server starts here.
        context = _forkserver_context([factory.__module__])
        self._workers = [ProcessPool(max_workers=1, max_tasks=config.max_pages_per_worker, initializer=_start_worker,
                                     initargs=(factory, args, log_level), context=context)
                         for _ in range(self.processes)]
        self._queued: list[set[Future[Outcome]]] = [set() for _ in self._workers]
        self._site_worker: dict[str, int] = {}

    def start(self, timeout: float = 300.0) -> None:
        """Start every worker and wait until each has built its handler; raise RuntimeError with the reason
        when one cannot (a model that does not load, say), so a crawl stops before it fetches anything."""
        futures = [pool.schedule(_ready, timeout=timeout) for pool in self._workers]
        for future in futures:
            try:
                failure = future.result()
            except Exception as exc:
                failure = f"{type(exc).__name__}: {exc}"
            if failure:
                self.stop()
                raise RuntimeError(f"extraction worker failed to start: {failure}")

    def worker_for(self, site: str | None) -> int:
        """Return the index of the worker that processes ``site``'s pages (given at its first page)."""
        worker = self._site_worker.get(site) if site is not None else None
        if worker is None:
            for queued in self._queued:
                queued.difference_update([future for future in queued if future.done()])
            sites = [0] * len(self._workers)
            for index in self._site_worker.values():
                sites[index] += 1
            worker = min(range(len(self._workers)), key=lambda i: (len(self._queued[i]), sites[i]))
            if site is not None:
                self._site_worker[site] = worker
        return worker

    def submit(self, page: Page, record: Record) -> Future[Outcome]:
        """Queue ``page`` (its fetched fields, not its parsed tree) for processing into ``record``."""
        worker = self.worker_for(page.site if self.pin_sites else None)
        future: Future[Outcome] = self._workers[worker].schedule(_run, args=(page, record),
                                                                 timeout=self.config.timeout)
        queued = self._queued[worker]
        if len(queued) > 64:
            queued.difference_update([done for done in queued if done.done()])
        queued.add(future)
        return future

    def release(self, site: str) -> Future[None] | None:
        """Have the worker of ``site`` write what it keeps of the site (its handler's ``release``: the template
        batch), after the site's pages queued there, and unpin the site; return the future of that, None when no
        page of the site came."""
        worker = self._site_worker.pop(site, None)
        if worker is None:
            return None
        future: Future[None] = self._workers[worker].schedule(_release, args=(site,), timeout=self.config.timeout)
        return future

    def close(self) -> None:
        """Let the queued pages finish, then stop the workers (they park their template batches)."""
        for pool in self._workers:
            pool.close()
        for pool in self._workers:
            pool.join()

    def stop(self) -> None:
        """Stop the workers now; queued pages are dropped."""
        for pool in self._workers:
            pool.stop()
        for pool in self._workers:
            pool.join()


Tag = TypeVar("Tag")


class InOrder(Generic[Tag]):
    """Pages processed in a :class:`PagePool`, their records given back in the order they were added, with at most
    ``window`` pages in the workers at once (a batch command's output in its input's order, its memory bounded).
    Without a pool, ``handler`` processes each page as it is added. A worker's log lines are logged here under
    their loggers' names; a page over EXTRACT_TIMEOUT or whose worker died gets its record's error
    (:func:`failure_outcome`). Each page comes with a ``tag`` (what the caller needs to finish its record) and
    goes out with it; an entry without a page keeps its place and gives back the record it came with."""

    def __init__(self, pool: PagePool | None, handler: Handler | None, window: int) -> None:
        if (pool is None) == (handler is None):
            raise ValueError("InOrder needs a pool or a handler, not both")
        self.pool = pool
        self.handler = handler
        self.window = window
        self.queued: deque[tuple[Tag, Record | None, Future[Outcome] | None]] = deque()

    def add(self, tag: Tag, page: Page | None, record: Record | None) -> Iterator[tuple[Tag, Record | None]]:
        """Take one page (None: ``record`` as it is, in its place); yield the entries done by then, in order."""
        if self.pool is None:
            assert self.handler is not None
            yield tag, self.handler(page, record) if page is not None and record is not None else record
            return
        future = self.pool.submit(page, record) if page is not None and record is not None else None
        self.queued.append((tag, record, future))
        while self.queued and (len(self.queued) > self.window or self._done(self.queued[0][2])):
            yield self._next()

    def drain(self) -> Iterator[tuple[Tag, Record | None]]:
        """Yield the entries still queued, in order."""
        while self.queued:
            yield self._next()

    def close(self, finished: bool) -> None:
        """Stop the workers, once the queued pages are done when ``finished`` (else they are dropped: an interrupted
        run), or close the handler (its template library)."""
        if self.pool is not None:
            if finished:
                self.pool.close()
            else:
                self.pool.stop()
        closer = getattr(self.handler, "close", None)
        if callable(closer):
            closer()

    @staticmethod
    def _done(future: Future[Outcome] | None) -> bool:
        return future is None or future.done()

    def _next(self) -> tuple[Tag, Record | None]:
        tag, record, future = self.queued.popleft()
        if future is None or record is None:
            return tag, record
        assert self.pool is not None
        try:
            outcome = future.result()
        except Exception as exc:  # over EXTRACT_TIMEOUT, a dead worker: the record says so
            outcome = failure_outcome(record, exc, self.pool.config.timeout)
        for name, level, message in outcome.logs:
            logging.getLogger(name).log(level, "%s", message)
        return tag, outcome.record


def failure_outcome(record: Record, exc: BaseException, timeout: float) -> Outcome:
    """Return the outcome of a page whose worker timed out, died or raised: ``record`` with its error."""
    if isinstance(exc, FutureTimeout):
        record.error = "extract_timeout"
        message = f"processing took over {timeout:g} s: the worker was replaced"
    elif isinstance(exc, ProcessExpired):
        record.error = "extract_crashed"
        message = f"the worker died (exit code {exc.exitcode})"
    else:
        record.error = "extract_failed"
        message = f"{type(exc).__name__}: {exc}"
    url = record.final_url or record.url
    return Outcome(record, [(f"extract/error/{record.error.removeprefix('extract_')}", 1)],
                   [(__name__, logging.WARNING, f"Extraction of {url} failed ({record.error}): {message}")])
