"""Pure extraction library: decoding, parsing and text algorithms.

Nothing in this package imports Scrapy: the crawl pipelines, the offline commands,
training and benchmarks all call the same functions.
"""
