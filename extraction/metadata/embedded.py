"""What a page says about itself in embedded data: JSON-LD objects (``@graph`` and lists flattened),
microdata ``itemprop`` values, ``<meta>`` tags (OpenGraph, Twitter cards, Dublin Core, ...), the canonical
link and keyword lists; and the value cleaning every metadata source shares."""

from __future__ import annotations

import json
import re
from collections import deque
from collections.abc import Iterable, Iterator
from html import unescape
from typing import Any
from urllib.parse import urljoin, urlsplit

from lxml import html

from extraction.dom.lang import HAN_RE
from extraction.dom.text import printable
from extraction.metadata.authors import split_authors

MAX_TAGS = 30
# A tag or a section is a label of a few words: a longer one is a sentence, a headline or a list of keywords set
# apart by spaces ("summit county colorado breckenridge keystone copper frisco news"), which names no one tag.
MAX_LABEL_CHARS = 60
MAX_LABEL_WORDS = 6
MAX_FIELD_CHARS = 1000

ARTICLE_TYPES = frozenset({
    "newsarticle", "article", "blogposting", "reportagenews", "analysisnewsarticle", "opinionnewsarticle",
    "reviewnewsarticle", "backgroundnewsarticle", "livebloposting", "liveblogposting", "techarticle",
    "scholarlyarticle", "report", "socialmediaposting", "discussionforumposting", "posting",
})
PAGE_TYPES = frozenset({"webpage", "itempage", "collectionpage", "aboutpage", "faqpage", "qapage"})
ORGANIZATION_TYPES = frozenset({"organization", "newsmediaorganization", "corporation", "website"})


def clean_value(value: Any) -> str | None:
    """Return ``value`` as one line of text (whitespace collapsed, at most MAX_FIELD_CHARS), or None."""
    if value is None:
        return None
    if isinstance(value, (list, tuple)):
        value = next((item for item in value if clean_value(item)), None)
        return clean_value(value)
    if isinstance(value, dict):
        return clean_value(value.get("name") or value.get("@value") or value.get("url") or value.get("@id"))
    # Entities survive in JSON-LD and some meta contents; a JSON string's escapes can name a control
    # character or half a surrogate pair ("\\u0000", "\\udfff"), which no text holds.
    text = " ".join(printable(unescape(str(value))).split())
    return text[:MAX_FIELD_CHARS] or None


def schema_types(obj: dict[str, Any]) -> set[str]:
    value = obj.get("@type", ())
    values = value if isinstance(value, list) else [value]
    return {str(v).rsplit("/", 1)[-1].lower() for v in values if v}


def absolute_url(url: str | None, base: str | None) -> str | None:
    if not url:
        return None
    url = url.strip()
    try:
        joined = urljoin(base, url) if base else url
        scheme = urlsplit(joined).scheme
    except ValueError:  # a malformed address ("http://[x", a broken IPv6 host) is no address
        return None
    return joined if scheme in ("http", "https") else None


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
        except RecursionError:  # nested deeper than the parser goes: not data a page means
            continue
        except ValueError:
            try:  # pages concatenate objects or leave a trailing comma
                data = json.loads("[" + re.sub(r",\s*([}\]])", r"\1", text).replace("}\n{", "},{") + "]")
            except (ValueError, RecursionError):
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


def article_object(objects: list[dict[str, Any]]) -> dict[str, Any] | None:
    for wanted in (ARTICLE_TYPES, PAGE_TYPES):
        for obj in objects:
            if schema_types(obj) & wanted:
                return obj
    return None


def person_names(value: Any) -> list[str]:
    """Return the names of the people in a JSON-LD ``author`` value (organizations left out)."""
    values = value if isinstance(value, list) else [value]
    names: list[str] = []
    for item in values:
        if isinstance(item, dict):
            if schema_types(item) & ORGANIZATION_TYPES:
                continue
            name = clean_value(item.get("name"))
        else:
            name = clean_value(item)
        if name and not name.startswith(("http://", "https://")):
            names.extend(split_authors(name, declared=True))
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


def first_tag(tags: dict[str, list[str]], *names: str) -> str | None:
    for name in names:
        for value in tags.get(name, ()):
            cleaned = clean_value(value)
            if cleaned:
                return cleaned
    return None


def _itemprop(root: html.HtmlElement, name: str) -> list[html.HtmlElement]:
    """Return the elements of ``root``'s subtree with ``name`` among their itemprops (a small subtree: the
    page's own are in ``extraction.metadata.fields._Scan.itemprops``)."""
    return [element for element in root.iter() if isinstance(element.tag, str)
            and name in (element.get("itemprop") or "").split()]


def itemprop_value(element: html.HtmlElement) -> str | None:
    for attribute in ("content", "datetime"):
        if element.get(attribute):
            return clean_value(element.get(attribute))
    names = _itemprop(element, "name")
    if names and names[0] is not element:  # a Person item's name: its text, or a <meta>'s content (Stack Exchange)
        return itemprop_value(names[0])
    return clean_value(element.text_content())


def canonical_link(root: html.HtmlElement, url: str | None) -> str | None:
    for link in root.iter("link"):
        if "canonical" in (link.get("rel") or "").lower().split():
            return absolute_url(link.get("href"), url)
    return None


def keywords(value: Any) -> list[str]:
    values = value if isinstance(value, list) else [value] if value else []
    tags: list[str] = []
    for item in values:
        text = clean_value(item)
        if not text:
            continue
        for part in re.split(r"[,，;；、|]", text):
            # Chinese sites set their keywords apart by spaces: "校长 宏志班 学生" (not "电子商务Taobao Network")
            chinese = HAN_RE.search(part) and not _LATIN_RE.search(part)
            tags.extend(label for label in (part.split() if chinese else [part.strip()]) if _label(label))
    return unique(tags)[:MAX_TAGS]


def section_label(value: Any) -> str | None:
    """Return a page's section: the first of a list ("News, Politics"), when it is a label (``_label``)."""
    text = clean_value(value)
    first = text.split(",")[0].strip() if text else None
    return first if first and _label(first) else None


_LATIN_RE = re.compile(r"[A-Za-z]")


def _label(text: str) -> bool:
    text = text.strip()
    return bool(text) and len(text) <= MAX_LABEL_CHARS and len(text.split()) <= MAX_LABEL_WORDS \
        and not text.startswith(("http://", "https://", "/"))


def unique(values: Iterable[str]) -> list[str]:
    seen: set[str] = set()
    kept = []
    for value in values:
        key = value.lower()
        if key not in seen:
            seen.add(key)
            kept.append(value)
    return kept
