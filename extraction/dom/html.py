"""HTML parsing that survives malformed markup, deep nesting and huge documents."""

from __future__ import annotations

import re

from lxml import etree, html

from extraction.dom.text import BLOCK_TAGS, is_hidden, show, visible_text

# libxml2 stops building the tree at depth 256 (2048 with huge_tree) and drops the rest of
# the document. Malformed pages reach that depth easily (every unclosed <font> or <div> nests
# one level deeper), so on that error the page is re-parsed with its generic container tags
# removed: the text survives, only nesting is lost.
_DEPTH_ERROR = "Excessive depth"
_CONTAINER_TAG_RE = re.compile(r"</?(?:div|span|font|section|center|b|i|u|em|strong)\b[^>]*>", re.I)
# Still too deep (2,000 nested <article>s, <blockquote>s or <ul>s): every tag goes but the page's frame, those
# whose content is no text (script, style) and those a new one closes (p, a): the text survives flat.
_NESTING_TAG_RE = re.compile(
    r"</?(?!(?:html|head|body|title|meta|link|base|script|style|noscript|template|p|br|a|img)\b)"
    r"[a-z][^\s/>]*[^>]*>", re.I)

_XML_DECL_RE = re.compile(r"^\s*<\?xml[^>]*\?>", re.IGNORECASE)
# libxml2 checks each attribute of a start tag against the ones before it: time quadratic in their number (20,000
# on one <div> took a second, 200,000 minutes, in the crawl's own process, which parses every page for its
# links). A start tag of more than ``MANY_ATTRIBUTES`` keeps its name only. Only a page with more "=" signs than
# ``MANY_EQUALS`` in all (24 of the datasets' 6,594 pages, none with such a tag) is searched for such a tag (20 KB
# or longer), which bounds the parse of any other page to about a second. The count reads the page at about 1 GB/s
# (0.2 ms on WCXB's pages of 250 KB, under 1% of their extraction).
MANY_ATTRIBUTES = 1000
MANY_EQUALS = 20000
_LONG_TAG_RE = re.compile(r"<[a-zA-Z][^<>]{20000,}>")
_TAG_NAME_RE = re.compile(r"<([^\s/<>]+)")
_ATTRIBUTE_RE = re.compile(r"\s[^\s=<>\"'/]+\s*=")  # a name and its "=" (not a query's "=" inside a value)
TITLE_MAX_CHARS = 300  # a longer text is no title: a <title> with markup in it has run on into the page's source


def parse_html(text: str) -> html.HtmlElement:
    """Return the root <html> element of ``text``; an empty or unparsable page gives an empty root."""
    cleaned = _XML_DECL_RE.sub("", text, count=1)
    if not cleaned.strip():
        return html.Element("html")
    if cleaned.count("=") > MANY_EQUALS:
        cleaned = _LONG_TAG_RE.sub(_fewer_attributes, cleaned)
    root, too_deep = _parse(cleaned)
    if too_deep:
        cleaned = _CONTAINER_TAG_RE.sub(" ", cleaned)
        root, too_deep = _parse(cleaned)
        if too_deep:
            root, _ = _parse(_NESTING_TAG_RE.sub(" ", cleaned))
    elif _title_left_open(root):
        root, _ = _parse(_OPEN_TITLE_RE.sub(r"\1\2</title>", cleaned, count=1))
    _move_content_into_body(root)
    _move_content_after_body(root)
    _show_hidden_page(root)
    return root


def _fewer_attributes(tag: re.Match[str]) -> str:
    """Return a start tag of more than ``MANY_ATTRIBUTES`` attributes as its name alone, any other (a long data
    URI, a JSON value of many addresses) as it is."""
    text = tag.group()
    if len(_ATTRIBUTE_RE.findall(text)) <= MANY_ATTRIBUTES:
        return text
    name = _TAG_NAME_RE.match(text)
    assert name is not None  # _LONG_TAG_RE's tags start with "<" and a letter
    return f"<{name.group(1)}>"


# What a <head> holds; anything else there is the page's content (libxml2 leaves it there, browsers do not).
_HEAD_TAGS = frozenset({"title", "meta", "link", "script", "style", "base", "noscript", "template"})


def _move_content_into_body(root: html.HtmlElement) -> None:
    """Move into ``<body>`` the content libxml2 leaves before it, where a browser shows it: an unknown element in
    ``<head>`` (``<mbox>``) keeps the rest of the page there, and elements before ``<body>`` are children of
    ``<html>``. Every method reads the body only. (What follows ``</body>`` goes to its end:
    ``_move_content_after_body``.)"""
    head = root.find("head")
    stray = [child for child in head if isinstance(child.tag, str) and child.tag not in _HEAD_TAGS] \
        if head is not None else []
    before: list[html.HtmlElement] = []
    body = None
    for child in root:
        if child.tag == "body":
            body = child
            break
        if isinstance(child.tag, str) and child.tag != "head":
            before.append(child)
    if not (stray or before):
        return
    if body is None:
        body = html.Element("body")
        root.append(body)
    for index, node in enumerate([*stray, *before]):
        body.insert(index, node)


