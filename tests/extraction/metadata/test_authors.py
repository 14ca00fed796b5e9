"""Authors in bylines (extraction.metadata.authors)."""

from __future__ import annotations

import pytest

from extraction.metadata.authors import outlet_address, split_authors, text_authors, without_outlet


def test_chinese_bylines_in_prose_places_and_closing_signatures() -> None:
    # The place before 报道 is not a name; names joined by 、 are.
    assert text_authors("正文。\n新京报记者 彭冲 山东冠县报道\n【编辑:刘欢】") == ["彭冲"]
    assert text_authors("正文。\n记者 张三、李四 北京报道") == ["张三", "李四"]
    assert text_authors("正文。\n记者张三、李四报道") == ["张三", "李四"]
    # In running prose 记者 is a word of the sentence, not a label.
    assert text_authors("在孙启勤的山庄里。\n记者在孙启勤的办公室里看到一幅规划图。") == []
    assert text_authors("正文。\n记者通过电子邮件联系了富士康。") == []  # 电 of 电子 ends no name
    # A paper's closing signature of names alone; not a parenthesis inside the text or a "to be continued".
    assert text_authors("第一段。\n倡树廉洁家风，过一个祥和的新春佳节。（常书香 马丹阳 ）") == ["常书香", "马丹阳"]
    assert text_authors("（张三 李四）在会上发言。\n第二段。") == []
    assert text_authors("第一段。（未完待续）") == []
    assert text_authors("正文。\n作者：展开全文") == []  # a button's label, not a name
    assert text_authors("北京发布暴雨预警（组图）") == []  # a headline's note, not a signature
    assert text_authors("第一段。\n正文结束。（资料图）") == []
    assert text_authors("正文。\n新华社记者张三电") == ["张三"]
    assert text_authors("长江网10月4日讯（记者陈智 整合） 国庆中秋长假") == ["陈智"]  # the compiler's word goes
    assert text_authors("正文。\n本报记者 张三 北京电") == ["张三"]
    # Unlabelled bylines: a bracketed name before 来源, a user before 发表于 (not "本文 发表于").
    assert text_authors("BUSINESS.SOHU.COM 2004年7月16日08:19 [ 黄宇 ]\ue5c2 来源：[ 国际金融报 ]") == ["黄宇"]
    assert text_authors("陈天华《警世钟》 ggjjzhzz 发表于 2005-9-15 11:46:00") == ["ggjjzhzz"]
    assert text_authors("本文 发表于 2005年9月15日") == [] and text_authors("【新华社】来源：新华网") == []


@pytest.mark.parametrize(("byline", "names"), [
    ("Zackery Cuevas Writer, Hardware", ["Zackery Cuevas"]),  # a role ends the names
    ("Rasmus Barslund Founder, Lead Reviewer", ["Rasmus Barslund"]),
    ("Matthew Richardson ⋅ Review Editor", ["Matthew Richardson"]),  # a dot operator sets the role apart
    ("By Jane Doe and John Smith, Staff Writers", ["Jane Doe", "John Smith"]),
    ("Our Editors", []),  # a label, not a collective byline's name
])
def test_roles_after_names_are_no_part_of_them(byline: str, names: list[str]) -> None:
    assert split_authors(byline) == names


@pytest.mark.parametrize(("byline", "names"), [
    # A collective byline is who the page says wrote it, as WCXB's gold and trafilatura read it
    ("By Podium Staff", ["Podium Staff"]),
    ("TOI Lifestyle Desk", ["TOI Lifestyle Desk"]),
    ("The Currency editors", ["The Currency editors"]),
    ("Great Day Editorial Team", ["Great Day Editorial Team"]),
    ("Team SimplyThrilled", ["Team SimplyThrilled"]),
    ("by TrekMovie.com Staff , Filed under: Celebrity, Shatner", ["TrekMovie.com Staff"]),  # the post's data goes
    # Not collective: the words alone, in a sentence, after a person's name, or part of a role
    ("Staff", []),
    ("The team", []),
    ("by the time team members arrive", []),
    ("Jane Doe, CNN Staff", ["Jane Doe"]),
    ("Stephen Shankland Staff Writer, CNET News.com", []),
    ("Chris Foster, Los Angeles Times Staff Writer", ["Chris Foster"]),
    ("Ben Silverman Games Editor", []),  # a singular Editor is a role
])
def test_collective_bylines_are_names(byline: str, names: list[str]) -> None:
    assert split_authors(byline) == names


