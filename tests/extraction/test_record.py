"""The record schema: one dataclass, one JSON Schema file, the same field list."""

from __future__ import annotations

import dataclasses
import json
import os

import jsonschema
import pytest

from extraction.page import Page
from extraction.record import EXPORT_FIELDS, SCHEMA_VERSION, Record, schema


def test_schema_file_and_dataclass_list_the_same_fields() -> None:
    assert list(schema()["properties"]) == EXPORT_FIELDS
    assert schema()["required"] == EXPORT_FIELDS and schema()["additionalProperties"] is False
    assert all(spec.get("description") for spec in schema()["properties"].values())


def test_export_fields_are_the_dataclass_fields_but_the_page_and_crawl_notes() -> None:
    assert [spec.name for spec in dataclasses.fields(Record)] == [*EXPORT_FIELDS, "page", "crawl"]
    assert list(Record().as_dict()) == EXPORT_FIELDS  # in schema order


def test_empty_record_validates() -> None:
    jsonschema.validate(Record().as_dict(), schema())


def test_default_record_validates_and_the_page_is_not_exported() -> None:
    page = Page(b"<p>x</p>")
    record = Record(url="http://a.test/", page=page)
    values = record.as_dict()
    jsonschema.validate(values, schema())
    assert "page" not in values and record.page is page and values["schema_version"] == SCHEMA_VERSION
    assert record.as_dict() == values and record.page is page  # as often as asked


def test_schema_rejects_what_it_should() -> None:
    values = Record(entries=[{"title": "A headline", "url": None}]).as_dict()
    jsonschema.validate(values, schema())
    for bad in ({"entries": [{"text": "old field name", "url": None}]}, {"page_type": "blog"}, {"surprise": 1},
                {"text": None}):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate({**values, **bad}, schema())


def test_a_record_with_a_file_name_no_utf8_holds_is_one_json_line_that_gives_it_back() -> None:
    """A WARC or HTML file whose name's bytes are no UTF-8 (Python keeps them as lone surrogates) stopped
    `scrapy reextract` and `scrapy extract` at its first record: the line escapes them, and they read back."""
    name = os.fsdecode(b"/data/caf\xe9.warc.gz")
    line = Record(url="http://a.test/", warc_file=name, text="中文 text").json_line()
    line.encode("utf-8")
    assert os.fsencode(json.loads(line)["warc_file"]) == b"/data/caf\xe9.warc.gz" and "\n" not in line
    assert "中文" in Record(url="http://a.test/", text="中文 text").json_line()  # UTF-8 text otherwise
