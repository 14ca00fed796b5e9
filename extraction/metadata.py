"""News metadata of a page: headline, authors, dates, description, section, tags, image, canonical URL,
site name and language.

Every field is taken from the first source in this order that has it (``SOURCES`` names them, and
``Metadata.sources`` records which one gave each field):

1. ``json-ld``: ``<script type="application/ld+json">`` objects (``@graph`` and lists flattened);
   the article object (NewsArticle, Article, BlogPosting, ReportageNews, LiveBlogPosting, ...)
   first, then a WebPage.
2. ``microdata``: ``itemprop`` attributes (``headline``, ``author``, ``datePublished``, ...).
3. ``meta``: OpenGraph (``og:``, ``article:``), Twitter cards, Dublin Core and the usual ``<meta
   name>`` tags (``author``, ``pubdate``, ``parsely-*``, ``sailthru.*``, ``keywords``, ...).
4. ``time``: the first ``<time datetime>`` of the page (dates only).
5. ``byline``: the page's byline and dateline text: elements named byline/author/date/time/meta
   and the first lines of the visible text from the headline on; English "By ..." and
   "Published/Updated ...", Chinese 作者 / 记者 / 撰文 / 编辑 / 责任编辑 for authors (来源 is the outlet,
   not an author) and 发布时间 / 时间 / 日期 with dates such as 2024年3月5日 10:21, 2024-03-05 10:21,
   9/17/2004 (the year last only when the day is over 12, alone or labelled) or 3小时前 (relative dates
   against the fetch time); labelled datelines (发布时间, 来源, Posted, By ...) before a date inside a sentence; for
   authors last, ``text``: the extracted text (a Chinese byline anywhere in it, papers often sign at
   the end, "（记者 某某）" or names alone in parentheses; an English one in its first lines).
6. ``url``: a date in the URL's path (``/2024/03/05/``, ``/20240305/``, ``/2024-03-05``).
7. ``listing``: the feed's ``pubDate`` or the sitemap's ``news:publication_date`` / ``lastmod``
   the spider found the URL with (``Page.listed_date``).
8. ``htmldate``: htmldate's own search (its extensive mode off: the sources above cover it), only
   when none of the above gave a publish date.

Dates are ISO 8601: ``2024-03-05`` for a day, ``2024-03-05T10:21:00`` for a time without zone and
``2024-03-05T10:21:00+08:00`` when the page gives the zone; years outside ``MIN_YEAR`` to the
fetch year + 1 are refused. ``title`` is the headline without the site's name around it: the
learned chooser's pick among the title candidates (``extraction.title``), or without it the rule of
``choose_title`` (the ``<h1>`` when it is one of the candidates). ``lang`` is identified from the extracted text with
py3langid (Chinese as ``zh-Hans`` or ``zh-Hant`` by the share of characters that exist in only one
of the two scripts); ``lang_declared`` is the page's own ``<html lang>`` / Content-Language.
"""

from __future__ import annotations

import functools
import itertools
import json
import re
from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, field
from datetime import UTC, date, datetime, timedelta
from html import unescape
from typing import Any
from urllib.parse import urljoin, urlsplit

from lxml import html

from extraction.dom.html import TITLE_MAX_CHARS, declared_lang, title_text
from extraction.dom.text import visible_text
from extraction.title import H1S, H2S, SEPARATORS_RE, TitleChooser, normal, title_candidates
from extraction.title import tokens as title_tokens

SOURCES = ("json-ld", "microdata", "meta", "h1", "h2", "time", "byline", "text", "url", "listing", "htmldate")
MIN_YEAR = 1995
MAX_AUTHORS = 10
MAX_TAGS = 30
MAX_FIELD_CHARS = 1000
# Characters of the text py3langid reads (its cost is a Python loop per byte): on 2,165 gold texts of
# nine datasets, 1,500 gives the language of 3,000 on all but 3 (0.68 against 1.29 ms a text); 1,000 also
# changed 3 of 1,000 extracted texts (a list of month names read as Nigerian Pidgin), 1,500 fewer.
LANG_SAMPLE_CHARS = 1500
LANG_MIN_CHARS = 20
BYLINE_MAX_CHARS = 200  # a byline element with more text is content, not a byline
HEAD_LINES = 40  # first lines of the visible text searched for a byline or dateline

ARTICLE_TYPES = frozenset({
    "newsarticle", "article", "blogposting", "reportagenews", "analysisnewsarticle", "opinionnewsarticle",
    "reviewnewsarticle", "backgroundnewsarticle", "livebloposting", "liveblogposting", "techarticle",
    "scholarlyarticle", "report", "socialmediaposting", "discussionforumposting", "posting",
})
PAGE_TYPES = frozenset({"webpage", "itempage", "collectionpage", "aboutpage", "faqpage", "qapage"})
ORGANIZATION_TYPES = frozenset({"organization", "newsmediaorganization", "corporation", "website"})


