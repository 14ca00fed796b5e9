"""The field's main-text extractors, run side by side with ours in the evaluation harness.

Each baseline is a function ``(html: str, url: str | None) -> str`` (the main text), its
package imported on first use only, so importing this module costs nothing and the crawl
never needs them. Names::

    trafilatura   trafilatura.extract with its defaults (no favor_precision/recall), no comments;
                  trafilatura-precision / trafilatura-recall: with favor_precision / favor_recall;
                  trafilatura-metadata: bare_extraction with with_metadata=True, its text (the same
                  text as trafilatura's, timed with the title, author, date ... a record of ours carries)
    readability   readability-lxml Document(html).summary(html_partial=True), made text with
                  our own visible_text (one line per block)
    justext       jusText with the English stoplist. jusText ships no Chinese stoplist, so on
                  Chinese pages it finds (almost) nothing: read its Chinese scores with that in mind
    boilerpy3     boilerpy3's ArticleExtractor
    goose3        goose3's cleaned_text
    news-please   news-please's ``from_html(html, url, fetch_images=False)``, its ``maintext``: newspaper4k,
                  readability-lxml and its own date and language readers, in its own environment
                  (``make newsplease``: ``.venv-newsplease``) and process (:class:`NewsPleaseWorker`)

The packages come from ``requirements-extras.txt`` (``make extras``); news-please's from
``requirements-newsplease.txt``. A missing one raises :class:`BaselineUnavailable` on ``load_baseline(name)``.
"""

from __future__ import annotations

import atexit
import importlib
import json
import os
import selectors
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

Baseline = Callable[[str, "str | None"], str]

INSTALL_HINT = "pip install -r requirements-extras.txt (make extras)"


class BaselineUnavailable(RuntimeError):
    """A baseline's package is not installed (or the name is unknown)."""


def _import(module: str, baseline: str) -> Any:
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise BaselineUnavailable(
            f"baseline {baseline!r} needs the Python package {module.split('.')[0]!r}, which cannot be "
            f"imported ({exc}); install it with: {INSTALL_HINT}"
        ) from exc


def _trafilatura(**options: bool) -> Baseline:
    trafilatura = _import("trafilatura", "trafilatura")

    def run(html: str, url: str | None) -> str:
        return trafilatura.extract(html, url=url, include_comments=False, **options) or ""

    return run


def _trafilatura_metadata() -> Baseline:
    trafilatura = _import("trafilatura", "trafilatura-metadata")

    def run(html: str, url: str | None) -> str:
        document = trafilatura.bare_extraction(html, url=url, include_comments=False, with_metadata=True)
        return (document.text if document is not None else None) or ""

    return run


def _readability() -> Baseline:
    readability = _import("readability", "readability")
    from extraction.dom.html import parse_html
    from extraction.dom.text import visible_text

    def run(html: str, url: str | None) -> str:
        summary = readability.Document(html, url=url).summary(html_partial=True)
        return visible_text(parse_html(summary))

    return run


def _justext() -> Baseline:
    justext = _import("justext", "justext")
    stoplist = justext.get_stoplist("English")  # no Chinese stoplist exists in jusText

    def run(html: str, url: str | None) -> str:
        paragraphs = justext.justext(html.encode("utf-8"), stoplist, encoding="utf-8")
        return "\n".join(p.text for p in paragraphs if not p.is_boilerplate)

    return run


def _boilerpy3() -> Baseline:
    extractors = _import("boilerpy3.extractors", "boilerpy3")

    def run(html: str, url: str | None) -> str:
        # A fresh extractor per page; on unparsable input it raises, which the harness counts.
        return extractors.ArticleExtractor(raise_on_failure=True).get_content(html) or ""

    return run


def _goose3() -> Baseline:
    goose3 = _import("goose3", "goose3")
    goose = goose3.Goose()

    def run(html: str, url: str | None) -> str:
        return goose.extract(raw_html=html, url=url).cleaned_text or ""

    return run


# news-please runs in its own environment: its newspaper4k and botocore pin python-dateutil below 3; htmldate runs
# here with 4.0.0.
NEWSPLEASE_ENV = "NEWSPLEASE_PYTHON"  # the Python of an environment with news-please; default .venv-newsplease's
NEWSPLEASE_HINT = "make newsplease (a .venv-newsplease with requirements-newsplease.txt)"
NEWSPLEASE_WORKER = Path(__file__).with_name("newsplease_worker.py")
NEWSPLEASE_TIMEOUT = 120.0  # seconds a page may take before the worker is replaced and the page counts as failed


def newsplease_python() -> Path:
    """Return the Python that runs news-please: ``$NEWSPLEASE_PYTHON``, else the repository's .venv-newsplease."""
    configured = os.environ.get(NEWSPLEASE_ENV)
    return Path(configured) if configured else Path(__file__).resolve().parent.parent / ".venv-newsplease/bin/python"


