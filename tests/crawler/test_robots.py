"""robots.txt read to its first 500 KiB, as RFC 9309 allows and Google does."""

from __future__ import annotations

from scrapy.utils.test import get_crawler

from crawler.robots import ROBOTSTXT_MAX_BYTES, CappedRobotParser, robots_head
from crawler.settings import ROBOTSTXT_PARSER


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
