"""The near-duplicate set of ``bench.dedup_eval``: article pages of ../shared/datasets and copies built from them.

Articles (read in place from ``DATASETS_DIR``, default ``../shared/datasets``):

* English: a seeded sample of WCXB-dev articles (gold ``main_content`` and title) and every page of
  MSV ``chaos-all`` (36 subject queries x 10 pages of different outlets, 2017; the gold text's first
  line is the headline);
* Chinese: every chinese-wced-dev page (gold text) and every GNE article page (no gold: the content
  is the text the flow extracts from the page, its title the record's);
* pages the similarity search over the gold texts found to be copies of one article on two sites
  or in two crawls (``FOUND_COPIES``, verified by reading; wire stories, re-published pages), and
  HTML files stored twice under two names (found by the eval's exact matches); ``PARTIAL_COPIES``
  (one text is a rewrite or a part of the other) are reported apart, and pages whose stored HTML
  is another page (``GOLD_OF_ANOTHER_PAGE``) get no copies.

An article of at least ``MIN_SOURCE_CHARS`` normalised characters of content gets four copies,
each a new HTML page that the eval runs through the flow like any page:

* ``url``: the same HTML under another URL (a mobile host with campaign parameters);
* ``amp``: the headline and paragraphs in a minimal AMP page frame;
* ``print``: the headline and paragraphs with a print header and footer, no site chrome;
* ``syndicated``: another article page of the same language from another site (the host: a
  WCXB-dev page in English, any in Chinese) with its content area replaced: the area is the
  deepest element holding 80% of the host's content text; it gets a changed headline, an
  "originally published by" line (before or after the text) and the paragraphs. The host's <h1>
  and <title> get the new headline.

Different articles on one story (negatives): every pair of chaos-all pages with the same query
except the copies above; in Chinese the pairs of ``SAME_STORY_ZH`` (the similarity search found
one same-event pair, the others share a topic).
"""

from __future__ import annotations

import html as html_text
import random
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from lxml import etree, html

from evaluation.datasets import iter_pages
from evaluation.datasets.textutil import sniff_url, url_site
from extraction.dedup import normalize
from extraction.dom.encoding import decode_html
from extraction.dom.html import parse_html

SEED = 0
WCXB_ARTICLES = 250  # WCXB-dev articles sampled (of 791 with gold); chaos-all is taken whole
MIN_SOURCE_CHARS = 500  # normalised characters of content for an article to get copies
CONTAINER_SHARE = 0.8  # a host's content area holds this share of its content text
KINDS = ("url", "amp", "print", "syndicated")

