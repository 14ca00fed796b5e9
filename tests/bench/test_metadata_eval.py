"""The metadata bench's classing of missed publish dates (``bench.metadata_eval.date_miss_kind``)."""

import re

import pytest

from bench.metadata_eval import date_miss_kind, day_forms, miss_lines


@pytest.mark.parametrize("written", [
    "2024-03-05", "2024/3/5", "20240305", "March 5, 2024", "Mar. 5th, 2024", "5 March 2024", "05 Mar 2024",
    "3/5/2024", "05.03.2024", "5/3/24", "2024年3月5日",
])
def test_day_forms_find_the_day_however_written(written):
    assert any(re.search(form, f"<p>Posted {written} by Ann</p>", re.I) for form in day_forms("2024-03-05"))


@pytest.mark.parametrize("written", ["2024-03-15", "March 15, 2024", "13/5/2024", "2014-03-05", "120240305"])
def test_day_forms_miss_other_days(written):
    assert not any(re.search(form, f"<p>Posted {written}</p>", re.I) for form in day_forms("2024-03-05"))


def test_a_day_written_nowhere_is_absent_whatever_was_found():
    page = '<script type="application/ld+json">{"datePublished": "2024-01-02"}</script>'
    assert date_miss_kind("2024-03-05", "2024-01-02", page) == "absent"
    assert date_miss_kind("2024-03-05", None, page) == "absent"


def test_the_gold_taking_the_modified_date():
    jsonld = '{"datePublished": "2024-01-02T10:00:00Z", "dateModified": "2024-03-05T08:00:00Z"}'
    meta = ('<meta property="article:published_time" content="2024-01-02T10:00:00+00:00">'
            '<meta property="article:modified_time" content="2024-03-05T08:00:00+00:00">')
    assert date_miss_kind("2024-03-05", "2024-01-02", jsonld) == "modified"
    assert date_miss_kind("2024-03-05", "2024-01-02", meta) == "modified"
    # Without another declared publish date the page's modified date may be the one it shows: not "modified".
    alone = '<meta property="article:modified_time" content="2024-03-05T08:00:00+00:00"><p>Posted 2024-01-02</p>'
    assert date_miss_kind("2024-03-05", "2024-01-02", alone) == "other"
    same = '{"datePublished": "2024-03-05T01:00:00Z", "dateModified": "2024-03-05T08:00:00Z"}'
    assert date_miss_kind("2024-03-05", "2024-03-04", same) == "other"  # a time zone, not the update
    # The published date after a modified one in the same object is not read as the modified one.
    other = '{"dateModified": "2024-01-09T10:00:00+00:00", "datePublished": "2024-03-05T08:00:00+00:00"}'
    assert date_miss_kind("2024-03-05", "2024-01-09", other) == "other"


def test_none_and_other():
    page = "<p>Updated 2024-04-01</p><p>Posted March 5, 2024</p>"
    assert date_miss_kind("2024-03-05", None, page) == "none"
    assert date_miss_kind("2024-03-05", "2024-04-01", page) == "other"


def test_the_ceiling_leaves_out_absent_and_modified_misses():
    kinds = [("right", "a"), ("right", "b"), ("absent", "c"), ("modified", "d"), ("none", "e"), ("other", "f")]
    table = "\n".join(miss_lines({"set": kinds}))
    assert "| set | 6 | 2 (0.333) | 1 | 1 | 1 | 1 | 0.667 |" in table
    assert "- set, absent: c" in table