class NewsPleaseWorker:
    """news-please in a process of its environment (``evaluation/newsplease_worker.py``), one page at a time over
    JSON lines. ``extract`` gives its answer (text, title, authors, date_publish, language, error); a page over
    ``timeout`` seconds, or one that kills the worker, raises RuntimeError and the next page starts a fresh worker.
    Timing a call includes sending the page and its answer through the pipe: about 2 ms for a 250 KB page,
    against news-please's tens to hundreds of milliseconds."""

    def __init__(self, python: Path | None = None, timeout: float = NEWSPLEASE_TIMEOUT,
                 script: Path = NEWSPLEASE_WORKER) -> None:
        self.python = python or newsplease_python()
        self.timeout = timeout
        self.script = script
        self._process: subprocess.Popen[str] | None = None
        self._errors: TextIO | None = None
        atexit.register(self.close)

    def start(self) -> None:
        """Start the worker and wait until news-please is imported; BaselineUnavailable when it cannot be."""
        if not self.python.exists():
            raise BaselineUnavailable(f"baseline 'news-please' needs its environment, {self.python} is missing; "
                                      f"set {NEWSPLEASE_ENV} or run: {NEWSPLEASE_HINT}")
        self._errors = tempfile.TemporaryFile("w+", encoding="utf-8")  # noqa: SIM115 (closed in close())
        self._process = subprocess.Popen([str(self.python), str(self.script)], stdin=subprocess.PIPE,
                                         stdout=subprocess.PIPE, stderr=self._errors, text=True, encoding="utf-8")
        try:
            ready = self._line(self.timeout)
        except RuntimeError as exc:
            raise BaselineUnavailable(f"news-please did not start with {self.python} ({exc}); {NEWSPLEASE_HINT}") \
                from exc
        if json.loads(ready) != {"ready": True}:
            self.close()
            raise BaselineUnavailable(f"news-please's worker answered {ready[:200]!r} at start")

    def _line(self, timeout: float) -> str:
        process = self._process
        assert process is not None and process.stdout is not None
        with selectors.DefaultSelector() as selector:
            selector.register(process.stdout, selectors.EVENT_READ)
            line = process.stdout.readline() if selector.select(timeout) else None
        if not line:
            errors = self._stderr_tail()
            self.close()
            what = f"took over {timeout:g} s" if line is None else "died"
            raise RuntimeError(f"news-please's worker {what}" + (f": {errors}" if errors else ""))
        return line

    def _stderr_tail(self) -> str:
        if self._errors is None:
            return ""
        self._errors.seek(0)
        return " ".join(self._errors.read()[-500:].split())

    def extract(self, html: str, url: str | None) -> dict[str, Any]:
        if self._process is None:
            self.start()
        assert self._process is not None and self._process.stdin is not None
        try:
            self._process.stdin.write(json.dumps({"html": html, "url": url}) + "\n")
            self._process.stdin.flush()
        except (BrokenPipeError, OSError) as exc:
            self.close()
            raise RuntimeError(f"news-please's worker is gone: {exc}") from exc
        answer: dict[str, Any] = json.loads(self._line(self.timeout))
        return answer

    def close(self) -> None:
        process, self._process = self._process, None
        if process is not None:
            if process.stdin is not None:
                process.stdin.close()
            try:
                process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
            if process.stdout is not None:
                process.stdout.close()
        if self._errors is not None:
            self._errors.close()
            self._errors = None


def _newsplease() -> Baseline:
    worker = NewsPleaseWorker()
    worker.start()

    def run(html: str, url: str | None) -> str:
        answer = worker.extract(html, url)
        if answer["error"]:
            raise RuntimeError(answer["error"])  # the harness counts the page as failed (text "")
        return str(answer["text"])

    return run


BASELINES: dict[str, Callable[[], Baseline]] = {
    "trafilatura": _trafilatura,
    "trafilatura-precision": lambda: _trafilatura(favor_precision=True),
    "trafilatura-recall": lambda: _trafilatura(favor_recall=True),
    "trafilatura-metadata": _trafilatura_metadata,
    "readability": _readability,
    "justext": _justext,
    "boilerpy3": _boilerpy3,
    "goose3": _goose3,
    "news-please": _newsplease,
}


def baseline_names() -> list[str]:
    """Return the known baseline names, in their fixed order."""
    return list(BASELINES)


def load_baseline(name: str) -> Baseline:
    """Return the extractor function of baseline ``name``.

    Raises BaselineUnavailable for an unknown name or when its package is not installed.
    """
    try:
        factory = BASELINES[name]
    except KeyError:
        raise BaselineUnavailable(f"unknown baseline {name!r}; known: {', '.join(BASELINES)}") from None
    return factory()
