"""Why a request failed, as a short stable reason used in items and stats keys."""

from __future__ import annotations

import asyncio

from scrapy.exceptions import (
    CannotResolveHostError,
    DownloadCancelledError,
    DownloadConnectionRefusedError,
    DownloadFailedError,
    DownloadTimeoutError,
    IgnoreRequest,
    ResponseDataLossError,
)
from scrapy.http import Response
from scrapy.spidermiddlewares.httperror import HttpError
from twisted.internet import defer, error
from twisted.python.failure import Failure

from crawler.fetch_policy import FetchRefused
from crawler.robots import RobotsUnavailable


class PageTooLarge(IgnoreRequest):
    """The page body exceeded DOWNLOAD_MAXSIZE (checked after rendering too)."""


class NotHtml(IgnoreRequest):
    """The response is not an HTML document."""


class RedirectOffsite(IgnoreRequest):
    """A redirect to ``target``, outside the site's scope, that was not followed; ``response`` is the redirect."""

    def __init__(self, target: str, response: Response) -> None:
        self.target, self.response = target, response
        super().__init__(f"Redirect off the site, not followed: {response.url} -> {target}")


class RenderStuck(Exception):
    """A browser download outlived RENDER_DEADLINE: something below it stopped answering."""


# Substrings of browser (Playwright/Chromium) error messages, in match order.
_BROWSER_ERRORS = (
    ("ERR_TOO_MANY_REDIRECTS", "redirect_loop"),
    ("Timeout", "timeout"),
    ("ERR_CONNECTION_REFUSED", "connection_refused"),
    ("ERR_NAME_NOT_RESOLVED", "dns"),
    ("ERR_ABORTED", "aborted"),
    ("crash", "browser_crash"),
    ("Target page, context or browser has been closed", "browser_crash"),
    ("Browser has been closed", "browser_crash"),
    ("Target closed", "browser_crash"),
)


def failure_reason(failure: Failure) -> str:
    """Return a short reason for a failed request: http_404, timeout, redirect_loop, ..."""
    return exception_reason(failure.value) if failure.value is not None else "unknown"


def short_message(exc: BaseException) -> str:
    """Return the first line of an exception's message, at most 300 characters.

    Playwright appends the browser's whole log to some messages; logs need the gist.
    """
    return str(exc).strip().split("\n", 1)[0][:300]


def exception_reason(exc: BaseException) -> str:
    """Return the short reason for an exception raised while fetching a page."""
    if isinstance(exc, HttpError):
        return f"http_{exc.response.status}"
    if isinstance(exc, PageTooLarge):
        return "too_large"
    if isinstance(exc, NotHtml):
        return "not_html"
    if isinstance(exc, RenderStuck):
        return "render_stuck"
    if isinstance(exc, RedirectOffsite):
        return "redirect_offsite"
    if isinstance(exc, FetchRefused):
        return "fetch_refused"
    if isinstance(exc, RobotsUnavailable):
        return "robots_unavailable"
    if isinstance(exc, IgnoreRequest):
        message = str(exc)
        if "max redirections" in message:
            return "redirect_loop"
        if "robots.txt" in message:
            return "robots_forbidden"
        return "ignored"
    if isinstance(
        exc,
        (DownloadTimeoutError, error.TimeoutError, defer.TimeoutError, asyncio.TimeoutError, TimeoutError),
    ):
        return "timeout"
    if isinstance(exc, DownloadCancelledError):
        # Scrapy cancels a plain-HTTP download that outgrows DOWNLOAD_MAXSIZE.
        return "too_large" if "max size" in str(exc) else "cancelled"
    if isinstance(exc, (CannotResolveHostError, error.DNSLookupError)):
        return "dns"
    if isinstance(exc, (DownloadConnectionRefusedError, error.ConnectionRefusedError)):
        return "connection_refused"
    if isinstance(exc, (ResponseDataLossError, DownloadFailedError, error.ConnectionLost)):
        return "connection_lost"
    message = str(exc)
    if type(exc).__module__.startswith("playwright"):
        for needle, reason in _BROWSER_ERRORS:
            if needle in message:
                return reason
        return "browser_error"
    return type(exc).__name__.lower()
