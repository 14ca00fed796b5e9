"""Per-site configuration and the shared page template (header, nav, footer, CSS).

The header, nav and footer are identical on every page of a site on purpose:
they are the boilerplate a template learner has to discover.
"""

from __future__ import annotations

from dataclasses import dataclass
from html import escape


@dataclass(frozen=True)
class Section:
    """One section of a site: URL key, visible label and the topics filed under it."""

    key: str
    label: str
    topics: tuple[str, ...]


@dataclass(frozen=True)
class SiteSpec:
    """Static description of a demo site (names, sections, labels, theme)."""

    name: str
    lang: str
    prefix: str
    title: str
    tagline: str
    sections: tuple[Section, ...]
    labels: tuple[tuple[str, str], ...]
    feed_path: str
    about_path: str
    private_path: str

    def label(self, key: str) -> str:
        """Return the localised UI label ``key`` (raises KeyError if unknown)."""
        return dict(self.labels)[key]

    def section(self, key: str) -> Section:
        """Return the section with URL key ``key``."""
        return next(s for s in self.sections if s.key == key)

    def section_path(self, key: str, page_no: int = 1) -> str:
        """Return the URL path of page ``page_no`` (1-based) of a section list."""
        if self.lang == "en":
            base = f"{self.prefix}section/{key}/"
            return base if page_no == 1 else f"{base}page/{page_no}/"
        # The Chinese site uses the index_N.html scheme common on Chinese CMSes.
        name = "index.html" if page_no == 1 else f"index_{page_no}.html"
        return f"{self.prefix}{key}/{name}"


EN = SiteSpec(
    name="en-gazette", lang="en", prefix="/en/", title="Harbor Gazette",
    tagline="Independent news for Port Marlow and the bay since 1898",
    sections=(
        Section("city", "City", ("city",)),
        Section("business", "Business", ("economy", "tech")),
        Section("sports", "Sports", ("sports",)),
    ),
    labels=(
        ("home", "Home"), ("about", "About us"), ("contact", "Contact"), ("feed", "RSS"),
        ("advertisement", "Advertisement"), ("share", "Share:"), ("related", "Related stories"),
        ("most_read", "Most read"), ("comments", "Comments"), ("next", "Next &raquo;"),
        ("prev", "&laquo; Previous"), ("by", "By"), ("published", "Published"),
        ("read_more", "READ MORE:"), ("latest", "Latest news"), ("more_from", "More from"),
        ("loading", "Loading article…"), ("breadcrumb_sep", " › "),
        ("hidden", "Subscriber note: the full dataset behind this story is available to members only."),
        ("noscript", "Please enable JavaScript to see comments and interactive graphics."),
        ("noscript_js", "Please enable JavaScript to read this article."),
        ("newsletter", "Get the morning briefing in your inbox"), ("subscribe", "Subscribe"),
        ("tags", "Topics:"), ("print", "Print this story"), ("comment_count", "comments"),
    ),
    feed_path="/en/feed.xml", about_path="/en/about/", private_path="/en/private/secret.html",
)

ZH = SiteSpec(
    name="zh-jiangcheng", lang="zh", prefix="/zh/", title="江城日报",
    tagline="江城新闻网 · 权威发布 · 服务市民",
    sections=(
        Section("local", "本地", ("city",)),
        Section("finance", "财经", ("economy", "tech")),
        Section("sports", "体育", ("sports",)),
    ),
    labels=(
        ("home", "首页"), ("about", "关于我们"), ("contact", "联系我们"), ("feed", "订阅"),
        ("advertisement", "广告"), ("share", "分享到："), ("related", "相关新闻"),
        ("most_read", "热门排行"), ("comments", "网友评论"), ("next", "下一页"),
        ("prev", "上一页"), ("by", "记者"), ("published", "发布时间："),
        ("read_more", "延伸阅读："), ("latest", "要闻"), ("more_from", "更多"),
        ("loading", "正在加载……"), ("breadcrumb_sep", " &gt; "),
        ("hidden", "本文完整数据仅向订阅用户开放。"),
        ("noscript", "您的浏览器未启用JavaScript，评论等功能无法使用。"),
        ("noscript_js", "您的浏览器未启用JavaScript，无法显示正文。"),
        ("newsletter", "订阅江城日报早间新闻"), ("subscribe", "订阅"),
        ("tags", "关键词："), ("print", "【打印】【关闭窗口】"), ("comment_count", "条评论"),
    ),
    feed_path="/zh/atom.xml", about_path="/zh/about.html", private_path="/zh/private/internal.html",
)

