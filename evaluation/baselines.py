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
                  (``make newsplease``: ``.venv-newsplease``) and process (:class:`PeerWorker`)
    fundus        Fundus's parser for the page's publisher (``publisher.parser().parse(html)``, the newest
                  parser version), its body as text; a page of a site Fundus has no parser for fails. In
                  ``.venv-fundus`` (``make fundus``)

The packages come from ``requirements-extras.txt`` (``make extras``); news-please's and Fundus's from
``requirements-newsplease.txt`` and ``requirements-fundus.txt``. A missing one raises :class:`BaselineUnavailable`
on ``load_baseline(name)``.
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
from dataclasses import dataclass
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


# Peers that cannot share the project's environment run in their own (``make newsplease``, ``make fundus``) and
# process: news-please's newspaper4k and botocore pin python-dateutil below 3, where htmldate runs here with 4.0.0;
# Fundus pins lxml below 6.
PEER_TIMEOUT = 120.0  # seconds a page may take before the worker is replaced and the page counts as failed


REPOSITORY = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Peer:
    """A peer extractor run by a worker module with the Python of its own environment."""

    name: str  # the baseline's name
    module: str  # the worker (evaluation.peer_protocol's protocol), run with -m from the repository
    env: str  # the environment variable naming its Python
    venv: str  # the environment in the repository that `make <target>` builds
    target: str  # that make target

    def python(self) -> Path:
        """Return the Python that runs the peer: ``$<env>``, else the repository's environment's."""
        configured = os.environ.get(self.env)
        return Path(configured) if configured else REPOSITORY / self.venv / "bin/python"

    @property
    def hint(self) -> str:
        return f"make {self.target} (a {self.venv} with requirements-{self.target}.txt)"


NEWSPLEASE = Peer("news-please", "evaluation.newsplease_worker", "NEWSPLEASE_PYTHON", ".venv-newsplease", "newsplease")
FUNDUS = Peer("fundus", "evaluation.fundus_worker", "FUNDUS_PYTHON", ".venv-fundus", "fundus")


class PeerWorker:
    """A peer in a process of its environment (``evaluation/<peer>_worker.py``), one page at a time over JSON lines
    (:mod:`evaluation.peer_protocol`); the ready line's other fields are kept as ``info``. ``command`` replaces the
    worker's command line (``[python, "-m", module]``, run in the repository). A page over
    ``timeout`` seconds, or one that kills the worker, raises RuntimeError and the next page starts a fresh worker.
    Timing a call includes sending the page and its answer through the pipe: about 2 ms for a 250 KB page,
    against the peers' tens to hundreds of milliseconds."""

    def __init__(self, peer: Peer, timeout: float = PEER_TIMEOUT, command: list[str] | None = None) -> None:
        self.peer = peer
        self.python = Path(command[0]) if command else peer.python()
        self.command = command or [str(self.python), "-m", peer.module]
        self.timeout = timeout
        self.info: dict[str, Any] = {}
        self._process: subprocess.Popen[str] | None = None
        self._errors: TextIO | None = None
        atexit.register(self.close)

    def start(self) -> None:
        """Start the worker and wait until the peer is imported; BaselineUnavailable when it cannot be."""
        name = self.peer.name
        if not self.python.exists():
            raise BaselineUnavailable(f"baseline {name!r} needs its environment, {self.python} is missing; "
                                      f"set {self.peer.env} or run: {self.peer.hint}")
        self._errors = tempfile.TemporaryFile("w+", encoding="utf-8")  # noqa: SIM115 (closed in close())
        self._process = subprocess.Popen(self.command, cwd=REPOSITORY, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         stderr=self._errors, text=True, encoding="utf-8")
        try:
            ready = self._line(self.timeout)
        except RuntimeError as exc:
            raise BaselineUnavailable(f"{name} did not start with {self.python} ({exc}); {self.peer.hint}") from exc
        info = json.loads(ready)
        if not isinstance(info, dict) or info.pop("ready", None) is not True:
            self.close()
            raise BaselineUnavailable(f"{name}'s worker answered {ready[:200]!r} at start")
        self.info = info

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
            raise RuntimeError(f"{self.peer.name}'s worker {what}" + (f": {errors}" if errors else ""))
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
            raise RuntimeError(f"{self.peer.name}'s worker is gone: {exc}") from exc
        answer: dict[str, Any] = json.loads(self._line(self.timeout))
        return answer

    def read(self, html: str, url: str | None) -> dict[str, Any]:
        """Return the peer's answer for a page it read; RuntimeError for one it raised on (a candidate's failure)."""
        answer = self.extract(html, url)
        if answer["error"]:
            raise RuntimeError(answer["error"])
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


def _peer(peer: Peer) -> Baseline:
    worker = PeerWorker(peer)
    worker.start()
    return peer_baseline(worker)


def peer_baseline(worker: PeerWorker) -> Baseline:
    """Return the baseline function of a started peer worker: the text of its answer."""

    def run(html: str, url: str | None) -> str:
        return str(worker.read(html, url)["text"])  # a page the peer raised on: the harness counts it as failed

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
    "news-please": lambda: _peer(NEWSPLEASE),
    "fundus": lambda: _peer(FUNDUS),
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
