"""The record: what every page becomes in the corpus, the same for the crawl and ``scrapy extract``.

Its fields are documented once, in the JSON Schema shipped beside this module
(``extraction/record.schema.json``, ``SCHEMA_FILE``); the tests validate every record the crawl
and ``scrapy extract`` write against it. ``SCHEMA_VERSION`` goes up whenever a field is renamed,
removed or changes meaning (adding a field does not change it).

Fields a source cannot know are null: ``scrapy extract`` fills no fetch fields (``status``,
``fetched_at``, ...), a crawl of a plain-HTTP site no screenshot. The crawl's item *is* a
:class:`Record`: the :class:`~extraction.page.Page` it carries between the spider and the
pipelines (``page``) is not exported (``EXPORT_FIELDS``).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, fields
from functools import cache
from pathlib import Path
from typing import Any

from extraction.page import Page

SCHEMA_VERSION = 3  # 3: canonical_url is the page's declared canonical URL when it has one
SCHEMA_FILE = Path(__file__).resolve().parent / "record.schema.json"


@dataclass
class Record:
    """One page of the corpus (the fields are described in ``record.schema.json``)."""

    schema_version: int = SCHEMA_VERSION
    url: str | None = None
    canonical_url: str | None = None
    final_url: str | None = None
    site: str | None = None
    fetched_at: str | None = None
    status: int | None = None
    depth: int | None = None
    fetch_ms: int | None = None
    render_ms: int | None = None
    rendered: bool = False
    warc_file: str | None = None
    warc_offset: int | None = None
    warc_length: int | None = None
    html_file: str | None = None
    rendered_file: str | None = None
    screenshot_file: str | None = None
    page_height: int | None = None
    screenshot_height: int | None = None
    encoding: str | None = None
    encoding_source: str | None = None
    title: str | None = None
    authors: list[str] = field(default_factory=list)
    date_published: str | None = None
    date_modified: str | None = None
    description: str | None = None
    section: str | None = None
    tags: list[str] = field(default_factory=list)
    image: str | None = None
    site_name: str | None = None
    lang: str | None = None
    lang_declared: str | None = None
    metadata_sources: dict[str, str] = field(default_factory=dict)
    page_type: str | None = None
    page_type_confidence: float | None = None
    page_type_source: str | None = None
    page_type_probabilities: dict[str, float] | None = None
    article_probability: float | None = None
    extraction_method: str | None = None
    text_source: str | None = None
    text: str = ""
    entries: list[dict[str, str | None]] | None = None
    template_cleaning: dict[str, int] | None = None
    block_stats: dict[str, int] | None = None
    models: dict[str, str] = field(default_factory=dict)
    flags: list[str] = field(default_factory=list)
    change: str | None = None
    duplicate_of: str | None = None
    duplicate_similarity: float | None = None
    error: str | None = None
    redirect_to: str | None = None  # a redirect's target left unfollowed (error redirect_offsite)
    page: Page | None = field(default=None, repr=False, compare=False, metadata={"export": False})
    # What the spider tells the state pipeline about the fetch (ETag, Last-Modified, body hash, revisit...).
    crawl: dict[str, Any] = field(default_factory=dict, repr=False, compare=False, metadata={"export": False})

    def as_dict(self) -> dict[str, Any]:
        """Return the exported fields, in schema order (what a JSON line holds)."""
        page, self.page = self.page, None
        try:
            values = asdict(self)
        finally:
            self.page = page
        return {name: values[name] for name in EXPORT_FIELDS}

    def json_line(self) -> str:
        """Return the record as one JSON line (no newline): UTF-8 text, or ASCII escapes when it holds a lone
        surrogate (a file name whose bytes are no UTF-8, which Python keeps so: ``json.loads`` then
        ``os.fsencode`` give the bytes back; written as text it stopped the output at that record)."""
        values = self.as_dict()
        line = json.dumps(values, ensure_ascii=False)
        try:
            line.encode("utf-8")
        except UnicodeEncodeError:
            return json.dumps(values)
        return line


# What the crawl knows of a page before processing it (the spider's, and the renderer's): kept in the WARC
# archive's metadata record, from which ``scrapy reextract`` starts the record again (``flags`` too, apart).
FETCH_FIELDS: tuple[str, ...] = ("url", "canonical_url", "final_url", "site", "fetched_at", "status", "depth",
                                 "fetch_ms", "render_ms", "rendered", "page_height", "screenshot_height")

EXPORT_FIELDS: list[str] = [spec.name for spec in fields(Record) if spec.metadata.get("export", True)]


@cache
def schema() -> dict[str, Any]:
    """Return the record's JSON Schema (``record.schema.json``)."""
    loaded: dict[str, Any] = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    return loaded
