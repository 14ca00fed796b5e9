"""The crawl's log levels: NOTICE, between INFO and WARNING, for the few lines a user reads by default.

Every command runs at ``LOG_LEVEL = "NOTICE"`` (crawler/settings.py): what it prints is its progress line, its
warnings and errors, and a short summary at the end. ``-L INFO`` (or ``-s LOG_LEVEL=INFO``) brings back
Scrapy's own lines (versions, settings, middlewares, the stats dump) and the project's lifecycle lines,
``-L DEBUG`` one line per page and request.
"""

from __future__ import annotations

import logging

NOTICE = 25  # logging.INFO < NOTICE < logging.WARNING
logging.addLevelName(NOTICE, "NOTICE")


def notice(logger: logging.Logger, message: str, *args: object) -> None:
    """Log ``message`` (lazy ``%`` arguments) at NOTICE: shown by default."""
    logger.log(NOTICE, message, *args)
