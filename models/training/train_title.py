"""Train the title chooser (``extraction.title``, ``models/title/``).

``python -m models.training.train_title [--out models/title]`` (``make train-title``, under a minute)

Pages: wcxb-dev outside its held-out fold (``evaluation.folds``; every page type), the only set that may
train shipped models and has gold titles, and the demo sites (``demo.content.build_sites``: their
generator knows each page's headline; Chinese and English, "Headline_Site" and "Headline | Site"
titles, as the page-type model). Each page's candidates are the ones the crawl's own
``extraction.metadata.fields.page_metadata`` builds (it hands them to a recorder in place of the model);
a candidate is the headline when its text equals the gold title after ``extraction.title.normal``.
The model is scikit-learn's HistGradientBoostingClassifier over ``extraction.title.FEATURES``. Grouped
5-fold CV by site gives every page its out-of-fold probabilities; from them the script chooses
``min_probability`` (``MIN_PROBABILITIES``: the lowest with the most pages right when a pick under it is
left to the rule) and reports how often the pick (``extraction.title.pick``) is the gold title, alone
and with the rule below ``min_probability``, beside how often ``choose_title``'s rule is right on the
same pages (read with the gold page type, as the crawl reads it with its own) and how often any
candidate is (the ceiling).
Exported to ONNX with skl2onnx and checked against scikit-learn (``train_stack.export``).
"""

from __future__ import annotations

import argparse
import logging
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from demo.content import build_sites
from evaluation.folds import data_hash, held_out, site_of
from evaluation.harness import load_pages
from extraction.dom.encoding import decode_html
from extraction.dom.html import parse_html
from extraction.metadata.fields import page_metadata
from extraction.title import (
    FEATURE_VERSION,
    FEATURES,
    TITLE_DIR,
    TRAIN_COMMAND,
    Candidate,
    candidate_features,
    normal,
    pick,
)
from models.training.block_svm import PARITY_ROWS
from models.training.train_stack import export

logger = logging.getLogger("train_title")

FOLDS = 5
SEED = 0
DEMO_URL = "http://127.0.0.1:8000"  # where `make demo` serves the demo sites
PARAMS: dict[str, Any] = {"learning_rate": 0.05, "max_iter": 200, "max_leaf_nodes": 15, "min_samples_leaf": 10,
                          "l2_regularization": 1.0}


MIN_PROBABILITIES = (0.0, 0.02, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5)


@dataclass
class PageRows:
    """One page's candidates as model rows."""

    candidates: list[Candidate]
    site_name: str | None
    x: npt.NDArray[np.float32]
    y: npt.NDArray[np.bool_]
    rule_right: bool  # choose_title's rule gives the gold title


class _Recorder:
    """Stands in for the model in ``page_metadata``: keeps what the model would be asked, chooses nothing."""

    def __init__(self) -> None:
        self.asked: tuple[list[Candidate], int, str | None, str | None] | None = None

    def choose(self, candidates: list[Candidate], h1_count: int, site_name: str | None,
               url: str | None) -> Candidate | None:
        self.asked = (candidates, h1_count, site_name, url)
        return None


def page_rows(body: bytes, url: str | None, title: str | None, content_type: str | None = None,
              article: bool = True) -> PageRows | None:
    """Return a page's candidate rows and labels against its gold ``title`` (None without one or a candidate);
    ``article``: the page is an article (the rule reads its ``<h1>`` only then)."""
    gold = normal(title or "")
    if not gold:
        return None
    root = parse_html(decode_html(body, content_type).text)
    recorder = _Recorder()
    # The recorder chooses nothing, so the title is the rule's: one call gives the candidates and the rule.
    rule = page_metadata(root, url, dates_by_htmldate=False, headline=article, title_model=recorder).title
    if recorder.asked is None or not recorder.asked[0]:
        return None
    candidates, h1_count, site_name, url = recorder.asked
    return PageRows(candidates, site_name, candidate_features(candidates, h1_count, site_name, url),
                    np.asarray([c.key == gold for c in candidates], dtype=bool), normal(rule or "") == gold)


