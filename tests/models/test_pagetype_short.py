"""The page-type trainer's short-article copies: the body cut to its first paragraphs, the rest of the page kept."""

from __future__ import annotations

from extraction.dom.html import parse_html
from extraction.pagetype.features import DOM_FEATURES, dom_features
from models.training.pagetype_short import MIN_PARAGRAPHS, cut_body, short_copy

NAV = "<nav><a href='/a'>Home</a> <a href='/b'>World</a></nav>"
FOOTER = "<footer><p>Copyright Example News</p><p>About us</p></footer>"


def _page(paragraphs: int) -> str:
    body = "".join(f"<p>Paragraph {k} of the story, a sentence long enough to be running text.</p>"
                   for k in range(paragraphs))
    return f"<html><body>{NAV}<div class='story'><h1>Headline</h1>{body}<ul><li>Related</li></ul></div>{FOOTER}" \
           "</body></html>"


def test_the_body_is_cut_after_the_kept_paragraphs_and_the_page_around_it_stays() -> None:
    root = parse_html(_page(20))
    assert cut_body(root, 4)
    story = root.xpath("//div[@class='story']")[0]
    assert [child.tag for child in story] == ["h1", "p", "p", "p", "p"]
    assert story[-1].text_content().startswith("Paragraph 3 ")
    assert root.xpath("//nav//a") and root.xpath("//footer/p")  # not the body: kept


def test_a_page_short_already_or_without_a_body_gets_no_copy() -> None:
    root = parse_html(_page(5))
    assert not cut_body(root, 4)
    assert len(root.xpath("//div[@class='story']/p")) == 5
    assert not cut_body(parse_html("<html><body><div>No paragraphs here.</div></body></html>"), 4)
    assert short_copy(_page(MIN_PARAGRAPHS + 1).encode(), "text/html; charset=utf-8", None, 0) is None


def test_a_long_article_gets_a_seeded_copy_with_less_text() -> None:
    body = _page(60).encode()
    copy = short_copy(body, "text/html; charset=utf-8", "https://example.com/news/story", 7)
    assert copy is not None
    assert (copy == short_copy(body, "text/html; charset=utf-8", "https://example.com/news/story", 7)).all()
    full = dom_features(parse_html(body.decode()), "https://example.com/news/story")
    paragraphs = DOM_FEATURES.index("run_paragraphs_log")
    assert copy[paragraphs] < full[paragraphs]
