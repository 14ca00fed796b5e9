"""The Markdown and JSON reports of ``bench.templates_msv`` (template library on msv-big5).

Both are written from the report dictionary alone (targets and guard reasons are in its
``settings``), so the Markdown can be rebuilt from the JSON.
"""

from __future__ import annotations

import json
from typing import Any


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.2f}%"


def _cut(text: str, width: int = 90) -> str:
    text = text.replace("|", "\\|")
    return text if len(text) <= width else text[: width - 1] + "…"


REASON_LABELS = {"running_text": "running text", "long_unique": "long unique", "page_title": "page title"}


def guard_line(guard: dict[str, int], reasons: list[str]) -> str:
    """Return the sentence giving the guard's decisions on the matched units, by reason."""
    kept = sum(guard.get(f"kept/{reason}", 0) for reason in reasons)
    return (f"Guard decisions (matched units, all pages): {guard.get('matched', 0)} matched, {guard.get('removed', 0)} "
            f"let go ({guard.get('removed_nodes', 0)} elements removed: a sentence removed whole takes its matched "
            f"inline leaves along), {kept} kept: "
            + ", ".join(f"{reason} {guard.get(f'kept/{reason}', 0)}" for reason in reasons) + ".")


def removal_table(loo: dict[str, Any], gold_max: float, reasons: list[str]) -> list[str]:
    """Return the Markdown lines of the per-site-and-year removal table (with the per-year and overall rows)."""
    blanks = " |" * (1 + len(reasons))
    out = ["| site | year | templates | gold tokens | gold removed | non-gold tokens | non-gold removed "
           "| let go by the guard | " + " | ".join(f"kept: {REASON_LABELS.get(r, r)}" for r in reasons)
           + " | gold removed, no guard | non-gold removed, no guard |",
           "|---|---:|---:|---:|---:|---:|---:|---:|" + "---:|" * len(reasons) + "---:|---:|"]
    for cell in loo["cells"].values():
        guard = cell["guard"]
        flag = " **!**" if cell["gold_removed"] > gold_max else ""
        out.append(f"| {cell['site']} | {cell['year']} | {cell['templates_mean']:.0f} | {cell['gold_before']} | "
                   f"{_pct(cell['gold_removed'])}{flag} | {cell['nongold_before']} | {_pct(cell['nongold_removed'])} | "
                   f"{guard.get('removed', 0)} | " + " | ".join(str(guard.get(f"kept/{r}", 0)) for r in reasons)
                   + f" | {_pct(cell['unguarded']['gold_removed'])} | {_pct(cell['unguarded']['nongold_removed'])} |")
    for year, shares in loo["by_year"].items():
        unguarded = loo["by_year_unguarded"][year]
        out.append(f"| **all** | {year} | | {shares['gold_before']} | {_pct(shares['gold_removed'])} | "
                   f"{shares['nongold_before']} | {_pct(shares['nongold_removed'])} |{blanks} "
                   f"{_pct(unguarded['gold_removed'])} | {_pct(unguarded['nongold_removed'])} |")
    total, unguarded = loo["overall"], loo["overall_unguarded"]
    out.append(f"| **all** | **all** | | {total['gold_before']} | **{_pct(total['gold_removed'])}** | "
               f"{total['nongold_before']} | **{_pct(total['nongold_removed'])}** |{blanks} "
               f"{_pct(unguarded['gold_removed'])} | {_pct(unguarded['nongold_removed'])} |")
    return out


