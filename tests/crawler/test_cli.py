"""The commands as a user runs them: ``newscorpus`` from any directory, one error style, help that reads right."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.crawl_helpers import REPO

NEWSCORPUS = str(Path(sys.executable).parent / "newscorpus")
ARTICLE = (b"<html><head><title>Harbour works begin</title></head><body><nav><a href='/'>Home</a></nav><article>"
           b"<h1>Harbour works begin on the north quay</h1>"
           + b"<p>The city council said on Monday that the works on the north quay would take two years. " * 6
           + b"</p></article></body></html>")


def run(command: list[str], cwd: Path, stdin: bytes | None = None,
        timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """Run a command as a user would, with no terminal."""
    return subprocess.run(command, cwd=cwd, input=stdin.decode() if stdin is not None else None,
                          capture_output=True, text=True, timeout=timeout,
                          stdin=None if stdin is not None else subprocess.DEVNULL)


needs_console_script = pytest.mark.skipif(not Path(NEWSCORPUS).exists(),
                                          reason="the newscorpus console script is installed by `make setup`")


@needs_console_script
def test_newscorpus_extract_runs_from_another_directory(tmp_path: Path) -> None:
    (tmp_path / "page.html").write_bytes(ARTICLE)
    done = run([NEWSCORPUS, "extract", "page.html"], tmp_path)
    assert done.returncode == 0, done.stderr
    record = json.loads(done.stdout.splitlines()[0])
    assert record["html_file"] == "page.html" and "north quay" in record["text"]
    assert not (tmp_path / "output").exists()  # extraction writes nothing but its output


@needs_console_script
def test_newscorpus_extract_reads_standard_input(tmp_path: Path) -> None:
    done = run([NEWSCORPUS, "extract", "-", "--url", "https://news.example.com/2026/harbour"], tmp_path, ARTICLE)
    assert done.returncode == 0, done.stderr
    (record,) = [json.loads(line) for line in done.stdout.splitlines()]
    assert record["url"] == "https://news.example.com/2026/harbour" and "north quay" in record["text"]
    assert record["page_type"] == "article"


@needs_console_script
def test_newscorpus_extract_reads_a_list_of_paths_and_urls(tmp_path: Path) -> None:
    (tmp_path / "a.html").write_bytes(ARTICLE)
    (tmp_path / "b.html").write_bytes(ARTICLE.replace(b"north quay", b"south pier"))
    (tmp_path / "pages.tsv").write_text("a.html\thttps://a.example.com/1\n# a comment\n\nb.html\n", encoding="utf-8")
    done = run([NEWSCORPUS, "extract", "--list", "pages.tsv", "-s", "EXTRACT_WORKERS=0"], tmp_path)
    assert done.returncode == 0, done.stderr
    records = [json.loads(line) for line in done.stdout.splitlines()]
    assert [(r["html_file"], r["url"]) for r in records] == [("a.html", "https://a.example.com/1"), ("b.html", None)]
    assert "south pier" in records[1]["text"]


# Mistakes a user makes, each refused before anything runs: exit status 2 and one line on standard error.
MISTAKES = [
    (["crawl", "news_sites", "-a", "site=my.yaml"], "unknown spider argument -a site"),
    (["crawl", "news_sites", "-s", "BLOCKS_FAVOR=precison"], "BLOCKS_FAVOR must be one of"),
    (["crawl", "news_sites", "-a", "since=yesterday"], "since must be an ISO 8601 date"),
    (["crawl", "news_sites", "-a", "recrawl=chnaged"], "recrawl must be one of new, changed"),
    (["crawl", "news_sites", "-s", "RENDER_JAVASCRIPT=maybe"], "RENDER_JAVASCRIPT must be auto, on or off"),
    (["crawl", "news_sites", "-s", "PAGETYPE_FUSION=yes"], "PAGETYPE_FUSION must be true or false"),
    (["crawl", "news_sites", "-s", "DEDUP_THRESHOLD=2"], "DEDUP_THRESHOLD must be in (0, 1]"),
    (["crawl", "news_sites", "-s", "CONCURRENT_REQUESTS=many"], "CONCURRENT_REQUESTS must be a number"),
    (["crawl", "news_sites", "-a", "sites=missing.yaml"], "cannot read site list"),
    (["extract", "page.html", "-s", "EXTRACT_WORKERS=abc"], "EXTRACT_WORKERS must be a whole number"),
    (["extract", "page.html", "--url", "notaurl"], "is not an absolute http(s) URL"),
    (["extract", "page.html", "page.html", "--url", "https://a.example.com/"], "--url names the URL of one"),
    (["extract", "page.html", "--methd", "svm"], "unknown option --methd"),
    (["corpus", "feeds/", "--min-chars", "x"], "invalid int value"),
    (["corpus", "feeds/", "--pagetypes", "article"], "unknown option --pagetypes"),
    (["state", "list", "-s", "CRAWL_STATE_TIMEOUT=0"], "CRAWL_STATE_TIMEOUT must be a positive number"),
]


@pytest.mark.parametrize(("arguments", "message"), MISTAKES, ids=[" ".join(a) for a, _ in MISTAKES])
def test_a_mistake_is_one_error_line_and_exit_status_2(tmp_path: Path, arguments: list[str], message: str) -> None:
    (tmp_path / "page.html").write_bytes(ARTICLE)
    (tmp_path / "feeds").mkdir()
    given = [str(tmp_path / a) if a in ("page.html", "feeds/") else a for a in arguments]
    done = run([sys.executable, "-m", "scrapy", *given], REPO)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2, done.stderr
    assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0], done.stderr
    assert not (tmp_path / "output").exists() and not done.stdout


def test_crawl_help_lists_the_spider_arguments() -> None:
    done = run([sys.executable, "-m", "scrapy", "crawl", "--help"], REPO)
    assert done.returncode == 0
    for argument in ("-a sites=FILE", "-a recrawl=new|changed", "-a since=DATE"):
        assert argument in done.stdout


@pytest.mark.parametrize(("command", "help_text"), [("corpus", "exact: the same text only"),
                                                    ("extract", "the page's URL (one saved page, or standard input):")])
def test_help_headings_are_the_sections_only(command: str, help_text: str) -> None:
    # An option's help whose first line ends in ":" stays as written (it had become a title-cased heading).
    done = run([sys.executable, "-m", "scrapy", command, "--help"], REPO)
    assert done.returncode == 0
    lines = done.stdout.splitlines()
    underlined = [lines[i - 1] for i, line in enumerate(lines) if i and set(line) <= {"=", "-"} and line]
    assert underlined == ["Usage", "Options", "Global Options"], underlined
    assert help_text in " ".join(line.strip() for line in lines)


@needs_console_script
def test_newscorpus_alone_lists_the_projects_commands(tmp_path: Path) -> None:
    done = run([NEWSCORPUS], tmp_path)
    assert done.returncode == 0
    listed = [line.split()[0] for line in done.stdout.splitlines() if line.startswith("  ")]
    assert listed == ["crawl", "corpus", "extract", "reextract", "report", "state", "templates", "evaluate"]
