"""News metadata (extraction.metadata.fields): the documented order of sources, bylines and datelines in English
and Chinese, titles, and the metadata in the flow's records."""

from __future__ import annotations

import json

import pytest
from lxml import html

from extraction.dom.html import parse_html
from extraction.metadata.authors import HEAD_LINES, split_authors, text_authors
from extraction.metadata.fields import Metadata, choose_title, clean_title, page_metadata
from extraction.page import Page
from extraction.process import Context, process

URL = "https://news.example.com/2021/01/02/council-budget.html"
JSONLD = {"@context": "https://schema.org", "@graph": [
    {"@type": "WebSite", "name": "Example News"},
    {"@type": "NewsArticle", "headline": "Council approves the budget", "datePublished": "2024-03-05T10:21:00+08:00",
     "dateModified": "2024-03-06T08:00:00Z", "author": [{"@type": "Person", "name": "Jane Doe"},
                                                       {"@type": "Person", "name": "John Smith"},
                                                       {"@type": "Organization", "name": "Example News"}],
     "publisher": {"@type": "NewsMediaOrganization", "name": "Example News"}, "articleSection": "Politics",
     "keywords": "budget, council", "image": {"@type": "ImageObject", "url": "/img/lead.jpg"}}]}


def _page(jsonld: bool = True, meta: bool = True, time: bool = True, visible: bool = True) -> str:
    head = "<title>Council approves the budget | Example News</title>"
    if jsonld:
        head += f"<script type='application/ld+json'>{json.dumps(JSONLD)}</script>"
    if meta:
        head += ("<meta property='article:published_time' content='2023-07-08T09:00:00+02:00'>"
                 "<meta property='og:site_name' content='Example News'><meta name='author' content='Meta Author'>"
                 "<link rel='canonical' href='/canonical/council-budget'>")
    body = "<h1>Council approves the budget</h1>"
    if time:
        body += "<time datetime='2022-05-06'>6 May 2022</time>"
    if visible:
        body += "<div class='byline'>By Visible Writer | Published January 3, 2021</div>"  # a day after the URL's
    body += "<p>" + "The council approved the budget after a long debate about schools and roads. " * 5 + "</p>"
    return f"<html lang='en'><head>{head}</head><body>{body}</body></html>"


@pytest.mark.parametrize(("sources", "published", "source"), [
    ({}, "2024-03-05T10:21:00+08:00", "json-ld"),
    ({"jsonld": False}, "2023-07-08T09:00:00+02:00", "meta"),
    ({"jsonld": False, "meta": False}, "2022-05-06", "time"),
    ({"jsonld": False, "meta": False, "time": False}, "2021-01-03", "byline"),
    ({"jsonld": False, "meta": False, "time": False, "visible": False}, "2021-01-02", "url"),
])
def test_contradictory_dates_follow_the_documented_order(sources: dict[str, bool], published: str, source: str) -> None:
    found = page_metadata(parse_html(_page(**sources)), URL, dates_by_htmldate=False)
    assert (found.date_published, found.sources["date_published"]) == (published, source)


def test_a_text_date_far_from_the_urls_is_another_date() -> None:
    # A masthead's "today" above the headline and a sidebar's story date: the byline's date that agrees with the
    # URL's is the article's; with none that agrees, the URL's.
    masthead = "<div class='date'>Sunday, 20 January, 2008</div>"
    story = "<h1>Oilers win</h1><p class='byline'>Fri, January 18, 2008 By Jane Doe</p><p>The Oilers won.</p>"
    page = f"<html><body>{masthead}{story}</body></html>"
    url = "https://news.example.com/sports/2008/01/18/oilers.html"
    found = page_metadata(parse_html(page), url, ["Sunday, 20 January, 2008", "Oilers win",
                                                  "Fri, January 18, 2008 By Jane Doe", "The Oilers won."],
                          dates_by_htmldate=False)
    assert (found.date_published, found.sources["date_published"]) == ("2008-01-18", "byline")
    alone = page.replace("Fri, January 18, 2008 ", "")
    found = page_metadata(parse_html(alone), url, dates_by_htmldate=False)
    assert (found.date_published, found.sources["date_published"]) == ("2008-01-18", "url")
    # Without a date in the URL, the first date read is the page's, as before.
    found = page_metadata(parse_html(alone), "https://news.example.com/sports/oilers.html", dates_by_htmldate=False)
    assert (found.date_published, found.sources["date_published"]) == ("2008-01-20", "byline")


