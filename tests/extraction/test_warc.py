"""The WARC archive: captures written and read back, what warcio's own tools say of them, rotation, cut files."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from extraction.page import HttpExchange, Page
from extraction.record import Record
from extraction.warc import (
    SCREENSHOT_URN,
    WarcWriter,
    original_headers,
    read_capture,
    read_captures,
    stored_headers,
    warc_date,
)

WARCIO = str(Path(sys.executable).parent / "warcio")
BODY = "<html><head><title>江城日报</title></head><body><p>记者周一从市统计局了解到。</p></body></html>".encode("gbk")
PNG = b"\x89PNG\r\n\x1a\nfake image bytes"


def _page(url: str = "http://news.example/a/1.html", rendered: str | None = "<html><body>DOM</body></html>",
          screenshot: bytes | None = PNG) -> Page:
    page = Page(BODY, url, "text/html", screenshot=screenshot, site="news")
    page.rendered = rendered
    page.listed_date = "2026-11-20"
    page.http = HttpExchange(
        status=200, protocol="HTTP/1.1", ip_address="127.0.0.1",
        # As Scrapy leaves them: the Content-Encoding it decoded is gone, the wire's length and chunking stay.
        headers=(("Content-Type", "text/html"), ("Transfer-Encoding", "chunked"), ("Set-Cookie", "a=1"),
                 ("Set-Cookie", "b=2"), ("Content-Length", "12"), ("X-Note", "caf\u00e9 \u00bd")),
        request_headers=(("User-Agent", "newscorpus/test"), ("Accept-Encoding", "gzip")))
    return page


def _record(url: str = "http://news.example/a/1.html") -> Record:
    record = Record(url=url + "?utm=x", canonical_url=url, final_url=url, site="news",
                    fetched_at="2026-11-25T10:00:00+00:00", status=200, depth=2, fetch_ms=120, render_ms=900,
                    rendered=True, page_height=3000, screenshot_height=2560, flags=["load_timeout"])
    record.crawl["url"] = url
    record.crawl["listed"] = True
    record.crawl["redirect_urls"] = [url.replace("/a/", "/old/")]
    return record


def _warcio(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([WARCIO, *args], capture_output=True, text=True, timeout=60)


def test_a_capture_reads_back_whole_and_warcio_checks_and_indexes_it(tmp_path: Path) -> None:
    writer = WarcWriter(tmp_path, "test", info={"settings": {"ARCHIVE_DIR": "x"}, "robots": "obey"})
    location = writer.write(_page(), _record())
    writer.close()
    capture = next(read_captures(location.file))
    assert capture.location == location and capture.url == "http://news.example/a/1.html"
    assert capture.body == BODY and capture.content_type == "text/html"
    assert capture.rendered == "<html><body>DOM</body></html>" and capture.screenshot == PNG
    assert capture.http.status == 200 and capture.http.ip_address == "127.0.0.1" and capture.http.method == "GET"
    assert capture.http.headers == tuple(h for h in _page().http.headers)  # type: ignore[union-attr]
    assert ("User-Agent", "newscorpus/test") in capture.http.request_headers
    assert capture.date == "2026-11-25T10:00:00Z"
    record = capture.record()
    expected = _record()
    for name in ("url", "canonical_url", "final_url", "site", "fetched_at", "status", "depth", "fetch_ms",
                 "render_ms", "rendered", "page_height", "screenshot_height", "flags"):
        assert getattr(record, name) == getattr(expected, name), name
    assert record.crawl == {"url": expected.crawl["url"], "listed": True}
    assert (record.warc_file, record.warc_offset, record.warc_length) == (location.file, location.offset,
                                                                           location.length)
    page = capture.page()
    assert page.text == _page().text and page.site == "news" and page.listed_date == "2026-11-20"

    assert _warcio("check", "-v", location.file).returncode == 0
    index = [json.loads(line) for line in _warcio("index", "-f", "offset,length,warc-type,warc-target-uri",
                                                  location.file).stdout.splitlines()]
    assert [entry["warc-type"] for entry in index] == ["warcinfo", "response", "request", "conversion", "resource",
                                                       "metadata"]
    response = index[1]
    assert (int(response["offset"]), int(response["length"])) == (location.offset, location.length)
    assert index[4]["warc-target-uri"] == SCREENSHOT_URN + "http://news.example/a/1.html"
    # The payload as any WARC reader decodes it is the body the extraction read.
    payload = subprocess.run([WARCIO, "extract", "--payload", location.file, str(location.offset)],
                             capture_output=True, timeout=60).stdout
    assert payload == BODY
    headers = _warcio("extract", "--headers", location.file, str(location.offset)).stdout
    assert "X-Crawler-Transfer-Encoding: chunked" in headers and "X-Crawler-Content-Length: 12" in headers
    assert f"Content-Length: {len(BODY)}" in headers and "\nTransfer-Encoding" not in headers
    raw = gzip.decompress(Path(location.file).read_bytes()[location.offset:location.offset + location.length])
    assert b"X-Note: caf\xe9 \xbd\r\n" in raw  # the header's bytes as received (latin-1), not percent-encoded
    warcinfo = _warcio("extract", location.file, "0").stdout
    assert "WARC-Type: warcinfo" in warcinfo and 'settings: {"ARCHIVE_DIR": "x"}' in warcinfo


def test_header_rewriting_round_trips() -> None:
    """The wire's length and chunking are renamed; a Content-Encoding Scrapy could not decode still describes the
    body stored, so it stays."""
    received = (("Content-Encoding", "br"), ("content-length", "10"), ("Transfer-Encoding", "chunked"), ("X", "1"))
    stored = stored_headers(received, 42)
    assert stored == [("Content-Encoding", "br"), ("X-Crawler-content-length", "10"),
                      ("X-Crawler-Transfer-Encoding", "chunked"), ("X", "1"), ("Content-Length", "42")]
    assert original_headers(stored) == received


def test_the_content_type_is_the_one_the_crawl_read(tmp_path: Path) -> None:
    """Repeated Content-Type headers: Scrapy reads the last one; so do the metadata and a capture without it."""
    page = Page(BODY, "http://a.test/", "text/html; charset=gbk")
    page.http = HttpExchange(200, (("Content-Type", "text/html; charset=utf-8"), ("Content-Type", "text/html; "
                                                                                  "charset=GBK")))
    location = WarcWriter(tmp_path).write(page, Record(url="http://a.test/"))
    capture = next(read_captures(location.file))
    assert capture.content_type == "text/html; charset=gbk" and capture.page().text == page.text
    del capture.metadata["content_type"]
    assert capture.content_type == "text/html; charset=gbk"


def test_a_disk_that_refuses_a_write_leaves_whole_captures_and_the_next_write_works(tmp_path: Path) -> None:
    """A child process limited to a file size (RLIMIT_FSIZE, as a full disk): the capture that does not fit fails
    with OSError and is cut back off the file; with room again the next one is written after the whole ones."""
    script = f"""
