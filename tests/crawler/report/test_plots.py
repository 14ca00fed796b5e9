"""The report's plots read as they should: plain numbers on log axes, the legend beside the bars."""

from __future__ import annotations

from matplotlib.backends.backend_agg import FigureCanvasAgg

from crawler.report import CrawlSummary
from crawler.report.html import sites_figure, text_figure


def _summary() -> CrawlSummary:
    summary = CrawlSummary()
    for n in range(300):
        summary.add({"url": f"http://s{n % 7}.test/{n}", "site": f"site-{n % 7}", "page_type": ("article", "list",
                     "other")[n % 3], "text": "word " * (10 + 37 * n), "lang": "en", "change": "new",
                     "fetch_ms": 5 + 13 * n, "fetched_at": "2026-11-25T10:00:00+00:00", "error": None})
    return summary


def test_log_axes_are_labelled_with_plain_numbers() -> None:
    figure = text_figure(_summary(), [("en", 300)])
    figure.canvas.draw()
    axis = figure.axes[0]
    labels = [label.get_text() for label in axis.get_xticklabels() if label.get_text()]
    assert labels and all("$" not in label and "mathdefault" not in label for label in labels), labels
    assert {"100", "1k", "10k"} & set(labels), labels


def test_the_legend_does_not_cover_the_bars() -> None:
    figure = sites_figure(_summary())
    canvas = FigureCanvasAgg(figure)  # what savefig draws the PNG with
    canvas.draw()
    axis = figure.axes[0]
    legend = axis.get_legend()
    assert legend is not None
    renderer = canvas.get_renderer()
    box, plot = legend.get_window_extent(renderer), axis.get_window_extent(renderer)
    assert box.x0 >= plot.x1 or not box.overlaps(plot), (box, plot)
