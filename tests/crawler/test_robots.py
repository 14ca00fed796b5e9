"""robots.txt read to its first 500 KiB, as RFC 9309 allows and Google does; an unreachable one allows nothing."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from scrapy import Request, Spider
from scrapy.exceptions import IgnoreRequest
from scrapy.http import Response
from scrapy.utils.test import get_crawler
from twisted.internet.defer import Deferred

from crawler.errors import exception_reason
from crawler.robots import ROBOTSTXT_MAX_BYTES, CappedRobotParser, RobotsTxtMiddleware, RobotsUnavailable, robots_head
from crawler.settings import ROBOTSTXT_PARSER
from crawler.state import TRANSIENT_ERRORS


def test_the_head_ends_at_a_line_break_within_the_limit() -> None:
    assert robots_head(b"User-agent: *\nDisallow: /a\n") == b"User-agent: *\nDisallow: /a\n"
    assert robots_head(b"User-agent: *\nDisallow: /private\n", limit=25) == b"User-agent: *\n"
    assert robots_head(b"User-agent: *\r\nDisallow: /private\r\n", limit=26) == b"User-agent: *\r\n"
    assert robots_head(b"x" * 40, limit=25) == b""  # one line longer than the limit: nothing read


def test_rules_past_500_kib_are_not_read_and_the_cut_is_counted() -> None:
    filler = b"".join(b"Disallow: /generated/%d\n" % n for n in range(40_000))  # about 1 MB of rules
    assert len(filler) > ROBOTSTXT_MAX_BYTES
    body = b"User-agent: *\nDisallow: /private/\n" + filler + b"Disallow: /late/\n"
    crawler = get_crawler(settings_dict={"ROBOTSTXT_PARSER": ROBOTSTXT_PARSER})
    parser = CappedRobotParser.from_crawler(crawler, body)
    assert not parser.allowed("https://a.example/private/1", "newscorpus")
    assert not parser.allowed("https://a.example/generated/5", "newscorpus")
    assert parser.allowed("https://a.example/late/1", "newscorpus")  # past the limit
    assert crawler.stats is not None and crawler.stats.get_value("robotstxt/cut") == 1
    small = get_crawler()
    CappedRobotParser.from_crawler(small, b"User-agent: *\nDisallow: /private/\n")
    assert small.stats is not None and small.stats.get_value("robotstxt/cut") is None


def _robots_middleware() -> Any:
    crawler = get_crawler(Spider, {"ROBOTSTXT_OBEY": True, "ROBOTSTXT_PARSER": ROBOTSTXT_PARSER})
    assert crawler.stats is not None
    crawler.stats.open_spider()
    return RobotsTxtMiddleware.from_crawler(crawler), crawler.stats


@pytest.mark.parametrize(("status", "body", "allowed"), [
    (200, b"User-agent: *\nDisallow: /private/\n", {"/a": True, "/private/x": False}),
    (404, b"<html>Not found</html>", {"/a": True, "/private/x": True}),  # no robots.txt: no rules
    (503, b"User-agent: *\nAllow: /\n", {"/a": None, "/private/x": None}),  # unreachable: nothing for the run
    (500, b"<html>Error</html>", {"/a": None, "/private/x": None}),
    (429, b"", {"/a": None, "/private/x": None}),
])
def test_an_unreachable_robots_txt_allows_nothing(status: int, body: bytes, allowed: dict[str, bool | None]) -> None:
    middleware, stats = _robots_middleware()
    netloc = "news.test"
    middleware._parsers[netloc] = Deferred()
    response = Response("http://news.test/robots.txt", status=status, body=body)
    asyncio.run(middleware._parse_robots(response, netloc, Request("http://news.test/a")))
    parser = middleware._parsers[netloc]
    for path, expected in allowed.items():
        request = Request(f"http://news.test{path}")
        if expected is None:
            with pytest.raises(RobotsUnavailable):
                middleware.process_request_2(parser, request)
            assert exception_reason(RobotsUnavailable("robots.txt unavailable")) == "robots_unavailable"
        elif expected:
            middleware.process_request_2(parser, request)
        else:
            with pytest.raises(IgnoreRequest, match=r"Forbidden by robots\.txt"):
                middleware.process_request_2(parser, request)
    assert stats.get_value("robotstxt/unavailable") == (1 if None in allowed.values() else None)


def test_a_robots_txt_that_could_not_be_downloaded_allows_nothing() -> None:
    middleware, stats = _robots_middleware()
    middleware._parsers["down.test"] = Deferred()
    middleware._robots_error(ConnectionRefusedError("refused"), "down.test")
    with pytest.raises(RobotsUnavailable):
        middleware.process_request_2(middleware._parsers["down.test"], Request("http://down.test/a"))
    middleware.process_request_2(None, Request("http://down.test/a", meta={"dont_obey_robotstxt": True}))
    assert stats.get_value("robotstxt/unavailable") == 1
    assert "robots_unavailable" in TRANSIENT_ERRORS  # the page is tried again on the next run
