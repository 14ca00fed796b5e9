"""The crawl report as one self-contained HTML page: tables, matplotlib plots and screenshots inlined as data URIs
(no script, no outside resource), so it can be mailed, archived or opened anywhere.

Sections (each an element with its id): ``overview`` (the crawl's own stats), ``sites``, ``page-types``,
``errors``, ``changes`` (new, changed, duplicate), ``templates`` (library size and the share of pages cleaned),
``text`` (empty-text rate, text lengths), ``languages``, ``timings`` (fetch and render times, pages over time),
``sample`` (screenshots beside their type and first lines of text) and ``all-stats``. A number that comes from
the stats carries ``data-stat="<key>"`` (what the tests compare with the stats file).
"""

from __future__ import annotations

import base64
import html
import io
import logging
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any

import matplotlib
import numpy as np
from matplotlib.figure import Figure  # no pyplot: no global figures, and 0.3 s less to import
from matplotlib.ticker import FuncFormatter, NullFormatter
from PIL import Image

from crawler.report.summary import EMPTY_TEXT_CHARS, TIME_BUCKET_SECONDS, CrawlSummary, LogHistogram, Sampled

logger = logging.getLogger(__name__)
matplotlib.rcParams["text.parse_math"] = False  # a site or language named with "$" is text, not a formula

THUMBNAIL_WIDTH = 320  # px of a sampled screenshot in the report (JPEG)
THUMBNAIL_MAX_HEIGHT = 480
PLOT_SITES = 20  # sites drawn in the per-site plot (the largest)
TYPE_COLOURS = {"article": "#3b7dd8", "list": "#e39b2d", "other": "#8c8c8c", "untyped": "#cccccc"}
# The crawl's stats shown in the overview: (key, label).
OVERVIEW_STATS: tuple[tuple[str, str], ...] = (
    ("item_scraped_count", "records exported"), ("crawl/page", "pages fetched"),
    ("crawl/scheduled", "pages scheduled"), ("item_dropped_count", "records not exported"),
    ("pagetype/article", "typed article"), ("pagetype/list", "typed list"), ("pagetype/other", "typed other"),
    ("extract/empty", "pages without text"), ("render/page", "pages rendered"),
    ("dedup/exact", "exact duplicates"), ("dedup/near", "near duplicates"), ("dedup/canonical", "canonical duplicates"),
    ("export/skipped/revisit", "hubs revisited, not exported"), ("export/skipped/unchanged", "unchanged, not exported"),
    ("export/skipped/duplicate", "duplicates left out"), ("crawl/skipped/known", "known pages skipped"),
    ("archive/warc/captures", "pages archived (WARC)"), ("archive/warc/bytes", "WARC bytes"),
    ("templates/pages_matched", "pages with site templates"), ("elapsed_time_seconds", "seconds"),
    ("finish_reason", "finish reason"),
)

ScreenshotLoader = Callable[[Sampled], bytes | None]


def _number(value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return html.escape(str(value))
    if isinstance(value, float) and not value.is_integer():
        return f"{value:,.2f}"
    return f"{int(value):,}"


def _stat(stats: Mapping[str, Any], key: str) -> str:
    return f'<span data-stat="{html.escape(key)}">{_number(stats[key])}</span>'


def _share(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f}%" if whole else "—"


def _table(header: list[str], rows: list[list[str]], numeric_from: int = 1) -> str:
    head = "".join(f"<th>{cell}</th>" for cell in header)
    body = "".join("<tr>" + "".join(f'<td class="{"num" if i >= numeric_from else ""}">{cell}</td>'
                                    for i, cell in enumerate(row)) + "</tr>" for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _png(figure: Any) -> str:
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=90)  # Agg; laid out by the figure's "tight" layout engine
    return '<img class="plot" alt="plot" src="data:image/png;base64,' + base64.b64encode(buffer.getvalue()).decode() \
        + '">'


def _log_histogram(axis: Any, histogram: LogHistogram, label: str, colour: str) -> None:
    edges = np.asarray(histogram.edges())
    counts = np.asarray(histogram.counts, dtype=float)
    used = np.flatnonzero(counts)
    low, high = used.min(), used.max() + 1
    axis.bar(edges[low:high], counts[low:high], width=np.diff(edges)[low:high], align="edge", color=colour,
             alpha=0.8, label=label)
    axis.set_xscale("log")
    # Matplotlib labels a log axis in mathtext ("$\\mathdefault{10^{2}}$"), which text.parse_math off (above)
    # prints as it is: plain numbers instead.
    axis.xaxis.set_major_formatter(FuncFormatter(_plain_number))
    axis.xaxis.set_minor_formatter(NullFormatter())


def _plain_number(value: float, _position: Any = None) -> str:
    """Return a tick's number as text: 1, 10, 100, 1k, 10k, 1M."""
    for size, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if value >= size:
            return f"{value / size:g}{suffix}"
    return f"{value:g}"


def _sites_plot(summary: CrawlSummary) -> str:
    return _png(sites_figure(summary))


def sites_figure(summary: CrawlSummary) -> Figure:
    """Return the plot of records per site by page type (the legend beside the bars)."""
    sites = sorted(summary.sites.items(), key=lambda item: -item[1].records)[:PLOT_SITES]
    figure = Figure(figsize=(8, 0.35 * len(sites) + 1.2), layout="tight")
    axis = figure.subplots()
    names = [name for name, _ in sites][::-1]
    left = np.zeros(len(names))
    for kind in ("article", "list", "other", "untyped", "error"):
        counts = np.array([(site.types[kind] if kind != "error" else sum(site.errors.values()))
                           for _, site in sites][::-1], dtype=float)
        if counts.any():
            axis.barh(names, counts, left=left, color=TYPE_COLOURS.get(kind, "#d9534f"), label=kind)
            left += counts
    axis.set_xlabel("records")
    if axis.get_legend_handles_labels()[0]:  # a crawl without records draws no bars
        axis.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False)  # beside, not on, bars
    axis.set_title(f"Records per site by page type ({len(sites)} largest sites)")
    return figure