def test_the_listing_date_comes_after_the_url() -> None:
    plain = parse_html("<html><body><h1>Budget</h1><p>Text of the article.</p></body></html>")
    rfc822 = page_metadata(plain, "https://a.test/news/budget", listed_date="Tue, 05 Mar 2024 10:21:00 GMT",
                           dates_by_htmldate=False)  # the spider converts feed dates; a raw one still gives the day
    assert (rfc822.date_published or "")[:10] == "2024-03-05"
    found = page_metadata(plain, "https://a.test/news/budget", listed_date="2024-03-05T10:21:00+00:00",
                          dates_by_htmldate=False)
    assert (found.date_published, found.sources["date_published"]) == ("2024-03-05T10:21:00+00:00", "listing")
    assert page_metadata(plain, "https://a.test/2019/12/31/budget", listed_date="2024-03-05",
                         dates_by_htmldate=False).date_published == "2019-12-31"


def test_jsonld_graph_gives_people_not_the_outlet_and_every_field() -> None:
    found = page_metadata(parse_html(_page()), URL, dates_by_htmldate=False)
    assert found.title == "Council approves the budget"
    assert found.authors == ["Jane Doe", "John Smith"]
    assert found.date_modified == "2024-03-06T08:00:00+00:00"
    assert found.section == "Politics" and found.tags == ["budget", "council"]
    assert found.image == "https://news.example.com/img/lead.jpg"
    assert found.site_name == "Example News"
    assert found.canonical_url == "https://news.example.com/canonical/council-budget"
    assert found.lang_declared == "en"


def test_english_byline_in_the_text_and_meta_author_values() -> None:
    assert split_authors("By Jane Doe and John Smith") == ["Jane Doe", "John Smith"]
    assert split_authors("Jane Doe, Staff Writer") == ["Jane Doe"]
    assert split_authors("By Jane Doe | Published March 5, 2024") == ["Jane Doe"]
    assert text_authors("Headline\nBy Jane Doe\nThe council approved the budget.") == ["Jane Doe"]
    assert split_authors("Scott Matton March 2") == ["Scott Matton"]  # a date after the name
    assert split_authors("Theresa May") == ["Theresa May"] and split_authors("April Ryan") == ["April Ryan"]
    assert split_authors("Cazzy Magennis Last Updated:August 1") == ["Cazzy Magennis"]
    assert split_authors("Updated March 11, 2026") == []


def test_citation_authors_are_one_a_tag_last_name_first() -> None:
    page = parse_html("<html><head><meta name='citation_author' content='Roy, Aniruddha'>"
                      "<meta name='citation_author' content='Jyoti Patel'></head><body><h1>T</h1></body></html>")
    assert page_metadata(page, None, dates_by_htmldate=False).authors == ["Aniruddha Roy", "Jyoti Patel"]


def test_microdata_authors_of_the_first_item_only() -> None:
    # A forum thread: the replies are items of their own; the thread's author is the first post's.
    replies = "".join(f"<div itemprop='comment' itemscope itemtype='https://schema.org/Comment'>"
                      f"<span itemprop='author'>user{i}</span><p>Reply.</p></div>" for i in range(3))
    page = parse_html("<html><body><div itemscope itemtype='https://schema.org/DiscussionForumPosting'><h1>Q</h1>"
                      f"<span itemprop='author'>blumo</span><p>Question.</p>{replies}</div></body></html>")
    assert page_metadata(page, None, dates_by_htmldate=False).authors == ["blumo"]
    # An article's authors are properties of one item, a Person item among them.
    page = parse_html("<html><body><div itemscope itemtype='https://schema.org/NewsArticle'><h1>H</h1>"
                      "<span itemprop='author'>Jane Doe</span> and <span itemprop='author' itemscope "
                      "itemtype='https://schema.org/Person'><span itemprop='name'>John Roe</span></span></div>"
                      "</body></html>")
    assert page_metadata(page, None, dates_by_htmldate=False).authors == ["Jane Doe", "John Roe"]


def test_a_person_items_name_in_a_meta_content() -> None:
    # Stack Exchange: the Person item's text is the user's link and reputation; its name is a <meta>'s content.
    # The first item is the question's; an answer's and a comment's authors come after it.
    users = [f"<div itemprop='author' itemscope itemtype='http://schema.org/Person'><a href='/u/{i}'>{name}</a>"
             f"<meta itemprop='name' content='{name}'><span>15,911</span> 1 silver badge</div><p>Post.</p>"
             for i, name in enumerate(["user447274", "glenn jackman"])]
    page = parse_html(f"<html><body><div itemscope itemtype='https://schema.org/Question'><h1>Q</h1>{users[0]}"
                      f"<div itemprop='suggestedAnswer' itemscope itemtype='https://schema.org/Answer'>{users[1]}</div>"
                      "</div></body></html>")
    assert page_metadata(page, None, dates_by_htmldate=False).authors == ["user447274"]


