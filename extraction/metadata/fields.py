"""``page_metadata``: every metadata field of a page from its sources, in the package's documented order
(:mod:`extraction.metadata`); the one walk that finds the page's itemprops, bylines and datelines; the
title rule (``choose_title``) for when the learned chooser is not sure."""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from html import unescape
from typing import Any

from lxml import html

from extraction.dom.html import TITLE_MAX_CHARS, declared_lang, title_text
from extraction.dom.pagetable import metadata_elements
from extraction.dom.text import visible_text
from extraction.metadata.authors import (
    AUTHOR_BOX_MAX_CHARS,
    AUTHOR_BOX_RE,
    BYLINE_MAX_CHARS,
    EN_BY_RE,
    HEAD_LINES,
    MAX_AUTHORS,
    WRITTEN_BY_RE,
    ZH_CLOSING_RE,
    outlet_address,
    split_authors,
    without_outlet,
    zh_authors,
    zh_lone_name,
    zh_names,
    zh_posted_user,
)
from extraction.metadata.dates import (
    DATELINE_WORDS,
    MODIFIED_WORDS,
    fetch_time,
    htmldate_date,
    near_day,
    parse_date,
    relative_date,
    url_date,
)
from extraction.metadata.embedded import (
    ARTICLE_TYPES,
    MAX_FIELD_CHARS,
    absolute_url,
    article_object,
    canonical_link,
    clean_value,
    first_tag,
    itemprop_value,
    jsonld_objects,
    keywords,
    meta_tags,
    person_names,
    schema_types,
    section_label,
    unique,
)
from extraction.title import H1S, H2S, SEPARATORS_RE, TitleChooser, normal, title_candidates
from extraction.title import tokens as title_tokens

SOURCES = ("json-ld", "microdata", "meta", "h1", "h2", "time", "byline", "text", "url", "listing", "htmldate",
           "modified")
_CJK_RE = re.compile(r"[\u4e00-\u9fff]")


@dataclass
class Metadata:
    """What a page says about itself (the sources in order: :mod:`extraction.metadata`); None or empty where it says
    nothing."""

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


PREVIEW_LABELS = 4  # link previews' label and value pairs read: twitter:label1 .. twitter:label4
KICKER_MAX_CHARS = 40  # the line above the headline is read for a date when it is this short (a date and a label)

# Words in a class, id or rel (any case, anywhere: "post-byline", "articleAuthor") that name a byline or a
# dateline. Looked for as substrings of the lower-cased names: str's C search, 10x faster than one regex
# alternation with re.I on the long class lists of utility-CSS pages (1.4 ms a WCXB page).
_BYLINE_NAMES = ("byline", "author", "writer", "reporter", "journalist", "zuozhe", "editor")
_DATELINE_NAMES = ("date", "time", "publish", "posted", "byline", "meta", "info", "source")
_BYLINE_WORDS, _DATELINE_WORDS = (tuple(word.encode() for word in words) for words in (_BYLINE_NAMES, _DATELINE_NAMES))


@dataclass
class _Scan:
    """What one walk over the page finds for the metadata: itemprop elements, bylines and datelines."""

    itemprops: dict[str, list[html.HtmlElement]] = field(default_factory=dict)
    created: list[html.HtmlElement] = field(default_factory=list)  # datePublished and dateCreated, in page order
    # elements named byline/author/... with their short texts
    bylines: list[tuple[html.HtmlElement, str]] = field(default_factory=list)
    datelines: list[str] = field(default_factory=list)  # short texts of elements named date/time/meta/...
    user: str | None = None  # the first of a forum's user names in page order (``_USER_CLASSES``)


# A forum's user name, a post's author: phpBB's and XenForo's "username", vBulletin's "bigusername", Flarum's
# "PostUser-name" (or GameFAQs' data-username attribute, on an element of class "name"). Whole class names: a
# site's account menu is "js-user-name".
_USER_CLASSES = frozenset({"username", "user-name", "bigusername", "postuser-name"})
_NOT_TEXT_TAGS = frozenset({"script", "style", "meta", "link", "body", "html", "head", "noscript", "template"})


