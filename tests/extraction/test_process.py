"""The one page flow: door, page type, entries, text, stats; the crawl's ProcessPipeline around it."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from collections import Counter
from typing import Any

import jsonschema
import numpy as np
import pytest
from lxml import html as lxml_html
from scrapy.utils.test import get_crawler

from demo import build_sites
from evaluation.metrics import shingle_counts
from extraction.blockclf import classifier
from extraction.blockclf.classifier import shared_models as shared_block_models
from extraction.blockclf.rules import trim_ends_lazily
from extraction.dom.html import parse_html
from extraction.dom.text import visible_text
from extraction.lists import list_page_entries
from extraction.methods import extract_tree
from extraction.page import Page
from extraction.pagetype.models import PageTypeModels
from extraction.pagetype.models import shared_models as shared_page_models
from extraction.pagetype.rule import LIST_MAX_PARAGRAPH, page_type_rule
from extraction.process import Context, process
from extraction.record import Record, schema
from extraction.templates import DenoiseResult
from pipelines.process import ProcessPipeline
from tests.crawl_helpers import REPO
from tests.extraction.blockclf.test_classifier import (
    BIG_PAGE_ADDRESS_SPACE,
    BIG_PAGE_BLOCKS,
    BIG_PAGE_MAX_RSS_MB,
    BIG_PAGE_PARAGRAPH,
    BIG_PAGE_TIMEOUT_S,
)

LINKS = "".join(f"<li><a href='/n/{i}'>Headline number {i} about the council budget</a></li>" for i in range(30))
DEMO = "http://demo.test"


def _demo_page(kind: str, site: str = "en-gazette") -> Any:
    return next(p for s in build_sites() for p in s.pages.values()
                if p.page_type == kind and p.site == site and p.layout != "js-rendered")


def _valid(record: Record) -> Record:
    """Return ``record`` after checking its export against the shipped JSON Schema."""
    jsonschema.validate(record.as_dict(), schema())
    return record


def _demo_entries(page: Any) -> list[dict[str, str | None]]:
    """The demo list page's headlines and links, as the record holds entries."""
    return [{"title": title, "url": DEMO + path} for title, path in zip(page.body, page.links, strict=True)]


class _LinkTemplates:
    """A site library (``SiteTemplates``) whose templates are every link of the page: cleaning
    empties a list page of its headlines, so entries read after cleaning would come out empty."""

    available = True
    learns = False

    def __init__(self, calls: list[str], fail: bool = False) -> None:
        self.calls = calls
        self.fail = fail

    def templates(self, site: str) -> list[str]:
        return ["every link"]

    def observe(self, site: str, root: Any = None, leaves: Any = None) -> Any:
        raise AssertionError("a library that does not learn is not taught")

    def denoise(self, site: str, root: Any, leaves: Any = None) -> DenoiseResult:
        self.calls.append("denoise")
        if self.fail:
            raise RuntimeError("store gone")
        links = root.xpath("//a")
        chars = sum(len(link.text_content()) for link in links)
        for link in links:
            link.drop_tree()
        return DenoiseResult(removed_nodes=len(links), removed_chars=chars)


def _context(**kwargs: Any) -> tuple[Context, Counter[str]]:
    counts: Counter[str] = Counter()

    def count(key: str, n: int = 1) -> None:
        counts[key] += n

    defaults: dict[str, Any] = {"page_models": shared_page_models(), "block_models": shared_block_models()}
    return Context(**{**defaults, **kwargs}, count=count), counts


@pytest.mark.parametrize("settings", [{}, {"PAGETYPE_ENABLED": False}, {"BLOCKS_ENABLED": False},
                                      {"TITLE_ENABLED": False}, {"BLOCKS_FAVOR": "precision"}])
def test_the_models_versions_read_without_loading_them_are_the_loaded_ones(settings: dict[str, Any]) -> None:
    # A crawl process whose workers load the models writes these versions in its WARC files' warcinfo.
    assert Context.pipeline_versions(settings) == Context.from_settings(settings).versions()


