"""Mojibake a page carries in its own bytes, undone in the extracted text."""

from __future__ import annotations

from extraction.dom.repair import MOJIBAKE_RE, repair_text
from extraction.page import Page
from extraction.process import Context, process


def test_double_encoded_utf8_and_c1_punctuation_are_undone() -> None:
    assert repair_text("Glazer's controversial Â£790million takeover") == "Glazer's controversial £790million takeover"
    assert repair_text("the same wayâ€¦ the people") == "the same way… the people"
    assert repair_text("sediments are\x91heavily contaminated\x92 close") == "sediments are‘heavily contaminated’ close"


def test_clean_text_is_left_alone() -> None:
    for text in ("Zoë’s café — “naïve” façade", "„Das muß“, sagte er. Stra\u00adße", "江城日报记者报道", "", "Â"):
        assert repair_text(text) == text
    assert not MOJIBAKE_RE.search("„Das muß“, Fußball")


def test_the_flow_repairs_the_text_and_says_so() -> None:
    html = ("<html><head><title>Takeover â€“ the deal</title></head><body><article>"
            + "<p>The controversial Â£790million takeover was completed in 2005 after months of talks.</p>" * 8
            + "</article></body></html>")
    counts: dict[str, int] = {}
    context = Context.from_settings({"PAGETYPE_ENABLED": False}, count=lambda k, n: counts.update({k: n}))
    record = process(Page(html.encode()), context)
    assert "£790million" in record.text and "Â" not in record.text and record.title == "Takeover – the deal"
    assert "mojibake_repaired" in record.flags and counts["extract/mojibake_repaired"] == 1
    clean = process(Page(html.replace("Â£", "£").replace("â€“", "–").encode()), context)
    assert "mojibake_repaired" not in clean.flags
