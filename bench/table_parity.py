"""Parity of two checkouts on every dataset page: every feature vector the models read and every record field.

``python -m bench.table_parity dump OUT.jsonl.gz [--sets SET ...] [--pages N]`` runs the default flow
(``extraction.process.process``: page type, metadata, the stacked block model, the paragraph model, the title
chooser; no template library) on every page of the datasets' readers (``evaluation.datasets``), and writes per
page what every ONNX run read (model, input name, shape, SHA-1 of the array's bytes, in call order) and the record.
Run it in each checkout, the code before a change and after it, with the same environment: it imports the
``extraction`` package of the current directory (``cd`` into the checkout; the script itself is read from any of
them, it uses only the API both sides have).

``python -m bench.table_parity compare BEFORE AFTER [--common] [--out FILE.md]`` lists every page where they differ: the
models' inputs (which run, which model) and the record's fields, with the first differing characters; a page
that raised on one side is listed with its error. The result of issue 60's compiled page table against the
code before it: ``bench/results/table-parity.md``.

A record's ``fetched_at`` is fixed (relative dates are read against it); records are compared field by field.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

FETCHED_AT = "2026-01-01T00:00:00+00:00"  # every record's fetch time: relative dates read against one instant
OUT = Path(__file__).parent / "results" / "table-parity.md"


def _pages(sets: Sequence[str], limit: int | None) -> Iterator[tuple[str, str, bytes, str | None]]:
    """Yield (set, page id, bytes, URL) of every page of the sets' readers, in the readers' order."""
    from evaluation.datasets import iter_pages

    for name in sets:
        for number, page in enumerate(iter_pages(name)):
            if limit is not None and number >= limit:
                break
            yield name, str(getattr(page, "page_id", number)), page.html_bytes(), page.url


def dump(out: Path, sets: Sequence[str], limit: int | None) -> None:
    """Write the models' inputs and the record of every page (module docstring)."""
    import onnxruntime as ort

    from extraction.blockclf.classifier import shared_models as block_models
    from extraction.page import Page
    from extraction.pagetype.models import shared_models as page_models
    from extraction.process import Context, process
    from extraction.record import Record
    from extraction.title import shared_model as title_model

    context = Context(page_models(), block_models(), title_model=title_model())
    runs: list[list[Any]] = []
    names: dict[int, str] = {}
    original = ort.InferenceSession.run

    def recorded(session: Any, output_names: Any, feed: dict[str, Any], *args: Any, **kwargs: Any) -> Any:
        model = names.setdefault(id(session), Path(getattr(session, "_model_path", "") or "?").parent.name + "/"
                                 + Path(getattr(session, "_model_path", "") or "?").name)
        for key, value in feed.items():
            runs.append([model, key, list(value.shape), str(value.dtype),
                         hashlib.sha1(value.tobytes()).hexdigest()])
        return original(session, output_names, feed, *args, **kwargs)

    ort.InferenceSession.run = recorded
    start = time.perf_counter()
    count = 0
    with gzip.open(out, "wt", encoding="utf-8") as file:
        for name, page_id, body, url in _pages(sets, limit):
            runs.clear()
            entry: dict[str, Any] = {"set": name, "page": page_id}
            try:
                record = process(Page(body, url), context, Record(url=url, fetched_at=FETCHED_AT))
                entry["record"] = asdict(record)
            except Exception as exc:  # listed as a difference when the other side did not raise
                entry["error"] = f"{type(exc).__name__}: {exc}"
            entry["runs"] = list(runs)
            file.write(json.dumps(entry, ensure_ascii=False, sort_keys=True, default=str) + "\n")
            count += 1
            if count % 500 == 0:
                print(f"{count} pages, {time.perf_counter() - start:.0f} s", file=sys.stderr, flush=True)
    ort.InferenceSession.run = original
    print(f"{count} pages in {time.perf_counter() - start:.0f} s -> {out}", file=sys.stderr)


def _read(paths: Sequence[Path]) -> dict[tuple[str, str], dict[str, Any]]:
    """Return the pages of one or more dumps; a dump cut short (a stopped run) is read to its last whole line."""
    entries: dict[tuple[str, str], dict[str, Any]] = {}
    for path in paths:
        with gzip.open(path, "rt", encoding="utf-8") as file:
            try:
                for line in file:
                    if line.endswith("\n"):
                        entry = json.loads(line)
                        entries[(entry["set"], entry["page"])] = entry
            except (EOFError, gzip.BadGzipFile):
                print(f"{path}: cut short after {len(entries)} pages", file=sys.stderr)
    return entries


