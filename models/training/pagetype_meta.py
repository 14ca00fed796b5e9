"""Read-modify-write of ``models/pagetype/meta.json``, one section per model.

The page-type models are trained by separate scripts (the CNNs, the DOM/URL model, the fusion);
each owns one top-level section of the shared ``meta.json`` and replaces only that section, under
an exclusive file lock, so scripts running at once never drop each other's entries.
"""

from __future__ import annotations

import datetime as dt
import fcntl
import json
import os
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
PAGETYPE_DIR = REPO / "models" / "pagetype"
META_PATH = PAGETYPE_DIR / "meta.json"
META_VERSION = 1


def read_meta(path: Path = META_PATH) -> dict[str, Any]:
    """Return the whole meta file ({} when it does not exist yet)."""
    if not path.exists():
        return {}
    return dict(json.loads(path.read_text(encoding="utf-8")))


def update_meta(section: str, data: dict[str, Any], path: Path = META_PATH) -> None:
    """Replace ``section`` of the meta file with ``data`` (other sections kept), atomically."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_suffix(".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        meta = read_meta(path)
        meta["version"] = META_VERSION
        meta[section] = {**data, "updated": dt.date.today().isoformat()}
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(meta, indent=2, ensure_ascii=False, sort_keys=False) + "\n", encoding="utf-8")
        os.replace(tmp, path)
