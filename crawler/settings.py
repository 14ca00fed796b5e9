"""Scrapy settings of the project. Every setting is documented in README.md ("Settings").

Override any of them on the command line (``-s NAME=VALUE``) or per spider.
"""

from __future__ import annotations

import os

from crawler.items import EXPORT_FIELDS

BOT_NAME = "newscorpus"
SPIDER_MODULES = ["crawler.spiders"]
NEWSPIDER_MODULE = "crawler.spiders"
COMMANDS_MODULE = "crawler.commands"
USER_AGENT = "newscorpus/0.1 (+https://github.com/; research corpus crawler)"

# --- site list -------------------------------------------------------------------------
# The site list read by `scrapy crawl news_sites` when no `-a sites=FILE` is given. The
# default points at the bundled demo sites, which the spider serves itself on 127.0.0.1.
NEWS_SITES_FILE = os.environ.get("NEWS_SITES_FILE", "sites/demo.yaml")
DEMO_PORT = 0  # port of the embedded demo server (0: any free port)

# --- politeness --------------------------------------------------------------------------
ROBOTSTXT_OBEY = True
AUTOTHROTTLE_ENABLED = True
AUTOTHROTTLE_START_DELAY = 1.0  # seconds; AutoThrottle adapts it to each server's latency
AUTOTHROTTLE_MAX_DELAY = 30.0
AUTOTHROTTLE_TARGET_CONCURRENCY = 2.0
CONCURRENT_REQUESTS = 8
CONCURRENT_REQUESTS_PER_DOMAIN = 4
DOWNLOAD_TIMEOUT = 30
DOWNLOAD_MAXSIZE = 8 * 1024 * 1024  # bytes; larger pages become items with error "too_large"
DOWNLOAD_WARNSIZE = 2 * 1024 * 1024
RETRY_TIMES = 2
REDIRECT_MAX_TIMES = 10
REQUEST_FINGERPRINTER_IMPLEMENTATION = "2.7"

# --- rendering (scrapy-playwright on Debian's Chromium) ------------------------------
DOWNLOAD_HANDLERS = {
    "http": "crawler.handlers.SharedPlaywrightDownloadHandler",
    "https": "crawler.handlers.SharedPlaywrightDownloadHandler",
}
TWISTED_REACTOR = "twisted.internet.asyncioreactor.AsyncioSelectorReactor"
PLAYWRIGHT_BROWSER_TYPE = "chromium"
PLAYWRIGHT_LAUNCH_OPTIONS = {
    "executable_path": os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium"),
    "headless": True,
    # Without the networking flags Chromium floods a closed network with refused
    # connections (../shared/ENVIRONMENT.md).
    "args": [
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--disable-background-networking",
        "--disable-component-update",
        "--no-first-run",
        "--disable-sync",
    ],
}
PLAYWRIGHT_MAX_PAGES_PER_CONTEXT = 4  # pages rendering at once (measured best on 2 cores)
PLAYWRIGHT_DEFAULT_NAVIGATION_TIMEOUT = 30_000  # ms, until DOMContentLoaded

RENDER_ENABLED = True  # off: every site over plain HTTP, no screenshots
RENDER_SCREENSHOTS = True
RENDER_VIEWPORT_WIDTH = 1280
RENDER_VIEWPORT_HEIGHT = 800
# Full-page screenshots stop at this height (CSS px = PNG px). Chromium cannot capture
# beyond its 16384-px texture limit, and the page-type model looks at the top of the page;
# 8192 keeps the PNG of a long article around 1-3 MB.
RENDER_MAX_HEIGHT = 8192
RENDER_LOAD_TIMEOUT = 10.0  # s to wait for the load event after DOMContentLoaded
RENDER_SCREENSHOT_TIMEOUT = 20.0  # s
RENDER_SERIALIZE_SCREENSHOTS = True  # one capture at a time, page brought to front
RENDER_CRASH_RETRIES = 1  # a page whose browser died under it is rendered again this many times
# Longest a browser download (navigation, waiting for a page slot included) may take before
# it fails as render_stuck; Playwright's own timeouts normally end it long before.
RENDER_DEADLINE = 180.0

DOWNLOADER_MIDDLEWARES = {
    "crawler.middlewares.render.RenderMiddleware": 950,
    "crawler.middlewares.charset.CharsetMiddleware": 580,  # after decompression (590)
    "crawler.middlewares.templates.TemplateLibraryMiddleware": 570,  # sees the text as decoded
}

# --- page type (paper 000; extraction/pagetype/models.py, models/pagetype/) ---------------------
PAGETYPE_ENABLED = True  # off: the block stage types pages with the DOM/URL model alone
PAGETYPE_MODEL_DIR = ""  # folder with meta.json and the ONNX models (empty: models/pagetype/)

# --- block classifier (papers 003 and 004; extraction/blockclf/classifier.py, models/) ------------
BLOCKS_ENABLED = True  # off: the full text is exported (extraction_method "fulltext")
BLOCKS_MODEL_DIR = ""  # folder with meta.json, blocks.onnx, paragraphs.onnx (empty: models/)

# --- per-site template library (paper 004; templates_db/library.py) -----------------
TEMPLATES_ENABLED = True  # off: no learning, no template cleaning
TEMPLATES_STORE = "templates_db"  # folder holding templates.sqlite3 (or a .sqlite3 path)
TEMPLATES_LEARN = True  # off: apply the stored templates only (the middleware is disabled)
TEMPLATES_BATCH_PAGES = 10  # N1 (paper 004): pages per batch
TEMPLATES_MIN_FREQUENCY = 3  # N2 (paper 004): pages of a batch a tag must be on to become a template
TEMPLATES_GUARD_MIN_CHARS = 80  # leaves this long are removed only by site-wide templates...
TEMPLATES_GUARD_MIN_SHARE = 0.5  # ...seen on at least this share of a batch's pages
TEMPLATES_DRIFT_WINDOW = 10  # pages in the recent match-rate window (layout drift)
TEMPLATES_DRIFT_RATIO = 0.5  # drift when the recent rate < this x the rate the templates promise
TEMPLATES_REFRESH_INTERVAL = 5.0  # s between checks for templates written by other processes

# --- items and export ------------------------------------------------------------------
ARCHIVE_ENABLED = True
ARCHIVE_DIR = "output"  # html/ and screenshots/ are created under it
EXPORT_ERROR_ITEMS = True

ITEM_PIPELINES = {
    "pipelines.archive.ArchivePipeline": 100,
    "pipelines.pagetype.PageTypePipeline": 150,  # before template cleaning: the models see whole pages
    "pipelines.templates.TemplateDenoisePipeline": 200,
    "pipelines.blocks.BlockClassifierPipeline": 400,  # after fulltext (300): title, lang, fallback text
    "pipelines.fulltext.FullTextPipeline": 300,
    "pipelines.errors.ErrorItemFilterPipeline": 900,
}

# Written when no feed is given (no -o/-O, no FEEDS); `-O corpus.jsonl` replaces it.
DEFAULT_FEED_URI = "output/%(name)s-%(time)s.jsonl"
FEED_EXPORT_ENCODING = "utf-8"  # Chinese written as is, not \u escapes
FEED_EXPORT_FIELDS = EXPORT_FIELDS

EXTENSIONS = {"crawler.extensions.StatsFileExtension": 500}
STATS_FILE = ""  # path: the final stats as JSON (for scheduled crawls, monitoring, tests)

LOG_LEVEL = "INFO"