def _timings_plot(summary: CrawlSummary) -> str:
    figure = Figure(figsize=(10, 3), layout="tight")
    axes = figure.subplots(1, 2)
    if summary.fetch_ms.total:
        _log_histogram(axes[0], summary.fetch_ms, "fetch", "#3b7dd8")
    if summary.render_ms.total:
        _log_histogram(axes[0], summary.render_ms, "render", "#e39b2d")
    axes[0].set_xlabel("milliseconds per page (log)")
    axes[0].set_ylabel("pages")
    if axes[0].get_legend_handles_labels()[0]:
        axes[0].legend(fontsize=8)
    axes[0].set_title("Fetch and render times")
    if summary.fetched_at:
        buckets = sorted(summary.fetched_at)
        moments = (np.asarray(buckets) - buckets[0] + 1) * TIME_BUCKET_SECONDS  # the end of each bucket
        minutes = moments.max() >= 600
        axes[1].step(np.concatenate([[0], moments]) / (60.0 if minutes else 1.0),
                     np.concatenate([[0], np.cumsum([summary.fetched_at[b] for b in buckets])]), where="post",
                     color="#5cb85c")
        axes[1].set_xlabel(f"{'minutes' if minutes else 'seconds'} since the first page "
                           f"({TIME_BUCKET_SECONDS}-second steps)")
    axes[1].set_ylabel("pages fetched (cumulative)")
    axes[1].set_title("Pages over time")
    return _png(figure)


def _text_plot(summary: CrawlSummary, languages: list[tuple[str, int]]) -> str:
    return _png(text_figure(summary, languages))


def text_figure(summary: CrawlSummary, languages: list[tuple[str, int]]) -> Figure:
    """Return the plots of text lengths (a log axis) and languages."""
    figure = Figure(figsize=(10, 3), layout="tight")
    axes = figure.subplots(1, 2)
    if summary.text_chars.total:
        _log_histogram(axes[0], summary.text_chars, "text", "#3b7dd8")
    axes[0].set_xlabel("characters of text (log)")
    axes[0].set_ylabel("pages")
    axes[0].set_title("Text length")
    if languages:
        names, counts = zip(*languages[:12], strict=True)
        axes[1].bar(names, counts, color="#8e6bbf")
        axes[1].tick_params(axis="x", rotation=45)
    axes[1].set_title("Languages (of pages with text)")
    return figure


def _thumbnail(data: bytes) -> str | None:
    try:
        with Image.open(io.BytesIO(data)) as opened:
            height = round(opened.height * THUMBNAIL_WIDTH / opened.width)
            thumbnail = opened.convert("RGB").resize((THUMBNAIL_WIDTH, max(1, height)))
            thumbnail = thumbnail.crop((0, 0, THUMBNAIL_WIDTH, min(height, THUMBNAIL_MAX_HEIGHT)))
            out = io.BytesIO()
            thumbnail.save(out, format="JPEG", quality=75)
    except Exception as exc:  # a broken image is left out of the report, not the report out of the crawl
        logger.warning("Screenshot not shown: %s", exc)
        return None
    return "data:image/jpeg;base64," + base64.b64encode(out.getvalue()).decode()