# Copies of one article found among the datasets' pages (gold texts' 9-character shingle Jaccard
# 0.66-1.0; each pair read): wire stories on two sites, one page crawled twice.
FOUND_COPIES: tuple[tuple[str, str], ...] = (
    ("msv-big5/chaos-all/space (2)", "msv-big5/chaos-all/space (8)"),  # AP: Trump signs NASA bill
    ("msv-big5/chaos-all/space (8)", "msv-big5/chaos-all/trump (6)"),  # the same, Australian edit
    ("msv-big5/chaos-all/space (2)", "msv-big5/chaos-all/trump (6)"),
    ("l3s-gn1/59822881-3c67-4068-afcc-5ff6b49954c5", "l3s-gn1/9b10bc9e-0792-40d4-b904-d48653c377cc"),
    ("l3s-gn1/11bb473f-d01a-49f2-906c-c0608bb2987c", "l3s-gn1/77c361ce-1d3e-4112-ac72-e889e7fbe50a"),
    ("l3s-gn1/b82e9772-a459-46ef-9f93-84f15c773375", "l3s-gn1/fc246c87-b4c6-4a7b-a77f-627c7fa18004"),
    ("l3s-gn1/02e622bc-00a7-4b0e-85ef-5a663ef6233c", "l3s-gn1/cb487d49-b44c-4d82-93be-06702e394bf7"),
    ("l3s-gn1/1bb25401-88ee-466c-852a-7ebb6e99f64b", "l3s-gn1/cb487d49-b44c-4d82-93be-06702e394bf7"),
    ("l3s-gn1/02e622bc-00a7-4b0e-85ef-5a663ef6233c", "l3s-gn1/1bb25401-88ee-466c-852a-7ebb6e99f64b"),
    ("l3s-gn1/967a6e51-c43f-4892-bb5c-39cbfb08163a", "l3s-gn1/d9e50b32-13b4-4d19-9e12-17e3b0e2fbda"),
    ("l3s-gn1/70435bf4-7e87-402f-afe8-1e88ed6390f3", "l3s-gn1/90808156-7b9e-4993-80aa-31e1a6ba6cff"),  # edited
    ("dragnet/T177", "dragnet/T162"),
    ("dragnet/T146", "dragnet/T77"),
    ("dragnet/R491", "dragnet/R492"),
    ("dragnet/9", "dragnet/44"),
    ("gne-chinese/tests/thepaper/2", "gne-chinese/tests/thepaper/4"),  # one article, two page versions
    # The same HTML stored twice (found by the eval's exact matches, then by hashing the files); for
    # chaos-all the gold text of one of the two belongs to another page (``GOLD_OF_ANOTHER_PAGE``).
    ("msv-big5/chaos-all/overwatch (10)", "msv-big5/chaos-all/scorpio (10)"),
    ("msv-big5/chaos-all/pepsi (9)", "msv-big5/chaos-all/pepsi (10)"),
    ("msv-big5/big5-17/trump (4)", "msv-big5/big5-17/trump (5)"),  # one article crawled twice
    ("wcxb-dev/0463", "wcxb-dev/3035"),
    ("wcxb-dev/0670", "wcxb-dev/2863"),
)
# Pages whose stored HTML is another page (see above): their gold text cannot make copies of them.
GOLD_OF_ANOTHER_PAGE = frozenset({"msv-big5/chaos-all/scorpio (10)", "msv-big5/chaos-all/pepsi (9)",
                                  "msv-big5/big5-17/trump (4)"})
# One text a rewrite or a part of the other: neither a copy nor a different article.
PARTIAL_COPIES: tuple[tuple[str, str], ...] = (
    ("msv-big5/chaos-all/afghanistan (5)", "msv-big5/chaos-all/afghanistan (6)"),  # AP story, two updates
    ("msv-big5/chaos-all/atmosphere (1)", "msv-big5/chaos-all/atmosphere (2)"),  # (2) holds (1) and more
)
# Chinese pairs found by a jieba TF-IDF search over the extracted texts, read: different articles.
SAME_STORY_ZH: tuple[tuple[str, str, str], ...] = (
    ("gne-chinese/tests/163/4", "gne-chinese/tests/sina/sina", "same story: Huawei's 5G chips, Sept. 2019"),
    ("gne-chinese/tests/163/4", "gne-chinese/tests/ednchina/1", "same topic: phone and AI chips"),
    ("gne-chinese/tests/ednchina/1", "gne-chinese/tests/sina/sina", "same topic: phone and AI chips"),
    ("gne-chinese/tests/163/4", "gne-chinese/tests/guancha/2", "same topic: China's chip industry"),
    ("gne-chinese/tests/guancha/2", "gne-chinese/tests/sina/sina", "same topic: China's chip industry"),
    ("gne-chinese/tests/163/8", "chinese-wced-dev/b26fbb82-9d98-42f0-af75-7439c1706bcd",
     "same topic: epidemic rules for schools"),
    ("gne-chinese/tests/163/5", "gne-chinese/tests/njxfhn/1", "same topic: phone fraud"),
    ("chinese-wced-dev/caee0a34-e892-41c2-8bf6-f4f0ec9df78f", "chinese-wced-dev/fddcb19c-c3c1-4e39-a61d-9bf096a5f390",
     "same author (Hu Ping), two essays"),
    ("chinese-wced-dev/5dc3fa2d-6734-41e9-8520-a9c7c91ae1f8", "chinese-wced-dev/fddcb19c-c3c1-4e39-a61d-9bf096a5f390",
     "same author (Hu Ping), two essays"),
)