@dataclass
class Metadata:
    """What a page says about itself (module docstring); None or empty where it says nothing."""

    title: str | None = None
    authors: list[str] = field(default_factory=list)
    date_published: str | None = None
    date_modified: str | None = None
    description: str | None = None
    section: str | None = None
    tags: list[str] = field(default_factory=list)
    image: str | None = None
    canonical_url: str | None = None
    site_name: str | None = None
    lang: str | None = None
    lang_declared: str | None = None
    sources: dict[str, str] = field(default_factory=dict)  # field -> the source it came from

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


# --- helpers ------------------------------------------------------------------------------------


def _clean(value: Any) -> str | None:
    """Return ``value`` as one line of text (whitespace collapsed, at most MAX_FIELD_CHARS), or None."""
    if value is None:
        return None
    if isinstance(value, (list, tuple)):
        value = next((item for item in value if _clean(item)), None)
        return _clean(value)
    if isinstance(value, dict):
        return _clean(value.get("name") or value.get("@value") or value.get("url") or value.get("@id"))
    text = " ".join(unescape(str(value)).split())  # entities survive in JSON-LD and some meta contents
    return text[:MAX_FIELD_CHARS] or None


def _types(obj: dict[str, Any]) -> set[str]:
    value = obj.get("@type", ())
    values = value if isinstance(value, list) else [value]
    return {str(v).rsplit("/", 1)[-1].lower() for v in values if v}


def _absolute(url: str | None, base: str | None) -> str | None:
    if not url:
        return None
    url = url.strip()
    joined = urljoin(base, url) if base else url
    return joined if urlsplit(joined).scheme in ("http", "https") else None


# --- JSON-LD --------------------------------------------------------------------------------------

_JSON_COMMENT_RE = re.compile(r"^\s*(?:<!--|//\s*<!\[CDATA\[|<!\[CDATA\[)|(?:-->|//\s*\]\]>|\]\]>)\s*$")
_CONTROL_RE = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f]")


def jsonld_objects(root: html.HtmlElement) -> list[dict[str, Any]]:
    """Return the JSON-LD objects of the page, ``@graph`` members and lists flattened, in page order."""
    found: list[dict[str, Any]] = []
    for script in root.iter("script"):
        if (script.get("type") or "").strip().lower() != "application/ld+json" or not script.text:
            continue
        text = _CONTROL_RE.sub(" ", _JSON_COMMENT_RE.sub("", script.text.strip()))
        try:
            data = json.loads(text)
        except ValueError:
            try:  # pages concatenate objects or leave a trailing comma
                data = json.loads("[" + re.sub(r",\s*([}\]])", r"\1", text).replace("}\n{", "},{") + "]")
            except ValueError:
                continue
        found.extend(_flatten(data))
    return found


def _flatten(data: Any) -> Iterator[dict[str, Any]]:
    """Yield the typed objects of a JSON-LD value in document order (iterative: deep or long data is fine)."""
    pending: deque[Any] = deque([data])
    while pending:
        item = pending.popleft()
        if isinstance(item, list):
            pending.extendleft(reversed(item))
        elif isinstance(item, dict):
            graph = item.get("@graph")
            main = item.get("mainEntity")
            if isinstance(main, dict) and "@type" in main:
                pending.appendleft(main)
            if isinstance(graph, list):
                pending.extendleft(reversed(graph))
            if "@type" in item:
                yield item


def _article_object(objects: list[dict[str, Any]]) -> dict[str, Any] | None:
    for wanted in (ARTICLE_TYPES, PAGE_TYPES):
        for obj in objects:
            if _types(obj) & wanted:
                return obj
    return None


def _person_names(value: Any) -> list[str]:
    """Return the names of the people in a JSON-LD ``author`` value (organizations left out)."""
    values = value if isinstance(value, list) else [value]
    names: list[str] = []
    for item in values:
        if isinstance(item, dict):
            if _types(item) & ORGANIZATION_TYPES:
                continue
            name = _clean(item.get("name"))
        else:
            name = _clean(item)
        if name and not name.startswith(("http://", "https://")):
            names.extend(split_authors(name))
    return names


# --- meta tags and microdata ----------------------------------------------------------------------


def meta_tags(root: html.HtmlElement) -> dict[str, list[str]]:
    """Return ``<meta>`` contents by lower-cased name / property / itemprop, in page order."""
    tags: dict[str, list[str]] = {}
    for meta in root.iter("meta"):
        content = meta.get("content")
        if content is None or not content.strip():
            continue
        for attribute in ("property", "name", "itemprop", "http-equiv"):
            key = meta.get(attribute)
            if key:
                tags.setdefault(key.strip().lower(), []).append(content.strip())
    return tags


def _first(tags: dict[str, list[str]], *names: str) -> str | None:
    for name in names:
        for value in tags.get(name, ()):
            cleaned = _clean(value)
            if cleaned:
                return cleaned
    return None


def _itemprop(root: html.HtmlElement, name: str) -> list[html.HtmlElement]:
    """Return the elements of ``root``'s subtree with ``name`` among their itemprops (a small subtree: the
    page's own are in ``_Scan.itemprops``)."""
    return [element for element in root.iter() if isinstance(element.tag, str)
            and name in (element.get("itemprop") or "").split()]


