"""HTML fragments for the non-content parts of article pages (the "noise").

Ads, share bars, related lists, comments, bylines, figures: everything an
extractor must leave out of the gold body text.
"""

from __future__ import annotations

import json
import random
from html import escape

from demo.chrome import SiteSpec

Link = tuple[str, str]  # (visible title, href)

_AD_TEXTS = {
    "en": ("Bayline Logistics is hiring drivers. Apply today", "Harbor Dental: new patients welcome",
           "Weekend ferry deals to Saltmere from $9", "Quillbyte: the app for local deliveries"),
    "zh": ("江汉食品 品质生活每一天", "长鸿物流 全国次日达", "晴川生物医药 守护您的健康",
           "江城农商银行 扫码开户有礼"),
}


def t(text: str) -> str:
    """Return ``text`` escaped for use as HTML element content."""
    return escape(text, quote=False)


def breadcrumb(spec: SiteSpec, crumbs: list[Link], current: str) -> str:
    """Return the breadcrumb trail ending at the (unlinked) ``current`` label."""
    sep = spec.label("breadcrumb_sep")
    parts = [f'<a href="{href}">{t(label)}</a>' for label, href in crumbs] + [t(current)]
    return f'<div class="breadcrumb">{sep.join(parts)}</div>'


def byline(spec: SiteSpec, author: str, date_text: str) -> str:
    """Return the author/date line shown under the headline."""
    if spec.lang == "en":
        return (f'<div class="byline">{spec.label("by")} <span class="author">{t(author)}</span> | '
                f'{spec.label("published")} <time>{date_text}</time></div>')
    return (f'<div class="byline">{spec.label("published")}<time>{date_text}</time>　来源：{spec.title}　'
            f'{spec.label("by")}：<span class="author">{t(author)}</span></div>')


def source_line(spec: SiteSpec, editor: str) -> str:
    """Return the 'source / editor' line printed at the end of every article."""
    if spec.lang == "en":
        return f'<p class="source-line">Source: Harbor Gazette newsroom · Editor: {t(editor)}</p>'
    return f'<p class="source-line">来源：江城日报　　责任编辑：{t(editor)}</p>'


def share_bar(spec: SiteSpec, path: str) -> str:
    """Return the social share bar (links to external sites a crawler must not follow)."""
    if spec.lang == "en":
        links = [("Facebook", f"https://www.facebook.com/sharer/sharer.php?u={path}"),
                 ("Twitter", f"https://twitter.com/intent/tweet?url={path}"),
                 ("Email", "mailto:?subject=Harbor%20Gazette")]
    else:
        links = [("微博", f"https://service.weibo.com/share/share.php?url={path}"), ("微信", "#wechat-qr"),
                 ("QQ空间", f"https://sns.qzone.qq.com/cgi-bin/qzshare/cgi_qzshare_onekey?url={path}")]
    body = "".join(f'<a href="{href}" rel="nofollow">{label}</a>' for label, href in links)
    return f'<div class="share">{spec.label("share")} {body}</div>'


def ad_box(spec: SiteSpec, rng: random.Random) -> str:
    """Return an advertisement box linking to an external site."""
    text = rng.choice(_AD_TEXTS[spec.lang])
    return (f'<div class="ad"><span class="ad-label">{spec.label("advertisement")}</span>'
            f'<a href="https://example.com/ad?slot={rng.randint(100, 999)}" rel="sponsored">{text}</a></div>')


def link_list(spec: SiteSpec, css_class: str, label_key: str, links: list[Link],
              ordered: bool = False) -> str:
    """Return a headed list of article links (related stories, most read)."""
    tag = "ol" if ordered else "ul"
    items = "".join(f'<li><a href="{href}">{t(title)}</a></li>' for title, href in links)
    return f'<div class="{css_class}"><h3>{spec.label(label_key)}</h3><{tag}>{items}</{tag}></div>'


def comments_block(spec: SiteSpec, comments: tuple[tuple[str, str], ...], rng: random.Random) -> str:
    """Return the reader comments section (anchor ``#comments``)."""
    rows = []
    for user, text in comments:
        when = (f"{rng.randint(2, 23)} hours ago" if spec.lang == "en" else f"{rng.randint(2, 23)}小时前")
        rows.append(f'<div class="comment"><span class="user">{t(user)}</span><span class="when">{when}'
                    f"</span><p>{t(text)}</p></div>")
    title = f"{spec.label('comments')} ({len(comments)})" if spec.lang == "en" else \
        f"{spec.label('comments')}（{len(comments)}）"
    return f'<section class="comments" id="comments"><h3>{title}</h3>{"".join(rows)}</section>'


def figure(caption: str, rng: random.Random, credit: str) -> str:
    """Return an inline-SVG illustration (a skyline over water) with its caption."""
    sky = rng.choice(("#9cc5e8", "#f5c290", "#c3b8e0", "#a8d8c8"))
    water = rng.choice(("#2e6f95", "#35586e", "#1f4e5f"))
    shapes = []
    x = 0
    while x < 640:
        w, h = rng.randint(30, 70), rng.randint(60, 190)
        shade = rng.choice(("#4a4e69", "#22223b", "#5c677d", "#33415c"))
        shapes.append(f'<rect x="{x}" y="{250 - h}" width="{w}" height="{h}" fill="{shade}"/>')
        x += w + rng.randint(0, 12)
    sun = f'<circle cx="{rng.randint(60, 580)}" cy="{rng.randint(40, 90)}" r="28" fill="#fff3b0"/>'
    svg = (f'<svg viewBox="0 0 640 360" role="img" aria-label="{escape(caption)}">'
           f'<rect width="640" height="360" fill="{sky}"/>{sun}{"".join(shapes)}'
           f'<rect y="250" width="640" height="110" fill="{water}"/></svg>')
    return (f'<figure>{svg}<figcaption>{t(caption)} <span class="credit">{t(credit)}</span>'
            "</figcaption></figure>")


def hidden_note(spec: SiteSpec) -> str:
    """Return a ``display:none`` element whose text must not count as content."""
    return f'<div class="subscriber-note" style="display:none">{spec.label("hidden")}</div>'


def noscript_block(spec: SiteSpec, key: str = "noscript") -> str:
    """Return a ``<noscript>`` notice."""
    return f'<noscript><p class="noscript">{spec.label(key)}</p></noscript>'


def analytics_script(page_id: str, section: str) -> str:
    """Return a tracking-style script that changes nothing visible on the page."""
    data = json.dumps({"page": page_id, "section": section})
    return ("<script>window.dataLayer=window.dataLayer||[];window.dataLayer.push(" + data + ");"
            "(function(){var s=Date.now();window.addEventListener('load',function(){"
            "window.dataLayer.push({loadMs:Date.now()-s});});})();</script>")
