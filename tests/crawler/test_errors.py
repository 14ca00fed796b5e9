from __future__ import annotations

import pytest
from playwright.async_api import Error as PlaywrightError
from playwright.async_api import TimeoutError as PlaywrightTimeoutError
from scrapy import Request
from scrapy.exceptions import (
    CannotResolveHostError,
    DownloadCancelledError,
    DownloadConnectionRefusedError,
    DownloadTimeoutError,
    IgnoreRequest,
)
from scrapy.http import Response
from scrapy.spidermiddlewares.httperror import HttpError
from twisted.python.failure import Failure

from crawler.errors import NotHtml, PageTooLarge, failure_reason


def _reason(exc: BaseException) -> str:
    try:
        raise exc
    except BaseException:
        return failure_reason(Failure())


@pytest.mark.parametrize(
    ("exc", "reason"),
    [
        (HttpError(Response("http://a.test/", status=404), "Ignoring"), "http_404"),
        (HttpError(Response("http://a.test/", status=500), "Ignoring"), "http_500"),
        (IgnoreRequest("max redirections reached"), "redirect_loop"),
        (IgnoreRequest("Forbidden by robots.txt"), "robots_forbidden"),
        (PageTooLarge("big"), "too_large"),
        (NotHtml("pdf"), "not_html"),
        (DownloadTimeoutError("took too long"), "timeout"),
        (DownloadCancelledError("Expected to receive 9 bytes which is larger than download max size (1)"),
         "too_large"),
        (CannotResolveHostError("x"), "dns"),
        (DownloadConnectionRefusedError("x"), "connection_refused"),
        (PlaywrightTimeoutError("Timeout 3000ms exceeded"), "timeout"),
        (PlaywrightError("net::ERR_TOO_MANY_REDIRECTS at http://a.test/"), "redirect_loop"),
        (PlaywrightError("Target page, context or browser has been closed"), "browser_crash"),
        (PlaywrightError("Page crashed"), "browser_crash"),
        (PlaywrightError("something new"), "browser_error"),
        (ValueError("x"), "valueerror"),
    ],
)
def test_failure_reason(exc: BaseException, reason: str) -> None:
    assert _reason(exc) == reason


def test_reason_is_stable_for_request_failures() -> None:
    failure = Failure(DownloadTimeoutError("t"))
    failure.request = Request("http://a.test/")  # type: ignore[attr-defined]
    assert failure_reason(failure) == "timeout"
