"""The default extraction: page-type rule, paragraph trimming, the block pipeline in a crawl item."""

from __future__ import annotations

import numpy as np
import pytest
from scrapy.exceptions import NotConfigured
from scrapy.utils.test import get_crawler

from crawler.items import PageItem
from demo import build_sites
from evaluation.metrics import shingle_counts
from extraction.blockclf.classifier import trim_ends
from extraction.dom.html import parse_html
from extraction.process import LIST_MAX_PARAGRAPH, page_type_rule, run
from pipelines.blocks import BlockClassifierPipeline

LINKS = "".join(f"<li><a href='/n/{i}'>Headline number {i} about the council budget</a></li>" for i in range(30))


def test_link_heavy_page_without_long_paragraph_is_a_list():
    assert page_type_rule(parse_html(f"<html><body><ul>{LINKS}</ul><p>Short intro.</p></body></html>")) == "list"


def test_long_paragraph_makes_an_article_even_among_links():
    paragraph = "word " * (LIST_MAX_PARAGRAPH // 5 + 10)
    page = f"<html><body><ul>{LINKS}</ul><p>{paragraph}</p></body></html>"
    assert page_type_rule(parse_html(page)) == "article"


def test_declared_article_wins():
    head = '<head><script type="application/ld+json">{"@type": "NewsArticle"}</script></head>'
    assert page_type_rule(parse_html(f"<html>{head}<body><ul>{LINKS}</ul></body></html>")) == "article"
    og = '<head><meta property="og:type" content="article"></head>'
    assert page_type_rule(parse_html(f"<html>{og}<body><ul>{LINKS}</ul></body></html>")) == "article"


def test_trim_ends_drops_noise_at_head_and_tail_only():
    assert trim_ends(np.array([0.1, 0.9, 0.2, 0.8, 0.1]), 0.5) == [False, True, True, True, False]
    assert trim_ends(np.array([0.2, 0.1]), 0.5) == [True, True]  # a content block is never emptied


def _f1(predicted: str, gold: str) -> float:
    counts = shingle_counts(predicted, gold)
    return 0.0 if counts.tp == 0 else 2 * counts.tp / (2 * counts.tp + counts.fp + counts.fn)


def test_demo_articles_come_out_clean():
    """The shipped models on the demo sites' server-rendered articles (never trained on)."""
    scores = []
    for site in build_sites():
        for page in site.pages.values():
            if page.page_type != "article" or page.layout == "js-rendered":
                continue
            result = run(parse_html(page.html))
            assert result.extraction.page_type == "article"
            scores.append(_f1(result.extraction.text, "\n".join([page.title, *page.body])))
    assert len(scores) > 20
    assert float(np.mean(scores)) > 0.8, sorted(scores)[:5]


def test_pipeline_writes_text_method_and_stats():
    crawler = get_crawler(settings_dict={})
    crawler.stats.open_spider()
    pipeline = BlockClassifierPipeline.from_crawler(crawler)
    page = next(p for s in build_sites() for p in s.pages.values()
                if p.page_type == "article" and p.site == "en-gazette" and p.layout != "js-rendered")
    item = PageItem(url="u", canonical_url="u", site="en-gazette", fetched_at="t", html=page.html, text="full")
    pipeline.process_item(item)
    assert item.extraction_method == "svm" and item.page_type == "article"
    assert page.body[0][:60] in item.text and item.text != "full"
    assert item.block_stats is not None and 0 < item.block_stats["blocks_kept"] < item.block_stats["blocks"]
    assert crawler.stats.get_value("blocks/page_type/article") == 1
    failed = PageItem(url="u", canonical_url="u", site="s", fetched_at="t", html=None, error="http_404")
    assert pipeline.process_item(failed) is failed and failed.text == ""


def test_pipeline_can_be_switched_off():
    with pytest.raises(NotConfigured, match="BLOCKS_ENABLED"):
        BlockClassifierPipeline.from_crawler(get_crawler(settings_dict={"BLOCKS_ENABLED": False}))