def _scan(root: html.HtmlElement) -> _Scan:
    """Walk the page once: every element's ``itemprop``, the short text of the elements whose class, id or rel
    names a byline (``_BYLINE_NAMES``) or a dateline (``_DATELINE_NAMES``), and a forum's user names
    (``_USER_CLASSES``). The walk is compiled (``extraction.dom.pagetable.metadata_elements``: the elements of
    each kind, with ``_name_kinds``'s test); their texts are read here."""
    found = _Scan()
    itemprops, users, named = metadata_elements(root, _NOT_TEXT_TAGS.__contains__, _BYLINE_WORDS, _DATELINE_WORDS,
                                                _name_kinds)
    for element, prop in itemprops:
        for name in prop.split():
            found.itemprops.setdefault(name, []).append(element)
            if name in ("datePublished", "dateCreated"):
                found.created.append(element)
    for element in users:  # class names holding "name": ``_USER_CLASSES``, or a data-username by a class "name"
        cls = element.get("class") or ""
        user = element.get("data-username")
        if user is None and not _USER_CLASSES.isdisjoint(cls.lower().split()) and not _in_form(element):
            user = _short_text(element)
        if user and user.strip():
            found.user = " ".join(user.split())
            break
    for element, byline, dateline in named:
        if byline and _in_form(element):  # a comment form's "Name (required)" field, named "comment-form-author"
            byline = False
        if byline or dateline:
            text = _short_text(element)
            if text:
                if byline:
                    found.bylines.append((element, text))
                if dateline:
                    found.datelines.append(text)
    return found


@functools.lru_cache(maxsize=4096)
def _name_kinds(cls: str, ident: str, rel: str) -> tuple[bool, bool]:
    """Return whether class/id/rel name a byline, and whether class/id name a dateline (cached: pages
    repeat their class names)."""
    names = f"{cls} {ident}".lower()
    with_rel = f"{names} {rel.lower()}" if rel else names
    byline = any(word in with_rel for word in _BYLINE_NAMES) and "comment" not in names  # "comment-author"
    return byline, any(word in names for word in _DATELINE_NAMES)


_FORM_TAGS = ("form", "label", "input", "textarea", "select", "button")


def _in_form(element: html.HtmlElement) -> bool:
    """Return whether the element is a form's part: a form control, inside a form or a label, or holding a control."""
    return element.tag in _FORM_TAGS or next(element.iterancestors("form", "label"), None) is not None \
        or next(element.iter("input", "textarea", "select"), None) is not None


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


# --- the page -------------------------------------------------------------------------------------


