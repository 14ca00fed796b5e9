"""One loader for every ONNX model of the library: ``meta.json``, sessions, the process-wide cache.

Each model package (``extraction.blockclf.classifier``, ``extraction.pagetype.models``,
``extraction.web2text.model``) keeps its own validation (feature names and versions, classes)
and calls these helpers for what they have in common:

- ``read_meta(folder, hint)``: the folder's ``meta.json``, or a ``ModelError`` naming the file and
  the command that trains the model;
- ``session(path)``: an onnxruntime session with the library's options (one thread, CPU), or a
  ``ModelError`` naming the file;
- ``meta_version(folder)``: the version recorded in output records, a hash of ``meta.json``
  (every retraining writes a new one: its metrics, training-data hash and creation time);
- ``shared(load, folder, default)``: the models of a folder loaded once per process.

Folders come from the caller (Scrapy settings, command-line options): nothing here, nor in the
model packages, reads the environment. onnxruntime is imported on first use, so importing this
module (for ``ModelError``) costs nothing.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

if TYPE_CHECKING:
    import onnxruntime as ort

META_FILE = "meta.json"
# Hex digits of meta.json's SHA-256 kept as the model version: 48 bits, enough to tell apart the
# few models a project ever ships, short enough to read in a record.
VERSION_CHARS = 12
# One page at a time per crawl process: the crawl's parallelism is across pages and processes,
# and onnxruntime's own thread pools only add overhead (and threads) on the small per-page inputs.
INTRA_OP_THREADS = 1
INTER_OP_THREADS = 1
PROVIDERS = ("CPUExecutionProvider",)

T = TypeVar("T")


class ModelError(RuntimeError):
    """A model that cannot be used: a missing or unreadable file, or features, classes or a feature
    version that do not match this code. Raised when the models load (spider opened, command
    start), never per page."""


def read_meta(folder: str | Path, hint: str) -> dict[str, Any]:
    """Return the parsed ``meta.json`` of ``folder``; ``hint`` is the command that trains the model,
    named in the ``ModelError`` raised when the file is missing, unreadable or not a JSON object."""
    path = Path(folder) / META_FILE
    try:
        meta = json.loads(path.read_bytes())
    except FileNotFoundError:
        raise ModelError(f"no model in {folder}: {path} is missing (train one with `{hint}`)") from None
    except (OSError, ValueError) as exc:
        raise ModelError(f"cannot read {path}: {exc} (train with `{hint}`)") from exc
    if not isinstance(meta, dict):
        raise ModelError(f"{path} is not a JSON object (train with `{hint}`)")
    return meta


def meta_version(folder: str | Path) -> str:
    """Return the model version of ``folder``: the first ``VERSION_CHARS`` hex digits of the SHA-256
    of its ``meta.json`` bytes."""
    path = Path(folder) / META_FILE
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ModelError(f"cannot read {path}: {exc}") from exc
    return hashlib.sha256(data).hexdigest()[:VERSION_CHARS]


def session(path: str | Path) -> ort.InferenceSession:
    """Return an onnxruntime session for the model file ``path`` (CPU, one thread); raise
    ``ModelError`` naming the file when it is missing or not a model onnxruntime can load."""
    import onnxruntime as ort  # here: callers that only need ModelError do not load onnxruntime

    if not Path(path).is_file():
        raise ModelError(f"cannot load {path}: no such file")
    options = ort.SessionOptions()
    options.intra_op_num_threads = INTRA_OP_THREADS
    options.inter_op_num_threads = INTER_OP_THREADS
    try:
        return ort.InferenceSession(str(path), sess_options=options, providers=list(PROVIDERS))
    except Exception as exc:  # onnxruntime raises its own exception types for corrupt files
        raise ModelError(f"cannot load {path}: {exc}") from exc


_CACHE: dict[tuple[Callable[[Path], Any], Path], Any] = {}
_LOCK = threading.Lock()


def shared(load: Callable[[Path], T], folder: str | Path | None, default: Path) -> T:
    """Return ``load(folder)``, called once per process for each loader and resolved folder
    (``folder`` None or empty: ``default``). A load that raises is not cached."""
    resolved = Path(folder or default).resolve()
    key = (load, resolved)
    with _LOCK:  # the crawl loads from one thread; the lock keeps a second thread from loading twice
        if key not in _CACHE:
            _CACHE[key] = load(resolved)
        return cast(T, _CACHE[key])


def clear_cache() -> None:
    """Forget every shared model (tests that rewrite a model folder in place)."""
    with _LOCK:
        _CACHE.clear()