def test_blocks_favor_chooses_the_stacked_models_thresholds_and_is_recorded() -> None:
    balanced = Context.from_settings({}).block_models
    precision = Context.from_settings({"BLOCKS_FAVOR": "precision"}).block_models
    recall = Context.from_settings({"BLOCKS_FAVOR": "recall"}).block_models
    assert balanced is not None and precision is not None and recall is not None
    assert balanced.stack is not None and precision.stack is not None and recall.stack is not None
    assert precision.version == f"{balanced.version}@precision" and recall.version.endswith("@recall")
    # Precision keeps fewer blocks: a higher threshold on every page type; recall a lower one.
    assert balanced.stack.type_thresholds is not None
    for low, mid, high in zip(recall.stack.type_thresholds or (), balanced.stack.type_thresholds,
                              precision.stack.type_thresholds or (), strict=True):
        assert low <= mid <= high and low < high
    with pytest.raises(ValueError, match="BLOCKS_FAVOR"):
        Context.from_settings({"BLOCKS_FAVOR": "speed"})


def test_the_stacked_models_version_joins_the_blocks_version(tmp_path: Any) -> None:
    import shutil

    from extraction.paths import MODELS_DIR

    folder = tmp_path / "models"
    shutil.copytree(MODELS_DIR, folder, ignore=shutil.ignore_patterns("pagetype", "web2text", "training"))
    with_stack = Context.pipeline_versions({"BLOCKS_MODEL_DIR": str(folder)})["blocks"]
    assert "+" in with_stack
    assert with_stack == shared_block_models(folder).version
    shutil.rmtree(folder / "stack")
    assert Context.pipeline_versions({"BLOCKS_MODEL_DIR": str(folder)})["blocks"] == with_stack.split("+")[0]


def test_the_site_evidences_type_chooses_the_block_models_threshold() -> None:
    from dataclasses import replace

    from extraction.pagetype.site import SiteHint

    models = shared_block_models()
    assert models.stack is not None
    # No block reaches the list threshold: a page the site types list keeps only its most likely block.
    strict = replace(models, stack=replace(models.stack, type_thresholds=(models.stack.threshold, 1.01, 1.01)))
    article = _demo_page("article")
    context, counts = _context(block_models=strict)
    assert process(Page(article.body_bytes, DEMO + article.path), context).page_type == "article"
    assert not counts["blocks/fallback"]
    hinted = Page(article.body_bytes, DEMO + article.path, site_hint=SiteHint("list", 0.95, 12.0, "D4/S.html"))
    record = process(hinted, context)
    assert record.page_type == "list" and record.page_type_source == "site" and counts["blocks/fallback"] == 1


def test_link_heavy_page_without_long_paragraph_is_a_list() -> None:
    assert page_type_rule(parse_html(f"<html><body><ul>{LINKS}</ul><p>Short intro.</p></body></html>")) == "list"


