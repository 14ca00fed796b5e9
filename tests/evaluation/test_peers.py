"""news-please and Fundus as peers: their worker processes in their own environments, and the client that bounds
each page."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from evaluation.baselines import FUNDUS, NEWSPLEASE, BaselineUnavailable, PeerWorker, load_baseline
from evaluation.fundus_worker import site

# A stand-in worker speaking the protocol: a page's URL says how it misbehaves.
FAKE = """
import json, os, sys, time
print(json.dumps({"ready": True}), flush=True)
for line in sys.stdin:
    request = json.loads(line)
    if request["url"] == "slow":
        time.sleep(60)
    if request["url"] == "die":
        print("a last word", file=sys.stderr, flush=True)
        os._exit(3)
    print(json.dumps({"text": request["html"].upper(), "title": None, "authors": [], "date_publish": None,
                      "error": None}), flush=True)
"""


def test_a_slow_page_or_a_dying_worker_fails_that_page_and_the_next_gets_a_fresh_worker(tmp_path: Path) -> None:
    script = tmp_path / "fake_worker.py"
    script.write_text(FAKE, encoding="utf-8")
    worker = PeerWorker(NEWSPLEASE, timeout=1.0, command=[sys.executable, str(script)])
    try:
        assert worker.extract("<p>a</p>", "ok")["text"] == "<P>A</P>"
        with pytest.raises(RuntimeError, match=r"took over 1 s"):
            worker.extract("<p>b</p>", "slow")
        assert worker.extract("<p>c</p>", "ok")["text"] == "<P>C</P>"
        with pytest.raises(RuntimeError, match=r"died: a last word"):
            worker.extract("<p>d</p>", "die")
        assert worker.extract("<p>e</p>", "ok")["text"] == "<P>E</P>"
    finally:
        worker.close()


def test_a_missing_or_broken_environment_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NEWSPLEASE_PYTHON", str(tmp_path / "nowhere" / "python"))
    with pytest.raises(BaselineUnavailable, match=r"make newsplease"):
        load_baseline("news-please")
    monkeypatch.setenv("NEWSPLEASE_PYTHON", sys.executable)  # the project's environment: no news-please in it
    with pytest.raises(BaselineUnavailable, match=r"did not start.*ModuleNotFoundError"):
        load_baseline("news-please")
    monkeypatch.setenv("FUNDUS_PYTHON", sys.executable)
    with pytest.raises(BaselineUnavailable, match=r"fundus did not start.*make fundus"):
        load_baseline("fundus")


@pytest.mark.skipif(not NEWSPLEASE.python().exists(), reason="news-please's environment is absent (make newsplease)")
def test_news_please_reads_an_article() -> None:
    body = "<p>The council approved the budget on Monday after a long debate over schools and roads.</p>" * 8
    page = (f"<html><head><title>Council approves budget</title><meta name='author' content='Jane Doe'>"
            f"<meta property='article:published_time' content='2024-03-05T10:00:00Z'></head><body><nav>Home</nav>"
            f"<article><h1>Council approves budget</h1>{body}</article><footer>Copyright</footer></body></html>")
    worker = PeerWorker(NEWSPLEASE)
    try:
        answer = worker.extract(page, "https://example.com/2024/03/05/budget.html")
    finally:
        worker.close()
    assert answer["error"] is None and answer["title"] == "Council approves budget"
    assert answer["authors"] == ["Jane Doe"] and answer["date_publish"].startswith("2024-03-05")
    assert answer["language"] == "en"
    assert "approved the budget" in answer["text"] and "Copyright" not in answer["text"]
    assert load_baseline("news-please")(page, None).count("approved the budget") == 8


@pytest.mark.skipif(not FUNDUS.python().exists(), reason="Fundus's environment is absent (make fundus)")
def test_fundus_reads_a_page_of_its_publishers_and_refuses_another_site() -> None:
    body = "".join(f"<p>Paragraph {n} of the story, with words enough to be text in any parser.</p>" for n in range(6))
    page = (f"<html><head><title>Story - BBC News</title></head><body><main id='main-content'><article>"
            f"<h1 id='main-heading'>Story</h1><div data-component='text-block'>{body}</div></article></main>"
            f"</body></html>")
    worker = PeerWorker(FUNDUS)
    try:
        worker.start()
        assert "bbc.co.uk" in worker.info["domains"]
        answer = worker.extract(page, "https://www.bbc.co.uk/news/articles/x")
        other = worker.extract(page, "https://a.example/story")
    finally:
        worker.close()
    assert answer["error"] is None and answer["title"] == "Story"
    assert answer["text"].split("\n\n") == [f"Paragraph {n} of the story, with words enough to be text in any parser."
                                            for n in range(6)]
    assert other["error"] is not None and other["error"].startswith("LookupError: Fundus has no parser")


def test_a_page_is_matched_to_a_fundus_publisher_by_its_registered_domain() -> None:
    assert site("https://www.bbc.co.uk/news/world-123") == site("https://bbc.co.uk") == "bbc.co.uk"
    assert site("https://edition.cnn.com/2024/x") == "cnn.com"
    assert site("https://www.spiegel.de/politik/a.html") == "spiegel.de"
    assert site("https://thewest.com.au/") == "thewest.com.au" and site("not a url") == ""
