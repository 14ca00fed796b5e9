"""Mojibake that a page carries in its own bytes, repaired in the extracted text (ftfy).

Decoding (``extraction.dom.encoding``) reads a page's bytes as the page is encoded. Some pages were
already broken when they were served: UTF-8 text decoded as windows-1252 and stored again as UTF-8
("Â£790million", "wayâ€¦"), or windows-1252 punctuation kept as C1 control characters
(U+0091/U+0092 for ‘ ’, U+0099 for ™). On 2,000 replayed dataset pages 13 texts carried such
sequences. ftfy's ``fix_encoding`` undoes them and nothing else (no quote, width or Unicode
normalisation); it runs only on texts where :data:`MOJIBAKE_RE` or a C1 control character shows a
suspect sequence (a cheap search: ftfy's own check costs about 2 ms a page).
"""

from __future__ import annotations

import re

import ftfy

# UTF-8 bytes read as windows-1252/latin-1 ("Ã©", "â€™", "æ–°"): a lead byte's character followed by
# continuation bytes' characters; windows-1252 maps 0x80-0x9f to the characters listed.
CONTINUATION = "\u0080-\u00bf\u20ac\u201a\u0192\u201e\u2026\u2020\u2021\u02c6\u2030\u0160\u2039\u0152" \
               "\u017d\u2018\u2019\u201c\u201d\u2022\u2013\u2014\u02dc\u2122\u0161\u203a\u0153\u017e\u0178"
# Lead bytes 0xDE-0xDF ("Þ", "ß") are left out: they start UTF-8 sequences of rare scripts (Thaana, NKo), and
# German puts "ß" before quotes and soft hyphens ("muß“", "Stra\u00adße").
MOJIBAKE_RE = re.compile(f"[\u00c2-\u00dd][{CONTINUATION}]|[\u00e0-\u00ef][{CONTINUATION}]{{2}}")
_SUSPECT_RE = re.compile(f"[\u0080-\u009f]|{MOJIBAKE_RE.pattern}")


def repair_text(text: str) -> str:
    """Return ``text`` with the mojibake it carries undone (unchanged when it shows none)."""
    if not text or not _SUSPECT_RE.search(text):
        return text
    return ftfy.fix_encoding(text)