def _itemprop_value(element: html.HtmlElement) -> str | None:
    for attribute in ("content", "datetime"):
        if element.get(attribute):
            return _clean(element.get(attribute))
    names = _itemprop(element, "name")
    if names and names[0] is not element:
        return _clean(names[0].text_content())
    return _clean(element.text_content())


# --- dates ----------------------------------------------------------------------------------------

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
_MONTH = "|".join(sorted(_MONTHS, key=len, reverse=True))
_EN_DATE_RE = re.compile(
    rf"\b(?:(?P<m1>{_MONTH})\.?\s+(?P<d1>\d{{1,2}})(?:st|nd|rd|th)?,?\s+(?P<y1>\d{{4}})"
    rf"|(?P<d2>\d{{1,2}})(?:st|nd|rd|th)?\s+(?P<m2>{_MONTH})\.?,?\s+(?P<y2>\d{{4}}))"
    r"(?:(?:,|\s+at|\s*[|·-])?\s*(?P<h>\d{1,2}):(?P<mi>\d{2})\s*(?P<ap>[ap]\.?m\.?)?)?", re.I)
_URL_DATE_RE = re.compile(r"/((?:19|20)\d{2})[/_-]?(0[1-9]|1[0-2])[/_-]?(0[1-9]|[12]\d|3[01])(?:[/_.+-]|$)|"
                          r"/((?:19|20)\d{2})/(0?[1-9]|1[0-2])/(0?[1-9]|[12]\d|3[01])/")
_PUBLISHED_WORDS = re.compile(r"发布时间|发表时间|发布日期|发表于|发布于|时间|日期|published|posted|updated|"
                              r"last modified|modified", re.I)
_LETTER_RE = re.compile(r"[^\W\d_]")
_DATELINE_WORDS = re.compile(_PUBLISHED_WORDS.pattern + r"|更新|来源|\bby\b", re.I)
_MODIFIED_WORDS = re.compile(r"updated|last modified|modified|更新时间|更新于|修改时间", re.I)


def _zone(value: str | None) -> str:
    if not value:
        return ""
    upper = value.upper()
    if upper in ("Z", "UTC", "GMT"):
        return "+00:00"
    digits = value.replace(":", "")
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
    if not (0 <= int(hour) < 24 and 0 <= int(minute) < 60 and 0 <= int(second or 0) < 60):
        return day_value.isoformat()
    return f"{day_value.isoformat()}T{int(hour):02d}:{int(minute):02d}:{int(second or 0):02d}{_zone(zone)}"


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


# --- bylines --------------------------------------------------------------------------------------

# Words in a class, id or rel (any case, anywhere: "post-byline", "articleAuthor") that name a byline or a
# dateline. Looked for as substrings of the lower-cased names: str's C search, 10x faster than one regex
# alternation with re.I on the long class lists of utility-CSS pages (1.4 ms a WCXB page).
_BYLINE_NAMES = ("byline", "author", "writer", "reporter", "journalist", "zuozhe", "editor")
_DATELINE_NAMES = ("date", "time", "publish", "posted", "byline", "meta", "info", "source")
_EN_BY_RE = re.compile(r"^\W*(?:written\s+)?by[:\s]+(.+)$", re.I)
_ZH_NAME = r"[\u4e00-\u9fff·]{2,4}"
_ZH_LABELS = ("作者", "撰文", "撰稿", "执笔人", "执笔", "特约记者", "本报记者", "记者", "实习生", "通讯员", "文",
              "责任编辑", "编辑", "责编")
# A name ends the byline's run of Chinese characters, or comes right before 报道 / 摄 / 电 / 讯 ("记者 某某
# 北京报道"): in running prose a label is a word of the sentence ("记者在孙某的办公室里").
_ZH_NAME_END = r"(?=$|[^\u4e00-\u9fff·]|报道|摄|电|讯)"
_ZH_AUTHOR_RE = re.compile(
    r"(?:^|(?<=[\s（(【\[|｜报台社网]))(作者|撰文|撰稿|执笔人|执笔|特约记者|本报记者|记者|实习生|通讯员|责任编辑|编辑|责编|文(?=\s*[/／｜|:：]))"
    rf"\s*[:：/／|｜]?\s*({_ZH_NAME}{_ZH_NAME_END}(?:[ \u3000、，,]+{_ZH_NAME}{_ZH_NAME_END}){{0,5}})")
_ZH_REPORTED_RE = re.compile(rf"[（(]\s*(?:记者\s*({_ZH_NAME}(?:[ \u3000、]+{_ZH_NAME}){{0,3}})|"
                             rf"({_ZH_NAME}(?:[ \u3000、]+{_ZH_NAME}){{0,3}})\s+[\u4e00-\u9fff]{{0,6}}报道)\s*[）)]")
