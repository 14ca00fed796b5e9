"""The Markdown tables of ``bench.dedup_eval`` (``bench/results/dedup.md``) and Wilson's interval."""

from __future__ import annotations

import math
import time
from typing import TYPE_CHECKING, Any

from extraction.dedup import DedupConfig, bands

if TYPE_CHECKING:
    from bench.dedup_eval import Language, Result

Z = 1.96  # 95% intervals
RATE_SETS = ("msv-big5", "wcxb-dev", "demo")


def wilson(hits: int, n: int) -> tuple[float, float, float]:
    """Return (share, low, high): the share and Wilson's 95% interval (nan for n = 0)."""
    if n == 0:
        return math.nan, math.nan, math.nan
    share = hits / n
    centre = (share + Z * Z / (2 * n)) / (1 + Z * Z / n)
    half = Z * math.sqrt(share * (1 - share) / n + Z * Z / (4 * n * n)) / (1 + Z * Z / n)
    return share, max(0.0, centre - half), min(1.0, centre + half)


def cell(hits: int, n: int) -> str:
    """Return "share [low, high]" for a table (a dash for n = 0)."""
    share, low, high = wilson(hits, n)
    return "—" if n == 0 else f"{share:.3f} [{low:.3f}, {high:.3f}]"


def _share(hits: int, n: int) -> str:
    return "—" if n == 0 else f"{hits / n:.3f}"


def _spread(spread: dict[str, float], *names: str) -> str:
    return " / ".join(f"{spread[name]:.3f}" if name in spread else "—" for name in names)


def language_section(language: Language, result: Result, spread: dict[str, dict[str, float]]) -> list[str]:
    """Return one language's tables: copies per kind, negatives, found and partial copies, errors."""
    corpus = language.corpus
    right, total, false = result.overall()
    agree_right = sum(counts["right_agree"] for counts in result.copies.values())
    agree_n = sum(counts["n_agree"] for counts in result.copies.values())
    lines = [f"## {'English' if corpus.lang == 'en' else 'Chinese'}: {len(corpus.articles)} articles, "
             f"{len(language.agreement)} with copies, {len(corpus.copies)} copies", "",
             f"Overall (a-f): precision **{cell(right, right + false)}**, recall **{cell(right, total)}**; "
             f"recall where the extraction agrees ({len(language.agreeing)} articles): {cell(agree_right, agree_n)}.",
             "", "| kind | copies | recall | precision | exact | recall, extraction agrees | "
             "Jaccard similarity to the article: min / p5 / median |", "|---|---:|---|---|---:|---|---|"]
    for kind, counts in result.copies.items():
        lines.append(f"| {kind} | {counts['n']} | {cell(counts['right'], counts['n'])} | "
                     f"{cell(counts['right'], counts['right'] + counts['wrong'])} | {counts['exact']} | "
                     f"{cell(counts['right_agree'], counts['n_agree'])} | "
                     f"{_spread(spread.get(kind, {}), 'min', 'p05', 'median')} |")
    lines += ["", "| negatives | pairs | merged | merged share | Jaccard similarity: median / p99 / max |",
              "|---|---:|---:|---|---|"]
    for kind, counts in result.negatives.items():
        lines.append(f"| {kind} | {counts['pairs']} | {counts['merged']} | {cell(counts['merged'], counts['pairs'])} "
                     f"| {_spread(spread.get(kind, {}), 'median', 'p99', 'max')} |")
    partial = "; ".join(f"{' / '.join(item['pair'])}: similarity {item['similarity'] or 0:.3f}, "
                        f"{'matched' if item['matched'] else 'not matched'}" for item in result.partial)
    lines += ["", f"Copies found among the datasets' pages (`FOUND_COPIES`): {result.found['matched']} of "
              f"{result.found['pairs']} pairs matched. Partial copies (`PARTIAL_COPIES`): {partial or 'none'}.", ""]
    if result.errors:
        lines += ["Errors (content_in_extraction / extraction_in_content: how far the article page's extracted "
                  "text and the content of its copies agree):", ""]
        for error in result.errors:
            lines.append("- " + ", ".join(f"{name} {value:.3f}" if isinstance(value, float) else f"{name} {value}"
                                          for name, value in error.items()
                                          if value not in (None, "") and not (isinstance(value, float)
                                                                             and math.isnan(value))))
        lines.append("")
    return lines


