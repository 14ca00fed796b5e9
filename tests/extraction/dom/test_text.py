from __future__ import annotations

from extraction.dom.blocks import page_blocks
from extraction.dom.html import MANY_EQUALS, declared_lang, page_title, parse_html, title_text
from extraction.dom.text import printable, tidy_text, visible_text


def test_visible_text_keeps_blocks_and_drops_invisible() -> None:
    root = parse_html(
        "<html><head><title>T</title><style>p{}</style></head><body>"
        "<div>Hello <b>world</b><script>var x;</script> again</div>"
        "<p>Para<span style='display: none'>hidden</span> end</p>"
        "<div hidden>gone</div><noscript>enable js</noscript><p>last</p></body></html>"
    )
    assert visible_text(root) == "Hello world again\nPara end\nlast"


def test_ruby_readings_are_not_text() -> None:
    # NHK's easy news: every kanji word with its furigana; the text is the words, once.
    page = ("<body><p><ruby>子<rt>こ</rt></ruby>どもへの<ruby>虐待<rp>(</rp><rt>ぎゃくたい</rt><rp>)</rp></ruby>を"
            "なくす<ruby>法律<rt>ほうりつ</rt></ruby></p></body>")
    assert visible_text(parse_html(page)) == "子どもへの虐待をなくす法律"
    (block,) = page_blocks(parse_html(page))
    assert block.text == "子どもへの虐待をなくす法律"


def test_tail_of_hidden_element_is_kept() -> None:
    root = parse_html("<body><p>a<span style='visibility:hidden'>x</span>b</p></body>")
    assert visible_text(root) == "ab"


def test_malformed_markup_survives() -> None:
    root = parse_html("<body><p>one<p>two</td></div><table><b>three<!-- unclosed")
    assert visible_text(root).split("\n") == ["one", "two", "three"]


def test_page_behind_an_empty_first_html_element_is_found() -> None:
    # A cut <html> start tag (seen in L3S-GN1): libxml2 leaves an empty <html> first and puts the
    # page into a second top-level <html>; before the fix every method saw no text.
    root = parse_html('<!DOCTYPE html><html x" /></a></td><td>Hello <b>there</b></td><p>Para</p></html>')
    assert [child.tag for child in root] == ["body"]
    assert visible_text(root) == "Hello there\nPara"
    # A first <html> with only a head, the body in a second one (a stray </html>).
    root = parse_html("<html><head><title>T</title></head></html><html><body><p>Text</p></body></html>")
    assert visible_text(root) == "Text" and page_title(root) == "T"


def test_content_after_a_stray_end_tag_is_read_at_the_end_of_the_body() -> None:
    # libxml2 leaves what follows a stray </body> beside the body, and what follows a stray </html> in a second
    # top-level <html> (WCXB-dev 0310: the blog post after its header's </html>); a browser shows both at the end
    # of the body.
    root = parse_html("<html><body><p>Nav</p></body></html><div><p>The story after a stray end tag.</p></div>")
    assert visible_text(root) == "Nav\nThe story after a stray end tag."
    root = parse_html("<html><body><p>Nav</p></body><div><p>The story after body.</p></div></html>")
    assert visible_text(root) == "Nav\nThe story after body." and [child.tag for child in root] == ["body"]
    root = parse_html("<html><head><title>T</title></head><body><p>Nav</p></body></html>Loose text<p>More</p>")
    assert visible_text(root) == "Nav\nLoose text\nMore" and page_title(root) == "T"


def test_a_title_without_its_end_tag_does_not_swallow_the_page() -> None:
    # Archived L3S-GN1 pages lost their </title>: libxml2 read the rest of the page as the title's text, the
    # page had no body and every method extracted nothing. The title is closed where its first tag starts.
    scripts = "".join(f'<script src="/js/{i}.js" language="JavaScript"></script>\n' for i in range(10))
    page = (f'<html><head><title>Computerworld - Antitrust cases</titavaScript" src="/general.js"></script>\n{scripts}'
            '</head><body><h1>Antitrust cases</h1><p>The Commission opened two cases on Monday.</p></body></html>')
    root = parse_html(page)
    assert visible_text(root) == "Antitrust cases\nThe Commission opened two cases on Monday."
    assert page_title(root) == "Computerworld - Antitrust cases"
    # A title that is closed, however long, is left alone.
    long_title = "Word " * 100
    root = parse_html(f"<html><head><title>{long_title}</title></head><body><p>Text</p></body></html>")
    assert visible_text(root) == "Text" and page_title(root) == long_title.strip()