def test_a_questions_creation_date_comes_before_its_answers_dates() -> None:
    # Stack Exchange: the question's <time itemprop=dateCreated>, then each answer's datePublished (its edit).
    page = parse_html("<html><body><h1>Why is except: pass bad?</h1><div itemscope itemtype='https://schema.org/"
                      "Question'><time itemprop='dateCreated' datetime='2014-02-04T13:02:51'>asked</time>"
                      "<p>Question.</p><div itemprop='suggestedAnswer' itemscope itemtype='https://schema.org/"
                      "Answer'><div itemprop='datePublished' content='2018-05-21 20:37:55'></div><p>Answer.</p>"
                      "</div></div></body></html>")
    found = page_metadata(page, None, dates_by_htmldate=False)
    assert (found.date_published, found.sources["date_published"]) == ("2014-02-04T13:02:51", "microdata")


def test_without_a_headline_element_the_title_finds_the_dateline() -> None:
    # No <h1> with text: the head lines start at the title, so the nav's lines do not push the dateline out.
    lines = [f"Menu item {i}" for i in range(HEAD_LINES)] + ["Scaling Go testing", "Dec 17, 2025", "Body text."]
    page = parse_html("<html><head><title>Scaling Go testing | FunnelStory</title></head><body><h1></h1>"
                      "<p>x</p></body></html>")
    found = page_metadata(page, None, lines, dates_by_htmldate=False)
    assert (found.title, found.date_published) == ("Scaling Go testing", "2025-12-17")


def test_a_byline_element_holding_a_label_gives_way_to_the_next() -> None:
    # WordPress's "Veröffentlicht am" ("published on") in an element named "byline", the author in the next one.
    page = parse_html("<html><body><h1>Würde des Lebens</h1><div class='byline'>Veröffentlicht am</div>"
                      "<div class='byline author'>von Michael Veeser-Dombrowski</div><p>Text.</p></body></html>")
    assert page_metadata(page, None, dates_by_htmldate=False).authors == ["Michael Veeser-Dombrowski"]


def test_a_comments_author_is_no_byline() -> None:
    # WordPress's comment list and its "Recent Comments" widget: "comment-author" elements name readers.
    page = parse_html("<html><body><h1>Headline</h1><p>Text.</p><ul id='recentcomments'><li>"
                      "<span class='comment-author-link'>Peter Ulmer</span> bei <a>Tesla</a></li></ul>"
                      "<div class='comment-author vcard'><a>Trevor Shelley</a> says:</div></body></html>")
    assert page_metadata(page, None, dates_by_htmldate=False).authors == []
    page = parse_html("<html><body><h1>Headline</h1><div class='entry-author'>Jane Doe</div><p>Text.</p>"
                      "<cite class='comment-author'>NFreak007</cite></body></html>")
    assert page_metadata(page, None, dates_by_htmldate=False).authors == ["Jane Doe"]


def test_a_forum_topics_first_poster_is_its_author() -> None:
    # phpBB's and XenForo's "username", vBulletin's "bigusername", GameFAQs' data-username: the first post's user,
    # on a page typed other (a topic) only; a site's account menu ("js-user-name") and a login form are no post.
    topic = ("<html><body><a class='js-user-name'>Open My Menu</a><form><label class='username'>Name</label>"
             "<input name='username'></form><h1>Which telescope?</h1><div class='post'><a class='{cls}'>b.scherer</a>"
             "<p>I am new to astronomy.</p></div><div class='post'><a class='{cls}'>Ralston18</a><p>Try a Dobsonian."
             "</p></div></body></html>")
    for cls in ("username", "bigusername", "PostUser-name", "username u-concealed"):
        page = parse_html(topic.format(cls=cls))
        assert page_metadata(page, None, dates_by_htmldate=False, headline=False, thread=True).authors == ["b.scherer"]
        assert page_metadata(page, None, dates_by_htmldate=False, headline=False).authors == []
    page = parse_html("<html><body><h1>Switch</h1><a data-username='Need2KnowLion' class='name'>Need2KnowLion</a>"
                      "<p>Is it worth it?</p></body></html>")
    assert page_metadata(page, None, dates_by_htmldate=False, headline=False, thread=True).authors == ["Need2KnowLion"]
    page = parse_html("<html><body><a class='js-user-name'>Open My Menu</a><h1>Galaxy S25</h1><p>Specs.</p>"
                      "</body></html>")
    assert page_metadata(page, None, dates_by_htmldate=False, headline=False, thread=True).authors == []


def test_a_bylines_parts_are_read_apart() -> None:
    # <span>s side by side are separate words: "Reyan Perumal" and "Published", not "Reyan PerumalPublished".
    page = parse_html("<html><body><h1>Headline</h1><div class='byline'><span>By</span><a>Amy Roeder</a>"
                      "<span>Published</span><time>March 5, 2024</time></div><p>Text.</p></body></html>")
    assert page_metadata(page, None, dates_by_htmldate=False).authors == ["Amy Roeder"]


