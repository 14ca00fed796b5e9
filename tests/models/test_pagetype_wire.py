"""The page-type trainer's wire-style copies: the body's paragraphs split into one or two sentences each."""

from __future__ import annotations

import random

from extraction.dom.html import parse_html
from extraction.pagetype.features import DOM_FEATURES, dom_features
from models.training.pagetype_wire import sentences, split_paragraphs, wire_copy

NAV = "<nav><a href='/a'>Home</a> <a href='/b'>World</a></nav>"
SENTENCES = ("The council met on Tuesday. It approved the budget after a long debate! Schools get more money. "
             "\"Roads come next,\" the mayor said. Work starts in 2025.")


def _page(paragraphs: int, text: str = SENTENCES) -> str:
    body = "".join(f"<p class='x'>{text}</p>" for _ in range(paragraphs))
    return f"<html><body>{NAV}<div class='story'><h1>Headline</h1>{body}</div><footer>Footer</footer></body></html>"


def test_sentences_end_before_a_capital_or_a_digit_and_at_chinese_stops() -> None:
    assert sentences(SENTENCES) == ["The council met on Tuesday.", "It approved the budget after a long debate!",
                                    "Schools get more money.", "\"Roads come next,\" the mayor said.",
                                    "Work starts in 2025."]
    assert sentences("Ask e.g. the mayor. It is 3.5 km away.") == ["Ask e.g. the mayor.", "It is 3.5 km away."]
    assert sentences("市议会周二开会。预算获得批准！学校将获得更多资金") == [
        "市议会周二开会。", "预算获得批准！", "学校将获得更多资金"]


def test_paragraphs_are_split_in_place_and_keep_their_text_and_attributes() -> None:
    root = parse_html(_page(3))
    assert split_paragraphs(root, random.Random(0)) == 3
    story = root.xpath("//div[@class='story']")[0]
    paragraphs = story.xpath("p")
    assert len(paragraphs) >= 9  # five sentences: at least three paragraphs of one or two each
    assert all(p.get("class") == "x" and 1 <= len(sentences(p.text)) <= 2 for p in paragraphs)
    assert " ".join(p.text for p in paragraphs) == " ".join([SENTENCES] * 3)
    assert story[0].tag == "h1" and root.xpath("//nav//a") and root.xpath("//footer")


def test_short_paragraphs_and_paragraphs_with_a_link_stay_whole() -> None:
    linked = "<a href='/x'>The council</a> met. It voted. Schools won."
    root = parse_html(_page(3, "One sentence. Two sentences.").replace("</div>", f"<p>{linked}</p></div>"))
    assert split_paragraphs(root, random.Random(0)) == 0
    assert len(root.xpath("//div[@class='story']/p")) == 4


def test_a_copy_is_seeded_and_has_shorter_paragraphs() -> None:
    body = _page(12).encode()
    url = "https://example.com/news/story"
    copy = wire_copy(body, "text/html; charset=utf-8", url, 5)
    assert copy is not None
    assert (copy == wire_copy(body, "text/html; charset=utf-8", url, 5)).all()
    full = dom_features(parse_html(body.decode()), url)
    mean = DOM_FEATURES.index("run_paragraph_chars_log")
    assert copy[mean] < full[mean]
    assert wire_copy(_page(12, "One sentence only.").encode(), "text/html; charset=utf-8", url, 5) is None