def sweep_table(rows: list[dict[str, Any]], chosen: DedupConfig) -> list[str]:
    """Return the shingle x threshold table."""
    lines = ["| shingle | threshold | min Jaccard | bands x rows | en P | en R | en R agree | "
             "en merged story / random | zh P | zh R | zh R agree | zh merged story / random | msv-big5 matched | "
             "wcxb-dev matched | demo matched |",
             "|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for row in rows:
        count, rows_per_band = bands(row["min_jaccard"], chosen.permutations)
        chosen_row = (row["shingle"], row["threshold"], row["min_jaccard"]) == (
            chosen.shingle, chosen.threshold, chosen.min_jaccard)
        cells = [f"**{row[name]}**" if chosen_row else str(row[name])
                 for name in ("shingle", "threshold", "min_jaccard")] + [f"{count}x{rows_per_band}"]
        for lang in ("en", "zh"):
            summary = row[lang]
            cells += [_share(summary["right"], summary["right"] + summary["false"]),
                      _share(summary["right"], summary["copies"]), _share(summary["right_agree"], summary["n_agree"]),
                      f"{summary['same-story']} / {summary['random']}"]
        cells += [_matched(row, name) for name in RATE_SETS]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def _matched(row: dict[str, Any], name: str) -> str:
    rate = row.get(name)
    if not rate:
        return "—"
    return f"{rate['matched']} ({rate['unknown']})" if rate["unknown"] != rate["matched"] else str(rate["matched"])


def min_chars_table(rows: list[dict[str, Any]]) -> list[str]:
    """Return the DEDUP_MIN_CHARS table."""
    lines = ["| min_chars | en R | en false matches | zh R | zh false matches | msv-big5 matched | wcxb-dev matched "
             "| demo matched |", "|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for row in rows:
        lines.append(f"| {row['min_chars']} | {_share(row['en']['right'], row['en']['copies'])} | {row['en']['false']} "
                     f"| {_share(row['zh']['right'], row['zh']['copies'])} | {row['zh']['false']} | "
                     + " | ".join(_matched(row, name) for name in RATE_SETS) + " |")
    return lines


def rates_section(rates: dict[str, dict[str, Any]]) -> list[str]:
    """Return the duplicate rates and the matches behind them."""
    lines = ["## Duplicate rates (every page through the flow, `DuplicateIndex.check` in order)", "",
             "| pages | records | with text | under min_chars | exact | near | known copies | duplicate rate |",
             "|---|---:|---:|---:|---:|---:|---:|---|"]
    for name, rate in rates.items():
        lines.append(f"| {name} | {rate['pages']} | {rate['with_text']} | {rate['short']} | {rate['exact']} | "
                     f"{rate['near']} | {rate['known_copies']} | "
                     f"{cell(rate['exact'] + rate['near'], rate['with_text'])} |")
    for name, rate in rates.items():
        if rate["matches"]:
            lines += ["", f"{name} matches:", ""]
            for match in rate["matches"]:
                how = "exact" if match["exact"] else f"{match['similarity']:.3f}"
                known = ", a known copy" if match["known_copy"] else ""
                lines.append(f"- {match['key']} -> {match['match']} ({how}, {match['chars']} chars{known})")
    return lines


def report(doc: str, built: dict[str, Language], config: DedupConfig, results: dict[str, Result],
           spreads: dict[str, dict[str, dict[str, float]]], rows: list[dict[str, Any]],
           min_chars_rows: list[dict[str, Any]], rates: dict[str, dict[str, Any]], timing: dict[str, Any]) -> list[str]:
    """Return the Markdown report of ``bench.dedup_eval`` (``doc``: its module docstring)."""
    count, rows_per_band = bands(config.min_jaccard, config.permutations)
    lines = [f"# Near-duplicate detection (`python -m bench.dedup_eval`, {time.strftime('%Y-%m-%d')})", "",
             " ".join(doc.split("\n\n")[2].split()), "",
             f"Defaults: `DEDUP_THRESHOLD={config.threshold}` (containment), "
             f"`DEDUP_MIN_JACCARD={config.min_jaccard}`, `DEDUP_SHINGLE={config.shingle}`, "
             f"`DEDUP_PERMUTATIONS={config.permutations}` ({count} bands x {rows_per_band} rows), "
             f"`DEDUP_MIN_CHARS={config.min_chars}`.", ""]
    for lang, result in results.items():
        lines += language_section(built[lang], result, spreads[lang])
    lines += ["## Sweep (shingle size x containment threshold x Jaccard floor, same texts)", "",
              "P: right / (right + every false match); R: right / copies; R agree: on the articles whose extraction "
              "agrees; merged: negative pairs matched; msv-big5, wcxb-dev and demo: pages `check` matched to an "
              "earlier page (in brackets: those not a pair of `FOUND_COPIES`).", ""]
    lines += sweep_table(rows, config)
    lines += ["", f"## `DEDUP_MIN_CHARS` (shingle {config.shingle}, threshold {config.threshold})", ""]
    lines += min_chars_table(min_chars_rows)
    if rates:
        lines += ["", *rates_section(rates)]
    fingerprint = timing["fingerprint"]
    lines += ["", "## Cost", "",
              f"`fingerprint` at the defaults: {fingerprint['typical_median_ms']:.2f} ms for a 2,500-3,500-character "
              f"text (median of {fingerprint['typical_texts']}), {fingerprint['mean_ms']:.2f} ms on average over "
              f"{fingerprint['texts']} texts; the flow (`process`) {timing['process_ms']:.1f} ms per page on the same "
              "machine, this run."]
    return lines