def _move_content_after_body(root: html.HtmlElement) -> None:
    """Move to the end of ``<body>`` what libxml2 leaves after it, where a browser shows it: the elements after
    ``<body>`` in ``<html>`` (after a stray ``</body>``) and the content of top-level elements after ``<html>``
    (after a stray ``</html>``)."""
    body = root.find("body")
    if body is None:
        return
    after = [node for node in body.itersiblings() if isinstance(node.tag, str)]
    later = [node for node in root.itersiblings() if isinstance(node.tag, str)]
    for node in after:
        body.append(node)
    for top in later:
        source = top.find("body")
        nodes = list(source) if source is not None else [node for node in top if node.tag != "head"]
        text = (source.text if source is not None else top.text) or ""
        if text.strip():
            last = body[-1] if len(body) else None
            if last is None:
                body.text = (body.text or "") + text
            else:
                last.tail = (last.tail or "") + text
        for node in nodes:
            body.append(node)


HOLDER_MIN_CHARS = 500  # a <button> or <noscript> with this much text may hold the page
WRAPPER_SHARE = 2.0  # a hidden element near the top with this many times the text the page shows is the page's


def _holders(root: html.HtmlElement) -> list[html.HtmlElement]:
    """Return the elements whose text is never shown that may hold the page's (``_show_hidden_page``): buttons
    and noscripts with children, React's streamed segments (``<div hidden id="S:0">``). One filtered walk in C
    (0.17 ms a page; an XPath union takes 0.29)."""
    return [node for node in root.iter("button", "noscript", "div")
            if ((node.get("hidden") is not None and (node.get("id") or "").startswith("S:")) if node.tag == "div"
                else len(node))]


# Elements near the top of <body> that may hide the whole page (``_show_hidden_page``), found in C one level at a
# time: a union of the three levels ("(*|*/*|*/*/*)[...]") makes libxml2 merge node sets in quadratic time, minutes
# on a page of 400,000 blocks.
_HIDING = "[@hidden or @aria-hidden or contains(@style, 'hidden') or contains(@style, 'none')]"
_WRAPPER_XPATHS = tuple(etree.XPath(level + _HIDING) for level in ("*", "*/*", "*/*/*"))


def _hidden_wrappers(root: html.HtmlElement) -> list[html.HtmlElement]:
    """Return the elements of the top three levels of ``<body>`` hidden by markup (``is_hidden``) that hold
    ``HOLDER_MIN_CHARS`` or more of text and a block-level child: a page hidden until its script has run, not a
    run of hidden words (a hidden block of keywords stays hidden)."""
    body = root.find("body")
    if body is None:
        return []
    return [node for xpath in _WRAPPER_XPATHS for node in xpath(body)
            if is_hidden(node) and any(child.tag in BLOCK_TAGS for child in node)
            and len(node.text_content()) >= HOLDER_MIN_CHARS]


def _show_hidden_page(root: html.HtmlElement) -> None:
    """Show the text of elements that hide it when that text outweighs the rest of the page: it is the page's.

    - React's streamed server rendering sends the page in ``<div hidden id="S:0">`` parts that its script
      moves into place (Next.js pages read without a browser): their ``hidden`` goes when their text is
      longer than the page's visible text (when it is not, they repeat what the page shows).
    - A ``<noscript>`` of ``HOLDER_MIN_CHARS`` or more whose text is longer, on a page that shows less than
      that (Discourse forums give a client without script their posts in one, and an empty shell; a rendered
      page shows the posts the script built, so its noscript stays) is unwrapped; one in ``<head>`` moves
      to the start of ``<body>``.
    - So is such a ``<button>``: libxml2 leaves the rest of the page in a button whose ``<div>`` is not
      closed (``<button><div>...<div></button>``, seen on Dotdash Meredith's sites).
    - An element of the top three levels of ``<body>`` hidden by markup (``style="visibility:hidden"``, the
      ``hidden`` attribute) and holding a block-level element (``_hidden_wrappers``) is shown on a page that
      shows less than ``HOLDER_MIN_CHARS`` without it, or when it has more than ``WRAPPER_SHARE`` times the
      text the page shows (each compared with the page before any is shown): pages hide themselves until their
      script or style sheet has loaded (a Next.js site's whole page in ``<div style="visibility:hidden">``, a
      Shopify app's ``<div class="easylockdown-content" style="display:none">`` around the shop's products
      beside its menus), and a browser's render shows them.
    """
    sizes = [(node, len(node.text_content())) for node in _holders(root)]
    segments = [(node, size) for node, size in sizes if node.tag == "div"]
    segment_chars = sum(size for _, size in segments)
    holders = [(node, size) for node, size in sizes if node.tag != "div" and size >= HOLDER_MIN_CHARS]
    wrappers = _hidden_wrappers(root)
    if not holders and not wrappers and segment_chars < HOLDER_MIN_CHARS:
        return  # most pages: the page's text walk below is not needed
    shown = len(visible_text(root))
    if segment_chars > shown:
        for node, _ in segments:
            del node.attrib["hidden"]
        shown += segment_chars  # the page now shows them: a noscript or button no longer outweighs it
    if wrappers:
        rest = shown
        for node in wrappers:
            hiding = dict(node.attrib)
            show(node)
            size = len(visible_text(node))
            if rest < HOLDER_MIN_CHARS or size > WRAPPER_SHARE * rest:
                shown += size
            else:
                node.attrib.clear()
                node.attrib.update(hiding)
    body = root.find("body")
    for node, size in holders if shown < HOLDER_MIN_CHARS else ():
        if size <= shown:
            continue
        if node.tag == "noscript" and body is not None and any(up.tag == "head" for up in node.iterancestors()):
            node.getparent().remove(node)
            node.tail = None
            body.insert(0, node)
        node.drop_tag()


