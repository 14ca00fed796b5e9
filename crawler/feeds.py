"""Feed files written line by line: what a killed crawl exported stays in the file.

Scrapy's FileFeedStorage opens the file buffered, so a crawl killed with SIGKILL loses the records still in
the buffer while the crawl state already counts their pages as done. This storage opens it unbuffered: each
record's line is one ``write`` to the operating system (it survives the process, not a power cut).
"""

from __future__ import annotations

from pathlib import Path
from typing import IO, Any

from scrapy.extensions.feedexport import FileFeedStorage


class LineFileFeedStorage(FileFeedStorage):
    """FileFeedStorage without a write buffer (FEED_STORAGES for file paths and file:// URIs)."""

    def open(self, spider: Any) -> IO[bytes]:
        path = Path(self.path)
        path.parent.mkdir(parents=True, exist_ok=True)
        return path.open(self.write_mode, buffering=0)
