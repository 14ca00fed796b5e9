"""Dates in the forms news pages write them, as ISO 8601: ISO and slashed dates, Chinese (2024年3月5日
10:21), English month names, the year last (only when the day cannot be the month), Chinese relative dates
(3小时前) against the fetch time, a URL's date; and htmldate's search as the last source."""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, timedelta
from urllib.parse import urlsplit

from lxml import html

MIN_YEAR = 1995

_ISO_RE = re.compile(r"(\d{4})-(\d{1,2})-(\d{1,2})(?:[T\s]+(\d{1,2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?"
                     r"\s*(Z|[+-]\d{2}:?\d{2}|UTC|GMT)?)?", re.I)
_SLASH_RE = re.compile(r"(\d{4})[/.](\d{1,2})[/.](\d{1,2})(?:\s+(\d{1,2}):(\d{2})(?::(\d{2}))?)?")
_ZH_DATE_RE = re.compile(r"(\d{4})\s*年\s*(\d{1,2})\s*月\s*(\d{1,2})\s*日(?:\s*(\d{1,2})\s*[:：时]\s*(\d{2})"
                         r"(?:\s*[:：分]\s*(\d{2}))?)?")
# Year last (9/17/2004 5:54:13 AM, 17.09.2004): month first on American pages, day first on European ones,
# so read only when one of the two is over 12 (or both are the same); and only alone or labelled
# ("Posted 1/16/2008", "发布日期：9/17/2004"): a portal's header shows today's date ("Tuesday 15.01.2008")
# and its headline lists their times ("• Headline 1/15/2008, 3:42 p.m.").
_YEAR_LAST_RE = re.compile(r"(?<![\d./])(\d{1,2})([/.])(\d{1,2})\2(\d{4})(?![\d./])"
                           r"(?:,?\s+(\d{1,2}):(\d{2})(?::(\d{2}))?(?:\s*([ap])\.?m\.?)?)?", re.I)
_ZH_RELATIVE_RE = re.compile(r"(\d+)\s*(分钟|小时|天)前|(昨天|前天|今天)")
_MONTHS = {name: number for number, names in enumerate((
    ("january", "jan"), ("february", "feb"), ("march", "mar"), ("april", "apr"), ("may",), ("june", "jun"),
    ("july", "jul"), ("august", "aug"), ("september", "sep", "sept"), ("october", "oct"),
    ("november", "nov"), ("december", "dec")), start=1) for name in names}
MONTH_NAMES = "|".join(sorted(_MONTHS, key=len, reverse=True))
_EN_DATE_RE = re.compile(
    rf"\b(?:(?P<m1>{MONTH_NAMES})\.?\s+(?P<d1>\d{{1,2}})(?:st|nd|rd|th)?,?\s+(?P<y1>\d{{4}})"
    rf"|(?P<d2>\d{{1,2}})(?:st|nd|rd|th)?\s+(?P<m2>{MONTH_NAMES})\.?,?\s+(?P<y2>\d{{4}}))"
    r"(?:(?:,|\s+at|\s*[|·-])?\s*(?P<h>\d{1,2}):(?P<mi>\d{2})\s*(?P<ap>[ap]\.?m\.?)?)?", re.I)
_URL_DATE_RE = re.compile(r"/((?:19|20)\d{2})[/_-]?(0[1-9]|1[0-2])[/_-]?(0[1-9]|[12]\d|3[01])(?:[/_.+-]|$)|"
                          r"/((?:19|20)\d{2})/(0?[1-9]|1[0-2])/(0?[1-9]|[12]\d|3[01])/")
_PUBLISHED_WORDS = re.compile(r"发布时间|发表时间|发布日期|发表于|发布于|时间|日期|published|posted|updated|"
                              r"last modified|modified", re.I)
_LETTER_RE = re.compile(r"[^\W\d_]")
DATELINE_WORDS = re.compile(_PUBLISHED_WORDS.pattern + r"|更新|来源|\bby\b", re.I)
MODIFIED_WORDS = re.compile(r"updated|last modified|modified|更新时间|更新于|修改时间", re.I)


def _zone(value: str | None) -> str | None:
    """Return the UTC offset as ISO 8601 writes it ("+05:30"; "" without one), None for one no place has:
    offsets run from -12:00 to +14:00 ("+99:99" would make the record's date one no reader parses)."""
    if not value:
        return ""
    upper = value.upper()
    if upper in ("Z", "UTC", "GMT"):
        return "+00:00"
    digits = value.replace(":", "")
    if int(digits[1:3]) > 14 or int(digits[3:5]) > 59:
        return None
    return f"{digits[:3]}:{digits[3:5]}"


