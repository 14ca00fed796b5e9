"""`scrapy extract`: files, globs and folders in, one JSON line per page out."""

from __future__ import annotations

import gzip
import json
import shutil
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from crawler.commands.extract import extract_file, find_pages
from demo.content import build_sites
from demo.server import DemoServer
from extraction.process import Context
from extraction.record import schema
from pipelines.archive import html_archive_bytes
from tests.crawl_helpers import REPO, SLOW_PAGE_TIMEOUT, slow_page

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
        record = extract_file(str(folder / name), Context(method="fulltext"), "http://a.test/x")
        assert record.error is None and record.title == "T" and record.extraction_method == "fulltext"
        assert "江城日报 text" in record.text and record.url == "http://a.test/x"
    broken = extract_file(str(folder / "broken.html.gz"), Context(method="fulltext"))
    assert broken.error is not None and broken.error.startswith("unreadable: BadGzipFile") and broken.text == ""


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "scrapy", "extract", *args, "--nolog"], cwd=REPO,
                          capture_output=True, text=True, timeout=120, check=False)


def test_command_writes_one_line_per_page(tmp_path: Path) -> None:
    folder = _pages(tmp_path)
    out = tmp_path / "out.jsonl"
    process = _run(str(folder), "-o", str(out))
    assert process.returncode == 0, process.stderr
    records = [json.loads(line) for line in out.read_text(encoding="utf-8").split("\n") if line]
    assert len(records) == 4
    for record in records:  # the crawl's schema
        jsonschema.validate(record, schema())
    assert [Path(r["html_file"]).name for r in records] == ["a.html", "broken.html.gz", "archived.html.gz", "b.htm.gz"]
    assert sum(1 for r in records if r["error"]) == 1
    assert "江城日报" in out.read_text(encoding="utf-8")  # not \u-escaped


def test_pages_go_through_the_workers_in_order_and_a_slow_page_is_bounded(tmp_path: Path) -> None:
    """Several pages are extracted in the extraction workers (EXTRACT_WORKERS, one per CPU; pages of one site spread
    over them): the records, in the input's order, equal those of this process (EXTRACT_WORKERS=0); a page over
    EXTRACT_TIMEOUT gets ``error: "extract_timeout"`` and the run goes on."""
    folder = _pages(tmp_path)
    pooled, alone, slow = tmp_path / "pooled.jsonl", tmp_path / "alone.jsonl", tmp_path / "slow.jsonl"
    assert _run(str(folder), "-o", str(pooled), "--site", "a", "-s", "EXTRACT_WORKERS=2").returncode == 0
    assert _run(str(folder), "-o", str(alone), "--site", "a", "-s", "EXTRACT_WORKERS=0").returncode == 0
    records = [json.loads(line) for line in pooled.read_text(encoding="utf-8").split("\n") if line]
    assert records == [json.loads(line) for line in alone.read_text(encoding="utf-8").split("\n") if line]
    assert [Path(r["html_file"]).name for r in records] == ["a.html", "broken.html.gz", "archived.html.gz", "b.htm.gz"]
    # A page over the time: its worker is replaced, its record says so, the run goes on (exit status 1: every page
    # failed, the slow one and the unreadable one).
    (tmp_path / "slow").mkdir()
    (tmp_path / "slow" / "big.html").write_bytes(slow_page())
    shutil.copy(folder / "broken.html.gz", tmp_path / "slow")
    timed_out = _run(str(tmp_path / "slow"), "-o", str(slow), "-s", f"EXTRACT_TIMEOUT={SLOW_PAGE_TIMEOUT}",
                     "-s", "EXTRACT_WORKERS=2")
    assert timed_out.returncode == 1, timed_out.stderr[-2000:]
    late = [json.loads(line) for line in slow.read_text(encoding="utf-8").split("\n") if line]
    assert [Path(r["html_file"]).name for r in late] == ["big.html", "broken.html.gz"]
    assert late[0]["error"] == "extract_timeout" and late[0]["text"] == ""
    assert late[1]["error"].startswith("unreadable")


def test_command_exit_status(tmp_path: Path) -> None:
    folder = _pages(tmp_path)
    assert _run(str(folder / "broken.html.gz")).returncode == 1  # every page failed
    assert _run(str(tmp_path / "empty*.html")).returncode == 2  # nothing found
    unknown = _run(str(folder), "--method", "no-such-method")
    assert unknown.returncode == 2 and "known: " in unknown.stderr


