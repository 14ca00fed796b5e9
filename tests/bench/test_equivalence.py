"""bench/equivalence.py: the old-to-new mapping and the comparison (no subprocess, no git)."""

from __future__ import annotations

from bench.equivalence import by_key, compare, compare_stats, listed_change, snippet, to_new_schema


def old_extract(**fields: object) -> dict[str, object]:
    return {"path": "a.html.gz", "url": None, "method": "pipeline", "page_type": "article",
            "page_type_confidence": 0.9, "title": "T", "text": "x", "entries": [], "error": None, **fields}


def new_extract(**fields: object) -> dict[str, object]:
    return {"schema_version": 1, "html_file": "a.html.gz", "url": None, "extraction_method": "svm",
            "page_type": "article", "page_type_confidence": 0.9, "title": "T", "text": "x", "entries": None,
            "error": None, "lang": "en", **fields}


def test_old_names_are_mapped_to_the_new_schema() -> None:
    mapped = to_new_schema(old_extract(entries=[{"text": "A", "url": "u"}]))
    assert mapped["html_file"] == "a.html.gz" and mapped["extraction_method"] == "pipeline"
    assert mapped["entries"] == [{"title": "A", "url": "u"}]
    assert "path" not in mapped and "method" not in mapped


def test_listed_renames_are_not_differences() -> None:
    assert listed_change("extraction_method", "pipeline", "svm", {"entries": []})
    assert listed_change("extraction_method", "pipeline", "list", {"entries": [{"title": "A"}]})
    assert listed_change("extraction_method", "pipeline", "svm", {"entries": [{"title": "A"}]})  # lists: svm too
    assert listed_change("extraction_method", "pipeline", "cetd-tpc", {}) is None
    assert listed_change("entries", [], None, {})
    assert listed_change("entries", [{"title": "A"}], None, {}) is None


def test_identical_records_after_mapping() -> None:
    lines, differing = compare(by_key([old_extract()], "path"), by_key([new_extract()], "html_file"),
                               set(), set(), set(), True)
    assert differing == set()
    assert "identical (noise fields aside) **1**" in lines[0]
    assert any("`lang`" in line and "added" in line for line in lines)


def test_differences_are_counted_with_examples() -> None:
    old = by_key([old_extract(text="same start, old end", page_type_confidence=0.9)], "path")
    new = by_key([new_extract(text="same start, new end", page_type_confidence=0.9004)], "html_file")
    lines, differing = compare(old, new, set(), set(), set(), True)
    assert differing == {"text", "page_type_confidence"}
    assert "| `page_type_confidence` | 1 | 1 |  |" in lines  # one float < 1e-3 apart
    assert any("old end" in line and "new end" in line for line in lines)


def test_crawl_paths_compare_as_presence_and_noise_is_flagged() -> None:
    old = {"u": {"url": "u", "fetched_at": "1", "html_file": "/a/x.gz", "page_height": 10}}
    new = {"u": {"url": "u", "fetched_at": "2", "html_file": "/b/x.gz", "page_height": 11}}
    lines, differing = compare(old, new, {"fetched_at"}, {"html_file"}, {"page_height"}, False)
    assert differing == {"page_height"}
    assert "identical (noise fields aside) **1**" in lines[0]
    assert "| `page_height` | 1 | 0 | yes |" in lines


def test_stats_report_keys_only_in_one_run() -> None:
    lines = compare_stats({"a": 1, "start_time": "x", "c": 2}, {"b": 1, "start_time": "y", "c": 3})
    assert "- keys only old: `a` (1)" in lines and "- keys only new: `b` (1)" in lines
    assert any("`start_time`" in line and "volatile" in line for line in lines)
    assert "- other values differing: `c` 2 -> 3" in lines


def test_snippet_starts_near_the_first_difference() -> None:
    assert snippet("a" * 500 + "OLD", "a" * 500 + "NEW").startswith('"…')
    assert "OLD" in snippet("a" * 500 + "OLD", "a" * 500 + "NEW")