import resource, signal, sys
sys.path.insert(0, {str(Path(__file__).resolve().parents[2])!r})
from tests.extraction.test_warc import _page, _record
from extraction.warc import WarcWriter, read_captures
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
writer = WarcWriter({str(tmp_path)!r})
first = writer.write(_page("http://news.example/a/0.html"), _record("http://news.example/a/0.html"))
soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
resource.setrlimit(resource.RLIMIT_FSIZE, (first.offset + 2 * first.length, hard))
try:
    writer.write(_page("http://news.example/a/1.html"), _record("http://news.example/a/1.html"))
    print("no error")
except OSError as exc:
    print("refused", exc.errno)
resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
third = writer.write(_page("http://news.example/a/2.html"), _record("http://news.example/a/2.html"))
writer.close()
print([c.url for c in read_captures(third.file)], third.file == first.file)
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "refused 27"  # EFBIG
    assert lines[1] == "['http://news.example/a/0.html', 'http://news.example/a/2.html'] True"
    assert _warcio("check", *map(str, tmp_path.glob("*.warc.gz"))).returncode == 0


def test_a_page_without_exchange_or_render_is_a_response_and_its_metadata(tmp_path: Path) -> None:
    """What the crawl's process archives for a page whose worker died: no DOM, no screenshot."""
    writer = WarcWriter(tmp_path)
    page = Page(b"<p>x</p>", "http://a.test/", "text/html")
    location = writer.write(page, Record(url="http://a.test/", status=200))
    capture = next(read_captures(location.file))
    assert capture.body == b"<p>x</p>" and capture.rendered is None and capture.screenshot is None
    assert capture.http.header("content-type") == "text/html"
    assert _warcio("check", location.file).returncode == 0