ARTICLE = " ".join(["The council approved the budget after a long debate about schools and roads."] * 8)


def test_text_the_markup_hides_is_shown_when_it_is_the_page() -> None:
    # React's streamed rendering: the page in <div hidden id="S:0">, moved into place by its script.
    streamed = (f"<html><body><div id='shell'><p>Loading</p></div><div hidden id='S:0'><p>{ARTICLE}</p></div>"
                "<script>$RC('B:0','S:0')</script></body></html>")
    assert ARTICLE in visible_text(parse_html(streamed))
    # Discourse: a client without script gets the posts in a <noscript>, which libxml2 leaves in <head>.
    forum = (f"<html><head><title>Thread</title><noscript><div class='post'><p>{ARTICLE}</p></div></noscript>"
             "</head><body><div id='app'></div></body></html>")
    assert visible_text(parse_html(forum)) == ARTICLE
    # A <button> whose <div> is not closed holds the rest of the page.
    swallowed = (f"<html><body><button class='menu'><div class='inner'><svg></svg><div></button></div>"
                 f"<h1>Budget</h1><p>{ARTICLE}</p></body></html>")
    assert visible_text(parse_html(swallowed)) == f"Budget\n{ARTICLE}"
    # A Next.js site hides its whole page until its style sheet has loaded (geeksforgeeks.org).
    for hiding in ("style='visibility:hidden;background-color:#fff'", "style='display: none'", "hidden"):
        loading = (f"<html><body><div id='__next'><div {hiding}><div class='root'><h1>Budget</h1><p>{ARTICLE}</p>"
                   "</div></div></div></body></html>")
        assert visible_text(parse_html(loading)) == f"Budget\n{ARTICLE}", hiding
    # A Shopify app hides the shop's <main> until its script has run, beside menus that show (WCXB-dev 0638):
    # shown when it has more than twice their text.
    menus = "<nav><ul>" + "".join(f"<li><a href='/{i}'>Category {i}</a></li>" for i in range(60)) + "</ul></nav>"
    locked = (f"<html><body>{menus}<main><div class='easylockdown-content' style='display:none;'>"
              f"<p>{ARTICLE}</p><p>{ARTICLE}</p><p>{ARTICLE}</p></div></main></body></html>")
    assert visible_text(parse_html(locked)).endswith(f"{ARTICLE}\n{ARTICLE}\n{ARTICLE}")
    assert ARTICLE not in visible_text(parse_html(locked.replace(f"<p>{ARTICLE}</p><p>{ARTICLE}</p>", "")))


def test_hidden_text_that_does_not_outweigh_the_page_stays_hidden() -> None:
    extra = "Recommended for you: more stories from the region and beyond this week. " * 3
    streamed = (f"<html><body><p>{ARTICLE}</p><div hidden id='S:1'><p>{extra}</p></div>"
                "<div hidden id='menu'><p>" + extra * 3 + "</p></div></body></html>")
    assert visible_text(parse_html(streamed)) == ARTICLE
    notice = "<noscript><p>" + "Please enable JavaScript to use every feature of this site. " * 10 + "</p></noscript>"
    assert visible_text(parse_html(f"<html><body>{notice}<p>{ARTICLE}</p></body></html>")) == ARTICLE
    # A rendered forum: the posts its script built are shown, the noscript's copy of them (longer) is not.
    posts = "<noscript><div>" + f"<p>{ARTICLE}</p>" * 3 + "</div></noscript>"
    assert visible_text(parse_html(f"<html><body>{posts}<p>{ARTICLE}</p></body></html>")) == ARTICLE
    button = "<button><span>" + "Add to cart " * 45 + "</span></button>"  # 540 characters, under the page's
    assert visible_text(parse_html(f"<html><body><p>{ARTICLE}</p>{button}</body></html>")) == ARTICLE
    # A hidden run of words without a block-level child (keywords hidden for search engines) stays hidden, even
    # on a page that shows little.
    keywords = "<div style='display:none'>" + "cheap flights " * 60 + "<a href='/x'>more</a></div>"
    assert visible_text(parse_html(f"<html><body>{keywords}<p>Short page.</p></body></html>")) == "Short page."
    # A hidden dialog near the top of the body stays hidden on a page that shows its text.
    dialog = "<div style='display:none' class='modal'><p>" + extra * 3 + "</p></div>"
    assert visible_text(parse_html(f"<html><body>{dialog}<main><p>{ARTICLE}</p></main></body></html>")) == ARTICLE