def test_long_paragraph_makes_an_article_even_among_links() -> None:
    paragraph = "word " * (LIST_MAX_PARAGRAPH // 5 + 10)
    page = f"<html><body><ul>{LINKS}</ul><p>{paragraph}</p></body></html>"
    assert page_type_rule(parse_html(page)) == "article"


def test_declared_article_wins() -> None:
    head = '<head><script type="application/ld+json">{"@type": "NewsArticle"}</script></head>'
    assert page_type_rule(parse_html(f"<html>{head}<body><ul>{LINKS}</ul></body></html>")) == "article"
    og = '<head><meta property="og:type" content="article"></head>'
    assert page_type_rule(parse_html(f"<html>{og}<body><ul>{LINKS}</ul></body></html>")) == "article"


def _trim_ends(probabilities: list[float], threshold: float) -> list[bool]:
    """The paragraph trim read off every paragraph's probability (paper 003): leading and trailing ones under the
    threshold go, the middle stays, a block with none over it stays whole."""
    flags = [p >= threshold for p in probabilities]
    if not any(flags):
        return [True] * len(flags)
    first, last = flags.index(True), len(flags) - 1 - flags[::-1].index(True)
    return [first <= i <= last for i in range(len(flags))]


def test_trim_ends_drops_noise_at_head_and_tail_only_scoring_the_lines_it_reads() -> None:
    calls: list[int] = []

    def probability(rows: np.ndarray) -> np.ndarray:  # the "features" are each paragraph's probability
        calls.append(len(rows))
        return rows[:, 0]

    def trim(*blocks: list[float]) -> list[list[bool]]:
        calls.clear()
        return trim_ends_lazily([np.array(block).reshape(-1, 1) for block in blocks], probability, 0.5)

    assert trim([0.1, 0.9, 0.2, 0.8, 0.1]) == [[False, True, True, True, False]]
    assert trim([0.2, 0.1]) == [[True, True]]  # a content block is never emptied
    nan = float("nan")  # a model's NaN is under the threshold, as when every line is read; the rounds end
    assert trim([nan, 0.9, nan, 0.7, nan]) == [[False, True, True, True, False]]
    assert trim([nan, nan, nan]) == [[True, True, True]]
    # Lines whose ends are content: only the two ends are scored, in one call for every block.
    assert trim([0.9] * 50, [0.6, 0.1, 0.1, 0.7]) == [[True] * 50, [True] * 4] and calls == [4]
    # Noise at an end: rounds inward, each taking twice the lines of the one before.
    assert trim([0.1] * 6 + [0.9] * 44) == [[False] * 6 + [True] * 44] and calls == [2, 2, 4]
    rng = np.random.default_rng(7)
    for _ in range(300):
        blocks = [rng.choice([0.1, 0.9], size=int(rng.integers(2, 12)), p=[0.6, 0.4]).tolist()
                  for _ in range(int(rng.integers(1, 4)))]
        assert trim(*blocks) == [_trim_ends(block, 0.5) for block in blocks]
        assert sum(calls) <= sum(len(block) for block in blocks)


def _f1(predicted: str, gold: str) -> float:
    counts = shingle_counts(predicted, gold)
    return 0.0 if counts.tp == 0 else 2 * counts.tp / (2 * counts.tp + counts.fp + counts.fn)


def test_demo_articles_come_out_clean() -> None:
    """The shipped models on the demo sites' server-rendered articles, through process()."""
    context, _ = _context()
    scores = []
    for site in build_sites():
        for page in site.pages.values():
            if page.page_type != "article" or page.layout == "js-rendered":
                continue
            record = _valid(process(Page(page.body_bytes, DEMO + page.path), context))
            assert record.page_type == "article" and record.extraction_method == "stack"
            scores.append(_f1(record.text, "\n".join([page.title, *page.body])))
    assert len(scores) > 20
    assert float(np.mean(scores)) > 0.8, sorted(scores)[:5]


def test_article_record_fields_and_stats() -> None:
    page = _demo_page("article")
    context, counts = _context()
    record = _valid(process(Page(page.body_bytes, DEMO + page.path), context))
    assert record.error is None and record.title and page.body[0][:60] in record.text
    assert record.block_stats is not None and 0 < record.block_stats["blocks_kept"] < record.block_stats["blocks"]
    assert record.entries is None and record.encoding_source in ("meta", "header", "utf-8", "detected", "bom")
    assert set(record.models) == {"pagetype", "blocks"}
    assert counts["extract/stack"] == 1 and counts["pagetype/article"] == 1
    assert counts["blocks/kept"] == record.block_stats["blocks_kept"]


def _record_methods(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Return the names of the methods process() runs through the registry, filled as it runs
    ("entries" for the list extractor's entries alone, ``list_page_entries``)."""
    calls: list[str] = []

    def counting(root: Any, method: str = "fulltext", url: str | None = None, **models: Any) -> Any:
        calls.append(method)
        return extract_tree(root, method, url, **models)

    def entries(root: Any, url: str | None = None) -> Any:
        calls.append("entries")
        return list_page_entries(root, url)

    monkeypatch.setattr("extraction.process.extract_tree", counting)
    monkeypatch.setattr("extraction.process.list_page_entries", entries)
    return calls


def test_list_page_gets_entries_once_from_the_whole_page(monkeypatch: pytest.MonkeyPatch) -> None:
    page = _demo_page("list")
    calls = _record_methods(monkeypatch)
    context, counts = _context()
    record = _valid(process(Page(page.body_bytes, DEMO + page.path), context))
    assert record.page_type == "list" and calls == ["entries"]  # entries once; the text from the classifier
    assert record.entries == _demo_entries(page)
    assert record.extraction_method == "stack" and counts["pagetype/list_entries"] == len(record.entries)


def test_a_list_page_over_the_block_cap_gets_no_entries_and_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    page = _demo_page("list")
    calls = _record_methods(monkeypatch)
    monkeypatch.setattr("extraction.process.MAX_BLOCKS", 5)  # the demo list page has more blocks than that
    context, counts = _context()
    record = _valid(process(Page(page.body_bytes, DEMO + page.path), context))
    assert record.page_type == "list" and calls == [] and record.entries is None
    assert "entries_skipped" in record.flags and counts["pagetype/list_entries_skipped"] == 1
    assert page.body[0][:40] in record.text  # the text is read as on any page


def test_list_entries_are_taken_before_template_cleaning(monkeypatch: pytest.MonkeyPatch) -> None:
    page = _demo_page("list")
    calls = _record_methods(monkeypatch)
    context, counts = _context(templates=_LinkTemplates(calls))
    record = _valid(process(Page(page.body_bytes, DEMO + page.path, site="en-gazette"), context))
    assert calls == ["entries", "denoise"]  # entries once, from the page as fetched
    assert record.page_type == "list" and record.entries == _demo_entries(page)
    assert record.template_cleaning is not None and record.template_cleaning["removed_nodes"] > 0
    assert not any(title in record.text for title in page.body)  # the text is read from the cleaned tree
    assert counts["templates/denoised"] == 1 and counts["pagetype/list_entries"] == len(page.body)


def test_page_typing_off_means_no_type_and_no_entries() -> None:
    page = _demo_page("list")
    context, counts = _context(page_models=None)
    record = _valid(process(Page(page.body_bytes, DEMO + page.path), context))
    assert record.page_type is None and record.page_type_confidence is None and record.entries is None
    assert record.extraction_method == "stack" and record.text and set(record.models) == {"blocks"}
    assert not any(key.startswith("pagetype/") for key in counts)


def test_a_failing_step_flags_the_record_and_keeps_the_full_text(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("boom")

    monkeypatch.setattr("extraction.process.classify", broken)
    page = _demo_page("article")
    context, counts = _context()
    record = _valid(process(Page(page.body_bytes), context))
    assert record.flags == ["blocks_failed"] and record.error is None and record.block_stats is None
    assert record.extraction_method == "fulltext" and record.text == visible_text(parse_html(page.html))
    assert record.page_type == "article"  # the steps before the failing one stand
    assert counts["blocks/error"] == 1 and "extract/stack" not in counts and counts["extract/fulltext"] == 1


def test_a_failing_page_type_leaves_the_page_untyped(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("boom")

    monkeypatch.setattr(PageTypeModels, "classify", broken)
    page = _demo_page("list")
    context, counts = _context()
    record = _valid(process(Page(page.body_bytes, DEMO + page.path), context))
    assert record.flags == ["pagetype_failed"] and record.error is None
    assert record.page_type is None and record.page_type_confidence is None and record.entries is None
    assert record.extraction_method == "stack" and record.text  # the text step still runs
    assert counts["pagetype/error"] == 1 and "pagetype/list" not in counts


def test_a_failing_template_step_keeps_the_page_uncleaned() -> None:
    page = _demo_page("article")
    calls: list[str] = []
    context, counts = _context(templates=_LinkTemplates(calls, fail=True))
    record = _valid(process(Page(page.body_bytes, DEMO + page.path, site="en-gazette"), context))
    uncleaned = _valid(process(Page(page.body_bytes, DEMO + page.path), _context()[0]))
    assert calls == ["denoise"] and record.flags == ["templates_failed"] and record.template_cleaning is None
    assert record.text == uncleaned.text and record.extraction_method == "stack"
    assert counts["templates/error"] == 1


def test_refused_pages_stop_at_the_door() -> None:
    context, counts = _context()
    for body, reason in ((b"", "empty"), (b"  \n", "empty"), (b"%PDF-1.7 ...", "not_html"), (b"\x00\x01", "not_html")):
        record = _valid(process(Page(body), context))
        assert record.error == reason and record.text == "" and record.page_type is None
        assert record.encoding is None and record.models == {} and record.extraction_method is None
    assert counts["page/refused/empty"] == 2 and counts["page/refused/not_html"] == 2
    assert not any(key.startswith(("pagetype/", "extract/", "blocks/")) for key in counts)


def test_other_methods_and_fulltext() -> None:
    page = _demo_page("article")
    context, _ = _context(method="cetd-tpc", block_models=None)
    record = _valid(process(Page(page.body_bytes), context))
    assert record.extraction_method == "cetd-tpc" and page.body[0][:40] in record.text
    assert record.page_type == "article"  # typed whatever the method
    fulltext = _valid(process(Page(page.body_bytes), _context(block_models=None)[0]))
    assert fulltext.extraction_method == "fulltext" and fulltext.block_stats is None


def test_pipeline_method_of_the_registry_is_the_flow() -> None:
    page = _demo_page("list")
    extraction = extract_tree(parse_html(page.html), "pipeline", DEMO + page.path)
    record = _valid(process(Page(page.body_bytes, DEMO + page.path), _context()[0]))
    assert extraction.text == record.text and extraction.page_type == record.page_type
    assert [{"title": e.text, "url": e.url} for e in extraction.entries] == record.entries


def test_process_pipeline_fills_the_item_and_counts() -> None:
    crawler = get_crawler(settings_dict={"EXTRACT_WORKERS": 0, "ARCHIVE_ENABLED": False, "TEMPLATES_ENABLED": False})
    assert crawler.stats is not None
    crawler.stats.open_spider()
    pipeline = ProcessPipeline.from_crawler(crawler)
    page = _demo_page("article")
    item = Record(url="u", site="en-gazette", page=Page(page.body_bytes, DEMO + page.path))
    assert pipeline.process_item(item) is item
    _valid(item)
    assert item.extraction_method == "stack" and item.page_type == "article" and item.page is None
    assert page.body[0][:60] in item.text and item.text != visible_text(parse_html(page.html))
    assert item.block_stats is not None and 0 < item.block_stats["blocks_kept"] < item.block_stats["blocks"]
    assert item.url == "u" and item.site == "en-gazette"  # what the spider set stays
    stats = crawler.stats
    assert stats.get_value("extract/stack") == 1 and stats.get_value("pagetype/article") == 1
    assert stats.get_value("blocks/kept") == item.block_stats["blocks_kept"]
    assert stats.get_value("pagetype/list") is None and stats.get_value("extract/empty") is None
    failed = Record(url="u", status=404, error="http_404", page=Page(page.body_bytes, DEMO + page.path))
    before = failed.as_dict()
    assert pipeline.process_item(failed) is failed and _valid(failed).as_dict() == before  # untouched
    assert failed.text == "" and failed.page_type is None and stats.get_value("extract/stack") == 1
    assert pipeline.process_item(Record(url="no page")).as_dict() == Record(url="no page").as_dict()


def test_process_pipeline_without_page_typing() -> None:
    crawler = get_crawler(settings_dict={"EXTRACT_WORKERS": 0, "ARCHIVE_ENABLED": False, "TEMPLATES_ENABLED": False,
                                         "PAGETYPE_ENABLED": False})
    assert crawler.stats is not None
    crawler.stats.open_spider()
    pipeline = ProcessPipeline.from_crawler(crawler)
    assert pipeline.context.page_models is None and pipeline.context.block_models is not None
    page = _demo_page("list")
    item = _valid(pipeline.process_item(Record(url="u", page=Page(page.body_bytes, DEMO + page.path))))
    assert item.page_type is None and item.page_type_confidence is None and item.entries is None
    assert item.extraction_method == "stack" and item.text and set(item.models) == {"blocks", "title"}
    assert not any(key.startswith("pagetype/") for key in crawler.stats.get_stats())
    assert crawler.stats.get_value("extract/stack") == 1


def test_process_pipeline_settings_switch_models_off() -> None:
    crawler = get_crawler(settings_dict={"EXTRACT_WORKERS": 0, "ARCHIVE_ENABLED": False, "TEMPLATES_ENABLED": False,
                                         "BLOCKS_ENABLED": False, "PAGETYPE_ENABLED": "false", "TITLE_ENABLED": "0"})
    assert crawler.stats is not None
    crawler.stats.open_spider()
    pipeline = ProcessPipeline.from_crawler(crawler)
    assert pipeline.context.page_models is None and pipeline.context.block_models is None
    item = _valid(pipeline.process_item(Record(page=Page(_demo_page("article").body_bytes))))
    assert item.extraction_method == "fulltext" and item.page_type is None and item.models == {}


def test_a_page_over_the_block_cap_is_flagged(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(classifier, "MAX_BLOCKS", 3)
    page = _demo_page("article")
    context, counts = _context()
    record = _valid(process(Page(page.body_bytes), context))
    assert "blocks_capped" in record.flags and record.block_stats is not None
    assert counts["blocks/capped"] == record.block_stats["blocks_capped"] > 0


_BIG_PAGE_FLOW = textwrap.dedent("""
    import resource, sys, time
    resource.setrlimit(resource.RLIMIT_AS, ({limit}, {limit}))
    from extraction.page import Page
    from extraction.process import Context, process
    context = Context.from_settings({{}})
    paragraph = sys.stdin.read()
    links = [f"<div><a href=/x{{i}}>link {{i}}</a></div>" for i in range({blocks})]
    half = len(links) // 2
    body = ("<html><head><title>Reservoir</title></head><body>" + "".join(links[:half])
            + "<article><h1>Reservoir</h1><p>" + paragraph + "</p></article>" + "".join(links[half:])
            + "</body></html>").encode()
    del links
    start = time.monotonic()
    record = process(Page(body, "http://big.test/a.html"), context)
    seconds = time.monotonic() - start
    # VmHWM: the peak of this program's own memory (ru_maxrss would also count the forking pytest
    # process, whose high-water mark exec passes on to the child).
    status = open('/proc/self/status').read()
    rss_mb = int(status.split('VmHWM:')[1].split()[0]) // 1024
    print(len(body), paragraph in record.text, record.error, "blocks_capped" in record.flags, rss_mb, seconds)
""")


@pytest.mark.slow
def test_a_17_mb_page_of_400000_blocks_goes_through_the_whole_flow_bounded() -> None:
    """Issue 12's bad input: the whole flow (door, page type, templates off, text) in under a minute
    and 1 GB, with the article's paragraph in the text."""
    code = _BIG_PAGE_FLOW.format(limit=BIG_PAGE_ADDRESS_SPACE, blocks=BIG_PAGE_BLOCKS)
    done = subprocess.run([sys.executable, "-c", code], input=BIG_PAGE_PARAGRAPH, capture_output=True, text=True,
                          timeout=3 * BIG_PAGE_TIMEOUT_S, cwd=REPO, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    size, found, error, capped, rss_mb, seconds = done.stdout.split()
    assert int(size) > 16_000_000 and found == "True" and error == "None" and capped == "True"
    assert int(rss_mb) < BIG_PAGE_MAX_RSS_MB and float(seconds) < BIG_PAGE_TIMEOUT_S


def test_records_are_written_in_nfc_without_invisible_characters() -> None:
    # The demo's list and article pages with soft hyphens, zero-width spaces and decomposed letters in every
    # text node and attribute value (headline, description, entries, text): the record has none of them
    # (extraction.dom.text.tidy_text), and the words read whole.
    def marked(text: str) -> str:
        return text.replace("Port", "Po\u00adrt").replace("Marlow", "Mar\u200blow").replace("é", "e\u0301")

    for kind in ("list", "article"):
        page = _demo_page(kind)
        root = parse_html(page.body_bytes.decode(page.encoding))
        for element in root.iter():
            if element.tag in ("script", "style"):
                continue
            element.text, element.tail = marked(element.text or ""), marked(element.tail or "")
            for name, value in element.attrib.items():
                element.set(name, marked(value))
        html_bytes = lxml_html.tostring(root, encoding="utf-8")
        assert "\u00ad".encode() in html_bytes and "\u200b".encode() in html_bytes
        record = _valid(process(Page(html_bytes, DEMO + page.path, "text/html; charset=utf-8"), _context()[0]))
        fields = [record.text, record.title or "", record.description or "",
                  *(entry["title"] or "" for entry in record.entries or ())]
        assert record.page_type == kind and record.text
        assert not any(ch in field for field in fields for ch in "\u00ad\u200b\u0301"), kind
        assert "Port Marlow" in "\n".join(fields), kind


class _FixedGate:
    """An article gate of a fixed probability (``extraction.gate.ArticleGate``'s interface): the flow's rule
    that the page type agrees with the gate, on both sides of the threshold."""

    version = "fixed"

    def __init__(self, probability: float | None, threshold: float = 0.5) -> None:
        self.fixed, self.threshold = probability, threshold
        self.seen: list[dict[str, Any]] = []

    def probability(self, record: Record) -> float:
        if self.fixed is None:
            raise ValueError("no probability")
        self.seen.append({"page_type": record.page_type, "page_type_source": record.page_type_source})
        return self.fixed


@pytest.mark.parametrize(("kind", "probability", "typed", "source"), [
    ("article", 0.9, "article", "dom"), ("article", 0.2, "list", "gate"),
    ("list", 0.2, "list", "dom"), ("list", 0.9, "article", "gate")])
def test_the_page_type_agrees_with_the_article_gate(kind: str, probability: float, typed: str, source: str) -> None:
    page = _demo_page(kind)
    gate = _FixedGate(probability)
    context, counts = _context(gate=gate)
    record = _valid(process(Page(page.body_bytes, DEMO + page.path), context))
    assert gate.seen == [{"page_type": kind, "page_type_source": "dom"}]  # the gate read the page-level type
    assert record.article_probability == probability
    assert record.page_type == typed and record.page_type_source == source
    assert record.page_type_probabilities is not None and set(record.page_type_probabilities) == {
        "article", "list", "other"}
    if source == "gate":
        assert record.page_type_confidence == (probability if typed == "article" else round(1 - probability, 4))
        assert counts[f"gate/override/{typed}"] == 1
    else:
        assert counts["gate/agree"] == 1


def test_a_failing_gate_leaves_the_page_type_and_flags_the_record() -> None:
    page = _demo_page("article")
    context, counts = _context(gate=_FixedGate(None))
    record = _valid(process(Page(page.body_bytes, DEMO + page.path), context))
    assert record.page_type == "article" and record.article_probability is None
    assert "gate_failed" in record.flags and counts["gate/error"] == 1


def test_gate_off_and_untyped_pages_have_no_article_probability() -> None:
    page = _demo_page("article")
    assert Context.from_settings({"PAGETYPE_GATE": False}).gate is None
    assert Context.from_settings({}).gate is None  # off by default (extraction/process.py PageTypeConfig.gate)
    record = process(Page(page.body_bytes, DEMO + page.path), _context(gate=None)[0])
    assert record.article_probability is None and record.page_type_probabilities is not None
    untyped = process(Page(page.body_bytes, DEMO + page.path), _context(page_models=None, gate=_FixedGate(0.9))[0])
    assert untyped.page_type is None and untyped.article_probability is None


def test_a_web_archive_copy_is_flagged() -> None:
    body = (b"<html><body><!-- BEGIN WAYBACK TOOLBAR INSERT --><div id='wm-ipp'><a href='/web/'>Wayback</a></div>"
            b"<h1>Harbor vote</h1><p>" + b"The council met and voted on the harbor budget. " * 20
            + b"</p></body></html>")
    record = process(Page(body, "http://web.archive.org/web/20050409130612/http://www.example.com/2005/04/x.html"),
                     _context()[0])
    assert "archive_chrome" in record.flags
    assert "archive_chrome" not in process(Page(body.replace(b"wm-ipp", b"x").replace(b"WAYBACK", b"X"), DEMO),
                                           _context()[0]).flags