def _sample(summary: CrawlSummary, load: ScreenshotLoader | None) -> str:
    cards = []
    for page_type in sorted(summary.sample):
        for item in summary.sample[page_type]:
            image = _thumbnail(shot) if load is not None and item.has_screenshot and (shot := load(item)) else None
            picture = f'<img class="shot" alt="screenshot" src="{image}">' if image else \
                '<div class="noshot">no screenshot</div>'
            lines = "<br>".join(html.escape(line) for line in item.text.splitlines()[:6]) or "<em>no text</em>"
            confidence = f" ({item.confidence:.2f})" if isinstance(item.confidence, float) else ""
            cards.append(f'<div class="card">{picture}<div class="meta"><b class="type-{html.escape(page_type)}">'
                         f"{html.escape(page_type)}</b>{confidence} · {html.escape(item.site)}<br>"
                         f'<a href="{html.escape(item.url)}">{html.escape(item.title or item.url)}</a>'
                         f'<p class="text">{lines}</p></div></div>')
    return "".join(cards) or "<p>No extracted page to show.</p>"


STYLE = """
body{font:14px/1.45 system-ui,sans-serif;margin:2em auto;max-width:1200px;color:#222;padding:0 1em}
h1{font-size:1.6em}h2{border-bottom:1px solid #ddd;padding-bottom:.2em;margin-top:1.6em}
table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ddd;padding:.25em .6em;text-align:left}
td.num{text-align:right;font-variant-numeric:tabular-nums}th{background:#f4f4f4}
.grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(220px,1fr));gap:.3em 1.5em}
.plot{max-width:100%}.cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(340px,1fr));gap:1em}
.card{border:1px solid #ddd;border-radius:6px;overflow:hidden;background:#fafafa}
.shot{display:block;width:100%;border-bottom:1px solid #ddd}.noshot{padding:2em;text-align:center;color:#999}
.meta{padding:.5em .8em}.text{font-size:12px;color:#444;max-height:9em;overflow:hidden}
.type-article{color:#3b7dd8}.type-list{color:#e39b2d}.type-other{color:#666}
"""