def page_metadata(root: html.HtmlElement, url: str | None = None, lines: Iterable[str] = (), *,
                  listed_date: str | None = None, fetched_at: str | None = None,
                  dates_by_htmldate: bool = True, headline: bool = True, thread: bool = False,
                  title_model: TitleChooser | None = None) -> Metadata:
    """Return the :class:`Metadata` of a parsed page (not modified) but its language (``identify_language``
    of the extracted text; ``lang_declared`` is set).

    ``lines``: the page's visible text lines in order (the bylines and datelines are looked for in
    the ``HEAD_LINES`` from the headline on); ``listed_date``: the feed's or sitemap's date of the
    URL; ``fetched_at``: the fetch time (ISO 8601), for relative dates; ``dates_by_htmldate``: run
    htmldate when no other source has a publish date (off for pages that are not articles);
    ``headline``: the page is an article, whose ``<h1>`` may be its headline (off for other pages; read by the
    rule only); ``thread``: the page is a forum's topic or a question and its answers (typed other), whose first
    post's user is its author when nothing names one; ``title_model``: the learned title chooser
    (``extraction.title``); without it, or when it is not sure of any candidate, ``choose_title``'s rule.
    """
    found = Metadata()
    fetched = fetch_time(fetched_at)
    max_year = (fetched or datetime.now(UTC)).year + 1

    def put(name: str, value: Any, source: str) -> None:
        if value and not getattr(found, name):
            setattr(found, name, value)
            found.sources[name] = source

    objects = jsonld_objects(root)
    article = article_object(objects) or {}
    publisher = article.get("publisher") if isinstance(article.get("publisher"), dict) else {}
    website = next((obj for obj in objects if schema_types(obj) & {"website"}), {})
    tags = meta_tags(root)
    scan = _scan(root)
    h1_elements = list(root.iter("h1"))
    h1s = [_heading(h1) for h1 in h1_elements[:H1S]]

    # 1. JSON-LD
    jsonld_headline = clean_value(article.get("headline") or article.get("name"))
    titles: list[tuple[str | None, str]] = [(jsonld_headline, "json-ld")]
    put("authors", person_names(article.get("author") or article.get("creator")), "json-ld")
    put("date_published", parse_date(clean_value(article.get("datePublished") or article.get("dateCreated")),
                                     max_year), "json-ld")
    put("date_modified", parse_date(clean_value(article.get("dateModified")), max_year), "json-ld")
    put("description", clean_value(article.get("description")), "json-ld")
    put("section", section_label(article.get("articleSection")), "json-ld")
    put("tags", keywords(article.get("keywords")), "json-ld")
    put("image", absolute_url(clean_value(article.get("image") or article.get("thumbnailUrl")), url), "json-ld")
    put("site_name", clean_value((publisher or {}).get("name") or website.get("name")), "json-ld")
    # The page's own <link rel=canonical> comes first (below); JSON-LD's url or mainEntityOfPage id only without
    # one, and without its fragment: Yoast and others name the page's WebPage node ".../#webpage".
    linked = canonical_link(root, url)
    if not linked and schema_types(article) & ARTICLE_TYPES:
        declared = absolute_url(clean_value(article.get("url") or article.get("mainEntityOfPage")), url)
        put("canonical_url", declared.split("#", 1)[0] if declared else None, "json-ld")

    # 2. microdata
    headlines = scan.itemprops.get("headline", [])
    microdata_headline = itemprop_value(headlines[0]) if headlines else None
    titles.append((microdata_headline, "microdata"))
    # The page's first publish or creation date: a question's dateCreated comes before its answers'
    # datePublished (Stack Exchange), a forum's first post before the replies.
    for name, elements in (("date_published", scan.created), ("date_modified", scan.itemprops.get("dateModified", [])),
                           ("description", scan.itemprops.get("description", []))):
        if getattr(found, name):
            continue
        value = itemprop_value(elements[0]) if elements else None
        put(name, parse_date(value, max_year) if name.startswith("date") else value, "microdata")
    if not found.authors:
        put("authors", _first_item_authors(scan.itemprops.get("author", [])), "microdata")

    # 3. meta tags
    put("site_name", first_tag(tags, "og:site_name", "application-name", "twitter:site"), "meta")
    put("canonical_url", linked or absolute_url(first_tag(tags, "og:url"), url), "meta")
    titles.append((first_tag(tags, "og:title", "twitter:title", "dc.title", "title"), "meta"))
    meta_authors = [value for key in ("author", "article:author", "dc.creator", "parsely-author", "sailthru.author",
                                      "byl", "dcterms.creator") for value in tags.get(key, ())]
    # Highwire Press's citation_author holds one author a tag, often as "Last, First" (arXiv: "Roy, Aniruddha").
    meta_authors += [" ".join(reversed(value.split(",", 1))) if value.count(",") == 1 else value
                     for value in tags.get("citation_author", ())]
    site = found.site_name
    put("authors", [name for value in meta_authors if not value.startswith(("http://", "https://"))
                    for name in outlet_address(split_authors(value, declared=True), site, url)][:MAX_AUTHORS], "meta")
    # Link previews' label and value pairs (Yoast SEO): twitter:label1 "Written by", twitter:data1 the name.
    for number in range(1, PREVIEW_LABELS + 1):
        label = first_tag(tags, f"twitter:label{number}")
        if label and WRITTEN_BY_RE.fullmatch(label):
            put("authors", split_authors(first_tag(tags, f"twitter:data{number}") or "", declared=True)[:MAX_AUTHORS],
                "meta")
    put("date_published", parse_date(first_tag(
        tags, "article:published_time", "og:published_time", "datepublished", "pubdate", "publishdate",
        "publish-date", "publish_date", "parsely-pub-date", "sailthru.date", "dc.date.issued", "dcterms.created",
        "dc.date", "dcterms.date", "date", "article.published", "citation_publication_date", "publishtime",
        "weibo: article:create_at", "published", "ms.date"), max_year), "meta")
    put("date_modified", parse_date(first_tag(tags, "article:modified_time", "og:updated_time", "datemodified",
                                           "last-modified", "dcterms.modified", "lastmod"), max_year), "meta")
    put("description", first_tag(tags, "og:description", "description", "twitter:description", "dc.description"),
        "meta")
    put("section", section_label(first_tag(tags, "article:section", "parsely-section", "section", "category")), "meta")
    put("tags", keywords(tags.get("article:tag") or tags.get("parsely-tags") or tags.get("news_keywords")
                          or tags.get("keywords")), "meta")
    put("image", absolute_url(first_tag(tags, "og:image", "og:image:url", "twitter:image", "twitter:image:src"), url),
        "meta")

    # 4. <time>; one labelled as an update ("Last updated: <time>") is the modified date.
    for time_element in root.iter("time"):
        value = parse_date(time_element.get("datetime"), max_year)
        if not value:
            continue
        if MODIFIED_WORDS.search(_text_before(time_element)):
            put("date_modified", value, "time")
            continue
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
        candidates = title_candidates(h1s, h2s, page_title, first_tag(tags, "og:title", "dc.title", "title"),
                                      first_tag(tags, "twitter:title"), jsonld_headline, microdata_headline)
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
    # The head lines start at the first <h1>; at the <h1> that is the page's title when the first one's head lines do
    # not reach it (a logo's <h1> at the top of the page); a section's <h1> right above the headline keeps the
    # dateline between the two ("Entertainment - Wire" / "Posted on Fri, Jan. 18, 2008" / the headline).
    headlines = [h1 for h1 in h1s if h1]
    start = _headline_index(page_lines, headlines or [found.title or ""])
    title = normal(found.title or "")
    titled = next((h1 for h1 in headlines[1:] if normal(h1) == title), None) if title else None
    if titled is not None and (titled_start := _headline_index(page_lines, [titled])) >= start + HEAD_LINES:
        start = titled_start
    head = [line for line in (" ".join(line.split()) for line in page_lines[start:start + HEAD_LINES])
            if line and len(line) <= BYLINE_MAX_CHARS]
    if not found.authors:
        for element, content in scan.bylines:
            names = zh_authors(content) or _byline_names(content, element)
            if names:
                put("authors", names[:MAX_AUTHORS], "byline")
                break
    if not found.authors:
        put("authors", zh_authors("\n".join(head))[:MAX_AUTHORS], "byline")
    if not found.authors:
        datelines = [line for line in scan.datelines if _CJK_RE.search(line)]
        put("authors", zh_authors("\n".join(datelines))[:MAX_AUTHORS], "byline")
    if not found.authors:
        closing = (ZH_CLOSING_RE.match(line.strip()) for line in page_lines[start:] if "记者" in line)
        put("authors", next((zh_names(match.group(1)) for match in closing if match), [])[:MAX_AUTHORS], "byline")
    if not found.authors:  # a blog's "ggjjzhzz 发表于 2005-9-15 11:46:00" under the post, anywhere after the headline
        put("authors", zh_posted_user(page_lines[start:]), "byline")
    if not found.authors and headline and len(head) > 1:  # on an article, a name alone after the headline
        put("authors", zh_lone_name(head[1]), "byline")
    if not found.authors:
        for i, line in enumerate(head):
            by = EN_BY_RE.match(line)
            names = split_authors(by.group(1)) if by else []
            if WRITTEN_BY_RE.fullmatch(line) and i + 1 < len(head):  # a label on its line, the name on the next
                names = split_authors(head[i + 1])
            if names:
                put("authors", names[:MAX_AUTHORS], "byline")
                break
    if not found.authors and headline:
        put("authors", _author_box(page_lines, start), "byline")
    if not found.authors and thread and scan.user:  # the topic's first post's user
        put("authors", split_authors(scan.user, declared=True)[:1], "byline")
    in_url = url_date(url)  # read here (5.) and given when nothing before it gave a date (6.)
    if not found.date_published or not found.date_modified:
        # Labelled head lines ("发布时间", "Posted", "来源") first: a date inside a sentence may be any date. A
        # publish date not near the URL's date (``near_day``) is another date (the masthead's today, another
        # story's in a sidebar): the next line's is read, else the URL's (6.) is the page's.
        for line in [*scan.datelines, *sorted(head, key=lambda line: not DATELINE_WORDS.search(line))]:
            value = parse_date(line, max_year) or relative_date(line, fetched)
            if not value:
                continue
            modified = MODIFIED_WORDS.search(line)
            if modified and not re.search(r"publish|posted|发布|发表", line, re.I):
                # "2019-02-23, 09:14 PM (This post was last modified: 2019-02-24 ...)": the date before the words
                # is the post's.
                before = parse_date(line[:modified.start()], max_year)
                put("date_published", before if before and near_day(before, in_url) else None, "byline")
                put("date_modified", parse_date(line[modified.start():], max_year) if before else value, "byline")
            elif near_day(value, in_url):
                put("date_published", value, "byline")
            if found.date_published:
                break
    if not found.date_published and start > 0:
        # A date on the line right above the headline, alone or with a short label: a kicker's "January 23, 2025",
        # "Reuters - December 30, 2007", an archive's "April 2, 1998" (a masthead's today is further up, above the
        # menus).
        above = " ".join(page_lines[start - 1].split())
        kicker = len(above) <= KICKER_MAX_CHARS and not MODIFIED_WORDS.search(above)  # "Last updated ..." is no kicker
        value = parse_date(above, max_year) if kicker else None
        put("date_published", value if value and near_day(value, in_url) else None, "byline")
    # 6.-8. URL, the feed or sitemap, htmldate
    put("date_published", in_url, "url")
    put("date_published", parse_date(listed_date, max_year), "listing")
    if not found.date_published and dates_by_htmldate:
        put("date_published", htmldate_date(root, url), "htmldate")
    # 9. A page that gives only the date it was updated shows that one ("Last updated: November 13, 2025").
    put("date_published", found.date_modified, "modified")

    found.lang_declared = declared_lang(root)
    if found.authors:
        found.authors = without_outlet(unique(found.authors), found.site_name, url)[:MAX_AUTHORS]
    return found


