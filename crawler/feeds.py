"""Feed files written line by line: what a killed crawl exported stays in the file.

Scrapy's FileFeedStorage opens the file buffered, so a crawl killed with SIGKILL loses the records still in
the buffer while the crawl state already counts their pages as done. This storage opens it unbuffered: each
record's line is one ``write`` to the operating system (it survives the process, not a power cut).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import IO, Any

from scrapy.extensions.feedexport import FileFeedStorage


class LineFileFeedStorage(FileFeedStorage):
    """FileFeedStorage without a write buffer (FEED_STORAGES for file paths and file:// URIs)."""

    def open(self, spider: Any) -> IO[bytes]:
        path = Path(self.path)
        path.parent.mkdir(parents=True, exist_ok=True)
        return path.open(self.write_mode, buffering=0)


def durable(uri: str, options: dict[str, Any] | None = None) -> bool:
    """Return True when a feed's records are on disk as each is exported: a local file, not post-processed.

    Remote feeds (S3, GCS, FTP) are uploaded when the crawl closes, stdout is buffered, and gzip or other
    post-processing buffers: with any of them a killed crawl loses the records its crawl state counts as done.
    """
    scheme = uri.split(":", 1)[0].lower() if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", uri) else ""
    local = scheme in ("", "file") or (len(scheme) == 1 and uri[1:3] in (":\\", ":/"))  # a Windows drive
    return local and not (options or {}).get("postprocessing")