def test_files_rotate_by_size_and_never_split_a_capture(tmp_path: Path) -> None:
    writer = WarcWriter(tmp_path, "rot", max_size=3000)
    locations = [writer.write(_page(f"http://news.example/a/{n}.html"), _record(f"http://news.example/a/{n}.html"))
                 for n in range(6)]
    writer.close()
    files = sorted(tmp_path.glob("rot-*.warc.gz"))
    assert len(files) == len(writer.files) >= 3
    read = [capture.url for path in files for capture in read_captures(path)]
    assert read == [f"http://news.example/a/{n}.html" for n in range(6)]
    assert {Path(location.file) for location in locations} == set(files)
    for path in files:
        assert _warcio("check", str(path)).returncode == 0
        with gzip.open(path) as handle:
            assert handle.read(200).startswith(b"WARC/1.1\r\nWARC-Type: warcinfo")


@pytest.mark.parametrize("cut", ["inside-the-last-capture", "after-its-response"])
def test_a_file_cut_by_a_kill_yields_its_whole_captures(tmp_path: Path, cut: str,
                                                       caplog: pytest.LogCaptureFixture) -> None:
    writer = WarcWriter(tmp_path)
    locations = [writer.write(_page(f"http://news.example/a/{n}.html"), _record(f"http://news.example/a/{n}.html"))
                 for n in range(3)]
    writer.close()
    path = Path(locations[-1].file)
    data = path.read_bytes()
    last = locations[-1]
    end = last.offset + last.length + (40 if cut == "after-its-response" else -40)
    path.write_bytes(data[:end])
    assert [capture.url for capture in read_captures(path)] == [f"http://news.example/a/{n}.html" for n in range(2)]
    assert "WARC file" in caplog.text


def test_reading_from_an_offset_gives_that_capture(tmp_path: Path) -> None:
    writer = WarcWriter(tmp_path)
    locations = [writer.write(_page(f"http://news.example/a/{n}.html"), _record(f"http://news.example/a/{n}.html"))
                 for n in range(3)]
    second = read_capture(locations[1].file, locations[1].offset)
    assert second is not None and second.url == "http://news.example/a/1.html" and second.location == locations[1]


def _five(tmp_path: Path) -> tuple[Path, list[Any]]:
    writer = WarcWriter(tmp_path)
    locations = [writer.write(_page(f"http://news.example/a/{n}.html"), _record(f"http://news.example/a/{n}.html"))
                 for n in range(5)]
    writer.close()
    return Path(locations[0].file), locations


@pytest.mark.parametrize("damage", ["one-byte", "eight-bytes", "a-foreign-record"])
def test_damage_inside_a_file_costs_the_capture_it_touches_only(tmp_path: Path, damage: str,
                                                                caplog: pytest.LogCaptureFixture) -> None:
    """One changed byte inside a capture's gzip member made warcio stop as if the file ended there (a message on
    stderr only), eight a zlib error: every capture after it was lost. Reading goes on at the next gzip member."""
    path, locations = _five(tmp_path)
    data = bytearray(path.read_bytes())
    second = locations[1]
    if damage == "a-foreign-record":  # a member that is no WARC record at all, between two captures
        data[second.offset:second.offset] = gzip.compress(b"not a WARC record\r\n\r\n")
    else:
        middle = second.offset + second.length // 2
        for at in range(middle, middle + (1 if damage == "one-byte" else 8)):
            data[at] ^= 0x55
    path.write_bytes(bytes(data))
    urls = [capture.url for capture in read_captures(path)]
    expected = [f"http://news.example/a/{n}.html" for n in range(5)]
    assert urls == (expected if damage == "a-foreign-record" else expected[:1] + expected[2:])
    assert "WARC file" in caplog.text and "damaged" in caplog.text
    if damage != "a-foreign-record":
        assert read_capture(path, second.offset) is None  # not the capture after it
        assert read_capture(path, locations[2].offset) is not None


