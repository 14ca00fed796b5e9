"""The title chooser's training code: a page's rows are the candidates the crawl's own metadata step builds."""

from __future__ import annotations

from models.training.train_title import page_rows


def test_rows_label_the_candidate_equal_to_the_gold_title() -> None:
    html = (b"<html><head><title>Council approves budget - City News</title></head><body>"
            b"<h1>Council approves budget</h1><p>Text.</p></body></html>")
    rows = page_rows(html, "https://city.test/a", "Council Approves Budget")
    assert rows is not None
    assert rows.y.sum() == 1 and len(rows.y) == len(rows.x) == 3  # the h1 (= a part), the whole title, the site part
    assert rows.rule_right
    assert page_rows(html, None, "") is None
    assert page_rows("<html><head><title>标题_江城日报</title></head></html>".encode("gb18030"), None, "标题",
                     "text/html; charset=gb18030").y.tolist() == [False, True, False]  # whole, then its parts
