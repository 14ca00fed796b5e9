"""The replay benchmark's offline reference runs with the crawl's ``--set`` settings."""

from __future__ import annotations

import pytest

from bench.replay_bench import offline_texts
from evaluation.replay import ReplayPage

BODY = ("<html><head><title>Budget</title></head><body><h1>Council approves the budget</h1>"
        + "<p>The council approved the budget after a long debate about schools and roads.</p>" * 6
        + "</body></html>").encode()


def test_offline_reference_reads_the_crawls_settings() -> None:
    page = ReplayPage("http://news.example.com/budget.html", BODY, "demo", "1", None, None, None)
    balanced = offline_texts([page], templates=False)[page.url]
    assert "long debate about schools" in balanced
    with pytest.raises(ValueError, match="BLOCKS_FAVOR"):
        offline_texts([page], False, ["BLOCKS_FAVOR=everything"])