def _author_box(lines: list[str], start: int) -> list[str]:
    """Return the names of an article's author box, the first line from the headline's (``start``) on that reads
    "Written by John Crenshaw", or "Written by" with the name on the next line; none on a page with a "By ..."
    line below its head lines, which the extracted text may hold (a review's "By JOSHUA TANZER" before the
    play's credits, "Written by: William Bennett.")."""
    names: list[str] = []
    for i in range(start, len(lines)):
        line = " ".join(lines[i].split())
        written = AUTHOR_BOX_RE.match(line)
        if written:
            if not names:
                name = written.group(1) or (lines[i + 1] if i + 1 < len(lines) else "")
                names = split_authors(name)[:MAX_AUTHORS] if len(name) <= AUTHOR_BOX_MAX_CHARS else []
        elif i >= start + HEAD_LINES and EN_BY_RE.match(line):
            return []
    return names


def _byline_names(content: str, element: html.HtmlElement) -> list[str]:
    """Return the names of a byline element's text ``content`` (Latin names are capitalised); when the first name
    runs on past the element's first visible line that is no label, into a role or a count on the next ("Written
    By" / "Stephen Jesudunsin" / "AI Writer, Embarque"; "Matt Check" / "Head Winemaker, Co-Founder"), that line's
    names; not when the line is one word and the rest one capitalised word, a name's parts on lines of their own
    ("Ralf" / "Balke")."""
    names = _by_names(content)
    if not names:
        return names
    lines = visible_text(element).split("\n")
    if len(lines) > 1 and _avatar_initials(lines[0], lines[1]) and content.startswith(lines[0]):
        # An avatar's initials before the name they stand for ("NB" / "Nicole Burke"): the name is read.
        content, lines = content[len(lines[0]):].lstrip(), lines[1:]
        names = _by_names(content)
        if not names:
            return names
    first = next((line for line in lines if not WRITTEN_BY_RE.fullmatch(line)), "")
    on_line = _by_names(first)
    rest = names[0][len(on_line[0]) + 1:] if on_line and names[0].startswith(f"{on_line[0]} ") else ""
    if rest and not (" " not in on_line[0] + rest and rest[:1].isupper() and rest.isalpha() and rest != on_line[0]):
        return on_line
    return names


