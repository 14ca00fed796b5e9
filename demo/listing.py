"""Home page, paginated section lists, the about page and the robots-disallowed page."""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from demo import noise
from demo.chrome import SiteSpec, page_document
from demo.noise import t
from demo.plan import ArticlePlan

PER_PAGE = 6
HOME_ENTRIES = 12

_LIST_CSS = (
    ".entries{list-style:none;padding:0;margin:0}.entry{border-bottom:1px solid #e3e3e3;padding:12px 0}"
    ".entry h3{margin:0 0 4px;font-size:21px;line-height:1.3}.entry .summary{margin:0 0 4px;color:#444}"
    ".entry .date,.comment-count{font:12px Arial,sans-serif;color:#888;margin-right:12px}"
    ".pagination{margin:22px 0;font:15px Arial,sans-serif}"
    ".pagination a,.pagination span{display:inline-block;padding:4px 11px;margin-right:4px;"
    "border:1px solid #ccc}"
    ".pagination .current{background:var(--main);color:#fff}"
    ".home-main{float:left;width:68%}.home-side{float:right;width:28%;font-size:14px}"
    ".lead-story h2{font-size:30px;margin:6px 0}"
    ".section-title{border-bottom:3px solid #333;font:bold 20px Arial,sans-serif;padding-bottom:4px;"
    "margin-top:26px}"
    ".staff{font-size:12px;color:#999}.more{font:bold 14px Arial,sans-serif}.about-text p{font-size:18px}"
)


@dataclass(frozen=True)
class ListingPage:
    """A rendered list-like page plus its gold entries."""

    path: str
    title: str
    entries: tuple[tuple[str, str], ...]  # (entry title, canonical article path)
    html: str
    encoding: str
    section: str = ""


def _entry(spec: SiteSpec, art: ArticlePlan, n: int, source: str) -> str:
    """Return one list entry; some hrefs carry tracking parameters on purpose."""
    href = f"{art.path}?utm_source={source}&amp;utm_medium=web" if n % 5 == 2 else art.path
    count = len(art.text.comments)
    label = spec.label("comment_count")
    comment_link = (f' <a class="comment-count" href="{art.path}#comments">{count} {label}</a>'
                    if n % 4 == 3 else "")
    return (f'<li class="entry"><h3><a href="{href}">{t(art.title)}</a></h3><p class="summary">'
            f'{t(art.text.summary)}</p><span class="date">{art.date_text(spec.lang, with_time=False)}</span>'
            f"{comment_link}</li>")


def _pagination(spec: SiteSpec, key: str, page_no: int, pages: int) -> str:
    links = []
    if page_no > 1:
        links.append(f'<a href="{spec.section_path(key, page_no - 1)}" rel="prev">{spec.label("prev")}</a>')
    for n in range(1, pages + 1):
        links.append(f'<span class="current">{n}</span>' if n == page_no
                     else f'<a href="{spec.section_path(key, n)}">{n}</a>')
    if page_no < pages:
        links.append(f'<a href="{spec.section_path(key, page_no + 1)}" rel="next">{spec.label("next")}</a>')
    if spec.lang == "zh":
        links.append(f'<a href="{spec.section_path(key, pages)}">尾页</a>')
    return f'<div class="pagination">{"".join(links)}</div>'


def section_pages(spec: SiteSpec, plans: Sequence[ArticlePlan], rng: random.Random,
                  gbk_sections: frozenset[str]) -> list[ListingPage]:
    """Return every page of every section list, entries newest first."""
    result = []
    for section in spec.sections:
        arts = [a for a in plans if a.section == section.key]
        pages = (len(arts) + PER_PAGE - 1) // PER_PAGE
        for page_no in range(1, pages + 1):
            chunk = arts[(page_no - 1) * PER_PAGE: page_no * PER_PAGE]
            label = f"{section.label} news" if spec.lang == "en" else f"{section.label}新闻"
            title = label if page_no == 1 else (f"{label} – Page {page_no}" if spec.lang == "en"
                                                else f"{label}_第{page_no}页")
            crumbs = noise.breadcrumb(spec, [(spec.label("home"), spec.prefix)], section.label)
            entries = "\n".join(_entry(spec, a, n, "section") for n, a in enumerate(chunk))
            main = (f'<div class="wrap list-page"><div class="home-main">{crumbs}<h1 class="section-title">'
                    f'{t(title)}</h1>\n<ul class="entries">\n{entries}\n</ul>\n'
                    f"{_pagination(spec, section.key, page_no, pages)}</div>"
                    f'<aside class="home-side">{noise.ad_box(spec, rng)}</aside></div>')
            encoding = "gbk" if section.key in gbk_sections else "utf-8"
            path = spec.section_path(section.key, page_no)
            html = page_document(spec, title=title, main_html=main, encoding=encoding, layout="section-list",
                                 extra_css=_LIST_CSS)
            entries_gold = tuple((a.title, a.path) for a in chunk)
            result.append(ListingPage(path, title, entries_gold, html, encoding, section.key))
    return result