def render_report(summary: CrawlSummary, stats: Mapping[str, Any] | None = None,
                  templates: Mapping[str, int] | None = None, load_screenshot: ScreenshotLoader | None = None,
                  title: str = "Crawl report") -> str:
    """Return the report page (see the module docstring). ``templates``: active templates per site in the
    store; ``load_screenshot``: the screenshot of a sampled page, or None."""
    stats = stats or {}
    records = summary.records
    types, errors, changes = summary.total("types"), summary.total("errors"), summary.total("changes")
    languages = summary.total("languages").most_common()
    extracted = records - sum(errors.values())
    empty = sum(site.empty for site in summary.sites.values())
    parts = [f"<h1>{html.escape(title)}</h1>",
             f"<p>Made {datetime.now(UTC).strftime('%Y-%m-%d %H:%M UTC')} from {records:,} records of "
             f"{len(summary.sites):,} sites" + (" and the crawl's stats." if stats else " (no stats file given).")
             + "</p>"]

    shown = [f"<div>{label}: <b>{_stat(stats, key)}</b></div>" for key, label in OVERVIEW_STATS if key in stats]
    elapsed = stats.get("elapsed_time_seconds")
    if isinstance(elapsed, int | float) and elapsed > 0 and "item_scraped_count" in stats:
        shown.append(f"<div>records per second: <b>{stats['item_scraped_count'] / elapsed:.2f}</b></div>")
    parts.append('<section id="overview"><h2>Overview</h2><div class="grid">' + "".join(shown)
                 + "</div></section>")

    rows = []
    for name, site in sorted(summary.sites.items(), key=lambda item: -item[1].records):
        fetched = f"crawl/site/{name}"
        rows.append([html.escape(name), _stat(stats, fetched) if fetched in stats else "—", _number(site.records),
                     _number(site.types["article"]), _number(site.types["list"]), _number(site.types["other"]),
                     _number(sum(site.errors.values())), _number(site.changes["new"]),
                     _number(site.changes["changed"]), _number(site.changes["duplicate"]),
                     _share(site.empty, site.extracted), _number(site.rendered)])
    parts.append('<section id="sites"><h2>Sites</h2>' + _table(
        ["site", "pages fetched", "records", "article", "list", "other", "errors", "new", "changed", "duplicate",
         "empty text", "rendered"], rows) + _sites_plot(summary) + "</section>")

    type_rows = [[html.escape(kind), _number(count), _share(count, extracted),
                  _stat(stats, f"pagetype/{kind}") if f"pagetype/{kind}" in stats else "—"]
                 for kind, count in types.most_common()]
    sources = [[html.escape(key.split("/")[-1]), _stat(stats, key)] for key in sorted(stats)
               if key.startswith("pagetype/source/")]
    parts.append('<section id="page-types"><h2>Page types</h2>'
                 + _table(["type", "records", "share", "stats"], type_rows)
                 + (_table(["decided by", "pages"], sources) if sources else "") + "</section>")

    error_rows = [[html.escape(key), _stat(stats, key)] for key in sorted(stats)
                  if key.startswith(("crawl/error/", "page/refused/", "extract/error/", "archive/error"))]
    record_errors = [[html.escape(reason), _number(count)] for reason, count in errors.most_common()]
    parts.append('<section id="errors"><h2>Errors</h2>'
                 + (_table(["stats key", "count"], error_rows) if error_rows else "<p>No error in the stats.</p>")
                 + (_table(["record error", "records"], record_errors) if record_errors
                    else "<p>No record with an error.</p>") + "</section>")

    change_rows = [[kind, _number(changes[kind])] for kind in ("new", "changed", "duplicate")]
    change_rows += [[html.escape(key), _stat(stats, key)] for key in sorted(stats)
                    if key.startswith(("export/skipped/", "dedup/", "crawl/skipped/known", "crawl/unchanged/"))]
    parts.append('<section id="changes"><h2>New, changed and duplicate records</h2>'
                 + _table(["", "count"], change_rows) + "</section>")

    template_rows = [[html.escape(name), _number((templates or {}).get(name, 0)) if templates is not None else "—",
                      _number(site.cleaned), _share(site.cleaned, site.extracted)]
                     for name, site in sorted(summary.sites.items(), key=lambda item: -item[1].records)]
    overall = ""
    if "templates/pages" in stats and "templates/pages_matched" in stats:
        overall = (f"<p>Pages on which learning found templates of their site (<code>templates/pages_matched"
                   f"</code>): {_stat(stats, 'templates/pages_matched')} of the "
                   f"{_stat(stats, 'templates/pages')} it read; a page is cleaned when templates were removed from "
                   "it.</p>")
    parts.append('<section id="templates"><h2>Template library</h2>' + overall
                 + _table(["site", "templates in the store", "pages cleaned", "share cleaned"], template_rows)
                 + "</section>")

    parts.append('<section id="text"><h2>Text</h2>'
                 f"<p>Empty text (under {EMPTY_TEXT_CHARS} character) on {empty:,} of {extracted:,} extracted pages "
                 f"({_share(empty, extracted)}); median length about "
                 f"{round(summary.text_chars.median() or 0):,} characters.</p></section>")
    parts.append('<section id="languages"><h2>Languages</h2>'
                 + _table(["language", "pages", "share"],
                          [[html.escape(lang), _number(count), _share(count, extracted - empty)]
                           for lang, count in languages])
                 + _text_plot(summary, languages) + "</section>")

    render_means = [[html.escape(key.split("/")[-1]), _stat(stats, key),
                     f"{stats[key] / stats['render/page']:.0f}" if stats.get("render/page") else "—"]
                    for key in sorted(stats) if key.startswith("render/ms/")]
    medians = [f"fetch median about {summary.fetch_ms.median():.0f} ms over {summary.fetch_ms.total:,} pages"
               if summary.fetch_ms.total else "no fetch times",
               f"render median about {summary.render_ms.median():.0f} ms over {summary.render_ms.total:,} pages"
               if summary.render_ms.total else "no page rendered"]
    parts.append('<section id="timings"><h2>Fetch and render times</h2><p>' + "; ".join(medians) + ".</p>"
                 + (_table(["render phase", "ms in all", "ms per rendered page"], render_means)
                    if render_means else "") + _timings_plot(summary) + "</section>")

    parts.append('<section id="sample"><h2>A sample of pages</h2><div class="cards">'
                 + _sample(summary, load_screenshot) + "</div></section>")

    every = [[html.escape(key), _stat(stats, key)] for key in sorted(stats)]
    parts.append('<section id="all-stats"><h2>All stats</h2><details><summary>' + f"{len(every)} keys</summary>"
                 + _table(["key", "value"], every) + "</details></section>")
    return (f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>'
            f"<style>{STYLE}</style></head><body>" + "\n".join(parts) + "</body></html>\n")