def scores(picks: list[tuple[float, bool, bool]], min_probability: float) -> int:
    """Return the pages right when a pick under ``min_probability`` is left to the rule; ``picks``: per page,
    the pick's probability, whether it is right, whether the rule is."""
    return sum(right if probability >= min_probability else rule for probability, right, rule in picks)


def main(argv: list[str] | None = None) -> int:
    """Train, cross-validate and export; return the exit status."""
    from sklearn.ensemble import HistGradientBoostingClassifier
    from sklearn.model_selection import GroupKFold

    parser = argparse.ArgumentParser(prog="python -m models.training.train_title", description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=str(TITLE_DIR))
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s", stream=sys.stderr)
    pages, rows, groups = [], [], []
    for page in load_pages("wcxb-dev"):
        if held_out(page):
            continue
        found = page_rows(page.html_bytes(), page.url, str(page.extra.get("title") or ""),
                          article=page.page_type == "article")
        if found is not None:
            pages.append(page)
            rows.append(found)
            groups.append(site_of(page))
    wcxb = len(rows)
    for site in build_sites():
        for demo_page in site.pages.values():
            found = page_rows(demo_page.body_bytes, DEMO_URL + demo_page.path, demo_page.title,
                              f"text/html; charset={demo_page.encoding}", article=demo_page.page_type == "article")
            if found is not None:
                rows.append(found)
                groups.append(f"demo/{site.name}")
    logger.info("%d training pages (wcxb-dev %d, demo %d), %d candidates", len(rows), wcxb, len(rows) - wcxb,
                sum(len(r.y) for r in rows))
    x = np.concatenate([r.x for r in rows])
    y = np.concatenate([r.y for r in rows])
    page_of = np.concatenate([np.full(len(r.y), i) for i, r in enumerate(rows)])
    picks: list[tuple[float, bool, bool]] = [(0.0, False, False)] * len(rows)  # out of fold, per page
    for train, test in GroupKFold(FOLDS).split(np.arange(len(rows)), groups=groups):
        chosen = np.isin(page_of, train)
        model = HistGradientBoostingClassifier(random_state=SEED, **PARAMS).fit(x[chosen], y[chosen])
        for i in test:
            probabilities = model.predict_proba(rows[i].x)[:, 1]
            index = pick(rows[i].candidates, probabilities, rows[i].site_name)
            picks[i] = (float(probabilities[index]), bool(rows[i].y[index]), rows[i].rule_right)
    by_threshold = {threshold: scores(picks, threshold) for threshold in MIN_PROBABILITIES}
    min_probability = max(MIN_PROBABILITIES, key=lambda t: (by_threshold[t], -t))
    cv = {"folds": FOLDS, "grouping": "site (evaluation.folds.site_of)", "top1": by_threshold[0.0] / len(rows),
          "with_rule": {str(t): n / len(rows) for t, n in by_threshold.items()},
          "top1_with_rule": by_threshold[min_probability] / len(rows),
          "rule_top1": sum(r.rule_right for r in rows) / len(rows),
          "ceiling": sum(bool(r.y.any()) for r in rows) / len(rows)}
    logger.info("CV: the pick right on %.4f of pages, %.4f with the rule under %.2f (the rule alone %.4f; a right "
                "candidate exists on %.4f)", cv["top1"], cv["top1_with_rule"], min_probability, cv["rule_top1"],
                cv["ceiling"])
    model = HistGradientBoostingClassifier(random_state=SEED, **PARAMS).fit(x, y)
    meta = {"version": 1, "model": "HistGradientBoostingClassifier", "params": PARAMS, "features": list(FEATURES),
            "feature_version": FEATURE_VERSION, "min_probability": min_probability, "cv": cv, "pages": len(rows),
            "candidates": len(y), "wcxb_pages": wcxb, "demo_pages": len(rows) - wcxb,
            "data_hash": data_hash(pages), "data_hash_of": "the wcxb-dev pages (the demo is generated by code)",
            "train_command": TRAIN_COMMAND, "file": "model.onnx"}
    export(model, Path(args.out), meta, x[np.random.default_rng(SEED).choice(len(x), min(PARITY_ROWS, len(x)))])
    logger.info("wrote %s", args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