Extract = Callable[["Article"], tuple[str, str | None]]  # the flow on an article page: (text, title)


@dataclass
class Article:
    """One article page of a dataset and the content its copies carry."""

    key: str  # "<dataset>/<page id>"
    lang: str  # "en" or "zh"
    html: bytes
    url: str
    title: str = ""
    paragraphs: tuple[str, ...] = ()  # gold paragraphs, or the extracted text's lines (``gold`` False)
    gold: bool = True
    story: str | None = None  # chaos-all query: pages with the same one cover the same subject
    content_type: str | None = None
    frame: bool = True  # the page can host a syndicated copy: its paragraphs mark its whole content area

    @property
    def site(self) -> str:
        """Return the host of the article's URL (the name its copies credit)."""
        return url_site(self.url) or "example.com"

    @property
    def content_chars(self) -> int:
        """Return the normalised length of the content."""
        return len(normalize(" ".join(self.paragraphs)))


@dataclass(frozen=True)
class Copy:
    """A page built from an article: the same content in another URL or frame."""

    key: str
    kind: str  # one of KINDS
    source: str  # the article's key
    lang: str
    html: bytes
    url: str
    host: str | None = None  # syndicated: the article whose page frame it takes
    content_type: str | None = "text/html; charset=utf-8"


@dataclass
class Corpus:
    """The articles of one language and their copies."""

    lang: str
    articles: dict[str, Article] = field(default_factory=dict)
    copies: list[Copy] = field(default_factory=list)


def _paragraphs(text: str, lang: str) -> tuple[str, ...]:
    """Split a gold text into paragraphs; Chinese lines cut mid-sentence (hard-wrapped gold) are joined."""
    lines = [" ".join(line.split()) for line in re.split(r"\n\s*\n|\n", text) if line.strip()]
    if lang != "zh":
        return tuple(lines)
    joined: list[str] = []
    for line in lines:
        if joined and not re.search(r"[。！？!?”」』）)…：:]$", joined[-1]) and len(joined[-1]) >= 20:
            joined[-1] += line
        else:
            joined.append(line)
    return tuple(joined)


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "page"


def english_articles(wcxb: int = WCXB_ARTICLES, chaos: int | None = None) -> Iterator[Article]:
    """Yield the English articles: a seeded sample of WCXB-dev's, then chaos-all's (``chaos`` pages at most)."""
    pages = [page for page in iter_pages("wcxb-dev") if page.page_type == "article" and page.gold_text]
    for page in sorted(random.Random(SEED).sample(pages, min(wcxb, len(pages))), key=lambda p: p.page_id):
        gold = page.gold_text or ""
        yield Article(f"wcxb-dev/{page.page_id}", "en", page.html_bytes(), page.url or "",
                      str(page.extra.get("title") or "").strip(), _paragraphs(gold, "en"))
    for index, page in enumerate(iter_pages("msv-big5", subsets=("chaos-all",))):
        if chaos is not None and index >= chaos:
            break
        lines = _paragraphs(page.gold_text or "", "en")
        if not lines:
            continue
        body = page.html_bytes()
        url = page.url or sniff_url(body) or f"https://chaos.example.com/{_slug(page.page_id)}.html"
        # Not a host: some chaos-all gold texts hold part of the article only (a Daily Mail page: 1,900
        # of 29,000 characters), and the rest of the article would stay in the copy's frame.
        yield Article(f"msv-big5/{page.page_id}", "en", body, url, lines[0], lines[1:],
                      story=str(page.extra.get("keyword") or page.page_id.split(" (")[0]), frame=False)