def _first_difference(a: Any, b: Any) -> str:
    left, right = json.dumps(a, ensure_ascii=False, sort_keys=True), json.dumps(b, ensure_ascii=False, sort_keys=True)
    at = next((i for i, (x, y) in enumerate(zip(left, right, strict=False)) if x != y), min(len(left), len(right)))
    return f"at {at}: {left[max(0, at - 30):at + 50]!r} / {right[max(0, at - 30):at + 50]!r}"


def differences(before: dict[tuple[str, str], Any], after: dict[tuple[str, str], Any]) -> list[str]:
    """Return one line per difference between two dumps."""
    lines: list[str] = []
    for key in sorted(before.keys() | after.keys()):
        old, new = before.get(key), after.get(key)
        where = f"{key[0]} {key[1]}"
        if old is None or new is None:
            lines.append(f"{where}: only {'after' if old is None else 'before'}")
            continue
        if old.get("error") != new.get("error"):
            lines.append(f"{where}: error {old.get('error')!r} / {new.get('error')!r}")
        if old["runs"] != new["runs"]:
            if len(old["runs"]) != len(new["runs"]):
                lines.append(f"{where}: {len(old['runs'])} model runs / {len(new['runs'])}")
            for number, (a, b) in enumerate(zip(old["runs"], new["runs"], strict=False)):
                if a != b:
                    lines.append(f"{where}: model input {number} differs ({a[0]} {a[1]} {a[2]} / {b[0]} {b[1]} {b[2]})")
                    break
        for field in sorted((old.get("record") or {}).keys() | (new.get("record") or {}).keys()):
            a, b = (old.get("record") or {}).get(field), (new.get("record") or {}).get(field)
            if a != b:
                lines.append(f"{where}: record.{field} {_first_difference(a, b)}")
    return lines


def compare(before_paths: Sequence[Path], after_paths: Sequence[Path], out: Path | None, common: bool = False) -> int:
    """Compare two dumps (each one or more files); write the report to ``out``; return the number of pages that
    differ. ``common``: only the pages both sides have (runs stopped before the end)."""
    before, after = _read(before_paths), _read(after_paths)
    if common:
        before = {key: entry for key, entry in before.items() if key in after}
        after = {key: entry for key, entry in after.items() if key in before}
    lines = differences(before, after)
    pages = sorted({" ".join(line.split(":")[0].split()[:2]) for line in lines})
    by_set: dict[str, int] = {}
    for name, _ in after:
        by_set[name] = by_set.get(name, 0) + 1
    runs = sum(len(entry["runs"]) for entry in after.values())
    report = [f"# Parity of the page table (`python -m bench.table_parity compare`, {time.strftime('%Y-%m-%d')})", "",
              f"Pages: {len(after)} ({', '.join(f'{name} {count}' for name, count in by_set.items())}); "
              f"model inputs compared: {runs}; record fields compared: every field of every record.", "",
              f"Pages that differ: **{len(pages)}**.", ""]
    report += [f"- {line}" for line in lines] or ["(none)"]
    text = "\n".join(report) + "\n"
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text)
    print(text)
    return len(pages)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    dumping = commands.add_parser("dump", help="write every page's model inputs and record")
    dumping.add_argument("out", type=Path)
    dumping.add_argument("--sets", nargs="+", default=None, metavar="SET", help="default: every dataset reader")
    dumping.add_argument("--pages", type=int, default=None, help="at most this many pages a set")
    comparing = commands.add_parser("compare", help="list the differences of two dumps")
    comparing.add_argument("before", type=Path, help="a dump, or several joined by commas")
    comparing.add_argument("after", type=Path, help="the same for the other side")
    comparing.add_argument("--common", action="store_true", help="only the pages both sides have")
    comparing.add_argument("--out", type=Path, default=None, help=f"write the report (e.g. {OUT})")
    args = parser.parse_args(argv)
    if args.command == "dump":
        from evaluation.datasets import DATASET_NAMES

        dump(args.out, args.sets or list(DATASET_NAMES), args.pages)
    else:
        compare([Path(part) for part in str(args.before).split(",")],
                [Path(part) for part in str(args.after).split(",")], args.out, args.common)


if __name__ == "__main__":
    main()
