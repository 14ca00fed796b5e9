"""Out-of-fold page-type probabilities for the gate's training pages that the DOM/URL model trained on.

The gate reads the page-level model's probabilities (``page_type_probabilities``). On the pages that model
trained on (wcxb-dev and chinese-wced-dev outside the held-out fold: most of the gate's training rows) the
crawl's records carry its in-sample probabilities, nearly always right (1,310 of 1,316 wcxb-dev pages typed as
labelled): a gate trained on them would learn to trust the page type far more than it deserves on a site the
model never saw. So those rows get the probabilities of the model trained without their fold, as a stacked
model's inputs are made: the shipped model's own recipe (``models/pagetype/meta.json`` "dom": its family and
parameters, its grouped folds, its URL-less, chrome, short and wire copies, from
``models.training.train_pagetype_dom``) refit per fold, and the held-out fold's pages, and the gate's older
copies of them (``models.training.gate_copies``), typed by it. The DOM features come from
``models.training.pagetype_dom_data`` (cached under ``$PAGETYPE_CACHE``); those of the older copies are
computed here, as the crawl computes them (decoded, parsed, with the copy's URL).
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor

import numpy as np
import numpy.typing as npt
from threadpoolctl import threadpool_limits

from evaluation.replay import ReplayPage
from models.training import pagetype_dom_data as dom_data
from models.training import train_pagetype_dom as dom_train
from models.training.gate_data import cache_dir
from models.training.pagetype_meta import META_PATH

logger = logging.getLogger(__name__)

Key = tuple[str, str, str]  # (dataset, page id, replayed URL)


def _copy_features(item: dom_data.Item) -> npt.NDArray[np.float32]:
    return dom_data.item_features(item)


def dom_oof(copies: Sequence[ReplayPage] = ()) -> dict[tuple[str, str], npt.NDArray[np.float64]]:
    """Return ``{(dataset, page id): probabilities}`` of every DOM training page (the fold model that held it
    out), and ``{(dataset, page id + "#" + URL): ...}`` of each of ``copies`` whose page it is. Cached beside the
    gate's training records, keyed by the shipped page-type model's meta.json and the copies' URLs and bytes."""
    digest = hashlib.sha256(META_PATH.read_bytes())
    for page in copies:
        digest.update(f"{page.dataset}\t{page.key}\t{page.url}\t{hashlib.sha256(page.body).hexdigest()}\n".encode())
    path = cache_dir() / f"dom-oof-{digest.hexdigest()[:16]}.json"
    if path.exists():
        logger.info("Out-of-fold page types from %s", path)
        stored = json.loads(path.read_text(encoding="utf-8"))
        return {(dataset, key): np.asarray(p, dtype=np.float64) for dataset, key, p in stored}
    out = _dom_oof(copies)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps([[dataset, key, [round(float(v), 6) for v in p]] for (dataset, key), p in out.items()]),
                    encoding="utf-8")
    return out


def _dom_oof(copies: Sequence[ReplayPage]) -> dict[tuple[str, str], npt.NDArray[np.float64]]:
    meta = json.loads(META_PATH.read_text(encoding="utf-8"))["dom"]
    family, params, seed = meta["model"]["family"], meta["model"]["params"], int(meta.get("seed", 0))
    if family != "hist_gradient_boosting":
        raise ValueError(f"the shipped DOM model is a {family}: only hist_gradient_boosting is refit here")
    items = dom_data.training_items()
    if dom_data.items_hash(items) != meta["training_data"]["items_hash"]:
        logger.warning("the DOM model's training pages differ from the shipped model's (items hash)")
    x = dom_data.load_features(items, "train", True)
    y = np.asarray([item.label for item in items], dtype=np.str_)
    groups = np.asarray([item.group for item in items], dtype=np.str_)
    splits = dom_train.grouped_splits(groups)
    augment = [dom_data.chrome_copies(items, seed, True) if meta["model"].get("augment_chrome") else None,
               dom_data.short_copies(items, seed, True) if meta["model"].get("augment_short") else None,
               dom_data.wire_copies(items, seed, True) if meta["model"].get("augment_wire") else None]
    augmentation = [copy for copy in augment if copy is not None]
    index = {(item.dataset, item.page_id): i for i, item in enumerate(items)}
    mine = [(index[(page.dataset, page.key.removesuffix("#old"))], page) for page in copies
            if (page.dataset, page.key.removesuffix("#old")) in index]
    copy_items = [dom_data.Item(page.dataset, page.key, "", "", "", page.url, body=page.body) for _, page in mine]
    with ProcessPoolExecutor(max_workers=dom_data.N_JOBS) as pool:
        x_copies = np.asarray(list(pool.map(_copy_features, copy_items, chunksize=16)), dtype=np.float32) \
            if copy_items else np.zeros((0, x.shape[1]), dtype=np.float32)
    owners = np.asarray([i for i, _ in mine], dtype=np.int64)
    out: dict[tuple[str, str], npt.NDArray[np.float64]] = {}
    with threadpool_limits(limits=dom_train.OPENMP_THREADS, user_api="openmp"):
        for fold, (train, test) in enumerate(splits):
            x_train, y_train = dom_train.training_rows(x, y, train, dom_train.AUGMENT_NO_URL, augmentation)
            model = dom_train.hist_gradient_boosting(params, seed).fit(x_train, y_train)
            if list(model.classes_) != list(dom_train.CLASSES):
                raise ValueError(f"fold {fold} without every class: {model.classes_}")
            for i, p in zip(test, model.predict_proba(x[test]), strict=True):
                out[(items[i].dataset, items[i].page_id)] = p.astype(np.float64)
            held = np.isin(owners, test)
            if held.any():
                for (_, page), p in zip([m for m, h in zip(mine, held, strict=True) if h],
                                        model.predict_proba(x_copies[held]), strict=True):
                    out[(page.dataset, f"{page.key.removesuffix('#old')}#{page.url}")] = p.astype(np.float64)
            logger.info("DOM fold %d: %d pages typed out of fold", fold, len(test))
    return out
