"""Rendering outside the crawl's downloader: saved pages in Chromium (``offline``), and the
screenshot checks shared with the crawl (``screenshots``); which Chromium renders (``chromium_path``)."""

from __future__ import annotations

import os
from pathlib import Path

# Debian's builds, in order of preference. chromium-headless-shell is Chromium's "old" headless mode
# (the browser Playwright itself runs headless): measured on 120 real pages, 2 cores, 4 pages at once,
# 2.16 pages/s against 1.72 for the full browser's new headless mode, same screenshots
# (docs/guides/rendering.md).
CHROMIUM_CANDIDATES = ("/usr/bin/chromium-headless-shell", "/usr/bin/chromium")


def chromium_path() -> str:
    """Return the browser executable: ``$CHROMIUM_PATH``, else the first of CHROMIUM_CANDIDATES installed."""
    chosen = os.environ.get("CHROMIUM_PATH")
    if chosen:
        return chosen
    return next((path for path in CHROMIUM_CANDIDATES if Path(path).exists()), CHROMIUM_CANDIDATES[-1])