# A paper's closing signature of names alone, "（某某 某某）" after the last sentence of the text.
_ZH_SIGNED_RE = re.compile(rf"(?:^|(?<=[。！？!?”\"]))\s*[（(]\s*({_ZH_NAME}(?:[ \u3000、]+{_ZH_NAME}){{0,3}})"
                           r"\s*[）)]\s*$")
# A byline without a label: "ggjjzhzz 发表于 2005-9-15" (a blog's or forum's user), "[ 黄宇 ] 来源：[ 国际金融报 ]".
_ZH_POSTED_RE = re.compile(r"(?:^|(?<=\s))([^\W\d_][\w.\-]{1,19})\s+发表于\s*\d{4}")
_ZH_BRACKETED_RE = re.compile(rf"[\[［【]\s*({_ZH_NAME})\s*[\]］】]\W{{0,3}}来源")
# A reporter's closing line of its own: "新京报记者 彭冲 山东冠县报道" (an outlet, 记者, the names, a place and
# 报道). Looked for in every line after the headline: papers sign at the end, sometimes after text that the
# page folds away ("展开全文"), so the line is neither in the extracted text nor among the head lines.
_ZH_CLOSING_RE = re.compile(rf"^[\u4e00-\u9fff]{{0,8}}记者[ \u3000]*({_ZH_NAME}(?:[ \u3000、]+{_ZH_NAME}){{0,3}})"
                            r"[ \u3000]+[\u4e00-\u9fff]{2,8}报道$")
_ZH_NOT_A_NAME_RE = re.compile(r"报道|报社|日报|晚报|新闻|网站|集团|出版|期刊|政府|公司|中心|大学|学院|来源|发布|时间|"
                               r"记者|编辑|作者|首页|文章|频道|专栏|责任|阅读|访问|统计|全文|展开|查看|更多|返回|待续|组图|资料|视频|"
                               r"完|续|篇|本文|本站|[网报社台站图]$")
_AUTHOR_SPLIT_RE = re.compile(r"\s*(?:,|;|&|\band\b|\bund\b|\bet\b|、|，|；|\s和\s|\|)\s*", re.I)
_AUTHOR_NOISE_RE = re.compile(r"^\W*(?:by|written by|author|authors|posted by|von|par)[:\s]+|"
                              r"\s*[|·•]\s*.*$|\s+(?:on|at|(?:last\s+)?updated|published)(?:\s|:).*$|"
                              rf"\s+(?:{_MONTH})\.?\s+\d.*$", re.I)  # "Jane Doe March 2, 2024"
_NOT_A_NAME_RE = re.compile(r"\d{2}|@|https?:|www\.|\b(?:staff|news|reporters?|editors?|team|admin|"
                            r"contributors?|press|wire|desk|agency|correspondent|updated|published|posted)\b", re.I)


def split_authors(text: str) -> list[str]:
    """Return the names in a byline's text ("By A and B", "A, B", "甲、乙")."""
    text = _AUTHOR_NOISE_RE.sub("", " ".join(text.split()))
    names = []
    for part in _AUTHOR_SPLIT_RE.split(text):
        part = part.strip(" .:：-–—()[]")
        if part and len(part) <= 60 and not _NOT_A_NAME_RE.search(part) and len(part.split()) <= 5 \
                and not _ZH_NOT_A_NAME_RE.search(part):
            names.append(part)
    return names


def _zh_authors(text: str) -> list[str]:
    """Return the authors of a Chinese byline: the names after the most author-like label (作者 before
    记者 before 编辑), else the name of a closing "（记者 某某）" or "（某某 北京报道）", else the names alone
    in parentheses that end the text ("（某某 某某）"), else an unlabelled byline ("[ 某某 ] 来源：", "网名 发表于
    2005-9-15")."""
    found: dict[str, list[str]] = {}
    for match in _ZH_AUTHOR_RE.finditer(text):
        parts = re.split(r"([ \u3000、，,]+)", match.group(2))  # names and their separators
        place_next = parts[-1].endswith(("报道", "电", "讯")) or text.startswith(("报道", "电", "讯"), match.end())
        if len(parts) > 1 and not parts[-2].strip() and place_next:
            del parts[-2:]  # "记者 某某 山东冠县报道", "北京电": the place, set apart by a space (names by 、)
        names = [name for name in (re.sub("(?:报道|摄|电|讯)$", "", part) for part in parts[::2])
                 if 2 <= len(name) <= 4 and not _ZH_NOT_A_NAME_RE.search(name)]
        if names:
            found.setdefault(match.group(1), names)
    for label in _ZH_LABELS:
        if found.get(label):
            return found[label]
    reported = _ZH_REPORTED_RE.search(text)
    if reported:
        return _zh_names(reported.group(1) or reported.group(2))
    signed = _ZH_SIGNED_RE.search(text.rstrip().rsplit("\n", 1)[-1])
    if signed:
        return _zh_names(signed.group(1))
    for pattern in (_ZH_BRACKETED_RE, _ZH_POSTED_RE):
        unlabelled = pattern.search(text)
        if unlabelled and not _ZH_NOT_A_NAME_RE.search(unlabelled.group(1)) \
                and not _NOT_A_NAME_RE.search(unlabelled.group(1)):
            return [unlabelled.group(1)]
    return []