def _avatar_initials(line: str, after: str) -> bool:
    """Whether ``line`` is two or three capitals that are the initials of the words that begin ``after``."""
    return 2 <= len(line) <= 3 and line.isalpha() and line.isupper() \
        and "".join(word[:1] for word in after.split()[:len(line)]) == line


def _by_names(text: str) -> list[str]:
    """Return the capitalised names of a byline's text, its "By" label read off (Latin names are capitalised)."""
    return [name for name in split_authors(EN_BY_RE.sub(r"\1", text)) if name[:1].isupper()]


def _text_before(element: html.HtmlElement, chars: int = 40) -> str:
    """Return the last ``chars`` characters of the text just before ``element`` in its parent (its label)."""
    previous = element.getprevious()
    while previous is not None and not isinstance(previous.tag, str):  # comments, processing instructions
        previous = previous.getprevious()
    if previous is not None:
        before = previous.tail or ""
    else:
        parent = element.getparent()
        before = (parent.text or "") if parent is not None else ""
    return before[-chars:]


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
        found = split_authors(itemprop_value(element) or "", declared=True)
        if found:
            owner = item
            names.extend(found)
    return names[:MAX_AUTHORS]


def _item_of(element: html.HtmlElement) -> html.HtmlElement | None:
    return next((node for node in element.iterancestors() if node.get("itemscope") is not None), None)


def _heading(element: html.HtmlElement) -> str:
    """Return a heading's visible text on one line ("WEEKEND<br>CODING" is "WEEKEND CODING")."""
    return " ".join(visible_text(element).split())


def _headline_index(lines: list[str], headlines: list[str]) -> int:
    """Return the index of the first line that is the first of ``headlines`` (0 without one)."""
    headline = normal(headlines[0]) if headlines else ""
    return next((i for i, line in enumerate(lines) if normal(line) == headline), 0) if headline else 0
