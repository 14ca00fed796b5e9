"""The stage-time bench's timers (``bench.stage_times``): they see the page's path and leave it as it was."""

from __future__ import annotations

from collections import defaultdict

import onnxruntime

from bench import stage_times
from bench.stage_times import STAGES, SetTimes, Stage, markdown, timed
from demo import build_sites
from extraction import process
from extraction.methods import extract


def _demo(kind: str) -> tuple[str, str]:
    page = next(p for s in build_sites() for p in s.pages.values()
                if p.page_type == kind and p.site == "en-gazette" and p.layout != "js-rendered")
    return page.body_bytes.decode(), "http://demo.test" + page.path


def test_every_stage_of_the_page_path_is_timed_and_the_functions_come_back() -> None:
    before = {stage.target: stage_times._owner(stage.target) for stage in STAGES}
    functions = {target: getattr(owner, name) for target, (owner, name) in before.items()}
    extract(*_demo("article")[:1], "pipeline")  # models loaded outside the timers
    seconds: dict[str, float] = defaultdict(float)
    with timed(STAGES, seconds):
        for kind in ("article", "list"):
            html, url = _demo(kind)
            assert extract(html, "pipeline", url).text
        assert process.page_blocks is not functions["extraction.process:page_blocks"]
    # Every stage ran on the two pages (a renamed function would leave its stage at nothing, or fail above).
    assert set(seconds) == {stage.label for stage in STAGES}
    assert all(value > 0 for value in seconds.values())
    assert seconds["text"] > seconds["text: block features"]  # inclusive: the stage holds its parts
    for target, (owner, name) in before.items():
        assert getattr(owner, name) is functions[target]
    assert "run" not in vars(onnxruntime.InferenceSession)  # the inherited method is inherited again


def test_a_failing_call_is_timed_and_the_timers_are_removed_after_an_error() -> None:
    seconds: dict[str, float] = defaultdict(float)
    stage = Stage("metadata", "extraction.process:page_metadata")
    original = process.page_metadata
    try:
        with timed([stage], seconds):
            process.page_metadata(None, None, [])  # type: ignore[arg-type]
    except Exception:
        pass
    assert seconds["metadata"] > 0
    assert process.page_metadata is original


def test_the_report_does_the_budget_arithmetic() -> None:
    result = SetTimes("set", 10, total=18.0, trafilatura=18.0, stages={
        "parse (lxml)": 1.5, "ONNX runs (onnxruntime)": 1.5, "language (py3langid)": 1.0, "text": 7.0})
    assert result.floor == 4.0
    report = markdown([result])
    assert "| budget for 2x (trafilatura / 2) | 9.00 |" in report
    assert "| left of the budget for our Python walks | 5.00 |" in report
    assert "| our Python walks now (total - floor) | 14.00 |" in report
    assert "| parse (lxml) (floor) | 1.50 |" in report and "| list entries | 0.00 |" in report
