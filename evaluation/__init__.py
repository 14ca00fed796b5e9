"""Evaluation infrastructure: metrics, dataset readers, site folds, gold labels, baselines, harness.

Used by ``scrapy evaluate``, ``bench/`` and the training code; the runtime library
(``extraction/``) and the crawl never import it.
"""