def _zh_names(names: str) -> list[str]:
    """Return the names of a run of names set apart by spaces or 、, less the words that are no names."""
    return [name for name in re.split(r"[ \u3000、]+", names) if not _ZH_NOT_A_NAME_RE.search(name)]


def text_authors(text: str) -> list[str]:
    """Return the authors a page's extracted text names: a Chinese byline anywhere in it (papers often
    sign at the end: "（记者 某某）"), else an English "By ..." line among its first ``HEAD_LINES``."""
    names = _zh_authors(text)
    if names:
        return names[:MAX_AUTHORS]
    for line in text.split("\n")[:HEAD_LINES]:
        by = _EN_BY_RE.match(" ".join(line.split()))
        if by and len(line) <= BYLINE_MAX_CHARS:
            names = split_authors(by.group(1))
            if names:
                return names[:MAX_AUTHORS]
    return []


@dataclass
class _Scan:
    """What one walk over the page finds for the metadata: itemprop elements, bylines and datelines."""

    itemprops: dict[str, list[html.HtmlElement]] = field(default_factory=dict)
    created: list[html.HtmlElement] = field(default_factory=list)  # datePublished and dateCreated, in page order
    bylines: list[str] = field(default_factory=list)  # short texts of elements named byline/author/...
    datelines: list[str] = field(default_factory=list)  # short texts of elements named date/time/meta/...


_NOT_TEXT_TAGS = frozenset({"script", "style", "meta", "link", "body", "html", "head", "noscript", "template"})


def _scan(root: html.HtmlElement) -> _Scan:
    """Walk the page once: every element's ``itemprop``, and the short text of the elements whose class,
    id or rel names a byline (``_BYLINE_NAMES``) or a dateline (``_DATELINE_NAMES``)."""
    found = _Scan()
    for element in root.iter():
        tag = element.tag
        if not isinstance(tag, str):
            continue
        prop = element.get("itemprop")
        if prop:
            for name in prop.split():
                found.itemprops.setdefault(name, []).append(element)
                if name in ("datePublished", "dateCreated"):
                    found.created.append(element)
        if tag in _NOT_TEXT_TAGS:
            continue
        cls, ident, rel = element.get("class"), element.get("id"), element.get("rel")
        if not (cls or ident or rel):
            continue
        byline, dateline = _name_kinds(cls or "", ident or "", rel or "")
        if byline or dateline:
            text = _short_text(element)
            if text:
                if byline:
                    found.bylines.append(text)
                if dateline:
                    found.datelines.append(text)
    return found


@functools.lru_cache(maxsize=4096)
def _name_kinds(cls: str, ident: str, rel: str) -> tuple[bool, bool]:
    """Return whether class/id/rel name a byline, and whether class/id name a dateline (cached: pages
    repeat their class names)."""
    names = f"{cls} {ident}".lower()
    with_rel = f"{names} {rel.lower()}" if rel else names
    return any(word in with_rel for word in _BYLINE_NAMES), any(word in names for word in _DATELINE_NAMES)


def _short_text(element: html.HtmlElement) -> str | None:
    """Return the element's text, whitespace collapsed, or None when empty or over ``BYLINE_MAX_CHARS``
    (reading stops there: a container named "content-info" may hold the whole page)."""
    parts = []
    length = 0
    for piece in element.itertext():
        parts.append(piece)
        length += len(piece)
        if length > 4 * BYLINE_MAX_CHARS:
            return None
    text = " ".join(" ".join(parts).split())
    return text if text and len(text) <= BYLINE_MAX_CHARS else None


# --- title ----------------------------------------------------------------------------------------

def clean_title(title: str, site_name: str | None = None, h1s: Iterable[str] = ()) -> str:
    """Return ``title`` without the site's name: an ``<h1>`` that is the title or one of its parts (not the
    site name) wins, else the part sharing most words with the first ``<h1>``, else the longest part
    between separators (" | ", " - ", "_", ...) that is not the site name."""
    site = normal(site_name) if site_name else None
    parts = [part.strip() for part in SEPARATORS_RE.split(title) if part and part.strip()]
    whole = {normal(title), *(normal(part) for part in parts)}
    for h1 in h1s:
        h1_normal = normal(h1)
        if len(h1_normal) >= 4 and h1_normal in whole and h1_normal != site:
            return " ".join(h1.split())
    if len(parts) <= 1:
        return title
    candidates = [part for part in parts if normal(part) != site] or parts
    heading = title_tokens(next(iter(h1s), ""))
    if heading:  # the part that shares most words with the page's <h1>, when one shares any
        shared = max(candidates, key=lambda part: len(heading & title_tokens(part)))
        if heading & title_tokens(shared):
            return shared
    return max(candidates, key=len)


H1_TITLE_SHARE = 0.5  # an <h1> is the headline when this share of its words is in a title candidate


