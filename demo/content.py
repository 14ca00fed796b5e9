"""The demo sites' page model and the deterministic builder ``build_sites``.

The generator knows every page's type and gold text, so crawler and
extraction tests can score their output against ``DemoPage.body``.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass, field

from demo.chrome import SPECS, SiteSpec
from demo.layouts import render_article
from demo.listing import about_page, home_page, private_page, section_pages
from demo.plan import ArticlePlan, plan_articles, plan_published


@dataclass(frozen=True)
class DemoPage:
    """One HTML page of a demo site together with its ground truth."""

    path: str  # URL path, e.g. "/en/articles/2026/harbor-council-approves-budget.html"
    site: str  # "en-gazette" or "zh-jiangcheng"
    page_type: str  # "article" | "list" | "other" (home = "list", about = "other")
    title: str  # headline (articles) or the page's title
    body: tuple[str, ...]  # article paragraphs / list entry titles / other: main-text paragraphs
    links: tuple[str, ...]  # lists: canonical entry paths in order; otherwise ()
    html: str  # the full HTML document
    encoding: str  # "utf-8" or "gbk"; declared in Content-Type and <meta charset>
    layout: str  # layout name, e.g. "classic", "js-rendered", "home", "section-list", "about"
    published: str = ""  # articles: ISO 8601 publication time; otherwise ""
    section: str = ""  # articles and section lists: section key; otherwise ""
    author: str = ""  # articles: the byline's name; otherwise ""

    @property
    def body_bytes(self) -> bytes:
        """Return the HTML encoded in the page's charset (exactly what the server sends)."""
        return self.html.encode(self.encoding)


@dataclass(frozen=True)
class DemoSite:
    """A demo news site: its pages plus feed/sitemap metadata."""

    name: str  # "en-gazette" / "zh-jiangcheng"
    lang: str  # "en" / "zh"
    prefix: str  # "/en/" / "/zh/"
    pages: dict[str, DemoPage]  # path -> page (everything a polite crawler should find)
    title: str = ""
    disallowed: tuple[str, ...] = ()  # robots.txt-disallowed paths that exist (linked from the home page)
    private_pages: dict[str, DemoPage] = field(default_factory=dict)  # served, but not in ``pages``
    sitemap_path: str = ""
    feed_path: str = ""
    feed_format: str = ""  # "rss" or "atom"

    @property
    def articles(self) -> list[DemoPage]:
        """Return the article pages, newest first."""
        return sorted((p for p in self.pages.values() if p.page_type == "article"),
                      key=lambda p: p.published, reverse=True)


def _article_page(spec: SiteSpec, art: ArticlePlan, html: str) -> DemoPage:
    return DemoPage(path=art.path, site=spec.name, page_type="article", title=art.title,
                    body=art.text.paragraphs, links=(), html=html, encoding=art.encoding, layout=art.layout,
                    published=art.published.isoformat(), section=art.section, author=art.text.author)


def _check_encodable(page: DemoPage) -> None:
    """Fail the build if a page cannot be served in its declared charset."""
    try:
        page.html.encode(page.encoding)
    except UnicodeEncodeError as exc:
        raise ValueError(f"{page.path} is not encodable as {page.encoding}: {exc}") from exc


def build_site(spec: SiteSpec, seed: int, published: int = 0) -> DemoSite:
    """Return one fully rendered demo site for ``spec``; same seed, same bytes.

    ``published``: articles added after the first 40 (``plan_published``); the 40 keep their bytes, the home
    page, section lists, feed and sitemap list the new ones first.
    """
    rng = random.Random(seed)
    plans = plan_articles(spec, rng)
    pages: dict[str, DemoPage] = {}
    for art in plans:
        pages[art.path] = _article_page(spec, art, render_article(spec, art, plans, rng))
    if published:
        added = plan_published(spec, plans, published, seed)
        for art in added:
            art_rng = random.Random(f"{seed}:render:{art.index}")
            pages[art.path] = _article_page(spec, art, render_article(spec, art, plans, art_rng))
        plans = added + plans
    home = home_page(spec, plans, rng)
    pages[home.path] = DemoPage(home.path, spec.name, "list", home.title, tuple(e[0] for e in home.entries),
                                tuple(e[1] for e in home.entries), home.html, home.encoding, "home")
    # One whole section (and the about page) in GBK, like a legacy CMS channel.
    gbk_sections = frozenset({"sports"}) if spec.lang == "zh" else frozenset()
    for lp in section_pages(spec, plans, rng, gbk_sections):
        pages[lp.path] = DemoPage(lp.path, spec.name, "list", lp.title, tuple(e[0] for e in lp.entries),
                                  tuple(e[1] for e in lp.entries), lp.html, lp.encoding, "section-list",
                                  section=lp.section)
    about_encoding = "gbk" if spec.lang == "zh" else "utf-8"
    title, paragraphs, html = about_page(spec, about_encoding)
    pages[spec.about_path] = DemoPage(spec.about_path, spec.name, "other", title, paragraphs, (), html,
                                      about_encoding, "about")
    title, paragraphs, html = private_page(spec)
    private = {spec.private_path: DemoPage(spec.private_path, spec.name, "other", title, paragraphs, (), html,
                                           "utf-8", "private")}
    for page in [*pages.values(), *private.values()]:
        _check_encodable(page)
    return DemoSite(name=spec.name, lang=spec.lang, prefix=spec.prefix, pages=pages, title=spec.title,
                    disallowed=(spec.private_path,), private_pages=private,
                    sitemap_path=f"{spec.prefix}sitemap.xml", feed_path=spec.feed_path,
                    feed_format="rss" if spec.lang == "en" else "atom")


def build_sites(seed: int = 2026, published: Mapping[str, int] | None = None) -> tuple[DemoSite, ...]:
    """Return the English and Chinese demo sites, deterministically generated from ``seed``.

    ``published``: by site name, how many articles were published after the first 40 (DemoServer.publish).
    """
    published = published or {}
    return tuple(build_site(spec, seed * 10 + i, published.get(spec.name, 0)) for i, spec in enumerate(SPECS))
