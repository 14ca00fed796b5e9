"""Language of a page: the declared one, else a guess from the script of its text."""

from __future__ import annotations

import re

# Share of letters that must be in a script to call the text that script's language.
# 0.3: Chinese pages mix in Latin (names, numbers, URLs); measured on the demo zh pages,
# where Han characters are 85-95% of letters.
SCRIPT_SHARE = 0.3

_HAN_RE = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_KANA_RE = re.compile(r"[\u3040-\u30ff]")
_HANGUL_RE = re.compile(r"[\uac00-\ud7af]")
_LETTER_RE = re.compile(r"[^\W\d_]")


def script_language(text: str, sample: int = 5000) -> str | None:
    """Return zh, ja or ko when the text is mostly in that script, else None.

    Latin-script languages are not told apart here: a page without a declaration gets None
    rather than a guess.
    """
    head = text[:sample]
    letters = len(_LETTER_RE.findall(head))
    if not letters:
        return None
    kana = len(_KANA_RE.findall(head))
    if kana / letters >= SCRIPT_SHARE / 3:  # Japanese mixes kana with kanji
        return "ja"
    if len(_HANGUL_RE.findall(head)) / letters >= SCRIPT_SHARE:
        return "ko"
    if len(_HAN_RE.findall(head)) / letters >= SCRIPT_SHARE:
        return "zh"
    return None