@pytest.mark.parametrize(("byline", "names"), [
    ("Learn about products", []),  # a sentence of the page taken for a byline
    ("In-home services are offered nationwide!", []),
    ("annette thurmon", ["annette thurmon"]),  # names written in lower case stay
    ("theking", ["theking"]),
    ("Ludwig van Beethoven, Maria de la Cruz", ["Ludwig van Beethoven", "Maria de la Cruz"]),
])
def test_sentences_are_no_names(byline: str, names: list[str]) -> None:
    assert split_authors(byline) == names


@pytest.mark.parametrize(("byline", "names"), [
    ("Penned by SiMon Har", ["SiMon Har"]),  # the label goes
    ("Written By", []),  # a label alone names no one
    ("By", []),
    ("Edward M. Gomez ( Email", ["Edward M. Gomez"]),  # a parenthesis the byline's cut left open
    ("Dylan Bailey, MS, RD, FAND", ["Dylan Bailey, MS, RD, FAND"]),  # credentials are no names of their own
    ("Jan 4", []),  # dates are no names
    ("November 5", []),
    ("5 November", []),
    ("ron1cne", ["ron1cne"]),  # a user's handle
    ("LingoLover94", ["LingoLover94"]),  # a handle ends in digits
    ("user447274", ["user447274"]),
    ("Jan2024", []),  # a month and a year run together
    ("KumikoGoingCrAzY 15911 silver badges", []),  # a count beside a name
    ("cipha[at]cipha.net", []),  # an e-mail address
    ("Howard Gleckman and Stan Crock in Washington", ["Howard Gleckman", "Stan Crock"]),  # the place goes
    ("Jane Doe and the Associated Press", ["Jane Doe"]),
    ("Human in the Loop", []),  # a sentence, not a name and a place
    ("M. Untersinger (avec Damien Leloup et Morgane Tual)", ["M. Untersinger", "Damien Leloup", "Morgane Tual"]),
    ("Autoren: Max Muster", ["Max Muster"]),
    ("Veröffentlicht von Chris Jung", ["Chris Jung"]),  # WordPress's "Posted by" in its translations
    ("Publié par Marie Dupont", ["Marie Dupont"]),
    ("Jason Shafrin - Oct", ["Jason Shafrin"]),  # the month of a date broken over two lines
    ("Jane May", ["Jane May"]),  # a month is a name where no dash sets it apart
    ("JOSEPH WHITE AP Sports Writer", ["JOSEPH WHITE"]),  # a wire's byline: the desk and the wire go with the role
    ("John Smith, Sports Writer", ["John Smith"]),
    # "By ..." lines of the page that are sentences: the first part or most parts read as prose
    ("the end of this program, you will be able to", []),
    ("when travel wasn’t trendy, meaningful, the places we visit", []),
    ("people, we can create stronger communities, deliver the economic growth", []),
])
def test_labels_credentials_dates_and_sentences_are_no_names(byline: str, names: list[str]) -> None:
    assert split_authors(byline) == names


