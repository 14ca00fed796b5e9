"""``scrapy state``: list, show and forget what the crawl state holds."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from templates_db.state import PageOutcome, QueuedPage, open_state
from tests.crawl_helpers import REPO


def _state(args: list[str], store: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "scrapy", "state", *args, "--store", str(store)], cwd=REPO,
                          capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=120)


def test_list_show_forget(tmp_path: Path) -> None:
    assert "No crawl state" in _state(["list"], tmp_path).stdout
    state = open_state(tmp_path)
    rounds = state.begin_run(["news"])
    state.enqueue([QueuedPage("http://n.test/b", "news", 1)])
    state.complete(PageOutcome(url="http://n.test/a", site="news", status="done", depth=1, round=1,
                               fetched_at=time.time(), page_type="article", exported=True,
                               record={"title": "A"}, aliases=(("http://n.test/amp/a", "amp"),)))
    state.end_run(rounds, finished=False)
    state.close()
    listed = _state(["list"], tmp_path)
    assert listed.returncode == 0
    assert listed.stdout.split("\n")[1].split() == ["news", "1", "(unfinished)", "1", "1", "0", "1", "0"]
    shown = _state(["show", "http://n.test/amp/a"], tmp_path)
    page = json.loads(shown.stdout)
    assert page["url"] == "http://n.test/a" and page["record"] == {"title": "A"}
    assert page["aliases"] == [["http://n.test/amp/a", "amp"]] and page["fetched_at"].endswith("+00:00")
    assert _state(["show", "http://n.test/zzz"], tmp_path).returncode == 1
    assert _state(["forget", "other"], tmp_path).returncode == 1
    forgot = _state(["forget", "news"], tmp_path)
    assert forgot.returncode == 0 and "Forgot 2 page(s)" in forgot.stdout
    assert "No sites" in _state(["list"], tmp_path).stdout


def test_a_zero_length_file_is_no_state_and_reading_leaves_it_so(tmp_path: Path) -> None:
    empty = tmp_path / "crawl_state.sqlite3"
    empty.touch()
    assert "No crawl state" in _state(["list"], tmp_path).stdout
    assert _state(["show", "http://n.test/a"], tmp_path).returncode == 1
    assert empty.stat().st_size == 0


def test_unusable_state_exits_2(tmp_path: Path) -> None:
    (tmp_path / "crawl_state.sqlite3").write_bytes(b"not a database at all" * 100)
    result = _state(["list"], tmp_path)
    assert result.returncode == 2 and "corrupt" in result.stderr
