"""robots.txt, sitemaps, RSS and Atom feeds, rendered at request time.

They contain absolute URLs, and the base URL (host and port) is only known once
the server is listening, so these are built per request from ``base``.
"""

from __future__ import annotations

from datetime import datetime
from email.utils import format_datetime
from xml.sax.saxutils import escape

from demo.content import DemoSite

FEED_SIZE = 20


def render_robots(sites: tuple[DemoSite, ...], base: str) -> str:
    """Return robots.txt: disallow each site's private/ folder, list the sitemaps."""
    lines = ["# Demo news sites. Polite crawlers keep out of the private folders.", "User-agent: *"]
    lines += [f"Disallow: {site.prefix}private/" for site in sites]
    lines += ["Allow: /", ""]
    lines += [f"Sitemap: {base}{site.sitemap_path}" for site in sites]
    return "\n".join(lines) + "\n"


def render_sitemap(site: DemoSite, base: str) -> str:
    """Return a sitemaps.org <urlset> listing every article with its <lastmod>."""
    urls = "".join(
        f"  <url>\n    <loc>{escape(base + page.path)}</loc>\n    <lastmod>{page.published[:10]}</lastmod>\n"
        "    <changefreq>monthly</changefreq>\n  </url>\n"
        for page in site.articles
    )
    return ('<?xml version="1.0" encoding="UTF-8"?>\n'
            f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n{urls}</urlset>\n')


def _summary(page_body: tuple[str, ...]) -> str:
    first = page_body[0]
    return first if len(first) < 200 else first[:197] + "..."


def render_rss(site: DemoSite, base: str) -> str:
    """Return an RSS 2.0 feed of the site's 20 newest articles."""
    items = []
    for page in site.articles[:FEED_SIZE]:
        when = format_datetime(datetime.fromisoformat(page.published))
        url = escape(base + page.path)
        items.append(f"    <item>\n      <title>{escape(page.title)}</title>\n"
                     f"      <link>{url}</link>\n      <guid isPermaLink=\"true\">{url}</guid>\n"
                     f"      <pubDate>{when}</pubDate>\n      <description>{escape(_summary(page.body))}"
                     "</description>\n    </item>\n")
    newest = format_datetime(datetime.fromisoformat(site.articles[0].published))
    return ('<?xml version="1.0" encoding="UTF-8"?>\n<rss version="2.0">\n  <channel>\n'
            f"    <title>{escape(site.title)}</title>\n    <link>{escape(base + site.prefix)}</link>\n"
            f"    <description>Latest news from the {escape(site.title)}</description>\n"
            f"    <language>en</language>\n    <lastBuildDate>{newest}</lastBuildDate>\n"
            + "".join(items) + "  </channel>\n</rss>\n")


def render_atom(site: DemoSite, base: str) -> str:
    """Return an Atom 1.0 feed of the site's 20 newest articles."""
    entries = []
    for page in site.articles[:FEED_SIZE]:
        url = escape(base + page.path)
        entries.append(f"  <entry>\n    <title>{escape(page.title)}</title>\n    <link href=\"{url}\"/>\n"
                       f"    <id>{url}</id>\n    <updated>{page.published}</updated>\n"
                       f"    <summary>{escape(_summary(page.body))}</summary>\n  </entry>\n")
    home = escape(base + site.prefix)
    return ('<?xml version="1.0" encoding="UTF-8"?>\n'
            '<feed xmlns="http://www.w3.org/2005/Atom" xml:lang="zh-CN">\n'
            f"  <title>{escape(site.title)}</title>\n  <link href=\"{home}\"/>\n"
            f"  <link rel=\"self\" href=\"{escape(base + site.feed_path)}\"/>\n  <id>{home}</id>\n"
            f"  <updated>{site.articles[0].published}</updated>\n"
            f"  <author><name>{escape(site.title)}</name></author>\n"
            + "".join(entries) + "</feed>\n")


def render_feed(site: DemoSite, base: str) -> tuple[str, str]:
    """Return (content type, XML text) of the site's feed (RSS or Atom)."""
    if site.feed_format == "rss":
        return "application/rss+xml; charset=utf-8", render_rss(site, base)
    return "application/atom+xml; charset=utf-8", render_atom(site, base)
