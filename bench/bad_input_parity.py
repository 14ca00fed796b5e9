"""The bad-input pages through the default flow, for a before/after comparison of two checkouts.

``python -m bench.bad_input_parity`` (run in each checkout, ``cd`` into it) prints per page a SHA-1 of the whole
record (``fetched_at`` fixed), its text length, its error, the CPU seconds of its ``process`` and the process's
peak RSS so far: NUL bytes after the sniffed head, 5,000-deep nesting (closed and unclosed), random bytes, 20
fuzzed pages of random tags, classes, comments, PIs, CDATA and entities, and last the 17 MB page of 400,000
blocks of ``tests/extraction/test_process.py``. Results: ``bench/results/speed-compiled.md``.
"""

from __future__ import annotations

import hashlib
import json
import random
import resource
import time
from dataclasses import asdict

TAGS = ("div", "p", "span", "a", "table", "td", "li", "b", "script", "figure")
PIECES = ("<!--", "-->", "<?x", "&#0;", "&amp", "\ufffd", "<![CDATA[", "]]>")


def fuzz(seed: int) -> bytes:
    """Return a page of 3,000 random pieces: tags opened and closed at random, markup fragments, words."""
    rng = random.Random(seed)
    parts = []
    for _ in range(3000):
        x = rng.random()
        if x < 0.3:
            parts.append(f"<{rng.choice(TAGS)} class='{rng.choice(['a', 'hidden', 'd-none', 'x y'])}'>")
        elif x < 0.5:
            parts.append(f"</{rng.choice(TAGS)}>")
        elif x < 0.6:
            parts.append(rng.choice(PIECES))
        else:
            parts.append(rng.choice(["word ", "新闻 ", "  ", "\n"]))
    return "".join(parts).encode()


def pages() -> dict[str, bytes]:
    """Return the pages, the 17 MB one last."""
    paragraph = "The reservoir rose by three metres overnight, officials said on Tuesday. " * 20
    links = [f"<div><a href=/x{i}>link {i}</a></div>" for i in range(400_000)]
    half = len(links) // 2
    big = ("<html><head><title>Reservoir</title></head><body>" + "".join(links[:half])
           + "<article><h1>Reservoir</h1><p>" + paragraph + "</p></article>" + "".join(links[half:])
           + "</body></html>").encode()
    return {
        "nul": (b"<html><body><p>" + b"a plain head before any NUL byte. " * 300 + b"\x00<p>"
                + b"nul\x00 bytes in the text of a page " * 30 + b"</p>\x00</body></html>"),
        "deep-5000": ("<html><body>" + "<div>" * 5000 + "deep text " * 50 + "</div>" * 5000
                      + "</body></html>").encode(),
        "deep-5000-unclosed": ("<html><body>" + "<div><p>x" * 5000 + "</body></html>").encode(),
        "random-bytes": random.Random(7).randbytes(200_000),
        **{f"fuzz-{seed}": fuzz(seed) for seed in range(20)},
        "17mb": big,
    }


def main() -> None:
    from extraction.page import Page
    from extraction.process import Context, process
    from extraction.record import Record

    context = Context.from_settings({})
    url = "http://bad.test/a.html"
    for name, body in pages().items():
        start = time.process_time()
        record = process(Page(body, url), context, Record(url=url, fetched_at="2026-01-01T00:00:00+00:00"))
        cpu = time.process_time() - start
        digest = hashlib.sha1(json.dumps(asdict(record), sort_keys=True, default=str).encode()).hexdigest()[:12]
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
        print(f"{name}\t{digest}\t{len(record.text or '')}\t{record.error}\tcpu {cpu:.2f}\tpeak MB {peak}", flush=True)


if __name__ == "__main__":
    main()