def test_content_libxml2_leaves_in_the_head_is_read_where_a_browser_shows_it() -> None:
    # Behind an unknown element in <head> (<mbox>, an L3S-GN1 page), libxml2 keeps the rest of the page in the
    # head, which every method (reading the body) skips; a browser shows it in the body.
    in_head = ("<html><head><title>T</title><meta charset='utf-8'><mbox><table><tr><td><p>The story.</p></td></tr>"
               "</table></mbox></head></html>")
    root = parse_html(in_head)
    assert visible_text(root) == "The story." and page_title(root) == "T"
    assert [child.tag for child in root.find("head")] == ["title", "meta"]


def test_very_deep_nesting_keeps_text() -> None:
    depth = 5000
    root = parse_html("<p>top</p>" + "<div>" * depth + "deep" + "</div>" * depth + "<p>after</p>")
    assert visible_text(root) == "top\ndeep\nafter"


def test_nesting_too_deep_for_the_generic_containers_rule_keeps_text() -> None:
    """2,100 nested <article>s (or <blockquote>s, <ul>s): past libxml2's depth even without the generic
    containers, every tag but the page's frame and paragraphs goes, and the text stays (it all went)."""
    for tag in ("article", "blockquote", "ul", "h2"):
        root = parse_html(f"<title>T</title><p>top</p>{f'<{tag}>' * 2100}<p>deep</p><p>after</p>")
        assert visible_text(root) == "top\ndeep\nafter" and page_title(root) == "T", tag


def test_empty_and_xml_declared_pages() -> None:
    assert visible_text(parse_html("")) == ""
    root = parse_html('<?xml version="1.0" encoding="gbk"?><html><body><p>中文</p></body></html>')
    assert visible_text(root) == "中文"


def test_title_and_lang() -> None:
    root = parse_html('<html lang="zh-CN"><head><title> A \n title </title></head><body></body></html>')
    assert page_title(root) == "A title"
    assert declared_lang(root) == "zh"
    root = parse_html("<html><body><h1>Only heading</h1></body></html>")
    assert page_title(root) == "Only heading"
    assert declared_lang(root) is None


def test_the_declared_language_from_a_content_language_meta_in_any_case() -> None:
    # http-equiv names are case-insensitive: 83 dataset pages without <html lang> write "Content-Language"
    for name in ("content-language", "Content-Language", "CONTENT-LANGUAGE"):
        root = parse_html(f'<html><head><meta http-equiv="{name}" content="de-DE"></head><body></body></html>')
        assert declared_lang(root) == "de"
    root = parse_html('<html><head><meta http-equiv="Content-Type" content="text/html"></head></html>')
    assert declared_lang(root) is None


def test_a_title_holding_script_or_markup() -> None:
    # A title left open runs on into the page's source: cut where the markup starts (the parse closes it too).
    assert title_text("Antitrust cases</titavaScript\" src=\"/general.js\"></script> " + "<script></script> " * 40) \
        == "Antitrust cases"
    assert title_text('analyticsFile = "/js/app/bbccom/adanalytics.js"; this.') is None  # script
    assert title_text("Israel closes Gaza crossings - Ne(OAS_version >= 11) document.write(") is None
    root = parse_html('<html><head><title>x = "1"; var y = 2;</title></head><body><h1>Heading</h1></body></html>')
    assert page_title(root) == "Heading"  # a title that is script: the next source
    # A short title with escaped tags in it loses the tags; tags without attributes, parentheses and
    # semicolons are a title's own.
    assert title_text("He May Be a Son of a Bitch,<br/> But He's <i>Our</i> Son") == \
        "He May Be a Son of a Bitch, But He's Our Son"
    assert title_text("The <canvas> element: a guide") == "The <canvas> element: a guide"
    assert title_text("Adblue nachfüllen: wo kaufen (Tankstelle); Preis") == \
        "Adblue nachfüllen: wo kaufen (Tankstelle); Preis"
    assert title_text("“Don’t go”; she said") == "“Don’t go”; she said"