SPECS: tuple[SiteSpec, ...] = (EN, ZH)

_BASE_CSS = """
:root{--main:%(main)s;--dark:%(dark)s}
body{margin:0;background:#eceae4;color:#1d1d1d;font-family:%(font)s;line-height:1.6}
a{color:%(link)s;text-decoration:none}a:hover{text-decoration:underline}
.topbar{background:%(dark)s;color:#d6dde6;font:12px/28px Arial,sans-serif;padding:0 32px}
.topbar a{color:#fff;margin-left:14px}.topbar .right{float:right}
.site-header{background:%(main)s;padding:18px 32px;color:#fff;overflow:hidden}
.logo{color:#fff;font-size:40px;font-weight:bold;letter-spacing:1px;display:inline-flex;align-items:center;gap:12px}
.logo:hover{text-decoration:none}.tagline{display:block;font-size:14px;opacity:.85;margin-top:4px}
.main-nav{background:%(nav)s;border-bottom:3px solid %(dark)s}
.main-nav ul{list-style:none;margin:0 auto;padding:0 32px;display:flex;flex-wrap:wrap;max-width:1140px}
.main-nav a{display:block;padding:11px 18px;color:%(dark)s;font:bold 15px Arial,sans-serif}
.main-nav a:hover{background:#fff;text-decoration:none}
.wrap{max-width:1080px;margin:0 auto;background:#fff;padding:20px 30px 36px;overflow:hidden}
.site-footer{background:%(dark)s;color:#b9c3cf;font:13px/1.8 Arial,sans-serif;padding:26px 32px;
 text-align:center}
.site-footer a{color:#fff;margin:0 8px}.site-footer p{margin:4px 0}
h1{font-size:34px;line-height:1.25;margin:10px 0 12px}
.breadcrumb{font:13px Arial,sans-serif;color:#777;margin-bottom:6px}
.byline{font:14px Arial,sans-serif;color:#555;border-bottom:1px solid #ddd;padding-bottom:8px}
.byline .author{font-weight:bold;color:#222}
.share{font:13px Arial,sans-serif;margin:10px 0;color:#666}
.share a{display:inline-block;background:#f1f1f1;border:1px solid #ddd;border-radius:3px;padding:2px 10px;
 margin-right:6px}
.ad{background:#f7f5ee;border:1px dashed #bbb;text-align:center;padding:12px;margin:18px 0;
 font:13px Arial,sans-serif}
.ad .ad-label{display:block;font-size:10px;letter-spacing:2px;text-transform:uppercase;color:#999}
.ad a{font-size:17px;font-weight:bold;color:#a4521b}
figure{margin:18px 0}figure svg{width:100%%;height:auto;display:block}
figcaption{font:13px Arial,sans-serif;color:#666;padding:6px 0;border-bottom:1px solid #eee}
.related,.most-read{font:15px Arial,sans-serif}
.related h3,.most-read h3,.comments h3{font:bold 17px Arial,sans-serif;border-top:3px solid %(main)s;
 padding-top:8px}
.related li,.most-read li{margin:6px 0}
.comments{margin-top:24px}.comment{border-bottom:1px solid #eee;padding:8px 0;font:14px Arial,sans-serif}
.comment .user{font-weight:bold;color:%(main)s}.comment .when{color:#999;font-size:12px;margin-left:8px}
.source-line{font:13px Arial,sans-serif;color:#777;margin-top:18px}
"""

_THEMES = {
    "en": {"font": "Georgia,'Times New Roman',serif", "main": "#13315c", "dark": "#0b2545",
           "nav": "#8da9c4", "link": "#134074"},
    "zh": {"font": "'Noto Sans CJK SC','Microsoft YaHei',SimSun,sans-serif", "main": "#b31b1b",
           "dark": "#5c0a0a", "nav": "#f3d9d0", "link": "#1a3f8f"},
}


