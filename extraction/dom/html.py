"""HTML parsing that survives malformed markup, deep nesting and huge documents."""

from __future__ import annotations

import re

from lxml import etree, html

# libxml2 stops building the tree at depth 256 (2048 with huge_tree) and drops the rest of
# the document. Malformed pages reach that depth easily (every unclosed <font> or <div> nests
# one level deeper), so on that error the page is re-parsed with its generic container tags
# removed: the text survives, only nesting is lost.
_DEPTH_ERROR = "Excessive depth"
_CONTAINER_TAG_RE = re.compile(r"</?(?:div|span|font|section|center|b|i|u|em|strong)\b[^>]*>", re.I)

_XML_DECL_RE = re.compile(r"^\s*<\?xml[^>]*\?>", re.IGNORECASE)


def parse_html(text: str) -> html.HtmlElement:
    """Return the root <html> element of ``text``; an empty or unparsable page gives an empty root."""
    cleaned = _XML_DECL_RE.sub("", text, count=1)
    if not cleaned.strip():
        return html.Element("html")
    root, too_deep = _parse(cleaned)
    if too_deep:
        root, _ = _parse(_CONTAINER_TAG_RE.sub(" ", cleaned))
    return root


# lxml.html's own class lookup calls Python for every element proxy it creates (to give forms and
# inputs their classes); none of that is used here, and the lookup in C makes the flow ~4% faster.
_CLASS_LOOKUP = etree.ElementDefaultClassLookup(element=html.HtmlElement, comment=html.HtmlComment,
                                                pi=html.HtmlProcessingInstruction, entity=html.HtmlEntity)


def _parse(text: str) -> tuple[html.HtmlElement, bool]:
    # A parser per call: lxml parsers keep an error log and are not safe to share.
    parser = html.HTMLParser(
        encoding="utf-8", huge_tree=True, remove_comments=True, remove_pis=True
    )
    parser.set_element_class_lookup(_CLASS_LOOKUP)
    try:
        root = html.document_fromstring(text.encode("utf-8", "surrogatepass"), parser=parser)
    except (etree.ParserError, ValueError):
        return html.Element("html"), False
    too_deep = any(_DEPTH_ERROR in entry.message for entry in parser.error_log)
    return _content_root(root), too_deep


def _content_root(root: html.HtmlElement) -> html.HtmlElement:
    """Return the top-level element that holds the page.

    libxml2 can leave the page in a second top-level <html> (seen on an L3S-GN1 page whose <html>
    start tag is cut: ``<html x" /></a></td>...``; also after a stray ``</html>``): code that walks
    ``root`` would then see no text at all. Among the top-level elements, the first whose <body>
    has content is taken, else the first with any content, else ``root``.
    """
    siblings = [element for element in root.itersiblings() if isinstance(element.tag, str)]
    if not siblings:
        return root
    candidates = [root, *siblings]
    for candidate in candidates:
        body = candidate.find("body")
        if body is not None and (len(body) or (body.text and body.text.strip())):
            return candidate
    for candidate in candidates:
        if len(candidate) or (candidate.text and candidate.text.strip()):
            return candidate
    return root


def page_title(root: html.HtmlElement) -> str | None:
    """Return the page title: <title>, else og:title, else the first <h1>; None if none."""
    for xpath in ("//title", "//meta[@property='og:title']/@content", "//h1"):
        found = root.xpath(xpath)
        if found:
            value = found[0] if isinstance(found[0], str) else found[0].text_content()
            value = " ".join(value.split())
            if value:
                return value
    return None


def declared_lang(root: html.HtmlElement) -> str | None:
    """Return the primary language subtag of <html lang> or Content-Language meta, lower-cased."""
    candidates = [root.get("lang"), root.get("{http://www.w3.org/XML/1998/namespace}lang")]
    candidates += root.xpath("//meta[translate(@http-equiv,'LANGUAGE','language')='content-language']/@content")
    for value in candidates:
        if value and value.strip():
            return value.strip().split(",")[0].strip().replace("_", "-").split("-")[0].lower()
    return None