def chinese_articles(extract: Extract, limit: int | None = None) -> Iterator[Article]:
    """Yield the Chinese articles: chinese-wced-dev's (gold), then GNE's (the extracted text as content)."""
    count = 0
    for page in iter_pages("chinese-wced-dev"):
        if limit is not None and count >= limit:
            return
        lines = _paragraphs(page.gold_text or "", "zh")
        url = page.url or f"https://wced.example.cn/{page.page_id}.html"
        article = Article(f"chinese-wced-dev/{page.page_id}", "zh", page.html_bytes(), url, "", lines)
        article.title = extract(article)[1] or (lines[0][:30] if lines else "")
        count += 1
        yield article
    for page in iter_pages("gne-chinese"):
        if page.page_type != "article":
            continue
        if limit is not None and count >= limit:
            return
        stem = page.page_id.rsplit("/", 1)[-1]
        article = Article(f"gne-chinese/{page.page_id}", "zh", page.html_bytes(),
                          f"https://{page.site}.example.cn/news/{stem}.html", gold=False)
        text, title = extract(article)
        article.paragraphs = tuple(line for line in text.split("\n") if line.strip())
        article.title = title or (article.paragraphs[0][:30] if article.paragraphs else "")
        count += 1
        yield article


def found_pages(keys: Sequence[str], lang: str) -> Iterator[Article]:
    """Yield the pages of ``FOUND_COPIES`` and ``PARTIAL_COPIES`` among ``keys`` (their content is not used)."""
    wanted: dict[str, set[str]] = {}
    for key in keys:
        dataset, page_id = key.split("/", 1)
        wanted.setdefault(dataset, set()).add(page_id)
    for dataset, ids in sorted(wanted.items()):
        options: dict[str, Any] = {}
        if dataset == "msv-big5":
            options["subsets"] = tuple(sorted({page_id.split("/")[0] for page_id in ids}))
        for page in iter_pages(dataset, **options):
            if page.page_id in ids:
                body = page.html_bytes()
                url = page.url or sniff_url(body) or f"https://{dataset}.example.com/{_slug(page.page_id)}.html"
                yield Article(f"{dataset}/{page.page_id}", lang, body, url, frame=False)


def _headline(article: Article, index: int) -> str:
    """Return the syndicated copy's changed headline."""
    title = article.title or "Untitled"
    if article.lang == "zh":
        return ("转载｜{}", "{}（全文）", "关注：{}")[index % 3].format(title)
    return ("Report: {}", "{}, explained", "What we know: {}")[index % 3].format(title)


def _credit(article: Article) -> str:
    """Return the "originally published by" line of a syndicated copy."""
    if article.lang == "zh":
        return f"本文原载于{article.site}，经授权转载，版权归原作者所有。"
    return f"This article was originally published by {article.site} and is republished here with permission."


def _paragraph_html(article: Article) -> str:
    return "\n".join(f"<p>{html_text.escape(text)}</p>" for text in article.paragraphs)


def amp_page(article: Article) -> bytes:
    """Return the article's headline and paragraphs in a minimal AMP page."""
    title, site = html_text.escape(article.title), html_text.escape(article.site)
    menu = "要闻 国内 国际 财经 科技" if article.lang == "zh" else "News World Business Tech Sport"
    items = "".join(f'<li><a href="/{_slug(name)}/">{name}</a></li>' for name in menu.split())
    return f"""<!doctype html>
<html ⚡ lang="{article.lang}">
<head>
<meta charset="utf-8">
<title>{title}</title>
<link rel="canonical" href="{html_text.escape(article.url)}">
<meta name="viewport" content="width=device-width,minimum-scale=1,initial-scale=1">
<script async src="https://cdn.ampproject.org/v0.js"></script>
<script async custom-element="amp-sidebar" src="https://cdn.ampproject.org/v0/amp-sidebar-0.1.js"></script>
<style amp-boilerplate>body{{-webkit-animation:-amp-start 8s steps(1,end) 0s 1 normal both;animation:-amp-start 8s
steps(1,end) 0s 1 normal both}}@keyframes -amp-start{{from{{visibility:hidden}}to{{visibility:visible}}}}</style>
<noscript><style amp-boilerplate>body{{-webkit-animation:none;animation:none}}</style></noscript>
<style amp-custom>body{{font-family:sans-serif;margin:0 1rem}} header{{display:flex}} .byline{{color:#666}}</style>
</head>
<body>
<header class="amp-header"><a href="/" class="logo">{site}</a>
<button on="tap:sidebar.toggle" aria-label="Menu">&#9776;</button></header>
<amp-sidebar id="sidebar" layout="nodisplay" side="left"><ul>{items}</ul></amp-sidebar>
<article>
<h1>{title}</h1>
<amp-img src="https://{site}/images/lead.jpg" width="1200" height="675" layout="responsive" alt=""></amp-img>
{_paragraph_html(article)}
</article>
<footer><p>© 2024 {site}</p><a href="{html_text.escape(article.url)}">{"查看完整版" if article.lang == "zh" else
"View full site"}</a></footer>
</body>
</html>
""".encode()