def _compose(year: str, month: str, day: str, hour: str | None = None, minute: str | None = None,
             second: str | None = None, zone: str | None = None, max_year: int | None = None) -> str | None:
    """Return the ISO 8601 text of the parts, or None for an impossible or implausible date."""
    try:
        day_value = date(int(year), int(month), int(day))
    except ValueError:
        return None
    if not MIN_YEAR <= day_value.year <= (max_year or datetime.now(UTC).year + 1):
        return None
    if hour is None or minute is None:
        return day_value.isoformat()
    offset = _zone(zone)
    if not (0 <= int(hour) < 24 and 0 <= int(minute) < 60 and 0 <= int(second or 0) < 60) or offset is None:
        return day_value.isoformat()
    return f"{day_value.isoformat()}T{int(hour):02d}:{int(minute):02d}:{int(second or 0):02d}{offset}"


def parse_date(text: str | None, max_year: int | None = None) -> str | None:
    """Return the first date in ``text`` (ISO 8601, slashes, Chinese, English month names, the year last)
    as ISO 8601.

    A date with the year last (01.09.2008, 9/17/2004) is read only when its day cannot be its month (over
    12): day first on European pages, month first on American ones (both seen on L3S-GN1); and only when
    the text is the date alone or has a label (``_PUBLISHED_WORDS``)."""
    if not text:
        return None
    for pattern in (_ISO_RE, _ZH_DATE_RE, _SLASH_RE):
        match = pattern.search(text)
        if match:
            groups = match.groups()
            year, month, day, hour, minute, second = groups[:6]
            zone = groups[6] if pattern is _ISO_RE else None
            composed = _compose(year, month, day, hour, minute, second, zone=zone, max_year=max_year)
            if composed:
                return composed
    match = _EN_DATE_RE.search(text)
    if match:
        month = _MONTHS[(match["m1"] or match["m2"]).lower()]
        hour = match["h"]
        if hour is not None and match["ap"]:
            hour = str(int(hour) % 12 + (12 if match["ap"].lower().startswith("p") else 0))
        return _compose(match["y1"] or match["y2"], str(month), match["d1"] or match["d2"], hour, match["mi"],
                        max_year=max_year)
    for match in _YEAR_LAST_RE.finditer(text):
        if _LETTER_RE.search(text[:match.start()] + text[match.end():]) and not _PUBLISHED_WORDS.search(text):
            continue
        first, _separator, second, year, hour, minute, second_of_minute, half = match.groups()
        if int(first) > 12 >= int(second) or int(first) == int(second):
            day, month = first, second
        elif int(second) > 12 >= int(first):
            month, day = first, second
        else:
            continue
        if hour is not None and half:
            hour = str(int(hour) % 12 + (12 if half.lower() == "p" else 0))
        composed = _compose(year, month, day, hour, minute, second_of_minute, max_year=max_year)
        if composed:
            return composed
    return None


def relative_date(text: str, fetched: datetime | None) -> str | None:
    """Return the day of a Chinese relative date (3小时前, 昨天) counted back from ``fetched``."""
    if fetched is None:
        return None
    match = _ZH_RELATIVE_RE.search(text)
    if not match:
        return None
    if match.group(3):
        back = {"今天": 0, "昨天": 1, "前天": 2}[match.group(3)]
        return (fetched - timedelta(days=back)).date().isoformat()
    amount, unit = int(match.group(1)), match.group(2)
    delta = {"分钟": timedelta(minutes=amount), "小时": timedelta(hours=amount), "天": timedelta(days=amount)}[unit]
    return (fetched - delta).date().isoformat()


def url_date(url: str | None) -> str | None:
    """Return the date in a URL's path (``/2024/03/05/``, ``/20240305``), as ``YYYY-MM-DD``."""
    if not url:
        return None
    match = _URL_DATE_RE.search(urlsplit(url).path)
    if not match:
        return None
    parts = [g for g in match.groups() if g is not None]
    return _compose(parts[0], parts[1], parts[2])


# A date read in the page's text this many days or fewer from the URL's date can be the article's (a story
# filed before midnight and published after, the local day against UTC); further off, it is another date.
URL_DATE_SLACK_DAYS = 1


def near_day(value: str, day: str | None) -> bool:
    """Return whether the date ``value`` (ISO 8601) is at most ``URL_DATE_SLACK_DAYS`` from ``day`` (YYYY-MM-DD);
    True without a ``day``."""
    if not day:
        return True
    return abs((date.fromisoformat(value[:10]) - date.fromisoformat(day)).days) <= URL_DATE_SLACK_DAYS


def fetch_time(value: str | None) -> datetime | None:
    if not value:
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def htmldate_date(root: html.HtmlElement, url: str | None) -> str | None:
    """htmldate's publish date (original_date, extensive search off), or None."""
    import logging

    from htmldate import find_date

    logging.getLogger("htmldate").setLevel(logging.ERROR)
    try:
        found = find_date(root, url=url, original_date=True, extensive_search=False, outputformat="%Y-%m-%d")
    except Exception:  # htmldate gives up on some trees; the date stays unknown
        return None
    return parse_date(found) if found else None
