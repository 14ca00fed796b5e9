"""`scrapy extract`: files, globs and folders in, one JSON line per page out."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

from crawler.commands.extract import extract_file, find_pages
from pipelines.archive import html_archive_bytes
from tests.crawl_helpers import REPO

PAGE = "<html><head><title>T</title></head><body><nav><a href='/'>Home</a></nav><p>江城日报 text</p></body></html>"


def _pages(tmp_path: Path) -> Path:
    folder = tmp_path / "pages"
    (folder / "sub").mkdir(parents=True)
    (folder / "a.html").write_text(PAGE, encoding="utf-8")
    gbk = PAGE.replace("<head>", "<head><meta charset=gbk>").encode("gbk")
    (folder / "sub" / "b.htm.gz").write_bytes(gzip.compress(gbk))
    (folder / "sub" / "archived.html.gz").write_bytes(html_archive_bytes(PAGE))  # the crawl's archive format
    (folder / "broken.html.gz").write_bytes(b"not gzip at all")
    (folder / "notes.txt").write_text("ignored", encoding="utf-8")
    return folder


def test_find_pages_in_folders_globs_and_files(tmp_path: Path) -> None:
    folder = _pages(tmp_path)
    found = list(find_pages([str(folder)]))
    assert [Path(p).name for p in found] == ["a.html", "broken.html.gz", "archived.html.gz", "b.htm.gz"]
    assert list(find_pages([str(folder / "*.html")])) == [str(folder / "a.html")]
    assert list(find_pages([str(folder / "a.html")])) == [str(folder / "a.html")]


def test_extract_file_reads_every_format_and_reports_failures(tmp_path: Path) -> None:
    folder = _pages(tmp_path)
    for name in ("a.html", "sub/b.htm.gz", "sub/archived.html.gz"):
        record = extract_file(str(folder / name), "fulltext", "http://a.test/x")
        assert record["error"] is None and record["title"] == "T"
        assert "江城日报 text" in record["text"] and record["url"] == "http://a.test/x"
    broken = extract_file(str(folder / "broken.html.gz"), "fulltext", None)
    assert broken["error"].startswith("BadGzipFile") and broken["text"] == ""


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "scrapy", "extract", *args, "--nolog"], cwd=REPO,
                          capture_output=True, text=True, timeout=120, check=False)


def test_command_writes_one_line_per_page(tmp_path: Path) -> None:
    folder = _pages(tmp_path)
    out = tmp_path / "out.jsonl"
    process = _run(str(folder), "-o", str(out))
    assert process.returncode == 0, process.stderr
    records = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert len(records) == 4
    assert {"path", "url", "method", "page_type", "title", "text", "error"} <= set(records[0])
    assert sum(1 for r in records if r["error"]) == 1
    assert "江城日报" in out.read_text(encoding="utf-8")  # not \u-escaped


def test_command_exit_status(tmp_path: Path) -> None:
    folder = _pages(tmp_path)
    assert _run(str(folder / "broken.html.gz")).returncode == 1  # every page failed
    assert _run(str(tmp_path / "empty*.html")).returncode == 2  # nothing found
    unknown = _run(str(folder), "--method", "no-such-method")
    assert unknown.returncode == 2 and "known: " in unknown.stderr
