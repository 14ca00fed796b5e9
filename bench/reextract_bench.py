"""``scrapy reextract`` in its extraction workers against in one process, on real pages.

``python -m bench.reextract_bench [--pages 600] [--runs 2]``: writes the first PAGES WCXB-dev pages that have a URL
(``../shared/datasets`` or DATASETS_DIR) to one WARC file as the crawl archives them, then runs ``scrapy reextract``
on it with EXTRACT_WORKERS=0 (one process) and with the default (one worker per CPU), alternating, RUNS times each,
templates off. Prints the wall seconds of every run and whether the outputs are byte for byte the same.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from evaluation.harness import load_pages
from extraction.page import Page
from extraction.record import Record
from extraction.warc import WarcWriter

REPO = Path(__file__).resolve().parent.parent


def write_warc(folder: Path, pages: int) -> int:
    """Write the first ``pages`` WCXB-dev pages with a URL as captures under ``folder``; return how many."""
    writer = WarcWriter(folder)
    written = 0
    for page in load_pages("wcxb-dev", None):
        if not page.url:
            continue
        record = Record(url=page.url, canonical_url=page.url, final_url=page.url, status=200)
        record.crawl.update({"url": page.url, "capture": f"c{written}"})
        writer.write(Page(page.html_bytes(), page.url, "text/html"), record)
        written += 1
        if written >= pages:
            break
    writer.close()
    return written


def reextract(warc: Path, out: Path, workers: str) -> float:
    """Run ``scrapy reextract`` (templates off, EXTRACT_WORKERS=``workers``); return its wall seconds."""
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "scrapy", "reextract", str(warc), "-o", str(out), "-s",
                    "TEMPLATES_ENABLED=False", "-s", f"EXTRACT_WORKERS={workers}", "-s", "LOG_LEVEL=WARNING"],
                   cwd=REPO, check=True, stdin=subprocess.DEVNULL)
    return time.perf_counter() - started


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=600, help="WCXB-dev pages to archive (default 600)")
    parser.add_argument("--runs", type=int, default=2, help="runs of each mode, alternating (default 2)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        pages = write_warc(folder / "warc", args.pages)
        seconds: dict[str, list[float]] = {"0": [], "-1": []}
        for _ in range(args.runs):
            for workers in ("-1", "0"):
                seconds[workers].append(reextract(folder / "warc", folder / f"out{workers}.jsonl", workers))
        same = (folder / "out0.jsonl").read_bytes() == (folder / "out-1.jsonl").read_bytes()
    print(f"{pages} WCXB-dev pages in one WARC file")
    print("in the extraction workers (EXTRACT_WORKERS=-1): " + ", ".join(f"{s:.1f}" for s in seconds["-1"]) + " s")
    print("in one process (EXTRACT_WORKERS=0): " + ", ".join(f"{s:.1f}" for s in seconds["0"]) + " s")
    print(f"outputs byte for byte the same: {same}")
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