def home_page(spec: SiteSpec, plans: Sequence[ArticlePlan], rng: random.Random) -> ListingPage:
    """Return the home page: lead story, latest list, section links, sidebar."""
    lead, rest = plans[0], plans[1:HOME_ENTRIES]
    latest = "\n".join(_entry(spec, a, n, "home") for n, a in enumerate(rest, start=1))
    more = "".join(f'<p class="more"><a href="{spec.section_path(s.key)}">{spec.label("more_from")} {s.label}'
                   f"{' &raquo;' if spec.lang == 'en' else ' &gt;&gt;'}</a></p>" for s in spec.sections)
    popular = [(a.title, a.path) for a in rng.sample(list(plans), 5)]
    staff = "Staff intranet" if spec.lang == "en" else "内部通讯"
    credit = "Photo: Harbor Gazette" if spec.lang == "en" else "江城日报记者 摄"
    figure = noise.figure(lead.text.caption, rng, credit)
    most_read = noise.link_list(spec, "most-read", "most_read", popular, ordered=True)
    main = (f'<div class="wrap home"><div class="home-main"><div class="lead-story">'
            f'<h2><a href="{lead.path}">{t(lead.title)}</a></h2>{figure}'
            f'<p class="summary">{t(lead.text.summary)}</p></div>\n'
            f'<h2 class="section-title">{spec.label("latest")}</h2>\n'
            f'<ul class="entries">\n{latest}\n</ul>\n{more}</div>\n<aside class="home-side">'
            f'{most_read}{noise.ad_box(spec, rng)}'
            f'<p class="staff"><a href="{spec.private_path}">{staff}</a></p></aside></div>')
    title = f"{spec.title} – Port Marlow news" if spec.lang == "en" else f"{spec.title}首页"
    html = page_document(spec, title=title, main_html=main, encoding="utf-8", layout="home",
                         extra_css=_LIST_CSS)
    entries = tuple((a.title, a.path) for a in plans[:HOME_ENTRIES])
    return ListingPage(spec.prefix, title, entries, html, "utf-8")


ABOUT_TEXT = {
    "en": (
        "The Harbor Gazette has reported on Port Marlow and the towns around the bay since 1898, when it was "
        "printed on a single hand-fed press in a warehouse on Ropewalk Lane.",
        "Today a newsroom of twenty-two reporters, editors and photographers covers city hall, the harbor, "
        "local business, schools and sport, publishing online every day and in print on weekends.",
        "We are owned by a nonprofit trust, which means that no shareholder or advertiser can tell us "
        "what to write. Our editorial code is published in full and every correction is listed on this site.",
        "Readers are our best source of stories. If you know something we should look into, please write to "
        "the newsroom or call us; we read every message even if we cannot reply to all of them.",
    ),
    "zh": (
        "江城日报创刊于1952年，是江城市历史最悠久的综合性日报，以报道本地新闻为主，兼顾国内外重要资讯。",
        "多年来，报社始终坚持正确的舆论导向，坚持贴近实际、贴近生活、贴近群众，努力为广大读者提供真实、准确、及时的新闻信息。",
        "目前，江城日报已形成报纸、网站、客户端、微博、微信公众号等多种传播渠道，每天服务读者超过百万人次。",
        "欢迎广大读者提供新闻线索，对我们的工作提出意见和建议。我们将认真对待每一条来信，及时给予答复。",
    ),
}


def about_page(spec: SiteSpec, encoding: str) -> tuple[str, tuple[str, ...], str]:
    """Return (title, gold paragraphs, html) of the about page."""
    paragraphs = ABOUT_TEXT[spec.lang]
    if spec.lang == "en":
        title, heading = "About the Harbor Gazette", "Contact the newsroom"
        contact = "14 Ropewalk Lane, Port Marlow · 555-0142 · news@gazette.example"
    else:
        title, heading = "关于我们", "联系我们"
        contact = "地址：江城市东湖区江滨路88号　电话：027-5550100　邮箱：news@jiangcheng.example"
    body = "\n".join(f"<p>{t(x)}</p>" for x in paragraphs)
    crumbs = noise.breadcrumb(spec, [(spec.label("home"), spec.prefix)], title)
    main = (f'<div class="wrap"><main class="classic">{crumbs}<h1>{title}</h1>\n'
            f'<div class="about-text">\n{body}\n</div>\n'
            f'<address id="contact"><h3>{heading}</h3>{contact}</address></main></div>')
    html = page_document(spec, title=title, main_html=main, encoding=encoding, layout="about",
                         extra_css=_LIST_CSS)
    return title, paragraphs, html


def private_page(spec: SiteSpec) -> tuple[str, tuple[str, ...], str]:
    """Return (title, paragraphs, html) of the page that robots.txt disallows."""
    if spec.lang == "en":
        title = "Staff intranet"
        text = ("Internal staff notes. Crawlers that obey robots.txt never see this page.",)
    else:
        title, text = "内部通讯", ("内部资料，请勿外传。遵守robots.txt的爬虫不会抓取本页面。",)
    main = f'<div class="wrap"><h1>{title}</h1><p>{t(text[0])}</p></div>'
    return title, text, page_document(spec, title=title, main_html=main, encoding="utf-8", layout="private")