# A <title> whose end tag is lost (archived pages: "<title>Headline</titavaScript" src=...") holds the rest of
# the page as its text, and the page has no body. It is closed where its first tag starts.
_OPEN_TITLE_RE = re.compile(r"(<title\b[^>]*>)([^<]*)", re.I)


def _title_left_open(root: html.HtmlElement) -> bool:
    """Return whether the page's text went into its ``<title>``: no ``<body>``, a title longer than a title."""
    if root.find("body") is not None:
        return False
    title = root.find("head/title")
    return title is not None and len(title.text or "") > TITLE_MAX_CHARS


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
    has content is taken, else the first with any content, else ``root``. (The content of the top-level
    elements after it is moved to the end of its body by ``parse_html``: ``_move_content_after_body``.)
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


# Markup in a <title>'s text: an end tag, a tag with attributes, a comment ("The <canvas> element" is a title).
_LEAKED_MARKUP_RE = re.compile(r"<\\?/[A-Za-z]|<[A-Za-z]+\s+[\w:-]+\s*=|<!--|-->")
_TAG_RE = re.compile(r"<[^<>]*>|<!--|-->")
# Script read as a title: a statement ending in a string, string concatenation, a tag's end, a function,
# an assignment, a document call.
_SCRIPT_RE = re.compile(r"[\"']\s*\)?\s*;|[\"']\s*\+|[\"']\s*/?>|\bfunction\s*\(|\b(?:var|this)[\s.]\w*\s*=|"
                        r"\bdocument\.\w+\s*\(")


def title_text(value: str) -> str | None:
    """Return a ``<title>``'s text on one line without the markup in it, or None when it is script.

    A ``<title>`` the page left open reads the page's source as its text ("Headline</titavaScript" src=...
    </head><body>..."): over ``TITLE_MAX_CHARS`` it is cut where the markup starts. A short one with
    markup (a site that escaped its headline's tags, "He May Be<br/> <i>Our</i> Son") loses the tags.
    """
    text = " ".join(value.split())
    leak = _LEAKED_MARKUP_RE.search(text)
    if leak:
        text = text[:leak.start()].strip() if len(text) > TITLE_MAX_CHARS else " ".join(_TAG_RE.sub(" ", text).split())
    if not text or _SCRIPT_RE.search(text):
        return None
    return text


def page_title(root: html.HtmlElement) -> str | None:
    """Return the page title: <title> (``title_text``), else og:title, else the first <h1>; None if none."""
    for xpath in ("//title", "//meta[@property='og:title']/@content", "//h1"):
        found = root.xpath(xpath)
        if found:
            value = title_text(found[0].text_content()) if xpath == "//title" else \
                " ".join((found[0] if isinstance(found[0], str) else found[0].text_content()).split())
            if value:
                return value
    return None


def declared_lang(root: html.HtmlElement) -> str | None:
    """Return the primary language subtag of <html lang> or Content-Language meta, lower-cased."""
    candidates = [root.get("lang"), root.get("{http://www.w3.org/XML/1998/namespace}lang")]
    # http-equiv is case-insensitive ("Content-Language", "content-language", "CONTENT-LANGUAGE")
    candidates += [meta.get("content") for meta in root.getroottree().getroot().iter("meta")
                   if (meta.get("http-equiv") or "").lower() == "content-language"]
    for value in candidates:
        primary = (value or "").strip().split(",")[0].strip().replace("_", "-").split("-")[0].lower()
        if _LANG_SUBTAG_RE.fullmatch(primary):  # not "lang=" or "{{ locale }}" a template left
            return primary
    return None


_LANG_SUBTAG_RE = re.compile(r"[a-z]{2,3}")
