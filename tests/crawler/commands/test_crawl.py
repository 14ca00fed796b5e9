from __future__ import annotations

from scrapy.settings import Settings

from crawler.commands.crawl import _without_playwright


def test_a_crawl_that_renders_nothing_drops_only_the_playwright_handlers() -> None:
    settings = Settings()
    settings.set("DOWNLOAD_HANDLERS", {"http": "crawler.handlers.SharedPlaywrightDownloadHandler",
                                       "https": "scrapy_playwright.handler.ScrapyPlaywrightDownloadHandler",
                                       "ftp": None, "s3": "scrapy.core.downloader.handlers.s3.S3DownloadHandler"},
                 priority="cmdline")
    _without_playwright(settings)
    assert settings.getdict("DOWNLOAD_HANDLERS") == {
        "ftp": None, "s3": "scrapy.core.downloader.handlers.s3.S3DownloadHandler"}
    assert settings.getpriority("DOWNLOAD_HANDLERS") == 40  # the user's own priority (cmdline) is kept
