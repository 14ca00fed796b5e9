"""The full-text baseline: every visible text node of the page body, one block per line."""

from __future__ import annotations

import re
import unicodedata

from lxml import etree, html

# Elements whose content is never shown to a reader, or shown only as an annotation beside the text:
# ruby's readings (<rt>, the furigana of a Japanese page, a Chinese page's pinyin) and <rp>, the
# parentheses around them for browsers without ruby. "子<rt>こ</rt>ども" reads 子ども, as a reader reads it.
INVISIBLE_TAGS = frozenset(
    {"script", "style", "noscript", "template", "head", "title", "meta", "link", "svg",
     "iframe", "object", "embed", "canvas", "select", "option", "datalist", "input", "button",
     "textarea", "rt", "rp"}
)
# Elements that start a new line when rendered (CSS display: block and friends).
BLOCK_TAGS = frozenset(
    {"address", "article", "aside", "blockquote", "body", "br", "caption", "dd", "details",
     "div", "dl", "dt", "fieldset", "figcaption", "figure", "footer", "form", "h1", "h2", "h3",
     "h4", "h5", "h6", "header", "hr", "li", "main", "nav", "ol", "p", "pre", "section",
     "summary", "table", "tbody", "td", "tfoot", "th", "thead", "tr", "ul"}
)
_HIDDEN_STYLE_RE = re.compile(r"display\s*:\s*none|visibility\s*:\s*hidden", re.IGNORECASE)
_SPACE_RE = re.compile(r"[ \t\r\f\v\u00a0\u3000]+")
_LINE_BREAK_RE = re.compile("[\n\x1c-\x1e\x85\u2028\u2029]")
# Invisible characters that only steer rendering and split a word for search and tokenisers: the soft
# hyphen (German and Dutch pages hyphenate "Mit\u00adtel\u00adal\u00adter"), zero-width space, word
# joiner, the invisible operators, BOM and the Mongolian vowel separator. Zero-width (non-)joiners and
# direction marks stay: Persian, Indic scripts and emoji need the first, right-to-left text the second.
_INVISIBLE = "\u00ad\u180e\u200b\u2060-\u2064\ufeff"
# Characters no text holds: the C0 controls that are no whitespace (a page's "&#x1b;[31m", a stray byte 0x07,
# a JSON string's "\u0000"), DEL, the noncharacters U+FFFE and U+FFFF, and lone surrogates (a JSON string's
# "\udfff" escape), which cannot be written as UTF-8 at all: a record holding one would stop the JSON Lines feed.
# A run of controls between two words was their space ("Intergovernmental\x07 Panel\x07on\x07 Climate" on a
# German page of trafilatura-eval), and is one; the others go.
_CONTROLS = "\x00-\x08\x0e-\x1b\x7f"
_NONCHARACTERS = "\ufffe\uffff\ud800-\udfff"
_UNWRITABLE_RE = re.compile(f"[{_CONTROLS}{_NONCHARACTERS}]")  # one search of a character class: the common case
_CONTROL_RE = re.compile(f" *[{_CONTROLS}]+ *")
_NONCHARACTER_RE = re.compile(f"[{_NONCHARACTERS}]")
_INVISIBLE_RE = re.compile(f"[{_INVISIBLE}]")


def is_hidden(element: html.HtmlElement) -> bool:
    """Return True when the element is hidden by markup (hidden attribute or inline style)."""
    if element.get("hidden") is not None or element.get("aria-hidden") == "true":
        return True
    style = element.get("style")
    return bool(style and _HIDDEN_STYLE_RE.search(style))


def show(element: html.HtmlElement) -> None:
    """Undo what ``is_hidden`` reads on ``element``: its ``hidden`` and ``aria-hidden`` attributes go, and the
    declarations that hide it leave its inline style."""
    element.attrib.pop("hidden", None)
    element.attrib.pop("aria-hidden", None)
    style = element.get("style")
    if style and _HIDDEN_STYLE_RE.search(style):
        element.set("style", _HIDDEN_STYLE_RE.sub("", style))


def document_body(root: html.HtmlElement) -> html.HtmlElement:
    """Return the first ``<body>`` of ``root``'s document (what XPath ``//body`` finds first), else ``root``.

    Found with lxml's tag filter, which stops at the body near the top: an XPath ``//`` query walks the
    whole page in libxml2 (0.3 ms on a WCXB page)."""
    return next(root.getroottree().getroot().iter("body"), root)


def visible_text(root: html.HtmlElement) -> str:
    """Return the visible text under ``root``: one line per block, whitespace collapsed.

    ``root`` is a document (its <body> is used) or any element (its subtree, without its
    tail). Iterative (no recursion) so that very deep documents do not hit Python's
    recursion limit.
    """
    top = next(root.iterdescendants("body"), root)  # ".//body": a subtree's own text, not its document's body
    parts: list[str] = []
    skip_depth = 0
    for event, element in etree.iterwalk(top, events=("start", "end")):
        if not isinstance(element.tag, str):
            continue  # comments and processing instructions (their tails are handled below)
        if event == "start":
            if skip_depth or element.tag in INVISIBLE_TAGS or is_hidden(element):
                skip_depth += 1
                continue
            if element.tag in BLOCK_TAGS:
                parts.append("\n")
            if element.text:
                parts.append(element.text)
        else:
            if skip_depth:
                skip_depth -= 1
                if skip_depth:
                    continue
            elif element.tag in BLOCK_TAGS:
                parts.append("\n")
            if element.tail and element is not top:
                parts.append(element.tail)
    return normalise_lines("".join(parts))


def normalise_lines(text: str) -> str:
    """Return ``text`` with runs of spaces collapsed and empty lines removed.

    Unicode's other line separators (U+2028, U+2029, NEL, the C0 file/group/record separators) end a
    line too, so a reader that splits a JSONL corpus with ``str.splitlines`` finds one record per line.
    """
    lines = (_SPACE_RE.sub(" ", line).strip() for line in _LINE_BREAK_RE.split(text))
    return "\n".join(line for line in lines if line)


def _control_run(run: re.Match[str]) -> str:
    text, start, end = run.string, run.start(), run.end()
    between_words = start > 0 and end < len(text) and not text[start - 1].isspace() and not text[end].isspace()
    return " " if between_words else ""


def printable(text: str) -> str:
    """Return ``text`` without the characters no text holds (``_CONTROL_RE``, ``_NONCHARACTER_RE``): a run of
    controls between two words becomes a space."""
    if not _UNWRITABLE_RE.search(text):
        return text
    return _NONCHARACTER_RE.sub("", _CONTROL_RE.sub(_control_run, text))


def tidy_text(text: str) -> str:
    """Return ``text`` as a corpus keeps it: NFC (one form of "é" or Bengali "য়" whichever the page's bytes
    held), without the invisible characters of ``_INVISIBLE`` and those no text holds (``printable``); a line
    left blank goes."""
    if not text or (text.isascii() and not _UNWRITABLE_RE.search(text)):
        return text
    tidy = unicodedata.normalize("NFC", _INVISIBLE_RE.sub("", printable(text)))
    if tidy == text:
        return text
    return "\n".join(line for line in tidy.split("\n") if line.strip())