def choose_title(candidates: list[tuple[str, str]], h1s: list[str], site_name: str | None = None,
                 overlap: bool = True) -> tuple[str | None, str]:
    """Return the headline and its source: the first ``<h1>`` (of the page's first three) whose words are
    mostly (``H1_TITLE_SHARE``) in a title candidate (JSON-LD headline, microdata, og:title, <title>)
    without the site's name, and that is not the site's name (not without ``overlap``); else the first
    candidate without the site's name (``clean_title``); else the first ``<h1>``."""
    site = normal(site_name) if site_name else None
    for h1 in h1s if overlap else []:
        words = title_tokens(h1)
        if not words or len(h1) > TITLE_MAX_CHARS or (site and normal(h1) == site):
            continue
        for candidate, _source in candidates:  # compared without the site's name: a logo <h1> is no headline
            if len(words & title_tokens(clean_title(candidate, site_name))) >= H1_TITLE_SHARE * len(words):
                return " ".join(h1.split()), "h1"
    if candidates:
        title, source = candidates[0]
        return clean_title(title, site_name, h1s), source
    return (" ".join(h1s[0].split()), "h1") if h1s else (None, "meta")


# --- language -------------------------------------------------------------------------------------

# Characters written differently in the two scripts (simplified, traditional), common in news text.
_SIMPLIFIED = set("们这说会来为国对时于个学与后开关发经动长现还进过机车东书问门间见电听话让认识请读写买卖"
                  "实业产总统区县乡报纸务费贸边选举议论谈记历战争军队岛陆马鸟鱼龙龟网络线视频传闻单双")
_TRADITIONAL = set("們這說會來為國對時於個學與後開關發經動長現還進過機車東書問門間見電聽話讓認識請讀寫買賣"
                   "實業產總統區縣鄉報紙務費貿邊選舉議論談記歷戰爭軍隊島陸馬鳥魚龍龜網絡線視頻傳聞單雙")


def chinese_script(text: str) -> str:
    """Return ``zh-Hant`` when traditional-only characters outnumber simplified-only ones, else ``zh-Hans``."""
    simplified = sum(char in _SIMPLIFIED for char in text)
    traditional = sum(char in _TRADITIONAL for char in text)
    return "zh-Hant" if traditional > simplified else "zh-Hans"


_CANTONESE_RE = re.compile(r"[嘅咗唔喺冇佢啲嘢哋]")
_CJK_RE = re.compile(r"[\u4e00-\u9fff]")


@functools.cache
def _identifier() -> Any:
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    return LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=False)


def identify_language(text: str) -> str | None:
    """Return the language of ``text`` (py3langid; Chinese as zh-Hans / zh-Hant), None for too little text."""
    sample = text[:LANG_SAMPLE_CHARS]
    if len("".join(sample.split())) < LANG_MIN_CHARS:
        return None
    lang, _score = _identifier().classify(sample)
    if lang == "yue" and not _CANTONESE_RE.search(sample):
        lang = "zh"  # py3langid reads much Traditional Chinese news text as Cantonese: its particles decide
    return chinese_script(sample) if lang == "zh" else str(lang)


# --- the page -------------------------------------------------------------------------------------


