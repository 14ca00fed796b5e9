"""Files written whole: the crawl report and the corpus replace their file only once the new one is complete."""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import IO


def replace_atomically(path: str | Path, write: Callable[[IO[bytes]], object]) -> Path:
    """Write the file at ``path`` through a temporary file beside it (``write`` fills it), renamed over it when
    complete: a kill or an error leaves the old file (or none) and no half-written one. Through a symbolic link the
    linked file is replaced (replacing the link would leave its file as it was). A new file gets the permissions the
    umask gives, a replaced one keeps its own. Returns the path written; IsADirectoryError for a folder or device."""
    target = Path(path).resolve()
    if target.exists() and not target.is_file():
        raise IsADirectoryError(21, "not a regular file (a folder, a device)", str(target))
    target.parent.mkdir(parents=True, exist_ok=True)
    mode = stat.S_IMODE(target.stat().st_mode) if target.exists() else None
    partial = target.with_name(f".{target.name}.{os.getpid()}.tmp")  # created with the umask's permissions
    try:
        with open(partial, "wb") as handle:
            write(handle)
            handle.flush()
            os.fsync(handle.fileno())
        if mode is not None:
            os.chmod(partial, mode)
        os.replace(partial, target)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    return target