@pytest.mark.parametrize(("byline", "authors"), [
    # The name's line and the role's: the name does not run on into the role ("Stephen Jesudunsin AI")
    ("<span>Written By</span><div>Stephen Jesudunsin</div><div>AI Writer, Embarque</div>", ["Stephen Jesudunsin"]),
    ("<p>Matt Check</p><p>Head Winemaker, Co-Founder</p>", ["Matt Check"]),
    ("<p>Written By: Celeste Longacre</p><p>Gardener &amp; Astrologer</p>", ["Celeste Longacre"]),
    # Names on one line stay whole, and a name's parts on lines of their own too
    ("<span>By</span> <a>Jane Doe</a> and <a>John Roe</a>", ["Jane Doe", "John Roe"]),
    ("<div>Ralf</div><div>Balke</div>", ["Ralf Balke"]),
    # An avatar's initials before the name they stand for (wcxb-dev 0145's author card), not another's
    ("<span class='avatar'>NB</span><div>Nicole Burke</div><p>As founder of Rooted Garden, I consult.</p>",
     ["Nicole Burke"]),
    ("<span>AP</span><div>Jane Doe</div>", ["AP"]),
])
def test_a_byline_elements_first_name_line(byline: str, authors: list[str]) -> None:
    page = parse_html(f"<html><body><h1>Headline</h1><div class='author-box'>{byline}</div><p>Text.</p></body></html>")
    assert page_metadata(page, None, dates_by_htmldate=False).authors == authors


def test_chinese_byline_and_dateline() -> None:
    page = ("<html><body><h1>市议会批准预算</h1><div class='info'>发布时间：2024年3月5日 10:21　来源：江城日报　"
            "记者：张明</div><p>" + "市议会周二批准了新的预算，学校和道路将获得更多资金。" * 4 + "</p>"
            "<p>（责任编辑：李华）</p></body></html>")
    found = page_metadata(parse_html(page), "https://zh.example.com/news/1.html", dates_by_htmldate=False)
    assert found.authors == ["张明"]  # 来源 names the outlet; the reporter comes before the editor
    assert found.date_published == "2024-03-05T10:21:00"
    assert text_authors("正文第一段。\n正文第二段。\n（记者 胡晓蓉）\n责任编辑：孙文") == ["胡晓蓉"]
    assert text_authors("正文。（姚峰 上海报道）") == ["姚峰"]
    assert text_authors("价格为100元（含税）。") == []


def _read(page: html.HtmlElement, lines: list[str], **options: bool) -> Metadata:
    """Return ``page_metadata`` of a parsed page without URL, read with its text's ``lines``, htmldate off."""
    return page_metadata(page, None, lines, dates_by_htmldate=False, **options)


# A signature anywhere after the headline, as a line of its own (page lines, the headline, the author; then a line
# that mentions the same words but is no signature):
# - a reporter's closing line after text the page folds away ("展开全文"): in neither the extracted text nor the head
#   lines; a related headline that mentions a reporter is not a signature;
# - chinese-wced-dev's China-Pub blog: "ggjjzhzz 发表于 2005-9-15 11:46:00" after a post longer than the head lines, a
#   comment's line after it (the first such line is the post's); inside a sentence it is no byline.
_SIGNED_LINES = [
    (["于欢出狱", *(f"正文第{i}段。" for i in range(60)), "展开全文", "新京报记者 彭冲 山东冠县报道",
      "【编辑:刘欢】 返回搜狐，查看更多"], "彭冲", 2, "新京报记者彭冲山东冠县报道：于欢出狱后的第一天"),
    (["洞庭一叶", "陈天华《警世钟》", *(f"正文第{i}段。" for i in range(60)), "ggjjzhzz 发表于 2005-9-15 11:46:00",
      "网友评论", "reader7 发表于 2005-9-16 08:00:00"], "ggjjzhzz", 3, "这篇文章 ggjjzhzz 发表于 2005-9-15 的博客上。"),
]


@pytest.mark.parametrize(("lines", "author", "cut", "unsigned"), _SIGNED_LINES, ids=["reporter", "blog-user"])
def test_a_signature_line_after_the_headline_names_the_author(lines: list[str], author: str, cut: int,
                                                              unsigned: str) -> None:
    page = parse_html(f"<html><body><h1>{lines[0]}</h1><p>x</p></body></html>")
    found = _read(page, lines)
    assert found.authors == [author] and found.sources["authors"] == "byline"
    assert _read(page, [*lines[:-cut], unsigned]).authors == []


