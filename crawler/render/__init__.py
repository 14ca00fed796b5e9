"""Rendering outside the crawl's downloader: saved pages in Chromium (``offline``), and the
screenshot checks shared with the crawl (``screenshots``)."""
