from __future__ import annotations

import pytest
from scrapy.exceptions import DropItem
from scrapy.utils.test import get_crawler

from extraction.record import Record
from pipelines.errors import ErrorItemFilterPipeline


def _item(error: str | None) -> Record:
    return Record(url="http://a.test/", canonical_url="http://a.test/", site="a",
                  fetched_at="2026-01-01T00:00:00+00:00", error=error)


def test_failed_pages_are_exported_by_default() -> None:
    pipeline = ErrorItemFilterPipeline.from_crawler(get_crawler())
    assert pipeline.process_item(_item("timeout")).error == "timeout"


def test_failed_pages_dropped_and_counted_when_asked() -> None:
    crawler = get_crawler(settings_dict={"EXPORT_ERROR_ITEMS": False})
    crawler.stats.open_spider()  # type: ignore[union-attr]
    pipeline = ErrorItemFilterPipeline.from_crawler(crawler)
    with pytest.raises(DropItem, match=r"failed page not exported \(http_404\)"):
        pipeline.process_item(_item("http_404"))
    assert pipeline.process_item(_item(None)).error is None
    assert crawler.stats.get_value("export/dropped/http_404") == 1  # type: ignore[union-attr]
