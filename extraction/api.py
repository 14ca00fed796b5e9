"""The one-page job as a function: HTML (and its URL) in, the record out.

    from extraction.api import extract

    record = extract(open("page.html", "rb").read(), "https://example.com/news/1")
    record["page_type"], record["title"], record["text"]

The same flow as the crawl and ``scrapy extract`` (:func:`extraction.process.process`: page type, metadata,
the block classifier's text, language) with the shipped models, loaded once per process and shared by every
call with the same settings. Bytes are decoded as the crawl decodes them (BOM, ``<meta>``, then detection: GBK,
GB18030, Big5); a ``str`` is taken as decoded already. No template library is used (a site's templates are
learned by crawling it; ``scrapy extract --site`` applies them). ``settings`` are the project's settings by name
(``BLOCKS_FAVOR="precision"``, ``PAGETYPE_ENABLED=False``), checked as every command checks them: ValueError
names a setting whose value cannot work.
"""

from __future__ import annotations

import functools
from typing import Any

from extraction.page import Page
from extraction.process import Context, process
from extraction.record import Record


@functools.lru_cache(maxsize=8)
def _context(settings: tuple[tuple[str, Any], ...]) -> Context:
    return Context.from_settings(dict(settings))


def extract(html: bytes | str, url: str | None = None, **settings: Any) -> dict[str, Any]:
    """Return the record of one page as a dict with the crawl's fields (``extraction/record.schema.json``); a page
    that is empty or no HTML gets ``error`` ("empty", "not_html") as in the crawl."""
    context = _context(tuple(sorted(settings.items())))
    page = Page.from_text(html, url, source="given") if isinstance(html, str) else Page(html, url)
    return process(page, context, Record(url=url)).as_dict()
