"""The item schema, in one place: what every crawled page becomes in the corpus.

Fields with ``export=False`` in their metadata travel between pipelines (the page's HTML,
the screenshot bytes) but are not written to the feed; ``EXPORT_FIELDS`` lists the rest,
in order, and the settings hand it to Scrapy's feed exports.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any


def _internal(default: Any = None) -> Any:
    return field(default=default, repr=False, metadata={"export": False})


@dataclass
class PageItem:
    """One fetched page (or one failed fetch, with ``error`` set)."""

    url: str  # the URL as discovered (link, feed, sitemap or start URL)
    canonical_url: str  # the canonical form, which is what was requested
    site: str  # site name from the site list
    fetched_at: str  # ISO 8601, UTC
    status: int | None = None  # HTTP status; None when no response arrived
    final_url: str | None = None  # after redirects
    encoding: str | None = None  # charset the page was decoded with
    encoding_source: str | None = None  # header | meta | bom | utf-8 | detected | fallback | browser
    title: str | None = None
    lang: str | None = None  # primary language subtag (declared, else guessed from script)
    html_file: str | None = None  # archived HTML: gzip, UTF-8 with BOM, content-addressed
    screenshot_file: str | None = None  # full-page PNG, content-addressed; None when not rendered
    page_height: int | None = None  # document height in CSS px when rendered
    screenshot_height: int | None = None  # PNG height (page_height capped, see RENDER_MAX_HEIGHT)
    depth: int = 0
    rendered: bool = False
    page_type: str | None = None  # article | list | other (filled by the page-type stage)
    page_type_confidence: float | None = None  # the model's probability of ``page_type``
    page_type_source: str | None = None  # "fusion" (screenshot + DOM/URL) or "dom" (no screenshot)
    text: str = ""
    extraction_method: str | None = None
    # Template stage (paper 004): removed_nodes, removed_chars, kept_by_guard, templates_matched;
    # None when the site had no templates yet or the stage is off.
    template_cleaning: dict[str, int] | None = None
    # Block classifier: blocks, blocks_kept, paragraphs_trimmed, fallback; None on list pages.
    block_stats: dict[str, int] | None = None
    # List pages routed to the list extractor: [{"title", "url"}] in page order; else None.
    entries: list[dict[str, str | None]] | None = None
    flags: list[str] = field(default_factory=list)  # notes such as load_timeout, screenshot_capped
    error: str | None = None  # why the page has no content; None for a good page
    # Internal, not exported:
    html: str | None = _internal()  # the page's (rendered) HTML as text
    screenshot_png: bytes | None = _internal()
    tree: Any = _internal()  # noqa: RUF009 (parsed page, lxml) shared by the stages from the template stage on
    leaves: Any = _internal()  # noqa: RUF009 leaf tags of ``tree`` found by the template middleware
    templates_site: str | None = _internal()  # the template library's key for the page


EXPORT_FIELDS: list[str] = [f.name for f in fields(PageItem) if f.metadata.get("export", True)]
