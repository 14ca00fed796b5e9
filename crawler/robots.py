"""robots.txt read as Google and RFC 9309 read it: the first 500 KiB (``ROBOTSTXT_PARSER`` in the settings), and
an unreachable robots.txt as a site that allows nothing for the run (:class:`RobotsTxtMiddleware`).

Scrapy's Protego parser reads a robots.txt whole, in the crawl's own thread: a site's robots.txt of 7.7 MB (a
generated list of rules) took 5.5 s and 430 MB there. RFC 9309 (section 2.5) lets a crawler stop at a limit of at
least 500 KiB, the limit Google documents ("content which is after the maximum file size is ignored"); the file is
cut at the last line break before it, so no rule is read half.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scrapy import Request
from scrapy.downloadermiddlewares.robotstxt import RobotsTxtMiddleware as ScrapyRobotsTxtMiddleware
from scrapy.exceptions import IgnoreRequest
from scrapy.http import Response
from scrapy.robotstxt import ProtegoRobotParser, RobotParser
from scrapy.utils.defer import maybe_deferred_to_future
from scrapy.utils.httpobj import urlparse_cached
from twisted.internet.defer import Deferred

if TYPE_CHECKING:
    from typing import Self

    from scrapy.crawler import Crawler

ROBOTSTXT_MAX_BYTES = 500 * 1024


def robots_head(body: bytes, limit: int = ROBOTSTXT_MAX_BYTES) -> bytes:
    """Return the part of a robots.txt body that is read: all of it, or its lines within ``limit`` bytes."""
    if len(body) <= limit:
        return body
    head = body[:limit]
    end = max(head.rfind(b"\n"), head.rfind(b"\r"))
    return head[:end + 1] if end >= 0 else b""


class CappedRobotParser(ProtegoRobotParser):
    """Protego on the first ``ROBOTSTXT_MAX_BYTES`` of the file (module docstring); stat ``robotstxt/cut``."""

    @classmethod
    def from_crawler(cls, crawler: Crawler, robotstxt_body: bytes) -> Self:
        head = robots_head(robotstxt_body)
        if len(head) < len(robotstxt_body) and crawler is not None and crawler.stats is not None:
            crawler.stats.inc_value("robotstxt/cut")
        return super().from_crawler(crawler, head)


class RobotsUnavailable(IgnoreRequest):
    """robots.txt of the request's site could not be read (a network error, a 5xx or 429 answer)."""


class RobotsTxtMiddleware(ScrapyRobotsTxtMiddleware):
    """Scrapy's robots.txt middleware, with every request that waits for a site's robots.txt checked against it
    (:meth:`robot_parser`), and an unreachable robots.txt read as RFC 9309 (section 2.3.1.4) reads it.

    Scrapy allows every URL of a site whose robots.txt download failed, and parses the body of a 5xx answer as
    rules (an error page: no rule, so everything allowed). A crawl that happens to start while a server struggles
    (a resumed crawl sends a site's queued URLs at once) then fetched what the site forbids. Here the site's
    requests fail with :class:`RobotsUnavailable` for the run instead (``robots_unavailable``: a transient
    failure, tried again on the next run); stat ``robotstxt/unavailable``. A 4xx answer still means no rules.
    Requests the address policy refuses never get here (crawler/middlewares/fetch_policy.py runs first).
    """

    async def robot_parser(self, request: Request) -> RobotParser | None:
        """Return the parser of the request's site, waiting for its robots.txt when another request asked first.

        Scrapy 2.19 awaits the site's shared Deferred itself (``maybe_deferred_to_future``): the first waiter's
        future takes the Deferred's result and leaves None to the next ones, which Scrapy reads as "no robots.txt"
        and lets through. Every request that arrived while the file was downloading was allowed: in a resumed
        crawl, whose queued URLs of a site arrive at once, a forbidden page among them was fetched (issue 61).
        Each waiter here gets a Deferred of its own, fired with the result, which stays the shared one's.
        """
        parser = self._parsers.get(urlparse_cached(request).netloc)
        if not isinstance(parser, Deferred):
            return await super().robot_parser(request)
        waiter: Deferred[RobotParser | None] = Deferred()

        def relay(result: RobotParser | None) -> RobotParser | None:
            waiter.callback(result)
            return result

        parser.addCallback(relay)
        return await maybe_deferred_to_future(waiter)

    def process_request_2(self, rp: RobotParser | None, request: Request) -> None:
        if rp is None and not request.meta.get("dont_obey_robotstxt"):
            raise RobotsUnavailable("robots.txt unavailable")
        super().process_request_2(rp, request)

    async def _parse_robots(self, response: Response, netloc: str, request: Request) -> None:
        if response.status >= 500 or response.status == 429:
            self._stats.inc_value("robotstxt/response_count")
            self._stats.inc_value(f"robotstxt/response_status_count/{response.status}")
            self._robots_error(RobotsUnavailable(f"robots.txt answered {response.status}"), netloc)
            return
        await super()._parse_robots(response, netloc, request)

    def _robots_error(self, exc: Exception, netloc: str) -> None:
        self._stats.inc_value("robotstxt/unavailable")
        super()._robots_error(exc, netloc)