def test_unicode_line_separators_end_lines() -> None:
    """A JSONL corpus read with str.splitlines must find one record per line: no U+2028 & co in the text."""
    from extraction.dom.text import normalise_lines

    text = normalise_lines("one\u2028two\u2029three\x85four\x1cfive  six\n\nseven")
    assert text == "one\ntwo\nthree\nfour\nfive six\nseven"
    assert text.splitlines() == text.split("\n")


def test_tidy_text_composes_and_drops_invisible_characters_only() -> None:
    # A soft-hyphenated German word, a zero-width space, a BOM, and "é" decomposed (e + U+0301).
    page = "Mit\u00adtel\u00adal\u00adter\nzero\u200bwidth\n\ufeff\ncafe\u0301"
    assert tidy_text(page) == "Mittelalter\nzerowidth\ncafé"
    # Bengali য়, one code point or য + nukta in the page's bytes, is one form in the corpus (NFC's: য + nukta).
    assert tidy_text("\u09df") == tidy_text("\u09af\u09bc") == "\u09af\u09bc"
    # Joiners and direction marks carry meaning (Persian, Indic scripts, emoji; right-to-left text).
    for kept in ("می\u200cخواهم", "क्\u200dष", "\U0001f468\u200d\U0001f469", "\u200fשלום"):
        assert tidy_text(kept) == kept
    assert tidy_text("plain ascii\n") == "plain ascii\n" and tidy_text("") == ""


def test_tidy_text_drops_characters_no_text_holds() -> None:
    """Control characters ("&#x1b;[31m", a stray 0x07), noncharacters and lone surrogates (a JSON string's
    "\\udfff", which no UTF-8 feed can write) go; a run of controls between two words was their space (a German
    page of trafilatura-eval: "Intergovernmental\\x07 Panel\\x07on\\x07 Climate"); tabs and line feeds stay."""
    assert tidy_text("Alert \x1b[31m red\x07") == "Alert [31m red"
    assert tidy_text("Intergovernmental\x07 Panel\x07on\x07 Climate\x07\nFAO\x07(2012)") == \
        "Intergovernmental Panel on Climate\nFAO (2012)"
    assert tidy_text("\x00a\x08\ufffe\uffffb d\udfff e\ud83d") == "a b d e"
    assert tidy_text("tab\tsep\nline") == "tab\tsep\nline"
    assert printable("Jane\x00 Doe\udcff") == "Jane Doe" and printable("plain") == "plain"


def test_a_start_tag_of_too_many_attributes_keeps_its_name_only() -> None:
    """libxml2's parse time grows with the square of one tag's attributes (200,000 took minutes, in the crawl's
    own process): a tag of more than MANY_ATTRIBUTES keeps its name, and the page its text."""
    attributes = " ".join(f'a{i}="v"' for i in range(MANY_EQUALS + 1))
    root = parse_html(f"<html><body><p>top</p><div {attributes} class='x'><p>Some text.</p></div></body></html>")
    assert visible_text(root) == "top\nSome text."
    assert not root.find(".//div").attrib
    few = parse_html("<div " + " ".join(f'a{i}="v"' for i in range(50)) + "><p>x</p></div>")
    assert len(few.find(".//div").attrib) == 50
    # A long value holding many "=" (a JSON of image addresses with their queries) is one attribute.
    addresses = " ".join(f"https://x.org/i.jpg?w={i}&amp;h={i}" for i in range(MANY_EQUALS))
    props = parse_html(f'<div class="hero" data-props="{addresses}"><p>x</p></div>')
    assert props.find(".//div").get("class") == "hero"
