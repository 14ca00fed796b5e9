"""The worker side of a peer extractor run in its own environment (:class:`evaluation.baselines.PeerWorker`).

Standard library only: it runs under the peer's Python (``.venv-newsplease``, ``.venv-fundus``), which has none of
the project's packages. The worker says it is ready with a first line ``{"ready": true, ...}``, then reads one
request ``{"html": ..., "url": ...}`` a line on standard input and writes one answer a line on standard output,
``{"text", "title", "authors", "date_publish", "language", "error"}`` (``date_publish`` as ISO 8601, ``error`` the
exception the peer raised on the page, else null).
"""

from __future__ import annotations

import json
import logging
import sys
import warnings
from collections.abc import Callable
from typing import Any

EMPTY: dict[str, Any] = {"text": "", "title": None, "authors": [], "date_publish": None, "language": None,
                         "error": None}

Reader = Callable[[str, "str | None"], dict[str, Any]]  # (html, url) -> answer; may raise


def quiet() -> None:
    """Silence the libraries' warnings and log lines (peers log each page's failures with their tracebacks)."""
    warnings.simplefilter("ignore")
    logging.disable(logging.CRITICAL)


def serve(read: Reader, info: dict[str, Any] | None = None) -> None:
    """Answer requests with ``read`` until standard input ends; a page ``read`` raises on gets its error."""
    out = sys.stdout
    sys.stdout = sys.stderr  # a print inside the libraries must not break the protocol
    out.write(json.dumps({"ready": True, **(info or {})}) + "\n")
    out.flush()
    for line in sys.stdin:
        request = json.loads(line)
        try:
            answer = {**EMPTY, **read(request["html"], request.get("url") or None)}
        except Exception as exc:  # counted by the caller as the page's failure
            answer = {**EMPTY, "error": f"{type(exc).__name__}: {exc}"[:300]}
        out.write(json.dumps(answer) + "\n")
        out.flush()