def page_metadata(root: html.HtmlElement, url: str | None = None, lines: Iterable[str] = (), *,
                  listed_date: str | None = None, fetched_at: str | None = None,
                  dates_by_htmldate: bool = True, headline: bool = True,
                  title_model: TitleChooser | None = None) -> Metadata:
    """Return the :class:`Metadata` of a parsed page (not modified) but its language (``identify_language``
    of the extracted text; ``lang_declared`` is set).

    ``lines``: the page's visible text lines in order (the bylines and datelines are looked for in
    the ``HEAD_LINES`` from the headline on); ``listed_date``: the feed's or sitemap's date of the
    URL; ``fetched_at``: the fetch time (ISO 8601), for relative dates; ``dates_by_htmldate``: run
    htmldate when no other source has a publish date (off for pages that are not articles);
    ``headline``: the page is an article, whose ``<h1>`` may be its headline (off for other pages; read by the
    rule only); ``title_model``: the learned title chooser (``extraction.title``); without it, or when it is
    not sure of any candidate, ``choose_title``'s rule.
    """
    found = Metadata()
    fetched = _fetch_time(fetched_at)
    max_year = (fetched or datetime.now(UTC)).year + 1

    def put(name: str, value: Any, source: str) -> None:
        if value and not getattr(found, name):
            setattr(found, name, value)
            found.sources[name] = source

    objects = jsonld_objects(root)
    article = _article_object(objects) or {}
    publisher = article.get("publisher") if isinstance(article.get("publisher"), dict) else {}
    website = next((obj for obj in objects if _types(obj) & {"website"}), {})
    tags = meta_tags(root)
    scan = _scan(root)
    h1_elements = list(root.iter("h1"))
    h1s = [_heading(h1) for h1 in h1_elements[:H1S]]

    # 1. JSON-LD
    jsonld_headline = _clean(article.get("headline") or article.get("name"))
    titles: list[tuple[str | None, str]] = [(jsonld_headline, "json-ld")]
    put("authors", _person_names(article.get("author") or article.get("creator")), "json-ld")
    put("date_published", parse_date(_clean(article.get("datePublished") or article.get("dateCreated")),
                                     max_year), "json-ld")
    put("date_modified", parse_date(_clean(article.get("dateModified")), max_year), "json-ld")
    put("description", _clean(article.get("description")), "json-ld")
    put("section", _clean(article.get("articleSection")), "json-ld")
    put("tags", _keywords(article.get("keywords")), "json-ld")
    put("image", _absolute(_clean(article.get("image") or article.get("thumbnailUrl")), url), "json-ld")
    put("site_name", _clean((publisher or {}).get("name") or website.get("name")), "json-ld")
    put("canonical_url", _absolute(_clean(article.get("url") or article.get("mainEntityOfPage")), url)
        if _types(article) & ARTICLE_TYPES else None, "json-ld")

    # 2. microdata
    headlines = scan.itemprops.get("headline", [])
    microdata_headline = _itemprop_value(headlines[0]) if headlines else None
    titles.append((microdata_headline, "microdata"))
    # The page's first publish or creation date: a question's dateCreated comes before its answers'
    # datePublished (Stack Exchange), a forum's first post before the replies.
    for name, elements in (("date_published", scan.created), ("date_modified", scan.itemprops.get("dateModified", [])),
                           ("description", scan.itemprops.get("description", []))):
        if getattr(found, name):
            continue
        value = _itemprop_value(elements[0]) if elements else None
        put(name, parse_date(value, max_year) if name.startswith("date") else value, "microdata")
    if not found.authors:
        put("authors", _first_item_authors(scan.itemprops.get("author", [])), "microdata")

    # 3. meta tags
    put("site_name", _first(tags, "og:site_name", "application-name", "twitter:site"), "meta")
    put("canonical_url", _canonical_link(root, url) or _absolute(_first(tags, "og:url"), url), "meta")
    titles.append((_first(tags, "og:title", "twitter:title", "dc.title", "title"), "meta"))
    meta_authors = [value for key in ("author", "article:author", "dc.creator", "parsely-author", "sailthru.author",
                                      "byl", "dcterms.creator", "citation_author") for value in tags.get(key, ())]
    put("authors", [name for value in meta_authors if not value.startswith(("http://", "https://"))
                    for name in split_authors(value)][:MAX_AUTHORS], "meta")
    put("date_published", parse_date(_first(
        tags, "article:published_time", "og:published_time", "datepublished", "pubdate", "publishdate",
        "publish-date", "publish_date", "parsely-pub-date", "sailthru.date", "dc.date.issued", "dcterms.created",
        "dc.date", "dcterms.date", "date", "article.published", "citation_publication_date", "publishtime",
        "weibo: article:create_at", "published", "ms.date"), max_year), "meta")
    put("date_modified", parse_date(_first(tags, "article:modified_time", "og:updated_time", "datemodified",
                                           "last-modified", "dcterms.modified", "lastmod"), max_year), "meta")
    put("description", _first(tags, "og:description", "description", "twitter:description", "dc.description"),
        "meta")
    put("section", _first(tags, "article:section", "parsely-section", "section", "category"), "meta")
    put("tags", _keywords(tags.get("article:tag") or tags.get("parsely-tags") or tags.get("news_keywords")
                          or tags.get("keywords")), "meta")
    put("image", _absolute(_first(tags, "og:image", "og:image:url", "twitter:image", "twitter:image:src"), url),
        "meta")

    # 4. <time>
    for time_element in root.iter("time"):
        value = parse_date(time_element.get("datetime"), max_year)
        if value:
            put("date_published", value, "time")
            break

    # The title, before the bylines: on a page without an <h1> that has text, the head lines start at it.
    title_element = root.find(".//title")
    page_title = title_text(unescape(title_element.text_content())) if title_element is not None else None
    page_title = page_title[:MAX_FIELD_CHARS] if page_title else None
    titles.append((page_title, "meta"))
    chosen = None
    if title_model is not None:  # None when it has no candidate it is sure enough of
        h2s = [_heading(h2) for h2 in itertools.islice(root.iter("h2"), H2S)]
        candidates = title_candidates(h1s, h2s, page_title, _first(tags, "og:title", "dc.title", "title"),
                                      _first(tags, "twitter:title"), jsonld_headline, microdata_headline)
        chosen = title_model.choose(candidates, len(h1_elements), found.site_name, url)
    if chosen is not None:
        put("title", chosen.text, chosen.source)
    else:
        # The rule: an article's <h1> is its headline; other pages (lists, products, documentation) are named
        # by their title candidates, whose <h1> is often a section or product name (measured on wcxb-dev).
        title, source = choose_title([(t, src) for t, src in titles if t], h1s, found.site_name, overlap=headline)
        put("title", title, source)

    # 5. bylines and datelines
    page_lines = list(lines)
    start = _headline_index(page_lines, [h1 for h1 in h1s if h1] or [found.title or ""])
    head = [line for line in (" ".join(line.split()) for line in page_lines[start:start + HEAD_LINES])
            if line and len(line) <= BYLINE_MAX_CHARS]
    if not found.authors:
        for content in scan.bylines:
            names = _zh_authors(content) or [name for name in split_authors(_EN_BY_RE.sub(r"\1", content))
                                             if name[:1].isupper()]  # Latin names are capitalised
            if names:
                put("authors", names[:MAX_AUTHORS], "byline")
                break
    if not found.authors:
        put("authors", _zh_authors("\n".join(head))[:MAX_AUTHORS], "byline")
    if not found.authors:
        datelines = [line for line in scan.datelines if _CJK_RE.search(line)]
        put("authors", _zh_authors("\n".join(datelines))[:MAX_AUTHORS], "byline")
    if not found.authors:
        closing = (_ZH_CLOSING_RE.match(line.strip()) for line in page_lines[start:] if "记者" in line)
        put("authors", next((_zh_names(match.group(1)) for match in closing if match), [])[:MAX_AUTHORS], "byline")
    if not found.authors:
        for line in head:
            by = _EN_BY_RE.match(line)
            names = split_authors(by.group(1)) if by else []
            if names:
                put("authors", names[:MAX_AUTHORS], "byline")
                break
    if not found.date_published or not found.date_modified:
        # Labelled head lines ("发布时间", "Posted", "来源") first: a date inside a sentence may be any date.
        for line in [*scan.datelines, *sorted(head, key=lambda line: not _DATELINE_WORDS.search(line))]:
            value = parse_date(line, max_year) or relative_date(line, fetched)
            if not value:
                continue
            if _MODIFIED_WORDS.search(line) and not re.search(r"publish|posted|发布|发表", line, re.I):
                put("date_modified", value, "byline")
            else:
                put("date_published", value, "byline")
            if found.date_published:
                break
    # 6.-8. URL, the feed or sitemap, htmldate
    put("date_published", url_date(url), "url")
    put("date_published", parse_date(listed_date, max_year), "listing")
    if not found.date_published and dates_by_htmldate:
        put("date_published", _htmldate(root, url), "htmldate")

    found.lang_declared = declared_lang(root)
    if found.authors:
        found.authors = _unique(found.authors)[:MAX_AUTHORS]
    return found


