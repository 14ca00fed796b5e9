"""The language of a page (extraction.dom.lang): by script, and of the extracted text (py3langid)."""

from __future__ import annotations

from extraction.dom.lang import chinese_script, identify_language, script_language


def test_script_language() -> None:
    assert script_language("江城日报讯，市政府今日召开新闻发布会 2026 NBA") == "zh"
    assert script_language("東京は今日、晴れです。ニュースをお伝えします") == "ja"
    assert script_language("서울시는 오늘 새로운 교통 정책을 발표했다") == "ko"
    assert script_language("The council met on Monday.") is None
    assert script_language("") is None


def test_language_of_the_text() -> None:
    assert identify_language("The council approved the budget on Tuesday after a long debate.") == "en"
    assert identify_language("市议会周二经过长时间辩论后批准了预算，学校和道路将获得更多资金。") == "zh-Hans"
    assert identify_language("市議會週二經過長時間辯論後批准了預算，學校和道路將獲得更多資金。") == "zh-Hant"
    assert identify_language("OK") is None
    assert chinese_script("这个") == "zh-Hans" and chinese_script("這個") == "zh-Hant"


def test_a_short_text_keeps_the_declared_language_unless_its_script_disagrees() -> None:
    short = "nook\nby Paulo Coelho on July 21, 2012"
    assert identify_language(short) not in (None, "en")  # too little text for py3langid: it guesses
    assert identify_language(short, "en") == "en"
    assert identify_language("市议会周二批准了预算，学校和道路将获得更多资金。", "en") == "zh-Hans"  # the script wins
    assert identify_language("市议会周二批准了预算，学校和道路将获得更多资金。", "zh") == "zh-Hans"
    long_german = "Die massenmediale Berichterstattung über die Überwachung erscheint mir immer wieder eigenartig. " * 2
    assert identify_language(long_german, "en") == "de"  # enough text: the text's language, not the template's


def test_no_linguistic_content_gives_way_to_the_declared_language() -> None:
    """py3langid reads product lines among runs of item ids as no language (zxx): the page's declaration decides."""
    ids = " ".join(f"9303097ac-d3e5-41e1-baf5-30364075{n:04d}X2bf8403c-6590-4d73-8b16-95f6c3ec{n:04d}"
                   for n in range(12))
    text = f"NEXT Size 10 Ladies Olive Green Floral Tie Neck Blouse/Top VGC\n{ids}"
    assert identify_language(text) == "zxx"
    assert identify_language(text, "en") == "en"