def print_page(article: Article) -> bytes:
    """Return the article's headline and paragraphs with a print header and footer and no site chrome."""
    title, site, url = html_text.escape(article.title), html_text.escape(article.site), html_text.escape(article.url)
    if article.lang == "zh":
        header = f"打印自 {site} · 2024年3月5日"
        footer = f"<p>本文链接：{url}</p><p>版权所有 © {site}，未经授权不得转载。</p><p>【打印】【关闭窗口】</p>"
    else:
        header = f"Printed from {site} on March 5, 2024"
        footer = f"<p>URL of this article: {url}</p><p>© 2024 {site}. All rights reserved. This copy is for your " \
                 "personal, non-commercial use only.</p>"
    return f"""<!DOCTYPE html>
<html lang="{article.lang}"><head><meta charset="utf-8"><title>{title} | {site}</title>
<meta name="robots" content="noindex,follow"><style>@media print {{ .no-print {{ display: none }} }}</style></head>
<body onload="window.print()">
<div class="print-header"><img src="/img/logo-print.png" alt="{site}"><p>{header}</p>
<a class="no-print" href="javascript:window.print()">Print</a></div>
<h1>{title}</h1>
<div class="print-body">
{_paragraph_html(article)}
</div>
<div class="print-footer">{footer}</div>
</body></html>
""".encode()


def content_area(root: html.HtmlElement, paragraphs: Sequence[str]) -> html.HtmlElement | None:
    """Return the deepest element holding ``CONTAINER_SHARE`` of the text pieces found in ``paragraphs``."""
    content = normalize(" ".join(paragraphs))
    weights: dict[html.HtmlElement, int] = {}
    for element in root.iter():
        if not isinstance(element.tag, str) or element.tag in ("script", "style", "head", "title", "noscript"):
            continue
        for piece in (element.text, *(child.tail for child in element)):
            text = normalize(piece or "")
            if len(text) >= 12 and text in content:
                weights[element] = weights.get(element, 0) + len(text)
    total = sum(weights.values())
    if total < MIN_SOURCE_CHARS // 2:
        return None
    below: dict[html.HtmlElement, int] = {}
    for element, weight in weights.items():
        for holder in (element, *element.iterancestors()):
            below[holder] = below.get(holder, 0) + weight
    held = [element for element, weight in below.items() if weight >= CONTAINER_SHARE * total]
    return max(held, key=lambda element: sum(1 for _ in element.iterancestors())) if held else None


