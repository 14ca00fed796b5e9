"""Planning of a site's 40 articles: topic, section, date, URL, layout, charset.

Kept separate from rendering so every random choice happens in a fixed order
(the same seed must always give byte-identical pages).
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

from demo import vocab_en, vocab_zh
from demo.chrome import SiteSpec
from demo.text import ArticleText, generate_article

ARTICLES_PER_SITE = 40
JS_ARTICLES_PER_SITE = 4
GBK_ARTICLES = 13  # about a third of the Chinese articles are served in GBK
STATIC_LAYOUTS = ("classic", "sidebar", "legacy-table", "div-soup")
JS_LAYOUT = "js-rendered"
LAYOUTS = (*STATIC_LAYOUTS, JS_LAYOUT)

# Topic mix per site; sections group topics (see chrome.SiteSpec.sections).
_TOPIC_COUNTS = (("city", 14), ("economy", 8), ("tech", 6), ("sports", 12))
_TIMEZONES = {"en": timezone(timedelta(hours=-5)), "zh": timezone(timedelta(hours=8))}


@dataclass(frozen=True)
class ArticlePlan:
    """Everything decided about one article before it is rendered."""

    index: int  # 0 = newest
    path: str
    section: str
    text: ArticleText
    published: datetime
    layout: str
    encoding: str
    editor: str
    hidden_note: bool
    noscript: bool

    @property
    def title(self) -> str:
        """Return the article headline."""
        return self.text.headline

    def date_text(self, lang: str, with_time: bool = True) -> str:
        """Return the publication date formatted the way the site prints it."""
        d = self.published
        if lang == "zh":
            return d.strftime("%Y-%m-%d %H:%M" if with_time else "%Y-%m-%d")
        day = f"{d.strftime('%B')} {d.day}, {d.year}"
        return f"{day}, {d.strftime('%I:%M %p').lstrip('0')}" if with_time else day


def slugify(text: str) -> str:
    """Return a lowercase ASCII URL slug of at most ~60 characters."""
    slug = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    if len(slug) > 60:  # cut at a word boundary so slugs stay readable
        slug = slug[:61].rsplit("-", 1)[0]
    return slug


def _topics(spec: SiteSpec, rng: random.Random) -> list[tuple[str, str]]:
    """Return a shuffled list of (topic, section key) pairs, one per article."""
    section_of = {topic: s.key for s in spec.sections for topic in s.topics}
    pairs = [(topic, section_of[topic]) for topic, n in _TOPIC_COUNTS for _ in range(n)]
    rng.shuffle(pairs)
    return pairs


def _dates(lang: str, rng: random.Random) -> list[datetime]:
    """Return 40 strictly decreasing publication times ending late March 2026."""
    day = datetime(2026, 3, 27, tzinfo=_TIMEZONES[lang])
    dates = []
    for _ in range(ARTICLES_PER_SITE):
        # One article per calendar day at most, during newsroom hours: strictly decreasing.
        dates.append(day + timedelta(hours=rng.randint(7, 21), minutes=rng.choice((0, 5, 15, 20, 30, 45))))
        day -= timedelta(days=rng.randint(1, 2))
    return dates


def plan_articles(spec: SiteSpec, rng: random.Random) -> list[ArticlePlan]:
    """Return the site's article plans, newest first."""
    topics = _topics(spec, rng)
    dates = _dates(spec.lang, rng)
    js_indices = set(rng.sample(range(ARTICLES_PER_SITE), JS_ARTICLES_PER_SITE))
    static = list(STATIC_LAYOUTS) * 9
    rng.shuffle(static)
    gbk = set(rng.sample(range(ARTICLES_PER_SITE), GBK_ARTICLES)) if spec.lang == "zh" else set()
    sizes = [rng.randint(4, 12) for _ in range(ARTICLES_PER_SITE)]
    sizes[1], sizes[5] = 12, 4  # guarantee both a very long and a very short article
    used_titles: set[str] = set()
    used_paths: set[str] = set()
    plans = []
    for i, ((topic, section), published) in enumerate(zip(topics, dates, strict=True)):
        text = generate_article(spec.lang, topic, sizes[i], rng)
        while text.headline in used_titles:  # headlines double as slugs and must be unique
            text = generate_article(spec.lang, topic, sizes[i], rng)
        used_titles.add(text.headline)
        path = _article_path(spec, text.headline, published, rng, used_paths)
        used_paths.add(path)
        if spec.lang == "en":
            editor = f"{rng.choice(vocab_en.FIRST_NAMES)} {rng.choice(vocab_en.LAST_NAMES)}"
        else:
            editor = rng.choice(vocab_zh.EDITORS)
        layout = JS_LAYOUT if i in js_indices else static.pop()
        plans.append(ArticlePlan(
            index=i, path=path, section=section, text=text, published=published, layout=layout,
            encoding="gbk" if i in gbk else "utf-8", editor=editor,
            hidden_note=rng.random() < 0.4, noscript=layout == JS_LAYOUT or rng.random() < 0.5,
        ))
    return plans


