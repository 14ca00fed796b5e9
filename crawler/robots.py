"""robots.txt read as Google and RFC 9309 read it: the first 500 KiB (``ROBOTSTXT_PARSER`` in the settings).

Scrapy's Protego parser reads a robots.txt whole, in the crawl's own thread: a site's robots.txt of 7.7 MB (a
generated list of rules) took 5.5 s and 430 MB there. RFC 9309 (section 2.5) lets a crawler stop at a limit of at
least 500 KiB, the limit Google documents ("content which is after the maximum file size is ignored"); the file is
cut at the last line break before it, so no rule is read half.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from scrapy.downloadermiddlewares.robotstxt import RobotsTxtMiddleware as ScrapyRobotsTxtMiddleware
from scrapy.robotstxt import ProtegoRobotParser, RobotParser
from scrapy.utils.defer import maybe_deferred_to_future
from scrapy.utils.httpobj import urlparse_cached
from twisted.internet.defer import Deferred

if TYPE_CHECKING:
    from typing import Self

    from scrapy import Request
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


class RobotsTxtMiddleware(ScrapyRobotsTxtMiddleware):
    """Scrapy's robots.txt middleware (DOWNLOADER_MIDDLEWARES), with every request that waits for its host's
    robots.txt given the parser.

    Scrapy 2.19 makes the requests that come while a host's robots.txt is being fetched await one Deferred through
    ``maybe_deferred_to_future``, which consumes its result (Twisted's ``asFuture``): the first of them gets the
    parser, every other one None, which the middleware reads as "no robots.txt" and lets through. A crawl that
    starts many requests to a host at once (a resumed round's queued pages, several ``extract -u`` URLs) fetched
    pages its robots.txt forbids. Here each waiter gets a Deferred of its own, fired with the parser and handing it
    on (as Scrapy did before it moved to ``async def``, scrapy/scrapy#6802)."""

    async def robot_parser(self, request: Request) -> RobotParser | None:
        pending = self._parsers.get(urlparse_cached(request).netloc)
        if not isinstance(pending, Deferred):
            return await super().robot_parser(request)  # known, or the first request: it fetches the file
        waiter: Deferred[RobotParser | None] = Deferred()

        def hand_on(result: Any) -> Any:
            waiter.callback(result)
            return result

        pending.addBoth(hand_on)
        return await maybe_deferred_to_future(waiter)