@pytest.mark.parametrize(("byline", "names"), [
    # An author box's labels and links, where its name was looked for (replay of real pages, 2026-11-28)
    ("View Profile", []),
    ("Full Bio", []),
    ("The Author", []),
    ("Date", []),
    ("Editorials", []),
    ("Monday", []),
    ("Veröffentlicht am", []),  # "published on" and "sponsored" in German
    ("Publiziert am", []),
    ("von Gesponserte Inhalte", []),
    # A role of its own after the name, and a credential written with dots
    ("Krishna Bharat, Distinguished Scientist", ["Krishna Bharat"]),
    ("Scott Zuccarino, Product Manager", ["Scott Zuccarino"]),
    ("Susan Hallam MBE Managing Director, Hallam Internet", ["Susan Hallam MBE"]),  # the company after the role
    ("Liza Burke Marketing Director", ["Liza Burke"]),
    ("Managing Director", []),
    ("Genevieve Carlton, Ph.D", ["Genevieve Carlton, Ph.D"]),
    ("Ed Silverman //", ["Ed Silverman"]),
    ("name", []),  # a template's placeholder in a meta author
    # A weekday inside a name stays
    ("Jane Biondi and Sunday Oliseh", ["Jane Biondi", "Sunday Oliseh"]),
])
def test_an_author_boxs_labels_and_roles_are_no_names(byline: str, names: list[str]) -> None:
    assert split_authors(byline) == names


def test_a_declared_authors_role_is_left_out() -> None:
    # A JSON-LD, microdata or meta author's value: its later parts may be a role, not a sentence of the page.
    role = "Benjamin Johnson, Sr. Director of Operations, Atlas Van Lines - 10+ Years in the Moving Industry"
    assert split_authors(role) == [] and split_authors(role, declared=True) == ["Benjamin Johnson"]


def test_placeholders_for_an_unknown_author_are_no_names() -> None:
    assert text_authors("正文。\n作者：未知") == [] and text_authors("正文。\n作者：佚名") == []
    assert text_authors("正文。\n作者：张三") == ["张三"]


def test_the_outlet_after_a_name_is_no_author() -> None:
    cnn = "https://www.cnn.com/2017/03/27/politics/story/index.html"
    assert without_outlet(["Greg Botelho", "CNN"], None, cnn) == ["Greg Botelho"]  # the host's name
    assert without_outlet(["Jane Doe", "John Roe", "The Commercial Appeal"], "The Commercial Appeal", None) \
        == ["Jane Doe", "John Roe"]  # the site's name
    assert without_outlet(["Bob Smith", "FoxNews.com"], None, "https://www.foxnews.com/a") == ["Bob Smith"]
    assert without_outlet(["Jane Doe", "AP"], None, None) == ["Jane Doe"]  # a news agency
    # Named alone, or first, the outlet is who the page says wrote it (a company's blog, a personal site).
    assert without_outlet(["Swoogo"], "Swoogo", "https://swoogo.events/blog/a") == ["Swoogo"]
    assert without_outlet(["Rick Steves", "Cameron Hewitt"], "Rick Steves", None) == ["Rick Steves", "Cameron Hewitt"]


def test_a_declared_outlet_keeps_its_name_not_its_address() -> None:
    # Meta author values of German papers: the outlet, then where it sits (replayed spiegel.de and sueddeutsche.de).
    spiegel = split_authors("SPIEGEL ONLINE, Hamburg, Germany", declared=True)
    assert outlet_address(spiegel, "SPIEGEL ONLINE", "http://www.spiegel.de/spiegel/print/d-161500790.html") \
        == ["SPIEGEL ONLINE"]
    sz = split_authors("Süddeutsche.de GmbH, Munich, Germany", declared=True)
    assert outlet_address(sz, "Süddeutsche.de", None) == ["Süddeutsche.de GmbH"]  # the legal form after the name
    media = "https://examplemedia.com/a"
    assert outlet_address(["Example Media Inc.", "Chicago"], None, media) == ["Example Media Inc."]
    # People first, or an outlet that is not the site's: every name stays.
    assert outlet_address(["Jane Doe", "Hamburg"], "SPIEGEL ONLINE", None) == ["Jane Doe", "Hamburg"]
    assert outlet_address(["Reuters", "Jane Doe"], "SPIEGEL ONLINE", "http://www.spiegel.de/a") \
        == ["Reuters", "Jane Doe"]