def test_the_head_lines_reach_the_h1_that_is_the_title() -> None:
    # Houstonia: the logo is the first <h1>, 50 lines above the headline's; the byline is read after the headline.
    body = [f"Menu item {i}" for i in range(50)]
    page = parse_html("<html><head><title>Hottest New Restaurants</title></head><body><h1>Houstonia Magazine</h1>"
                      "<h1>Hottest New Restaurants</h1><p>x</p></body></html>")
    lines = ["Houstonia Magazine", *body, "Hottest New Restaurants", "By", "Sofia Gonzalez", "December 2, 2025"]
    assert _read(page, lines).authors == ["Sofia Gonzalez"]
    # A section's <h1> right above the headline: the dateline between the two is still read.
    page = parse_html("<html><head><title>Amy cries</title></head><body><h1>Entertainment - Wire</h1>"
                      "<h1>Amy cries</h1><p>x</p></body></html>")
    lines = ["Entertainment - Wire", "Posted on Fri, Jan. 18, 2008", "print email", "Digg it", "Amy cries",
             "The Associated Press",
             "LONDON -- Amy Winehouse's husband appeared in court Friday."]
    assert _read(page, lines).date_published == "2008-01-18"


@pytest.mark.parametrize(("after", "authors"), [
    (["Written by John Crenshaw", "More from John Crenshaw"], ["John Crenshaw"]),
    (["Written by", "Jack Shepherd", "Hi! I'm Jack, co-founder of the agency."], ["Jack Shepherd"]),
    # A review's byline below the head: "Written by:" is the play's credit, and the text's byline is read instead.
    (["By JOSHUA TANZER", "Over the top and under the top.", "Written by: William Bennett."], []),
])
def test_an_author_box_after_the_article(after: list[str], authors: list[str]) -> None:
    page = parse_html("<html><head><title>Why Cheap SEO Fails</title></head><body><h1>Why Cheap SEO Fails</h1>"
                      "<p>x</p></body></html>")
    lines = ["Why Cheap SEO Fails", *(f"Paragraph {i} of the article." for i in range(60)), *after]
    assert _read(page, lines).authors == authors
    assert _read(page, lines, headline=False).authors == []  # a page that is no article has no author box


def test_a_name_alone_after_an_articles_headline_is_its_author() -> None:
    # chinese-wced-dev's Beijing Spring essays: the headline, the author's name alone, the subtitle.
    lines = ["犬儒病(上)", "胡平", "——当代中国的精神危机 (上)", "人心不会熄灭，但它可能蒙上灰烬而不再燃烧。"]
    page = parse_html("<html><head><title>显示</title></head><body><p>x</p></body></html>")
    found = _read(page, lines)
    assert found.authors == ["胡平"] and found.sources["authors"] == "byline"
    # Not on other page types, nor a button's or a section's word, nor a longer line.
    assert _read(page, lines, headline=False).authors == []
    for second in ("搜索", "公告", "当代中国的精神危机"):
        other = [lines[0], second, *lines[2:]]
        assert _read(page, other).authors == [], second


def test_a_title_left_open_gives_no_page_source_as_the_title() -> None:
    source = " ".join(f'<script src="/js/{i}.js"></script>' for i in range(15))
    page = (f'<html><head><title>Gale to drive Nation\'?\' + OAS_query + \'"><\\/SCRIPT>\'); {source}</head>'
            '<body><p>Sports</p><h2>Storm warning for the coast</h2><p>' + "The gale reached the coast. " * 20
            + '</p></body></html>')
    found = page_metadata(parse_html(page), "https://news.example.com/sports/gale.html", dates_by_htmldate=False)
    assert found.title is None  # nothing else names the page: no title rather than its script
    record = process(Page(page.encode(), "https://news.example.com/sports/gale.html", "text/html; charset=utf-8"),
                     Context())
    assert record.title is None


def test_a_page_that_gives_only_its_update_date_is_published_then() -> None:
    updated = "<html><body><h1>Webcams</h1><p>Last updated: November 13, 2025</p><p>Text.</p></body></html>"
    found = page_metadata(parse_html(updated), "https://a.test/webcams.htm",
                          ["Webcams", "Last updated: November 13, 2025", "Text."], dates_by_htmldate=False)
    assert (found.date_published, found.sources["date_published"]) == ("2025-11-13", "modified")
    assert (found.date_modified, found.sources["date_modified"]) == ("2025-11-13", "byline")
    post = page_metadata(parse_html("<html><body><p>x</p></body></html>"), None,
                         ["2019-02-23, 09:14 PM (This post was last modified: 2019-02-24, 02:31 AM by Ann.)"],
                         dates_by_htmldate=False)  # the date before the words is the post's
    assert (post.date_published, post.date_modified) == ("2019-02-23", "2019-02-24")
    labelled = ("<html><body><h1>Telescopes</h1><p>Last updated: <time datetime='2026-01-12'>January 12, 2026</time>"
                "</p><p>Text.</p></body></html>")
    found = page_metadata(parse_html(labelled), "https://a.test/2017/03/16/telescopes/", dates_by_htmldate=False)
    assert (found.date_published, found.sources["date_published"]) == ("2017-03-16", "url")  # not the update
    assert (found.date_modified, found.sources["date_modified"]) == ("2026-01-12", "time")
    both = page_metadata(parse_html(_page(jsonld=False)), URL, dates_by_htmldate=False)  # a publish date: kept apart
    assert both.sources["date_published"] == "meta" and both.date_modified != both.date_published