def test_a_url_with_bytes_no_utf8_holds_is_percent_encoded_and_a_broken_one_refused(tmp_path: Path) -> None:
    """The shell hands Python a URL's non-UTF-8 bytes as lone surrogates, which no JSON line can hold (the run
    stopped at the page's record): they are percent-encoded as w3lib makes the crawl's URLs."""
    folder = _pages(tmp_path)
    out = tmp_path / "out.jsonl"
    done = subprocess.run([sys.executable, "-m", "scrapy", "extract", str(folder / "a.html"), "-o", str(out),
                           "--url", b"http://example.com/caf\xe9/a.html", "--nolog"], cwd=REPO,
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(out.read_text(encoding="utf-8"))["url"] == "http://example.com/caf%E9/a.html"
    broken = _run(str(folder / "a.html"), "--url", "http://[::1/a.html")
    assert broken.returncode == 2 and "is not a URL" in broken.stderr


def test_urls_are_fetched_as_the_crawl_fetches_them(tmp_path: Path) -> None:
    """-u URL: the crawl's downloader and settings (its address policy, robots.txt obeyed, HTTP errors as the crawl's
    reasons), then the same flow as a saved page."""
    with DemoServer() as server:
        article = next(path for site in server.sites for path, page in site.pages.items()
                       if page.page_type == "article" and path.startswith("/en/"))
        urls = [server.url + article, server.url + "/en/no-such-page.html", server.url + "/en/private/secret.html"]
        refused = _run("-u", urls[0], "-s", "EXTRACT_WORKERS=0")  # a loopback address no site list names
        assert refused.returncode == 1 and json.loads(refused.stdout)["error"] == "fetch_refused"
        assert not server.hits
        done = _run(*[arg for url in urls for arg in ("-u", url)], "-s", "EXTRACT_WORKERS=0",
                    "-s", "RETRY_ENABLED=False", "-s", "FETCH_ALLOW_HOSTS=127.0.0.1")
    assert done.returncode == 0, done.stderr[-3000:]
    records = [json.loads(line) for line in done.stdout.splitlines()]
    assert [r["url"] for r in records] == urls
    assert records[0]["status"] == 200 and records[0]["page_type"] == "article" and len(records[0]["text"]) > 200
    assert records[0]["fetched_at"] and records[0]["site"] == server.url and records[0]["error"] is None
    assert [r["error"] for r in records[1:]] == ["http_404", "robots_forbidden"]
    assert server.hits["/en/private/secret.html"] == 0  # robots.txt forbids it: never requested
    for record in records:
        jsonschema.validate(record, schema())


@pytest.mark.skipif(shutil.which("chromium") is None, reason="Chromium absent (apt-get install chromium)")
@pytest.mark.browser
def test_every_page_typed_and_render_adds_the_screenshot(tmp_path: Path) -> None:
    """The DOM/URL model types each page; with --render the screenshot joins (fusion), PAGETYPE_FUSION or not.
    Demo pages (the models trained on them: this checks the plumbing, not accuracy)."""
    site = build_sites()[0]
    chosen = [next(p for p in site.pages.values() if p.page_type == kind) for kind in ("list", "article")]
    for number, page in enumerate(chosen):
        (tmp_path / f"{number}-{page.page_type}.html").write_bytes(page.body_bytes)
    for render in (False, True):
        out = tmp_path / f"out-{render}.jsonl"
        process = _run(str(tmp_path), "-o", str(out), *(["--render"] if render else []))
        assert process.returncode == 0, process.stderr
        records = sorted((json.loads(line) for line in out.read_text(encoding="utf-8").split("\n") if line),
                         key=lambda r: r["html_file"])
        assert [r["page_type"] for r in records] == ["list", "article"]
        for record in records:
            assert record["page_type_source"] == ("fusion" if render else "dom")
            assert 0.34 < record["page_type_confidence"] <= 1.0
            assert "render_failed" not in record["flags"]
        assert len(records[0]["entries"]) >= 3 and not records[1]["entries"]
    lines = (tmp_path / "out-False.jsonl").read_text(encoding="utf-8").split("\n")
    typed = [json.loads(line) for line in lines if line]
    fulltext = _run(str(tmp_path / "0-list.html"), "--method", "fulltext")
    assert json.loads(fulltext.stdout)["page_type"] == next(r["page_type"] for r in typed if "0-list" in r["html_file"])


@pytest.mark.skipif(not (REPO / "models" / "web2text" / "meta.json").exists(),
                    reason="no trained Web2Text model in models/web2text (run `make train-web2text`)")
def test_web2text_methods_extract_demo_articles(tmp_path: Path) -> None:
    """`--method web2text` and `--method svm-web2text` on an English and a Chinese (GBK) demo article:
    the article's paragraphs come out, the site's copyright line does not."""
    chosen = [next(p for p in site.pages.values() if p.page_type == "article" and p.layout == "classic")
              for site in build_sites()]
    for number, page in enumerate(chosen):
        (tmp_path / f"{number}.html").write_bytes(page.body_bytes)
    for method in ("web2text", "svm-web2text"):
        out = tmp_path / f"{method}.jsonl"
        process = _run(str(tmp_path), "--method", method, "-o", str(out))
        assert process.returncode == 0, process.stderr
        records = sorted((json.loads(line) for line in out.read_text(encoding="utf-8").split("\n") if line),
                         key=lambda r: r["html_file"])
        for page, record in zip(chosen, records, strict=True):
            assert record["extraction_method"] == method and record["error"] is None
            kept = sum(paragraph in record["text"] for paragraph in page.body)
            assert kept >= 0.8 * len(page.body), (method, page.path, record["text"])
            assert "©" not in record["text"]
