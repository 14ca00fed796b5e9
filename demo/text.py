"""Deterministic news-text generation from the vocabularies in vocab_en / vocab_zh.

The output is the gold text the crawler's extraction tests score against, so
everything here must depend only on the ``random.Random`` passed in.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType

from demo import vocab_en, vocab_zh

_SLOT = re.compile(r"\{(\w+)\}")

_STORY_FIGURES = ("money", "pct", "month", "n_big", "n_small", "weekday")
# Paragraph length bounds from the brief: words for English, characters for Chinese.
LIMITS: dict[str, tuple[int, int]] = {"en": (30, 90), "zh": (60, 220)}


@dataclass(frozen=True)
class ArticleText:
    """Generated text of one article (no markup)."""

    topic: str
    headline: str
    paragraphs: tuple[str, ...]
    author: str
    caption: str
    comments: tuple[tuple[str, str], ...]  # (user name, comment text)

    @property
    def summary(self) -> str:
        """Return the first sentence of the lead paragraph (used on list pages)."""
        first = self.paragraphs[0]
        end = first.find("。") + 1 if "。" in first else first.find(". ") + 1
        return first[:end] if end > 0 else first


def paragraph_size(lang: str, paragraph: str) -> int:
    """Return the size of a paragraph in the unit its limits use (words or chars)."""
    return len(paragraph.split()) if lang == "en" else len(paragraph)


def _vocab(lang: str) -> ModuleType:
    return vocab_en if lang == "en" else vocab_zh


def _article_context(lang: str, rng: random.Random) -> dict[str, str]:
    """Draw the slots that must stay constant within one article."""
    if lang == "en":
        v = vocab_en
        first, last = rng.choice(v.FIRST_NAMES), rng.choice(v.LAST_NAMES)
        team, team2 = rng.sample(v.TEAMS, 2)
        return {
            "person": f"{first} {last}", "surname": last, "role": rng.choice(v.ROLES),
            "district": rng.choice(v.DISTRICTS), "street": rng.choice(v.STREETS),
            "org": rng.choice(v.ORGS), "project": rng.choice(v.PROJECTS),
            "company": rng.choice(v.COMPANIES), "startup": rng.choice(v.STARTUPS),
            "gadget": rng.choice(v.GADGETS), "team": team, "team2": team2,
            "expert": f"{rng.choice(v.FIRST_NAMES)} {rng.choice(v.LAST_NAMES)}",
            "expert_role": rng.choice(v.EXPERT_ROLES), "university": rng.choice(v.UNIVERSITIES),
            "adjective": rng.choice(v.ADJECTIVES),
        }
    z = vocab_zh
    names = rng.sample(z.SURNAMES, 2)
    team, team2 = rng.sample(z.TEAMS, 2)
    return {
        "person": names[0] + rng.choice(z.GIVEN_NAMES),
        "person2": names[1] + rng.choice(z.GIVEN_NAMES),
        "district": rng.choice(z.DISTRICTS), "dept": rng.choice(z.DEPTS),
        "project": rng.choice(z.PROJECTS), "company": rng.choice(z.COMPANIES),
        "lab": rng.choice(z.LABS), "gadget": rng.choice(z.GADGETS), "team": team, "team2": team2,
    }


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def _fresh_value(lang: str, key: str, rng: random.Random) -> str:
    """Draw a slot that may differ every time it is used (numbers, days)."""
    v = _vocab(lang)
    a = rng.randint(2, 5)
    b = rng.randint(0, min(a - 1, 2))
    sep = "-" if lang == "en" else ":"
    table: dict[str, Callable[[], str]] = {
        "money": lambda: (f"${rng.randint(2, 95)}.{rng.randint(1, 9)} million" if lang == "en"
                          else f"{rng.randint(2, 80)}.{rng.randint(1, 9)}"),
        "pct": lambda: str(rng.randint(3, 28)),
        "pct_small": lambda: f"{rng.randint(1, 6)}.{rng.randint(1, 9)}",
        "pct_high": lambda: str(rng.randint(86, 98)),
        "n_big": lambda: f"{rng.randint(12, 480) * 10:,}" if lang == "en" else str(rng.randint(12, 980) * 10),
        "n_small": lambda: str(rng.randint(6, 15)),
        "n_tiny": lambda: str(rng.randint(2, 5)),
        "year": lambda: str(rng.randint(2009, 2021)),
        "minute": lambda: _ordinal(rng.randint(12, 89)) if lang == "en" else str(rng.randint(12, 89)),
        "score": lambda: f"{a}{sep}{b}",
        "draw": lambda: f"{b}{sep}{b}",
        "place_ord": lambda: rng.choice(("second", "third", "fourth", "fifth", "sixth")),
        "month": lambda: rng.choice(v.MONTHS),
        "weekday": lambda: rng.choice(v.WEEKDAYS),
    }
    if key not in table:
        raise KeyError(f"unknown template slot {key!r}")
    return table[key]()


def fill(lang: str, template: str, ctx: dict[str, str], rng: random.Random) -> str:
    """Return ``template`` with its slots filled; ``{Slot}`` capitalises the value."""

    def sub(match: re.Match[str]) -> str:
        key = match.group(1)
        low = key[0].lower() + key[1:]
        value = ctx[low] if low in ctx else _fresh_value(lang, low, rng)
        return value[0].upper() + value[1:] if key[0].isupper() else value

    return _SLOT.sub(sub, template)


class _SentenceSource:
    """Yields topic + generic sentences, reshuffling when the pool runs out."""

    def __init__(self, lang: str, topic: str, ctx: dict[str, str], rng: random.Random) -> None:
        v = _vocab(lang)
        # Generic council-style sentences read oddly in a match report.
        generic = () if topic == "sports" else v.SENTENCES["generic"]
        self._pool = v.SENTENCES[topic] + generic
        self._lang, self._ctx, self._rng = lang, ctx, rng
        self._queue: list[str] = []

    def next(self) -> str:
        if not self._queue:
            self._queue = list(self._pool)
            self._rng.shuffle(self._queue)
        return fill(self._lang, self._queue.pop(), self._ctx, self._rng)


def _paragraph(lang: str, first: str | None, source: _SentenceSource, rng: random.Random) -> str:
    """Build one paragraph within the language's length limits."""
    low, high = LIMITS[lang]
    # Aim below the cap so most paragraphs are medium length, like real copy.
    target = rng.randint(low + 5, (low + 2 * high) // 3)
    joiner = " " if lang == "en" else ""
    parts = [first] if first else []
    for _ in range(50):  # bounded: sentences are far shorter than the limits
        size = paragraph_size(lang, joiner.join(parts))
        if size >= target:
            break
        sentence = source.next()
        if paragraph_size(lang, joiner.join([*parts, sentence])) > high:
            continue
        parts.append(sentence)
    text = joiner.join(parts)
    if not low <= paragraph_size(lang, text) <= high:
        raise AssertionError(f"paragraph length out of range: {text!r}")
    return text


def generate_article(lang: str, topic: str, n_paragraphs: int, rng: random.Random) -> ArticleText:
    """Return a new article's text (headline, paragraphs, byline, caption, comments)."""
    v = _vocab(lang)
    ctx = _article_context(lang, rng)
    # One result per match report, so headline and lead agree on win or draw.
    ctx["score"], ctx["draw"] = _fresh_value(lang, "score", rng), _fresh_value(lang, "draw", rng)
    avoid = rng.choice(("{score}", "{draw}"))
    # Headline and lead share their figures; body sentences draw fresh ones.
    story = {**ctx, **{key: _fresh_value(lang, key, rng) for key in _STORY_FIGURES}}
    headline = fill(lang, rng.choice([h for h in v.HEADLINES[topic] if avoid not in h]), story, rng)
    headline = headline[0].upper() + headline[1:]
    source = _SentenceSource(lang, topic, ctx, rng)
    lead = fill(lang, rng.choice([s for s in v.LEADS[topic] if avoid not in s]), story, rng)
    paragraphs = [_paragraph(lang, lead, source, rng)]
    paragraphs += [_paragraph(lang, None, source, rng) for _ in range(n_paragraphs - 1)]
    if lang == "en":
        author = f"{rng.choice(vocab_en.FIRST_NAMES)} {rng.choice(vocab_en.LAST_NAMES)}"
    else:
        author = rng.choice(vocab_zh.SURNAMES) + rng.choice(vocab_zh.GIVEN_NAMES)
    caption = fill(lang, rng.choice(v.CAPTIONS["sports" if topic == "sports" else "default"]), ctx, rng)
    count = rng.randint(2, 5)
    users, texts = rng.sample(v.COMMENTERS, count), rng.sample(v.COMMENTS, count)
    comments = tuple((user, fill(lang, text, ctx, rng)) for user, text in zip(users, texts, strict=True))
    return ArticleText(topic, headline, tuple(paragraphs), author, caption, comments)
