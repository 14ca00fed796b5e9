"""The five article layouts (classic, sidebar, legacy-table, div-soup, js-rendered).

Each layout wraps the same gold paragraphs in different markup and mixes in
different noise, so extraction cannot rely on one DOM shape.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from demo import noise
from demo.chrome import SiteSpec, page_document
from demo.noise import Link, t
from demo.plan import ArticlePlan


@dataclass(frozen=True)
class Parts:
    """Pre-rendered fragments shared by the layouts."""

    spec: SiteSpec
    art: ArticlePlan
    crumbs: str
    byline: str
    share: str
    figure: str
    ad: str
    ad2: str
    related: str
    most_read: str
    comments: str
    source: str
    extras: str  # hidden note / noscript / analytics script
    related_links: tuple[Link, ...]

    @property
    def paragraphs(self) -> tuple[str, ...]:
        """Return the gold body paragraphs (plain text)."""
        return self.art.text.paragraphs

    @property
    def headline(self) -> str:
        """Return the headline, HTML-escaped."""
        return t(self.art.title)


def _classic(p: Parts) -> tuple[str, str]:
    body = [f"<p>{t(x)}</p>" for x in p.paragraphs]
    body.insert(2, p.figure)
    html = (f'<div class="wrap"><main class="classic">{p.crumbs}<article class="story">'
            f'<h1 class="headline">{p.headline}</h1>{p.byline}{p.share}\n<div class="article-body">\n'
            + "\n".join(body) + f"\n</div>\n{p.source}</article>\n{p.ad}{p.related}{p.comments}"
            f"{p.extras}</main></div>")
    css = ".classic{max-width:740px;margin:0 auto}.article-body p{font-size:19px;margin:0 0 18px}"
    return html, css


def _sidebar(p: Parts) -> tuple[str, str]:
    body = [f"<p>{t(x)}</p>" for x in p.paragraphs]
    title, href = p.related_links[0]
    body.insert(3, f'<p class="read-more"><strong>{p.spec.label("read_more")}</strong> '
                   f'<a href="{href}">{t(title)}</a></p>')
    form = (f'<form class="newsletter" action="#" onsubmit="return false"><b>{p.spec.label("newsletter")}</b>'
            f'<input type="email" placeholder="you@example.com">'
            f'<button>{p.spec.label("subscribe")}</button></form>')
    html = (f'<div class="wrap two-col"><div class="main-col">{p.crumbs}<h1>{p.headline}</h1>{p.byline}'
            f'{p.figure}\n<div class="entry-content">\n' + "\n".join(body)
            + f"\n</div>\n{p.source}{p.share}{p.comments}</div>\n<aside class=\"sidebar\">{p.most_read}{p.ad}"
            f"{form}{p.related}</aside>{p.extras}</div>")
    css = (".main-col{float:left;width:66%}.sidebar{float:right;width:30%;background:#f6f6f3;padding:0 12px;"
           "box-sizing:border-box;font-size:14px}.entry-content p{font-size:17px}"
           ".read-more{border-left:4px solid #c0392b;padding-left:10px;font:15px Arial,sans-serif}"
           ".newsletter{background:var(--main);color:#fff;padding:12px;margin:16px 0}"
           ".newsletter input{width:90%;margin:8px 0;padding:4px}")
    return html, css


def _legacy_table(p: Parts) -> tuple[str, str]:
    spec = p.spec
    indent = "　　" if spec.lang == "zh" else ""
    text = "<br><br>\n".join(f"{indent}{t(x)}" for x in p.paragraphs)
    face = "宋体" if spec.lang == "zh" else "Verdana"
    side = "".join(f'{i}. <a href="{href}">{t(title)}</a><br>' for i, (title, href) in
                   enumerate(p.related_links, start=1))
    html = (f'<table class="legacy" width="1000" align="center" border="0" cellpadding="0" cellspacing="0" '
            f'bgcolor="#ffffff"><tr><td colspan="2" class="crumb-td">{p.crumbs}</td></tr>\n<tr>'
            f'<td width="700" valign="top" class="main-td"><table width="100%" cellpadding="6">'
            f'<tr><td align="center"><font size="5" color="#003366"><b>{p.headline}</b></font></td></tr>'
            f'<tr><td align="center" class="info"><font size="2" color="#666666">{p.byline}</font></td></tr>'
            f'<tr><td align="center"><img src="/static/photo.png" width="480" height="270" border="0" alt="">'
            f'<br><font size="2" color="#666666">{t(p.art.text.caption)}</font></td></tr>'
            f'<tr><td class="text" id="zoom"><font size="3" face="{face}">\n{text}\n</font></td></tr>'
            f'<tr><td align="right">{p.source}<font size="2">{spec.label("print")}</font></td></tr>'
            f'</table></td>\n<td width="280" valign="top" class="side-td"><table width="100%" class="box">'
            f'<tr><td class="box-title">{spec.label("most_read")}</td></tr><tr><td>{side}</td></tr></table>'
            f'<img src="/static/banner.png" width="260" height="80" alt="" border="0">{p.ad}</td></tr>'
            f"</table>{p.extras}")
    css = (".legacy{background:#fff;margin:0 auto}.legacy td{font-size:15px}.main-td{padding:10px 20px}"
           ".legacy .text{line-height:2;font-size:16px}.side-td{background:#f4f4f4;padding:10px}"
           ".box-title{background:#8a1c1c;color:#fff;font-weight:bold;padding:4px 8px}"
           ".crumb-td{padding:8px 20px}"
           ".legacy .byline{border:0}")
    return html, css


def _div_soup(p: Parts) -> tuple[str, str]:
    first = p.paragraphs[0]
    lead = p.art.text.summary
    blocks = [f'<div class="text-block"><p><strong>{t(lead)}</strong>{t(first[len(lead):])}</p></div>']
    blocks += [f'<div class="text-block"><p>{t(x)}</p></div>' for x in p.paragraphs[1:]]
    blocks.insert(2, f'<div class="ad-slot">{p.ad}</div>')
    blocks.insert(4, f'<div class="media-block">{p.figure}</div>')
    section = p.spec.section(p.art.section)
    html = (f'<div class="page-container"><div class="row"><div class="col-main"><div class="content-wrap">'
            f'<div class="story-header"><div class="kicker"><a href="{p.spec.section_path(section.key)}">'
            f'{section.label}</a></div><div class="story-title"><h1>{p.headline}</h1></div>'
            f'<div class="meta">{p.byline}</div>{p.share}</div>\n<div class="story-body">'
            f'<div class="story-body__inner">\n' + "\n".join(blocks) + "\n</div></div>\n"
            f'<div class="story-footer">{p.source}<div class="tags">{p.spec.label("tags")} '
            f'<a href="{p.spec.section_path(section.key)}">{section.label}</a></div></div>'
            f"{p.ad2}{p.related}{p.comments}</div></div></div></div>{p.extras}")
    css = (".page-container{max-width:1000px;margin:0 auto;background:#fff;padding:24px 40px}"
           ".kicker a{font:bold 13px Arial,sans-serif;text-transform:uppercase;color:#c0392b}"
           ".story-body__inner p{font-size:18px;margin:0 0 20px}"
           ".tags{font:13px Arial,sans-serif;margin:12px 0}"
           ".ad-slot .ad{margin:6px 0 24px}")
    return html, css


def _js_rendered(p: Parts) -> tuple[str, str]:
    # ensure_ascii + escaping "</" keeps the JSON inert inside <script> in any charset.
    data = json.dumps({"paragraphs": list(p.paragraphs)}, ensure_ascii=True).replace("</", "<\\/")
    renderer = ("(function(){var d=JSON.parse(document.getElementById('story-data').textContent);"
                "var root=document.getElementById('story-root');root.innerHTML='';"
                "d.paragraphs.forEach(function(x){var e=document.createElement('p');e.textContent=x;"
                "root.appendChild(e);});})();")
    html = (f'<div class="wrap"><main class="classic">{p.crumbs}<article class="story">'
            f'<h1 class="headline">{p.headline}</h1>{p.byline}{p.share}\n'
            f'<div id="story-root" class="article-body">'
            f'<p class="loading">{p.spec.label("loading")}</p></div>\n'
            f'{noise.noscript_block(p.spec, "noscript_js")}{p.source}</article>\n{p.related}{p.comments}'
            f"{p.extras}</main></div>\n"
            f'<script id="story-data" type="application/json">{data}</script>\n<script>{renderer}</script>')
    css = (".classic{max-width:740px;margin:0 auto}.article-body p{font-size:19px;margin:0 0 18px}"
           ".loading{color:#999}")
    return html, css


LAYOUT_RENDERERS: dict[str, Callable[[Parts], tuple[str, str]]] = {
    "classic": _classic, "sidebar": _sidebar, "legacy-table": _legacy_table,
    "div-soup": _div_soup, "js-rendered": _js_rendered,
}


def _variant(path: str, n: int, source: str) -> str:
    """Return ``path`` with tracking parameters or a fragment for some links."""
    if n % 3 == 1:
        return f"{path}?utm_source={source}&amp;utm_medium=web"
    return f"{path}#comments" if n % 3 == 2 else path


def render_article(spec: SiteSpec, art: ArticlePlan, plans: Sequence[ArticlePlan], rng: random.Random) -> str:
    """Return the full HTML document of one article page."""
    others = [o for o in plans if o.index != art.index]
    same = [o for o in others if o.section == art.section]
    related = tuple((o.title, _variant(o.path, i, "related")) for i, o in enumerate(rng.sample(same, 4)))
    popular = [(o.title, _variant(o.path, i + 1, "mostread")) for i, o in enumerate(rng.sample(others, 5))]
    section = spec.section(art.section)
    crumbs = noise.breadcrumb(spec, [(spec.label("home"), spec.prefix),
                                     (section.label, spec.section_path(section.key))],
                              "Article" if spec.lang == "en" else "正文")
    credit = "Photo: Harbor Gazette" if spec.lang == "en" else "江城日报记者 摄"
    extras = noise.analytics_script(art.path, art.section)
    if art.hidden_note:
        extras = noise.hidden_note(spec) + extras
    if art.noscript and art.layout != "js-rendered":
        extras = noise.noscript_block(spec) + extras
    parts = Parts(
        spec=spec, art=art, crumbs=crumbs,
        byline=noise.byline(spec, art.text.author, art.date_text(spec.lang)),
        share=noise.share_bar(spec, art.path), figure=noise.figure(art.text.caption, rng, credit),
        ad=noise.ad_box(spec, rng), ad2=noise.ad_box(spec, rng),
        related=noise.link_list(spec, "related", "related", list(related)),
        most_read=noise.link_list(spec, "most-read", "most_read", popular, ordered=True),
        comments=noise.comments_block(spec, art.text.comments, rng),
        source=noise.source_line(spec, art.editor), extras=extras, related_links=related,
    )
    main_html, css = LAYOUT_RENDERERS[art.layout](parts)
    return page_document(spec, title=art.title, main_html=main_html, encoding=art.encoding,
                         layout=art.layout, extra_css=css)