def markdown(report: dict[str, Any]) -> str:
    """Return the report as Markdown."""
    loo, drift, settings = report["loo"], report["drift"], report["settings"]
    gold_max, nongold_aim = settings["gold_removed_max"], settings["nongold_removed_aim"]
    reasons = settings["guard_reasons"]
    out = ["# Template library (paper 004) on msv-big5", "",
           f"Command: `{report['command']}`; {report['date']}; dataset `{report['dataset_path']}` "
           f"({report['pages']} Big9 pages, {report['sites']} sites); run took {report['seconds']:.0f} s.", "",
           "## a. Removal shares (leave-one-out)", "",
           "Each page is cleaned with the templates that one batch of the *other* 9 pages of its site and year "
           f"promotes (in-memory `BatchCache`, frequency >= {settings['min_frequency']}, share = frequency/9), as the "
           "library does it: units are the leaves and the sentences of `leaf_tags` (sentences on), and the default "
           "`GuardRule` keeps a matched unit for one of its three reasons (running text; long unique text, "
           f">= {settings['guard_min_chars']} characters from a template with share < {settings['guard_min_share']}; "
           f"the page's own title, >= {settings['title_guard_min_chars']} characters found in `<title>` at partial "
           f"ratio >= {settings['title_guard_score']:.0f}). The templates are the same as `TemplateLibrary.finish()` "
           "stores: cross-checked on the first page of each "
           f"cell, {loo['crosscheck']['identical']}/{loo['crosscheck']['cells']} identical. Tokens: `\\w+` of "
           "`visible_text` before/after vs the gold text, as multisets (gold part = sum of min counts). Shares "
           "are micro sums over the pages of a row. \"No guard\": the same templates, every matched unit removed. "
           "A sentence removed whole takes its inline leaves along, so fewer elements can be removed than the "
           "matched units the guard let go.", "",
           f"**Overall: gold removed {_pct(loo['overall']['gold_removed'])} (target <= {gold_max:.0%}), "
           f"non-gold removed {_pct(loo['overall']['nongold_removed'])} (aim >= {nongold_aim:.0%}).** "
           f"Without the guard: gold removed {_pct(loo['overall_unguarded']['gold_removed'])}, non-gold removed "
           f"{_pct(loo['overall_unguarded']['nongold_removed'])}.", "",
           guard_line(loo["guard"], reasons), "",
           *removal_table(loo, gold_max, reasons)]
    residual = loo["residual_nongold"]
    residual_total = sum(residual.values()) or 1
    out += ["", "### Where the non-gold text that survives is", "",
            "After cleaning, every visible text piece (a unit's text: a leaf or a sentence as `leaf_tags` finds them; "
            "or a text/tail outside any unit, \"outside_leaves\") whose tokens do not occur contiguously in the gold "
            "text, by why no template removed it (units: longer than MAX_TEMPLATE_CHARS = "
            f"{settings['max_template_chars']} (\"long_leaf\"), kept by the guard, else the frequency of a close unit "
            "among the other 9 pages of the batch). Approximate: a piece is judged as a whole.", "",
            "| category | non-gold tokens | share | largest (site: text (tokens over all pages)) |",
            "|---|---:|---:|---|"]
    for category, count in residual.items():
        examples = "; ".join(f"{e['site']}: \"{_cut(e['text'], 60)}\" ({e['tokens']})"
                             for e in loo["residual_top"][category][:4])
        out.append(f"| {category} | {count} | {count / residual_total:.1%} | {examples} |")
    rates = [(c["match_rate"], c["expected_rate"]) for c in loo["cells"].values() if c["match_rate"] is not None]
    below = [f"{c['site']} {c['year']}" for c in loo["cells"].values()
             if c["match_rate"] is not None and c["match_rate"] < settings["drift_ratio"] * c["expected_rate"]]
    out += ["", "Drift-monitor margin within a layout (leave-one-out): mean match rate per cell "
            f"{min(r for r, _ in rates):.2f}..{max(r for r, _ in rates):.2f} against the rate the templates promise "
            f"(mean share) {min(e for _, e in rates):.2f}..{max(e for _, e in rates):.2f}; lowest ratio "
            f"{min(r / e for r, e in rates):.2f} (drift at < {settings['drift_ratio']}). Cells that would fire: "
            f"{', '.join(below) or 'none'}."]
    out += ["", "### Top causes of gold removal", "",
            "Gold tokens lost on a page are charged to its removed units in document order (a removed unit is "
            "charged only the tokens the page then lacks against the gold). \"in gold\": pages where the unit's "
            "tokens occur contiguously in the gold text (real content removed), otherwise the loss is a "
            "token coincidence (e.g. a nav word the gold also uses).", "",
            "| site | tag | unit text | matched template (share) | pages | gold tokens lost | in gold |",
            "|---|---|---|---|---:|---:|---:|"]
    for o in loo["top_offenders"]:
        template = "=" if o["template"] == o["text"] else _cut(o["template"], 50)
        out.append(f"| {o['site']} | {o['tag']} | {_cut(o['text'])} | {template} ({o['share']:.2f}) | {o['pages']} "
                   f"| {o['gold_tokens_lost']} | {o['in_gold_pages']} |")
    out += ["", f"### {len(loo['gold_examples'])} examples of gold text removed", ""]
    for number, o in enumerate(loo["gold_examples"], 1):
        out.append(f"{number}. {o['site']} `<{o['tag']}>` \"{_cut(o['text'], 200)}\" (template share "
                   f"{o['share']:.2f}, {o['pages']} page(s), e.g. {o['examples'][0]})")
    out += ["", "### Matched units the guard kept (top by tokens x pages)", "",
            "| site | reason | tag | text | pages | in gold |", "|---|---|---|---|---:|---|"]
    for k in loo["kept_by_guard_top"]:
        out.append(f"| {k['site']} | {k['reason']} | {k['tag']} | {_cut(k['text'])} | {k['pages']} | {k['in_gold']} |")
    out += ["", "## b. Extraction F1 with and without the template stage", "",
            "msv-big5 has no metric configured in `evaluation/harness.py` (`metric_for` raises for it); used "
            "here: the article-body shingle metric over `\\w+` tokens (`shingle_counts` + `corpus_prf`), the "
            "one `scrapy evaluate` uses for the other English news sets (cleaneval, l3s-gn1, dragnet). "
            "\"denoised\" = the leave-one-out cleaning of part a, then the method.", "",
            "| method | year | P as is | R as is | F1 as is | P denoised | R denoised | F1 denoised | ΔF1 |",
            "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for method, years in loo["f1"].items():
        for year, variants in years.items():
            a, d = variants["as_is"], variants["denoised"]
            out.append(f"| {method} | {year} | {a['precision']:.3f} | {a['recall']:.3f} | {a['f1']:.3f} | "
                       f"{d['precision']:.3f} | {d['recall']:.3f} | {d['f1']:.3f} | {d['f1'] - a['f1']:+.3f} |")
    out += ["", "## c. Layout drift (chronological, per site)", "",
            "Adaptive: a `TemplateLibrary` with the default config (batch 10, N2 3, drift window 10, ratio 0.5) "
            "on a fresh temporary store, fed each site's 40 pages in order 2005, 2009, 2013, 2017 (file order "
            "within a year); each page is cleaned (a copy) with the templates of the moment, then observed. "
            "Frozen: learned from the 2005 pages only (one batch), then never updated (`learn=False`); its 2005 "
            "row is in-sample. Match rate = share of the core templates (share >= 0.8, else all) found, mean over "
            "the pages "
            "that had templates (in brackets: how many; adaptive has none for a site's first 10 pages, and none "
            "after a drift until the next batch completes).", "",
            "How to read: here every layout has exactly 10 pages, i.e. one batch and one drift window. The "
            "adaptive library therefore cleans each year with the templates of the year before (they are promoted "
            "when the year's last page is observed), and drift can fire at the earliest on a year's 10th page, "
            "the same page whose observation completes the new layout's batch. So the adaptive rows measure "
            "stale templates, not the steady state; the steady state within a layout is part a (templates from "
            "the same site and year). 2009 is identical for both libraries (both hold the 2005 templates).", "",
            "| year | match rate adaptive | match rate frozen | templates adaptive | templates frozen "
            "| non-gold removed adaptive | non-gold removed frozen | gold removed adaptive | gold removed frozen |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for year, row in drift["per_year"].items():
        a, f = row["adaptive"], row["frozen"]
        out.append(f"| {year} | {_pct(a['match_rate'])} ({a['pages_with_templates']}) | {_pct(f['match_rate'])} | "
                   f"{a['templates_mean']:.0f} | {f['templates_mean']:.0f} | {_pct(a['nongold_removed'])} | "
                   f"{_pct(f['nongold_removed'])} | {_pct(a['gold_removed'])} | {_pct(f['gold_removed'])} |")
    out += ["", f"Drift fired {len(drift['firings'])} time(s):", ""]
    for firing in drift["firings"]:
        out.append(f"- {firing['site']}: page {firing['index']}/40 ({firing['year']}, `{firing['page']}`), "
                   f"{firing['templates']} templates retired")
    if not drift["firings"]:
        out.append("- none")
    out += ["", "Per site and year (adaptive match rate / frozen match rate):", "",
            "| site | " + " | ".join(drift["per_year"]) + " |", "|---|" + "---:|" * len(drift["per_year"])]
    for site in sorted({r["site"] for r in drift["pages"]}):
        cells = []
        for year in drift["per_year"]:
            rows = [r for r in drift["pages"] if r["site"] == site and str(r["year"]) == year]
            by_library = {name: [r[name]["match_rate"] for r in rows if r[name]["match_rate"] is not None]
                          for name in ("adaptive", "frozen")}
            cells.append(" / ".join(f"{100 * sum(v) / len(v):.0f}%" if v else "—" for v in by_library.values()))
        out.append(f"| {site} | " + " | ".join(cells) + " |")
    out += ["", f"Settings: `{json.dumps(report['settings'])}`", ""]
    return "\n".join(out)


def _rounded(value: Any) -> Any:
    if isinstance(value, float):
        return round(value, 5)
    if isinstance(value, dict):
        return {key: _rounded(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_rounded(item) for item in value]
    return value


def dump_json(report: dict[str, Any]) -> str:
    """Return the report as JSON: floats rounded to 5 decimals, the per-page records one per line
    without the shares derived from their counts."""
    data = _rounded(report)
    derived = ("pages", "gold_removed", "nongold_removed", "match_rate")  # recomputable from the counts
    loo_rows = [{k: v for k, v in row.items() if k not in derived} for row in data["loo"].pop("pages")]
    drift_rows = [{k: ({kk: vv for kk, vv in v.items() if kk not in derived} if isinstance(v, dict) else v)
                   for k, v in row.items()} for row in data["drift"].pop("pages")]
    records = {"loo": loo_rows, "drift": drift_rows}
    data["loo"]["pages"], data["drift"]["pages"] = "@loo@", "@drift@"
    text = json.dumps(data, indent=1, ensure_ascii=False)
    for key, rows in records.items():
        lines = ",\n".join("  " + json.dumps(row, ensure_ascii=False) for row in rows)
        text = text.replace(f'"@{key}@"', f"[\n{lines}\n ]")
    return text