def syndicated_page(article: Article, host: Article, index: int) -> bytes | None:
    """Return ``host``'s page with its content area holding ``article`` (new headline, credit line), or None."""
    root = parse_html(decode_html(host.html, host.content_type).text)
    area = content_area(root, host.paragraphs)
    if area is None or area.tag in ("html", "body"):
        return None
    headline = _headline(article, index)
    for child in list(area):
        area.remove(child)
    area.text = None
    outside = [h1 for h1 in root.iter("h1") if area not in h1.iterancestors()]
    if outside:
        for child in list(outside[0]):
            outside[0].remove(child)
        outside[0].text = headline
    else:
        etree.SubElement(area, "h1").text = headline
    credit = _credit(article)
    if index % 2 == 0:
        etree.SubElement(area, "p", {"class": "credit"}).text = credit
    for text in article.paragraphs:
        etree.SubElement(area, "p").text = text
    if index % 2 == 1:
        etree.SubElement(area, "p", {"class": "credit"}).text = credit
    for title in root.iter("title"):
        title.text = f"{headline} | {host.site}"
    head = root.find("head")
    for meta in root.iter("meta"):  # the page is written in UTF-8 now
        if meta.get("charset") is not None or (meta.get("http-equiv") or "").lower() == "content-type":
            meta.getparent().remove(meta)
    if head is not None:
        head.insert(0, etree.Element("meta", {"charset": "utf-8"}))
    return b"<!DOCTYPE html>\n" + html.tostring(root, encoding="utf-8")


def copies_of(article: Article, hosts: Sequence[Article], index: int) -> list[Copy]:
    """Return the article's copies (``KINDS``); the syndicated one on the first host that has a content area."""
    parts = urlsplit(article.url)
    other_url = f"https://m.{article.site}{parts.path or '/'}?utm_source=newsletter&utm_medium=email&utm_campaign=am"
    made = [Copy(f"{article.key}#url", "url", article.key, article.lang, article.html, other_url,
                 content_type=article.content_type),
            Copy(f"{article.key}#amp", "amp", article.key, article.lang, amp_page(article),
                 f"https://{article.site}/amp{parts.path or '/'}"),
            Copy(f"{article.key}#print", "print", article.key, article.lang, print_page(article),
                 f"https://{article.site}/print{parts.path or '/'}")]
    for host in hosts:
        if host.key == article.key or host.site == article.site or not host.frame:
            continue
        page = syndicated_page(article, host, index)
        if page is not None:
            made.append(Copy(f"{article.key}#syndicated", "syndicated", article.key, article.lang, page,
                             f"https://{host.site}/syndicated/{_slug(article.title)[:60]}.html", host=host.key))
            break
    return made


def build_corpus(lang: str, articles: Sequence[Article]) -> Corpus:
    """Return the corpus of the articles with copies of those with ``MIN_SOURCE_CHARS`` of content.

    Hosts are taken in turn from the next articles (seeded order) with content, on another site.
    """
    corpus = Corpus(lang, {article.key: article for article in articles})
    sources = [article for article in articles if article.content_chars >= MIN_SOURCE_CHARS and article.title
               and article.key not in GOLD_OF_ANOTHER_PAGE]
    order = list(sources)
    random.Random(SEED).shuffle(order)
    for index, article in enumerate(sources):
        start = order.index(article) + 1
        hosts = order[start:] + order[:start]
        corpus.copies.extend(copies_of(article, hosts, index))
    return corpus


def same_story_pairs(corpus: Corpus) -> dict[frozenset[str], str]:
    """Return {pair: why} of the corpus's different articles on one story (or, in Chinese, one topic)."""
    excluded = {frozenset(pair) for pair in FOUND_COPIES + PARTIAL_COPIES}
    pairs: dict[frozenset[str], str] = {}
    if corpus.lang == "zh":
        for first, second, why in SAME_STORY_ZH:
            if first in corpus.articles and second in corpus.articles:
                pairs[frozenset((first, second))] = why
        return pairs
    by_story: dict[str, list[str]] = {}
    for article in corpus.articles.values():
        if article.story:
            by_story.setdefault(article.story, []).append(article.key)
    for story, keys in by_story.items():
        for i, first in enumerate(keys):
            for second in keys[i + 1:]:
                pair = frozenset((first, second))
                if pair not in excluded:
                    pairs[pair] = f"chaos-all query {story!r}"
    return pairs
