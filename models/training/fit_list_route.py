"""Choose the confidence at which a page typed "list" goes to the list extractor.

    python -m models.training.fit_list_route

A page the page-type model calls a list may go to the list extractor or stay with the block
classifier. Sending an article to the list extractor costs far more than keeping a list page on
the block classifier (which still returns most of its text), so the route needs a threshold on
p(list). It is chosen on the training pages only: wcxb-dev outside the held-out fold (every page
type, with gold text), each with the DOM/URL model's out-of-fold probabilities from the
trainer's ``dom_predictions.jsonl`` (the site was never in the fold's training part). Per page
both extractors are scored (WCXB's bag-of-words F1); the threshold with the best mean F1 over all
pages is written to ``models/pagetype/meta.json`` (section ``route``).
"""

from __future__ import annotations

import json
import logging
import time

import numpy as np

from evaluation.datasets import iter_pages
from evaluation.folds import held_out
from evaluation.metrics import bow_prf
from extraction.blockclf.classifier import classify, shared_models
from extraction.dom.encoding import decode_html
from extraction.dom.html import parse_html
from extraction.methods import extract_tree
from extraction.process import LIST_METHOD
from models.training.pagetype_data import default_cache
from models.training.pagetype_meta import update_meta

logger = logging.getLogger("fit_list_route")
GRID = [round(t, 2) for t in np.arange(0.35, 1.0, 0.05)]


def main() -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    start = time.perf_counter()
    oof = {}
    for line in (default_cache() / "dom_predictions.jsonl").read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        if record["split"] == "oof" and record["dataset"] == "wcxb-dev":
            oof[record["page_id"]] = record["probs"][1]
    rows = []
    for page in iter_pages("wcxb-dev"):
        if held_out(page) or not page.gold_text or page.page_id not in oof:
            continue
        text = decode_html(page.html_bytes()).text
        root = parse_html(text)
        blocks = classify(root, shared_models()).text  # the text an article gets
        listed = extract_tree(parse_html(text), LIST_METHOD, page.url).text
        rows.append((oof[page.page_id], page.page_type, bow_prf(blocks, page.gold_text).f1,
                     bow_prf(listed, page.gold_text).f1))
    p_list = np.array([r[0] for r in rows])
    f_blocks = np.array([r[2] for r in rows])
    f_list = np.array([r[3] for r in rows])
    table = []
    per_page = {}
    for threshold in GRID:
        routed = p_list >= threshold
        per_page[threshold] = np.where(routed, f_list, f_blocks)
        table.append({"threshold": threshold, "mean_f1": float(per_page[threshold].mean()),
                      "routed": int(routed.sum()),
                      "routed_lists": int(sum(routed[i] and rows[i][1] == "list" for i in range(len(rows))))})
    top = max(table, key=lambda r: r["mean_f1"])
    # One-standard-error rule: the highest threshold whose mean F1 is within one standard error (of
    # the paired per-page difference) of the best; the curve is flat, and a high threshold keeps
    # link-heavy articles of other sites away from the list extractor.
    for row in table:
        diff = per_page[top["threshold"]] - per_page[row["threshold"]]
        row["se_vs_best"] = float(diff.std(ddof=1) / np.sqrt(len(diff))) if len(diff) > 1 else 0.0
    best = max((r for r in table if top["mean_f1"] - r["mean_f1"] <= r["se_vs_best"]), key=lambda r: r["threshold"])
    logger.info("never routed: mean F1 %.4f; best %.4f at %.2f; chosen %.2f: %.4f (%d pages routed, %d of them lists)",
                float(f_blocks.mean()), top["mean_f1"], top["threshold"], best["threshold"], best["mean_f1"],
                best["routed"], best["routed_lists"])
    update_meta("route", {"min_list_probability": best["threshold"], "pages": len(rows),
                          "mean_f1_never_routed": round(float(f_blocks.mean()), 4),
                          "mean_f1_routed": round(best["mean_f1"], 4),
                          "grid": [{k: round(v, 4) if isinstance(v, float) else v for k, v in r.items()}
                                   for r in table],
                          "source": "wcxb-dev training folds, DOM/URL out-of-fold p(list), bag-of-words F1",
                          "seconds": round(time.perf_counter() - start, 1)})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