def _first_item_authors(elements: list[html.HtmlElement]) -> list[str]:
    """Return the names of the ``author`` properties that belong to the item of the first one with a name
    (microdata: a property is its nearest ``itemscope`` ancestor's): a forum thread's replies are items of
    their own, each with its author, and the thread's author is the first post's."""
    owner: html.HtmlElement | None = None
    names: list[str] = []
    for element in elements:
        item = _item_of(element)
        if names and item is not owner:
            continue
        found = split_authors(_itemprop_value(element) or "")
        if found:
            owner = item
            names.extend(found)
    return names[:MAX_AUTHORS]


def _item_of(element: html.HtmlElement) -> html.HtmlElement | None:
    return next((node for node in element.iterancestors() if node.get("itemscope") is not None), None)


def _heading(element: html.HtmlElement) -> str:
    """Return a heading's visible text on one line ("WEEKEND<br>CODING" is "WEEKEND CODING")."""
    return " ".join(visible_text(element).split())


def _fetch_time(value: str | None) -> datetime | None:
    if not value:
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def _headline_index(lines: list[str], headlines: list[str]) -> int:
    """Return the index of the first line that is the first of ``headlines`` (0 without one)."""
    headline = normal(headlines[0]) if headlines else ""
    return next((i for i, line in enumerate(lines) if normal(line) == headline), 0) if headline else 0


def _canonical_link(root: html.HtmlElement, url: str | None) -> str | None:
    for link in root.iter("link"):
        if "canonical" in (link.get("rel") or "").lower().split():
            return _absolute(link.get("href"), url)
    return None


def _keywords(value: Any) -> list[str]:
    values = value if isinstance(value, list) else [value] if value else []
    tags: list[str] = []
    for item in values:
        text = _clean(item)
        if text:
            tags.extend(part.strip() for part in re.split(r"[,，;；、|]", text) if part.strip())
    return _unique(tags)[:MAX_TAGS]


def _unique(values: Iterable[str]) -> list[str]:
    seen: set[str] = set()
    kept = []
    for value in values:
        key = value.lower()
        if key not in seen:
            seen.add(key)
            kept.append(value)
    return kept


def _htmldate(root: html.HtmlElement, url: str | None) -> str | None:
    """htmldate's publish date (original_date, extensive search off), or None."""
    import logging

    from htmldate import find_date

    logging.getLogger("htmldate").setLevel(logging.ERROR)
    try:
        found = find_date(root, url=url, original_date=True, extensive_search=False, outputformat="%Y-%m-%d")
    except Exception:  # htmldate gives up on some trees; the date stays unknown
        return None
    return parse_date(found) if found else None
