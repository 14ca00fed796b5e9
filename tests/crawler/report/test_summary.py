"""The crawl report's counts and sample, made one record at a time."""

from __future__ import annotations

from pathlib import Path

from crawler.report import CrawlSummary, load_screenshot
from crawler.report.html import render_report
from crawler.report.summary import SAMPLE_PER_TYPE, LogHistogram, Sampled


def _record(n: int, site: str = "a", page_type: str = "article", **fields: object) -> dict[str, object]:
    return {"url": f"http://{site}.test/{n}", "site": site, "page_type": page_type, "text": f"text {n}\nline 2",
            "lang": "en", "change": "new", "fetch_ms": 10 + n, "fetched_at": f"2026-11-25T10:00:{n % 60:02d}+00:00",
            "error": None, "template_cleaning": {"removed_nodes": 3} if n % 2 else None, **fields}


def test_counts_per_site_and_in_all() -> None:
    summary = CrawlSummary()
    for n in range(10):
        summary.add(_record(n))
    summary.add(_record(10, page_type="list"))
    summary.add(_record(11, site="b", lang="zh-Hans", duplicate_of="http://a.test/1"))
    summary.add(_record(12, site="b", text="  "))
    summary.add(_record(13, site="b", error="http_404", page_type=None))
    a, b = summary.sites["a"], summary.sites["b"]
    assert summary.records == 14 and a.records == 11 and b.records == 3
    assert a.types == {"article": 10, "list": 1} and b.errors == {"http_404": 1} and b.extracted == 2
    assert summary.total("changes") == {"new": 13, "duplicate": 1}
    assert b.empty == 1 and b.languages == {"zh-Hans": 1} and a.cleaned == 5
    assert summary.fetch_ms.total == 14 and summary.text_chars.total == 13
    assert 16 <= (summary.fetch_ms.median() or 0) <= 18  # the middle of 10..23 ms, to within a bin (12%)
    assert sum(summary.fetched_at.values()) == 14


def test_the_sample_is_bounded_prefers_screenshots_and_is_the_same_each_time() -> None:
    def sample() -> list[str]:
        summary = CrawlSummary()
        for n in range(200):
            summary.add(_record(n, rendered=n % 7 == 0, warc_file="x.warc.gz", warc_offset=n))
        assert all(len(items) <= SAMPLE_PER_TYPE for items in summary.sample.values())
        assert all(item.has_screenshot for item in summary.sample["article"])
        return [item.url for item in summary.sample["article"]]

    assert sample() == sample()


def test_a_report_without_stats_or_screenshots_still_has_every_section() -> None:
    summary = CrawlSummary()
    summary.add(_record(1))
    page = render_report(summary)
    for section in ("overview", "sites", "page-types", "errors", "changes", "templates", "text", "languages",
                    "timings", "sample", "all-stats"):
        assert f'id="{section}"' in page
    assert "no stats file given" in page and "no screenshot" in page and "<script" not in page


def test_a_report_of_odd_names_and_values() -> None:
    """Names with TeX and HTML characters are text; records without times or text are counted, not fatal."""
    summary = CrawlSummary()
    summary.add(_record(1, site="a$_\\$<b>", lang="$\\frac$"))
    summary.add({"url": "http://x.test/", "site": None, "error": None, "text": None, "fetched_at": "not a time"})
    page = render_report(summary, {"crawl/site/a$_\\$<b>": 1, "start_time": "2026-11-25 07:00:00"})
    assert '<td class="">a$_\\$&lt;b&gt;</td>' in page and "a$_\\$<b>" not in page  # escaped, drawn as text
    assert summary.records == 2 and summary.sites["(no site)"].empty == 1


def test_fields_of_another_type_are_left_out_of_the_sample_and_counts(tmp_path: Path) -> None:
    """A feed's fields of another type (another tool's, damage): an infinite time, a cleaning that is a list, an
    integer WARC file (opened as a file descriptor: the process's own stdout, then closed), a negative offset."""
    summary = CrawlSummary()
    for n, odd in enumerate(({"fetch_ms": float("inf")}, {"fetch_ms": 10**400}, {"template_cleaning": [1]},
                             {"rendered": True, "warc_file": 1, "warc_offset": 0},
                             {"rendered": True, "warc_file": str(tmp_path / "x.warc.gz"), "warc_offset": "abc"},
                             {"rendered": True, "screenshot_file": 5},
                             {"rendered": True, "screenshot_file": "a\x00b", "page_type_confidence": "high"})):
        summary.add(_record(n, **odd))
    sampled = [item for items in summary.sample.values() for item in items]
    assert all(item.warc_file is None or isinstance(item.warc_file, str) for item in sampled)
    assert all(item.warc_offset in (None, 0) and item.screenshot_file is None and item.confidence is None
               for item in sampled)
    assert summary.fetch_ms.total == 5 and summary.records == 7
    assert "Crawl report" in render_report(summary, None, None, load_screenshot)
    for offset in (-5, 10**30):
        assert load_screenshot(Sampled("u", "a", "article", None, "", "", str(tmp_path / "x.warc.gz"), offset, None,
                                       True)) is None


def test_histogram_bins() -> None:
    histogram = LogHistogram()
    for value in (0, 0.5, 1, 10, 100, 10**12):
        histogram.add(value)
    assert histogram.total == 6 and histogram.counts[0] == 3 and histogram.counts[-1] == 1
    assert histogram.median() is not None and 1 <= histogram.median() <= 13  # type: ignore[operator]