def test_a_labelled_dateline_wins_over_a_date_inside_a_sentence() -> None:
    lines = ["娱乐首页", "明星", "2005年4月18日吴宗宪进棚录像，凌晨收班后，于2、3点在忠孝东路一带餐厅用餐时被打。",
             "陈升 2002年6月27日", "2005-04-27 14:32更新 来源：千龙新闻网", "近日，惊爆台湾本土天王吴宗宪被打。"]
    found = page_metadata(parse_html("<html><body><p>x</p></body></html>"), None, lines, dates_by_htmldate=False)
    assert found.date_published == "2005-04-27T14:32:00"
    assert found.sources["date_published"] == "byline"
    found = page_metadata(parse_html("<html><body><p>x</p></body></html>"), None, lines[:4], dates_by_htmldate=False)
    assert found.date_published == "2005-04-18"  # without a labelled line, the first date of the head


def test_a_date_on_the_line_above_the_headline() -> None:
    root = parse_html("<html><body><h1>Council approves the budget</h1><p>Text.</p></body></html>")

    def published(above: str) -> tuple[str | None, str | None]:
        lines = ["Home", "News", above, "Council approves the budget", "The council met on Tuesday and voted 7-2."]
        found = page_metadata(root, "https://a.test/news/council-budget", lines, dates_by_htmldate=False)
        return found.date_published, found.sources.get("date_published")

    assert published("January 23, 2025") == ("2025-01-23", "byline")  # a kicker
    assert published("Reuters - December 30, 2007") == ("2007-12-30", "byline")
    assert published("Last updated 2025-12-18 UTC.") == (None, None)  # an update, not the post's date
    assert published("The week of January 23, 2025 in the city council and the mayor's office") == (None, None)
    found = page_metadata(root, "https://a.test/2025/01/24/council-budget/",
                          ["January 3, 2025", "Council approves the budget", "Text."], dates_by_htmldate=False)
    assert found.date_published == "2025-01-24"  # far from the URL's date: another date, the URL's wins


def test_title_without_the_site_name() -> None:
    assert clean_title("Council approves the budget | Example News", "Example News") == "Council approves the budget"
    assert clean_title("Example News - Council approves the budget") == "Council approves the budget"
    assert clean_title("市议会批准预算_江城新闻网") == "市议会批准预算"
    # A hyphen without spaces between Chinese characters separates too; between Latin words it does not.
    assert clean_title("法国全国大罢工再次严重影响交通-新华网") == "法国全国大罢工再次严重影响交通"
    assert clean_title("Coca-Cola sales rise") == "Coca-Cola sales rise"
    assert clean_title("Budget: what it means | Example", h1s=["Budget: what it means"]) == "Budget: what it means"


def test_an_underscore_inside_a_name_is_no_title_separator() -> None:
    assert clean_title("Module ngx_http_rewrite_module") == "Module ngx_http_rewrite_module"
    assert clean_title("rustc_codegen_gcc: Progress Report #39") == "rustc_codegen_gcc: Progress Report #39"
    assert clean_title("人工智能迈上新台阶_科技_腾讯网") == "人工智能迈上新台阶"
    assert clean_title("后果很严重 _探索者 _光明网") == "后果很严重"


def test_the_h1_is_the_headline_when_a_title_candidate_holds_its_words() -> None:
    candidates = [("Budget passes – Example News", "json-ld"), ("Budget passes | Example News", "meta")]
    assert choose_title(candidates, ["The council budget passes"], "Example News") == (
        "The council budget passes", "h1")  # 3 of its 4 words are in the candidates
    assert choose_title(candidates, ["Example News"], "Example News") == ("Budget passes", "json-ld")  # not the site
    assert choose_title(candidates, ["Example"], "Example News")[0] == "Budget passes"  # a short part: the site
    # Not an article: an <h1> is taken only when the title holds it whole (a section's name beside the site's).
    assert choose_title([("City news – Harbor Gazette", "meta")], ["City news"], overlap=False) == ("City news",
                                                                                                  "meta")
    assert choose_title([("Fields - Pydantic Validation", "meta")], ["Model fields"],
                        overlap=False) == ("Fields", "meta")  # the part sharing words with the <h1>
    assert choose_title([("Fields - Pydantic Validation", "meta")], [], overlap=False) == ("Pydantic Validation",
                                                                                            "meta")  # else longest
    assert choose_title([], ["Only a heading"]) == ("Only a heading", "h1")


