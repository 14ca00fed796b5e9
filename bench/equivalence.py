"""Old code vs new code on the same input: are the records the same? (issue 12's acceptance)

    python -m bench.equivalence [--ref b2a8ea9] [--pages 1000] [--skip-crawl] [--skip-extract] [--noise]
                                [--out bench/results/equivalence.md]

The old code is checked out from ``--ref`` into a temporary git worktree (removed at the end); the
new code is this working tree. Both run with this project's ``.venv`` python, each from its own tree:

- extract: ``scrapy extract`` over ``--pages`` dataset pages (the first sorted pages of six sets,
  English and Chinese, taken in turn; ``DATASETS_DIR``, default ``../shared/datasets``), records
  keyed by the input path; the two trees run side by side;
- crawl: one demo crawl per tree (one request at a time, no AutoThrottle, the same demo port, fresh
  archive and template store), records keyed by ``url``, plus the stats JSON. ``--noise`` crawls
  with the old code once more, and fields differing between those two runs count as noise.

Old records are mapped to the new schema first (``path`` -> ``html_file``, ``method`` ->
``extraction_method``, entries ``{"text", "url"}`` -> ``{"title", "url"}``; see ``listed_change``
for the old extract's ``pipeline`` method and ``entries: []``). Fields only the new code writes are
listed as added, not compared. The Markdown report goes to ``--out`` and stdout; exit status 1 only
when a run failed.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
PYTHON = ROOT / ".venv" / "bin" / "python"
DATASETS = Path(os.environ.get("DATASETS_DIR", ROOT.parent / "shared" / "datasets"))
# (set, folder under it holding its HTML); taken in turn, so small sets give all their pages.
SETS = [("wcxb-dev", "html"), ("cleaneval", "."), ("dragnet", "input"), ("l3s-gn1", "original"),
        ("chinese-wced-dev", "original"), ("gne-chinese", ".")]
BATCH = 500  # pages per `scrapy extract` invocation (start-up is a few seconds)
RENAMES = {"path": "html_file", "method": "extraction_method"}
PIPELINE_METHODS = {"svm", "list", "fulltext"}  # what the old extract's "pipeline" is called now
CRAWL_SETTINGS = {"CONCURRENT_REQUESTS": "1", "AUTOTHROTTLE_ENABLED": "False", "LOG_LEVEL": "INFO"}
CRAWL_SKIPPED = {"fetched_at"}  # always differs
CRAWL_PRESENCE = {"html_file", "screenshot_file"}  # paths differ per run: compared as null / not null
# Fields that differ between two crawls of the same code (measured old vs old): listed as noise.
CRAWL_NOISE: set[str] = set()
STATS_VOLATILE = ("time", "memusage", "elapsed", "per_minute", "log_count", "bytes",
                  "playwright/page_count/max_concurrent")
EXAMPLES = 5
SNIPPET = 150


class RunFailed(Exception):  # a command exited non-zero (the message holds its output's tail)
    pass


def log(message: str) -> None:  # progress, to stderr
    print(f"[equivalence {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def run(args: list[str], cwd: Path, stderr_file: Path) -> None:
    """Run ``python -m scrapy ARGS`` in ``cwd`` (that tree's code); raise RunFailed on failure."""
    env = {k: v for k, v in os.environ.items() if k not in ("NEWS_SITES_FILE", "PYTHONPATH")}
    with stderr_file.open("w") as err:
        rc = subprocess.run([str(PYTHON), "-m", "scrapy", *args], cwd=cwd, env=env, stdout=err,
                            stderr=subprocess.STDOUT, check=False).returncode
    if rc != 0:
        tail = stderr_file.read_text(errors="replace")[-3000:]
        raise RunFailed(f"`scrapy {' '.join(args[:3])} ...` in {cwd} exited {rc}:\n{tail}")


def pick_pages(total: int) -> list[str]:
    """Return ``total`` dataset pages (fewer if the sets hold fewer): their sorted pages taken in turn."""
    lists = [sorted(str(p) for p in (DATASETS / name / folder).rglob("*.htm*.gz")) for name, folder in SETS]
    picked: list[str] = []
    for row in range(max(map(len, lists), default=0)):
        picked += [pages[row] for pages in lists if row < len(pages)]
    return picked[:total]


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    lines = path.read_text(encoding="utf-8").split("\n") if path.exists() else []
    return [json.loads(line) for line in lines if line.strip()]


def extract(tree: Path, pages: list[str], work: Path) -> list[dict[str, Any]]:
    """Run ``scrapy extract`` over ``pages`` in batches from ``tree``; return the records."""
    work.mkdir(parents=True, exist_ok=True)
    records: list[dict[str, Any]] = []
    for start in range(0, len(pages), BATCH):
        out = work / f"extract-{start}.jsonl"
        run(["extract", *pages[start:start + BATCH], "-o", str(out), "-s", f"TEMPLATES_STORE={work / 'tdb'}"],
            tree, work / f"extract-{start}.log")
        records += read_jsonl(out)
    return records


def crawl(tree: Path, port: int, work: Path) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Run one demo crawl from ``tree``; return its records and stats."""
    work.mkdir(parents=True, exist_ok=True)
    settings = {**CRAWL_SETTINGS, "DEMO_PORT": str(port), "ARCHIVE_DIR": str(work / "archive"),
                "TEMPLATES_STORE": str(work / "templates"), "STATS_FILE": str(work / "stats.json")}
    run(["crawl", "news_sites", "-O", str(work / "crawl.jsonl"), *(f"-s{k}={v}" for k, v in settings.items())],
        tree, work / "crawl.log")
    stats_file = work / "stats.json"
    stats = json.loads(stats_file.read_text()) if stats_file.exists() else {}
    return read_jsonl(work / "crawl.jsonl"), stats


def free_port() -> int:  # for the demo server, the same in every crawl so that the URLs match
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def to_new_schema(record: dict[str, Any]) -> dict[str, Any]:
    """Map an old record's names onto the new schema's."""
    mapped = {RENAMES.get(key, key): value for key, value in record.items()}
    if isinstance(mapped.get("entries"), list):
        mapped["entries"] = [{("title" if k == "text" else k): v for k, v in entry.items()}
                             for entry in mapped["entries"]]
    return mapped


def listed_change(name: str, old: Any, new: Any, old_record: dict[str, Any]) -> str | None:
    """Name a difference of the old extract record that the redesign lists (a rename), else None.

    The old extract's method ``pipeline`` is now the method that wrote the text, one of PIPELINE_METHODS
    (``svm`` on list pages too, as in the old crawl, unless ROUTE_LISTS); its ``entries`` of a page
    that is no list, ``[]``, is now null (as in the crawl).
    """
    if name == "extraction_method" and old == "pipeline":
        return f"`extraction_method` pipeline -> {new}" if new in PIPELINE_METHODS else None
    if name == "entries" and old == [] and new is None:
        return "`entries` [] -> null"
    return None


def snippet(value: Any, other: Any) -> str:
    """``value`` as short JSON; for two strings, starting a little before their first difference."""
    if isinstance(value, str) and isinstance(other, str):
        at = next((i for i, (a, b) in enumerate(zip(value, other, strict=False)) if a != b),
                  min(len(value), len(other)))
        start = max(0, at - 40)
        text = ("…" if start else "") + value[start:start + SNIPPET] + ("…" if len(value) > start + SNIPPET else "")
        return json.dumps(text, ensure_ascii=False) + f" ({len(value)} chars)"
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= SNIPPET else text[:SNIPPET] + "…"


def compare(old: dict[str, dict[str, Any]], new: dict[str, dict[str, Any]], skip: set[str],
            presence: set[str], noise: set[str], extract_mode: bool) -> tuple[list[str], set[str]]:
    """Compare records with the same key; return the report's lines and the fields that differ."""
    diffs, near, added, removed, renamed = (Counter[str]() for _ in range(5))
    examples: dict[str, list[str]] = {}
    common = sorted(set(old) & set(new))
    identical = 0
    for key in common:
        before, after = to_new_schema(old[key]), to_new_schema(new[key])  # the latter for an old "new" tree
        same = True
        for name in sorted(set(before) | set(after)):
            if name in skip:
                continue
            if name not in before:
                added[name] += 1
                continue
            if name not in after:
                removed[name] += 1
                same = False
                continue
            a, b = before[name], after[name]
            if name in presence:
                a, b = a is not None, b is not None
            label = listed_change(name, a, b, before) if extract_mode else None
            if label:
                renamed[label] += 1
                continue
            if a == b:
                continue
            diffs[name] += 1  # floats too compared exactly (records round them to 4 places)
            same = same and name in noise
            near[name] += isinstance(a, float) and isinstance(b, float) and math.isclose(a, b, abs_tol=1e-3)
            if len(examples.setdefault(name, [])) < EXAMPLES:
                examples[name].append("| " + " | ".join(
                    t.replace("|", "\\|").replace("\n", " ") for t in (f"`{key[-60:]}`", snippet(a, b), snippet(b, a)))
                    + " |")
        identical += same
    lines = [f"- records: old {len(old)}, new {len(new)}, compared {len(common)}; "
             f"identical (noise fields aside) **{identical}**, different **{len(common) - identical}**"]
    for label, keys in (("only in the old run", set(old) - set(new)), ("only in the new run", set(new) - set(old))):
        if keys:
            lines.append(f"- {len(keys)} {label}: " + ", ".join(f"`{k}`" for k in sorted(keys)[:10])
                         + (" …" if len(keys) > 10 else ""))
    if renamed:
        lines.append("- listed renames (not differences): " + ", ".join(f"{k} ({n})" for k, n in renamed.items()))
    if added:
        lines.append("- added (new only, not compared): " + ", ".join(f"`{k}`" for k in sorted(added)))
    if removed:
        lines.append("- **removed** (old only): " + ", ".join(f"`{k}` ({n})" for k, n in sorted(removed.items())))
    if not diffs:
        return [*lines, "", "No field differs."], set()
    lines += ["", "| field | records differing | of which floats < 1e-3 apart | noise |", "|---|---:|---:|---|"]
    lines += [f"| `{name}` | {n} | {near[name]} | {'yes' if name in noise else ''} |"
              for name, n in diffs.most_common()]
    for name, _ in diffs.most_common():
        lines += ["", f"Examples, `{name}`:", "", "| record | old | new |", "|---|---|---|", *examples[name]]
    return lines, set(diffs)


def compare_stats(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """List stats keys only in one run and values that differ (time and memory keys as volatile)."""
    changed = [k for k in sorted(set(old) & set(new)) if old[k] != new[k]]
    volatile = [k for k in changed if any(word in k for word in STATS_VOLATILE)]
    return ["", "### Stats", "",
            *(f"- keys {label}: " + (", ".join(f"`{k}` ({old.get(k, new.get(k))})" for k in sorted(keys)) or "none")
              for label, keys in (("only old", set(old) - set(new)), ("only new", set(new) - set(old)))),
            "- volatile keys differing (times, memory, log counts, bytes): "
            + (", ".join(f"`{k}`" for k in volatile) or "none"),
            "- other values differing: "
            + (", ".join(f"`{k}` {old[k]} -> {new[k]}" for k in changed if k not in volatile) or "none")]


def by_key(records: list[dict[str, Any]], *names: str) -> dict[str, dict[str, Any]]:  # by the 1st name they have
    return {str(next((r[n] for n in names if r.get(n) is not None), None)): r for r in records}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--ref", default="b2a8ea9", help="git ref of the old code (default: b2a8ea9)")
    parser.add_argument("--pages", type=int, default=1000, help="dataset pages to extract (default: 1000)")
    parser.add_argument("--skip-crawl", action="store_true")
    parser.add_argument("--skip-extract", action="store_true")
    parser.add_argument("--noise", action="store_true", help="crawl with the old code twice to measure noise")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "equivalence.md")
    parser.add_argument("--new-tree", type=Path, default=ROOT, help=argparse.SUPPRESS)  # e.g. a 2nd old worktree
    parser.add_argument("--keep", action="store_true", help=argparse.SUPPRESS)  # keep the outputs in /tmp
    opts = parser.parse_args(argv)
    tmp = Path(tempfile.mkdtemp(prefix="equivalence-"))
    old_tree, new_tree = tmp / "old", opts.new_tree.resolve()
    commit = subprocess.run(["git", "rev-parse", "--short", opts.ref], cwd=ROOT, capture_output=True, text=True,
                            check=True).stdout.strip()
    log(f"worktree of {opts.ref} ({commit}) at {old_tree}; new code: {new_tree}")
    subprocess.run(["git", "worktree", "add", "--detach", str(old_tree), opts.ref], cwd=ROOT, check=True,
                   capture_output=True)
    report = [f"# Equivalence: {opts.ref} ({commit}) vs {'the working tree' if new_tree == ROOT else new_tree}", ""]
    started = time.monotonic()
    try:
        if not opts.skip_extract:
            pages = pick_pages(opts.pages)
            log(f"extract: {len(pages)} pages, old and new side by side")
            with ThreadPoolExecutor(2) as pool:
                jobs = [pool.submit(extract, tree, pages, tmp / f"extract-{side}")
                        for side, tree in (("old", old_tree), ("new", new_tree))]
                old_records, new_records = (job.result() for job in jobs)
            sets = Counter(p.relative_to(DATASETS).parts[0] for p in map(Path, pages))
            report += [f"## `scrapy extract` on {len(pages)} dataset pages", "",
                       "- pages per set: " + ", ".join(f"{k} {n}" for k, n in sets.items()),
                       *compare(by_key(old_records, "html_file", "path"), by_key(new_records, "html_file", "path"),
                                set(), set(), set(), extract_mode=True)[0], ""]
            log(f"extract done ({time.monotonic() - started:.0f} s)")
        if not opts.skip_crawl:
            port, runs, noise = free_port(), {}, set(CRAWL_NOISE)
            for side, tree in (("old", old_tree), ("new", new_tree), ("old again", old_tree))[:3 if opts.noise else 2]:
                log(f"crawl: {side} code, demo port {port}")
                records, stats = crawl(tree, port, tmp / f"crawl-{side.replace(' ', '-')}")
                runs[side] = by_key(records, "url"), stats
            if opts.noise:
                noise |= compare(runs["old"][0], runs["old again"][0], CRAWL_SKIPPED, CRAWL_PRESENCE, set(), False)[1]
            report += ["## Demo crawl", "", f"- skipped: {', '.join(sorted(CRAWL_SKIPPED))}; compared as null / "
                       f"not null: {', '.join(sorted(CRAWL_PRESENCE))}; noise (differs between two runs of the "
                       f"same code{', measured' if opts.noise else ''}): {', '.join(sorted(noise)) or 'none'}",
                       *compare(runs["old"][0], runs["new"][0], CRAWL_SKIPPED, CRAWL_PRESENCE, noise, False)[0],
                       *compare_stats(runs["old"][1], runs["new"][1]), ""]
            log(f"crawl done ({time.monotonic() - started:.0f} s)")
    except RunFailed as exc:
        log(f"a run failed: {exc}")
        return 1
    finally:
        subprocess.run(["git", "worktree", "remove", "--force", str(old_tree)], cwd=ROOT, capture_output=True,
                       check=False)
        subprocess.run(["git", "worktree", "prune"], cwd=ROOT, check=False)
        if not opts.keep:
            shutil.rmtree(tmp, ignore_errors=True)
    text = "\n".join([*report, f"Total time {time.monotonic() - started:.0f} s."]) + "\n"
    opts.out.parent.mkdir(parents=True, exist_ok=True)
    opts.out.write_text(text, encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