def plan_published(spec: SiteSpec, plans: list[ArticlePlan], count: int, seed: int) -> list[ArticlePlan]:
    """Return ``count`` articles published after the site's 40, newest first (the demo server's ``publish``).

    Article k depends only on the seed and k (publishing 3 and then 2 more gives the same 5 as publishing 5),
    and the base articles are untouched. Each goes to the first section whose list has room on its last
    page, so the section lists keep their number of pages (a test's second run finds no new list page);
    once every section is full, they go to the first section and its list grows a page.
    """
    per_page = 6  # demo.listing.PER_PAGE (imported there from here would be circular)
    counts = {section.key: sum(1 for p in plans if p.section == section.key) for section in spec.sections}
    room = {key: -n % per_page for key, n in counts.items()}
    newest = max(p.published for p in plans)
    used_paths = {p.path for p in plans}
    used_titles = {p.title for p in plans}
    added: list[ArticlePlan] = []
    for k in range(count):
        rng = random.Random(f"{seed}:published:{k}")
        section = next((s for s in spec.sections if room[s.key] > 0), spec.sections[0])
        room[section.key] -= 1
        topic = section.topics[k % len(section.topics)]
        text = generate_article(spec.lang, topic, rng.randint(5, 9), rng)
        while text.headline in used_titles:
            text = generate_article(spec.lang, topic, rng.randint(5, 9), rng)
        used_titles.add(text.headline)
        published = (newest + timedelta(days=k + 1)).replace(hour=9, minute=30)
        path = _article_path(spec, text.headline, published, rng, used_paths)
        used_paths.add(path)
        editor = (f"{rng.choice(vocab_en.FIRST_NAMES)} {rng.choice(vocab_en.LAST_NAMES)}" if spec.lang == "en"
                  else rng.choice(vocab_zh.EDITORS))
        added.append(ArticlePlan(
            index=ARTICLES_PER_SITE + k, path=path, section=section.key, text=text, published=published,
            layout=STATIC_LAYOUTS[k % len(STATIC_LAYOUTS)], encoding="utf-8", editor=editor,
            hidden_note=False, noscript=False))
    return added[::-1]


def _article_path(spec: SiteSpec, headline: str, published: datetime, rng: random.Random,
                  used: set[str]) -> str:
    """Return a unique URL path in the site's article URL scheme."""
    while True:
        if spec.lang == "en":
            path = f"{spec.prefix}articles/{published.year}/{slugify(headline)}.html"
            if path in used:
                path = path.replace(".html", f"-{rng.randint(2, 99)}.html")
        else:
            ym, ymd = published.strftime("%Y%m"), published.strftime("%Y%m%d")
            path = f"{spec.prefix}news/{ym}/t{ymd}_{rng.randint(100000, 999999)}.html"
        if path not in used:
            return path