def test_the_flow_fills_the_record() -> None:
    from extraction.blockclf.classifier import shared_models as block_models
    from extraction.pagetype.models import shared_models as page_models

    record = process(Page(_page().encode(), URL, "text/html; charset=utf-8"), Context(page_models(), block_models()))
    assert record.title == "Council approves the budget" and record.authors == ["Jane Doe", "John Smith"]
    assert record.date_published == "2024-03-05T10:21:00+08:00" and record.lang == "en"
    assert record.metadata_sources["authors"] == "json-ld"
    assert record.canonical_url == "https://news.example.com/canonical/council-budget"


def test_every_demo_article_has_its_author_and_date() -> None:
    from demo.content import build_sites
    from extraction.blockclf.classifier import shared_models as block_models
    from extraction.pagetype.models import shared_models as page_models

    context = Context(page_models(), block_models())
    articles = [(site, page) for site in build_sites() for page in site.pages.values() if page.page_type == "article"]
    assert articles
    for site, page in articles:
        record = process(Page(page.body_bytes, "http://127.0.0.1:8000" + page.path,
                              f"text/html; charset={page.encoding}"), context)
        assert record.authors == [page.author], page.path
        assert (record.date_published or "")[:16] == page.published[:16], page.path
        assert record.title == page.title and record.lang == ("en" if site.lang == "en" else "zh-Hans"), page.path


def test_publish_date_meta_names() -> None:
    page = ('<html><head><meta name="published" content="July 17, 2025"></head><body><h1>A headline here</h1>'
            '<p>Text.</p></body></html>')
    assert page_metadata(parse_html(page), dates_by_htmldate=False).date_published == "2025-07-17"
    page = ('<html><head><meta name="ms.date" content="2025-03-06T00:00:00Z"></head><body><p>Text.</p>'
            '</body></html>')
    assert page_metadata(parse_html(page), dates_by_htmldate=False).date_published == "2025-03-06T00:00:00+00:00"



def test_a_comment_forms_name_field_is_no_byline() -> None:
    # WordPress names the field's paragraph "comment-form-author": its label is no author of the post.
    page = ("<html><body><h1>A post</h1><p>Text of the post.</p><form id='commentform'>"
            "<p class='comment-form-author'><label for='author'>Name (required)</label>"
            "<input id='author' name='author'></p></form></body></html>")
    assert page_metadata(parse_html(page), dates_by_htmldate=False).authors == []
    page = page.replace("<p>Text", "<div class='author'>By Amy Roeder</div><p>Text")
    assert page_metadata(parse_html(page), dates_by_htmldate=False).authors == ["Amy Roeder"]


def test_tags_and_sections_are_labels_and_the_declared_language_a_subtag() -> None:
    head = ("<meta name='keywords' content='budget, The council approved the budget after a long debate on Tuesday, "
            "summit county colorado breckenridge keystone copper frisco news'>"
            "<meta property='article:section' content='Politics, Local, Schools'>")
    found = page_metadata(parse_html(f"<html lang='lang='><head>{head}</head><body><p>Text.</p></body></html>"),
                          dates_by_htmldate=False)
    assert found.tags == ["budget"]  # a sentence and a run of keywords set apart by spaces are no tags
    assert found.section == "Politics"
    assert found.lang_declared is None  # "lang=" is no language
    chinese = "<html lang='zh-CN'><head><meta name='keywords' content='校长 宏志班 学生'></head><body></body></html>"
    found = page_metadata(parse_html(chinese), dates_by_htmldate=False)
    assert found.tags == ["校长", "宏志班", "学生"] and found.lang_declared == "zh"
    url_section = "<html><head><meta property='article:section' content='https://example.com/blog/'></head></html>"
    assert page_metadata(parse_html(url_section), dates_by_htmldate=False).section is None


def test_a_sentences_by_is_no_byline() -> None:
    lines = ["A headline", "by people, we can create stronger communities, deliver the growth", "By Jane Doe"]
    page = parse_html("<html><body><h1>A headline</h1><p>Text.</p></body></html>")
    assert page_metadata(page, None, lines, dates_by_htmldate=False).authors == ["Jane Doe"]


