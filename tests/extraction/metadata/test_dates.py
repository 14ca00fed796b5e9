"""Dates as news pages write them (extraction.metadata.dates)."""

from __future__ import annotations

from datetime import datetime

from extraction.metadata.dates import parse_date, relative_date, url_date


def test_dates() -> None:
    assert parse_date("2024-03-05T10:21:00Z") == "2024-03-05T10:21:00+00:00"
    assert parse_date("2024-03-05 10:21") == "2024-03-05T10:21:00"
    assert parse_date("2024年3月5日") == "2024-03-05"
    assert parse_date("Published March 5, 2024, 3:07 PM") == "2024-03-05T15:07:00"
    assert parse_date("5 March 2024") == "2024-03-05"
    assert parse_date("Published: 01.09.2008") is None  # 1 September or January 9: not guessed
    assert parse_date("7/5/2005 9:23:57 PM") is None
    # The year last is read when the day cannot be the month: American month first, European day first.
    assert parse_date("发布日期： 9/17/2004 5:54:13 AM") == "2004-09-17T05:54:13"
    assert parse_date("17.09.2004") == "2004-09-17"
    assert parse_date("12/25/2023, 10:30 pm") == "2023-12-25T22:30:00"
    assert parse_date("5/5/2005") == "2005-05-05"
    assert parse_date("05/5/2005") == "2005-05-05"
    assert parse_date("17/09.2004") is None  # one separator throughout
    assert parse_date("version 1.17.2004.5") is None
    # Alone or labelled only: a portal's header date and its headline list's times are not the page's date.
    assert parse_date("Originally Posted 1/16/2008 6:55:25 PM") == "2008-01-16T18:55:25"
    assert parse_date("Tuesday 15.01.2008") is None
    assert parse_date("• Ex-colonel opposes Iraq vet for Congress 1/15/2008, 3:42 p.m. EST") is None
    assert parse_date("2024-02-30") is None and parse_date("1800-01-01") is None
    assert relative_date("3小时前", parse_date_time("2024-03-05T02:00:00+00:00")) == "2024-03-04"
    assert relative_date("昨天 10:00", parse_date_time("2024-03-05T12:00:00+00:00")) == "2024-03-04"
    assert url_date("https://a.test/2024/03/05/story") == "2024-03-05"
    assert url_date("https://a.test/news/20240305/story.html") == "2024-03-05"
    assert url_date("https://a.test/articles/2025-12-15+Rust+GCC+backend") == "2025-12-15"
    assert url_date("https://a.test/news/story-12345678.html") is None


def parse_date_time(value: str) -> datetime:
    return datetime.fromisoformat(value)


def test_an_offset_no_place_has_leaves_the_day() -> None:
    """"+99:99" is no UTC offset (they run from -12:00 to +14:00): the day stays, the time goes, and the date
    is one ``datetime.fromisoformat`` reads."""
    assert parse_date("2024-03-05T10:00:00+99:99") == "2024-03-05"
    assert parse_date("2024-03-05T10:00:00+15:00") == "2024-03-05"
    assert parse_date("2024-03-05T10:00:00+14:00") == "2024-03-05T10:00:00+14:00"
    assert parse_date("2024-03-05T10:00:00-0530") == "2024-03-05T10:00:00-05:30"
    datetime.fromisoformat(parse_date("2024-03-05T10:00:00+0545") or "")