def base_css(spec: SiteSpec) -> str:
    """Return the site-wide CSS shared by every page of ``spec``."""
    return _BASE_CSS % _THEMES[spec.lang]


def nav_items(spec: SiteSpec) -> list[tuple[str, str]]:
    """Return the (label, href) pairs of the main navigation menu (7 items)."""
    items = [(spec.label("home"), spec.prefix)]
    items += [(s.label, spec.section_path(s.key)) for s in spec.sections]
    items += [(spec.label("about"), spec.about_path), (spec.label("contact"), spec.about_path + "#contact"),
              (spec.label("feed"), spec.feed_path)]
    return items


def _logo_svg(spec: SiteSpec) -> str:
    if spec.lang == "en":  # a small lighthouse
        return ('<svg width="36" height="44" viewBox="0 0 36 44" aria-hidden="true">'
                '<polygon points="12,12 24,12 28,42 8,42" fill="#fff"/>'
                '<rect x="11" y="4" width="14" height="8" fill="#f4d35e"/>'
                '<rect x="10" y="22" width="16" height="5" fill="#c0392b"/></svg>')
    return ('<svg width="44" height="44" viewBox="0 0 44 44" aria-hidden="true"><rect width="44" height="44" '
            'rx="6" fill="#fff"/><text x="22" y="32" font-size="28" text-anchor="middle" '
            'fill="#b31b1b">江</text></svg>')


def _header(spec: SiteSpec) -> str:
    topbar = ("Saturday, March 28, 2026 · Port Marlow 12°C" if spec.lang == "en"
              else "2026年3月28日 星期六 · 江城 晴 15℃")
    nav = "".join(f'<li><a href="{href}">{label}</a></li>' for label, href in nav_items(spec))
    return (f'<div class="topbar">{topbar}<span class="right"><a href="{spec.about_path}#contact">'
            f'{spec.label("contact")}</a><a href="{spec.feed_path}">{spec.label("feed")}</a></span></div>\n'
            f'<header class="site-header"><a class="logo" href="{spec.prefix}">{_logo_svg(spec)}'
            f'<span>{spec.title}</span></a><span class="tagline">{spec.tagline}</span></header>\n'
            f'<nav class="main-nav"><ul>{nav}</ul></nav>\n')


def _footer(spec: SiteSpec) -> str:
    links = (f'<a href="{spec.about_path}">{spec.label("about")}</a><a href="{spec.about_path}#contact">'
             f'{spec.label("contact")}</a><a href="{spec.feed_path}">{spec.label("feed")}</a>'
             f'<a href="{spec.prefix}sitemap.xml">Sitemap</a>')
    if spec.lang == "en":
        lines = ("© 2026 Harbor Gazette. All rights reserved.",
                 "Harbor Gazette, 14 Ropewalk Lane, Port Marlow. Newsroom: 555-0142.")
    else:  # &copy; because the GBK pages cannot encode the literal sign
        lines = ("版权所有 &copy; 2026 江城日报 未经书面授权禁止转载",
                 "鄂ICP备12345678号-1　　违法和不良信息举报电话：027-5550100　　"
                 "邮箱：news@jiangcheng.example")
    return (f'<footer class="site-footer"><p>{links}</p>'
            + "".join(f"<p>{line}</p>" for line in lines) + "</footer>\n")


def page_document(spec: SiteSpec, *, title: str, main_html: str, encoding: str, layout: str,
                  extra_css: str = "", head_extra: str = "") -> str:
    """Return a full HTML document: shared chrome around ``main_html``."""
    suffix = f" | {spec.title}" if spec.lang == "en" else f"_{spec.title}"
    return (f'<!DOCTYPE html>\n<html lang="{"en" if spec.lang == "en" else "zh-CN"}">\n<head>\n'
            f'<meta charset="{encoding}">\n<title>{escape(title, quote=False)}{suffix}</title>\n'
            '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
            f"<style>{base_css(spec)}{extra_css}</style>\n{head_extra}</head>\n"
            f'<body class="layout-{layout}">\n{_header(spec)}{main_html}\n{_footer(spec)}</body>\n</html>\n')