def test_a_link_previews_written_by_and_a_label_on_its_own_line_name_the_author() -> None:
    head = ("<meta name='twitter:label1' content='Est. reading time'><meta name='twitter:data1' content='4 minutes'>"
            "<meta name='twitter:label2' content='Written by'><meta name='twitter:data2' content='Tyler Brown'>")
    page = parse_html(f"<html><head>{head}</head><body><h1>A headline</h1><p>Text.</p></body></html>")
    assert page_metadata(page, None, dates_by_htmldate=False).authors == ["Tyler Brown"]
    page = parse_html("<html><body><h1>A headline</h1><p>Text.</p></body></html>")
    lines = ["A headline", "Last updated", "Aug 04, 2025", "Written by", "Edzel Tabing", "Text."]
    assert page_metadata(page, None, lines, dates_by_htmldate=False).authors == ["Edzel Tabing"]


def test_the_sites_name_after_the_reporters_is_no_author() -> None:
    head = "<meta property='og:site_name' content='CNN'><meta name='author' content='Greg Botelho, CNN'>"
    page = parse_html(f"<html><head>{head}</head><body><h1>A headline</h1><p>Text.</p></body></html>")
    assert page_metadata(page, "https://edition.cnn.com/2013/09/04/a.html", dates_by_htmldate=False).authors \
        == ["Greg Botelho"]


def test_one_bad_metadata_element_loses_nothing_else() -> None:
    """A JSON-LD block nested past the parser's depth, a canonical link or og:image to a broken IPv6 host: each is
    skipped, and the page's other metadata stands (each raised, and the page lost every field as
    ``metadata_failed``)."""
    deep = '<script type="application/ld+json">' + "[" * 3000 + "]" * 3000 + "</script>"
    for extra in (deep, '<link rel="canonical" href="http://[x/">',
                  '<meta property="og:image" content="http://[::1:bad/x.jpg">'):
        page = _page(meta=False).replace("</head>", extra + "</head>")
        found = page_metadata(parse_html(page), URL, dates_by_htmldate=False)
        assert found.date_published == "2024-03-05T10:21:00+08:00" and found.authors == ["Jane Doe", "John Smith"]


def test_json_escapes_for_characters_no_text_holds_are_dropped() -> None:
    """JSON-LD may escape a control character or half a surrogate pair ("\\u0000", "\\udfff"): the record holds
    neither, so its JSON line can be written as UTF-8 (the surrogate stopped `scrapy extract`'s feed)."""
    jsonld = ('{"@type":"NewsArticle","headline":"Council approves","description":"Budget \\ud83d news",'
              '"author":{"@type":"Person","name":"Jane\\u0000 Doe\\udfff"},"datePublished":"2024-03-05"}')
    page = (f"<html><head><title>Council approves</title><script type='application/ld+json'>{jsonld}</script>"
            "</head><body><h1>Council approves</h1>" + "<p>The council approved the budget today.</p>" * 20
            + "<p>Escapes &#x1b;[2J and a bell \x07 in the text.</p></body></html>")
    record = process(Page(page.encode(), URL, "text/html; charset=utf-8"), Context(page_models=None))
    assert record.authors == ["Jane Doe"] and record.description == "Budget news"
    assert "\x1b" not in record.text and "\x07" not in record.text and "[2J" in record.text
    json.dumps(record.as_dict(), ensure_ascii=False).encode("utf-8")


def _canonical(head: str) -> tuple[str | None, str | None]:
    page = (f"<html><head>{head}</head><body><article><h1>Rates held</h1><p>The bank held its rates.</p></article>"
            "</body></html>")
    found = page_metadata(parse_html(page), "https://news.example.com/2026/rates?ref=home", dates_by_htmldate=False)
    return found.canonical_url, found.sources.get("canonical_url")


JSONLD_WEBPAGE = ('<script type="application/ld+json">{"@context": "https://schema.org", "@type": "NewsArticle", '
                  '"headline": "Rates held", "mainEntityOfPage": "https://news.example.com/2026/rates/#webpage"}'
                  '</script>')


def test_the_pages_own_canonical_link_comes_before_a_jsonld_id() -> None:
    """Yoast and others give the article's mainEntityOfPage the id of the page's WebPage node, "...#webpage": the
    page's <link rel=canonical> is what it declares."""
    link = '<link rel="canonical" href="https://news.example.com/2026/rates">'
    assert _canonical(JSONLD_WEBPAGE + link) == ("https://news.example.com/2026/rates", "meta")
    assert _canonical(link + JSONLD_WEBPAGE) == ("https://news.example.com/2026/rates", "meta")
    # Without a link, the JSON-LD URL, less its fragment (no fragment is a page of its own).
    assert _canonical(JSONLD_WEBPAGE) == ("https://news.example.com/2026/rates/", "json-ld")