def test_a_metadata_record_of_another_shape_costs_its_capture_or_its_values(tmp_path: Path,
                                                                           caplog: pytest.LogCaptureFixture) -> None:
    """A metadata record that is JSON but no object (a list) stopped the run; values of another type (a capture
    id that is an object, a content type that is a number) raised later: the capture is skipped, the values are
    left out."""
    writer = WarcWriter(tmp_path)
    for n in range(2):
        writer.write(_page(f"http://news.example/a/{n}.html"), _record(f"http://news.example/a/{n}.html"))
    writer.close()
    path = Path(writer.files[0])
    data = path.read_bytes()
    members, start = [], 0
    while start < len(data):  # one gzip member per record: rewrite the two metadata records
        end = data.find(b"\x1f\x8b\x08", start + 1)
        members.append(data[start:end if end > 0 else len(data)])
        start = end if end > 0 else len(data)
    replacements = iter(([1, 2], {"capture": {"x": 1}, "content_type": 7, "status": "200", "flags": "x",
                                  "url": "http://news.example/a/1.html"}))
    rewritten = []
    for member in members:
        text = gzip.decompress(member)
        if b"WARC-Type: metadata" in text:
            head = text.split(b"\r\n\r\n", 1)[0]
            body = json.dumps(next(replacements)).encode()
            head = b"\r\n".join(line if not line.startswith(b"Content-Length") else
                                 b"Content-Length: " + str(len(body)).encode() for line in head.split(b"\r\n"))
            member = gzip.compress(head + b"\r\n\r\n" + body + b"\r\n\r\n")
        rewritten.append(member)
    path.write_bytes(b"".join(rewritten))
    captures = list(read_captures(path))
    assert [capture.url for capture in captures] == ["http://news.example/a/1.html"]
    assert "is a JSON list" in caplog.text
    record = captures[0].record()
    assert record.status is None and record.flags == [] and "capture" not in record.crawl
    assert captures[0].content_type == "text/html"  # the response's own header


def test_a_capture_whose_response_is_of_another_type_is_named(tmp_path: Path,
                                                                caplog: pytest.LogCaptureFixture) -> None:
    """Its records refer to a response never read: the capture was dropped without a word."""
    path, _locations = _five(tmp_path)
    data = path.read_bytes()
    members, start = [], 0
    while start < len(data):
        end = data.find(b"\x1f\x8b\x08", start + 1)
        members.append(data[start:end if end > 0 else len(data)])
        start = end if end > 0 else len(data)
    responses = [i for i, member in enumerate(members) if b"WARC-Type: response" in gzip.decompress(member)]
    second = responses[1]
    members[second] = gzip.compress(gzip.decompress(members[second]).replace(b"WARC-Type: response",
                                                                             b"WARC-Type: responze", 1))
    path.write_bytes(b"".join(members))
    urls = [capture.url for capture in read_captures(path)]
    assert urls == [f"http://news.example/a/{n}.html" for n in (0, 2, 3, 4)]
    assert "a record not read as a response" in caplog.text


def test_warc_dates() -> None:
    assert warc_date("2026-11-25T10:00:00+01:00") == "2026-11-25T09:00:00Z"
    assert warc_date("2026-11-25T10:00:00.250000") == "2026-11-25T10:00:00.250000Z"
    assert warc_date("not a date").endswith("Z")


def test_the_gzip_level_trades_bytes_for_time_and_every_level_reads_back(tmp_path: Path) -> None:
    """ARCHIVE_GZIP_LEVEL: level 9 writes fewer bytes than level 1, and both give the same captures back."""
    sizes = {}
    for level in (1, 9):
        writer = WarcWriter(tmp_path / str(level), gzip_level=level)
        location = writer.write(_page("http://news.example/a/0.html"), _record("http://news.example/a/0.html"))
        writer.close()
        capture = next(read_captures(location.file))
        assert capture.url == "http://news.example/a/0.html" and capture.body == BODY
        assert _warcio("check", location.file).returncode == 0
        sizes[level] = Path(location.file).stat().st_size
    assert sizes[9] < sizes[1]
