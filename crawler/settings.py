"""Scrapy settings of the project. Every setting is documented in the manual's settings reference
(docs/reference/settings.md, generated from this file and the component configs: the comment above or beside an
assignment is its meaning there).

Override any of them on the command line (``-s NAME=VALUE``) or per spider.
"""

from __future__ import annotations

import os

from crawler.logs import NOTICE  # noqa: F401  # registers the level name LOG_LEVEL gives
from crawler.render import chromium_path
from extraction.paths import REPO_ROOT
from extraction.record import EXPORT_FIELDS

BOT_NAME = "newscorpus"  # Scrapy's name of the project (its log lines, the default user agent)
SPIDER_MODULES = ["crawler.spiders"]  # where Scrapy finds the spider (news_sites)
NEWSPIDER_MODULE = "crawler.spiders"  # where `scrapy genspider` would write a new spider
COMMANDS_MODULE = "crawler.commands"  # the project's commands (crawl, corpus, extract, ...; crawler/cli.py)
USER_AGENT = "newscorpus/0.1 (+https://github.com/; research corpus crawler)"  # sent by Scrapy and by Chromium

# --- site list -------------------------------------------------------------------------
# The site list read by `scrapy crawl news_sites` when no `-a sites=FILE` is given. The
# default points at the bundled demo sites, which `scrapy crawl` serves itself on 127.0.0.1.
NEWS_SITES_FILE = os.environ.get("NEWS_SITES_FILE", str(REPO_ROOT / "sites" / "demo.yaml"))
DEMO_PORT = 0  # port of the demo server `scrapy crawl` starts for ${DEMO_URL} (0: any free port)
DEMO_SERVED = False  # set by `scrapy crawl` while it serves the demo itself: the demo's URLs last one run

# --- politeness --------------------------------------------------------------------------
ROBOTSTXT_OBEY = True  # pages a site's robots.txt forbids are not fetched (stat crawl/dropped/robots_forbidden)
ROBOTSTXT_PARSER = "crawler.robots.CappedRobotParser"  # Protego on a robots.txt's first 500 KiB (RFC 9309, Google)
AUTOTHROTTLE_ENABLED = True  # each server's delay follows its latency; a site's `delay:` turns it off for that site
AUTOTHROTTLE_START_DELAY = 1.0  # seconds; AutoThrottle adapts it to each server's latency
AUTOTHROTTLE_MAX_DELAY = 30.0  # seconds: the longest delay AutoThrottle gives a slow server
AUTOTHROTTLE_TARGET_CONCURRENCY = 2.0  # requests AutoThrottle aims to have in flight to one server
# Requests in flight, pages waiting for the renderer included (they hold no site's slot meanwhile), and
# requests waiting out their site's delay. A site list is a broad crawl: per-site politeness is
# CONCURRENT_REQUESTS_PER_DOMAIN and AutoThrottle; this only bounds the whole. Measured on 2,000 real pages of
# 1,529 sites (bench/replay_bench.py): 16 spent 40 s on the robots.txt/sitemap round alone.
CONCURRENT_REQUESTS = 256
# Outputs of one response processed at once. A page yields one item and its links: Scrapy starts this many
# asyncio tasks per response, and its default (100) was a quarter of the reactor thread's time.
CONCURRENT_ITEMS = 16
CONCURRENT_REQUESTS_PER_DOMAIN = 4  # a site list entry may set its own (concurrency:, delay:)
# Scrapy's downloader-aware queue (its default: the site with the fewest downloads goes next), choosing
# without reading every site at each request (crawler/scheduler.py): a quarter of the crawl process's time
# at the start of a 3,502-site crawl.
SCHEDULER_PRIORITY_QUEUE = "crawler.scheduler.SlotQueue"
# Scrapy's scheduler, counting its requests per site: with site leases a site is done when none waits
# (crawler/leases.py, crawler/scheduler.py).
SCHEDULER = "crawler.scheduler.SiteScheduler"
DOWNLOAD_TIMEOUT = 30  # seconds for one HTTP download; then error "timeout" (after RETRY_TIMES retries)
DOWNLOAD_MAXSIZE = 8 * 1024 * 1024  # bytes; larger pages become items with error "too_large"
DOWNLOAD_WARNSIZE = 2 * 1024 * 1024  # bytes; Scrapy logs a warning for larger responses
RETRY_TIMES = 2  # Scrapy's retries of a timeout, refused connection or 5xx within one run
REDIRECT_MAX_TIMES = 10  # redirects followed for one request; more is error "redirect_loop"
# The reactor's name resolver: Scrapy's connections go only to addresses the address policy checked (no DNS
# rebinding between the check and the connection); DNS_TIMEOUT, DNSCACHE_SIZE as for Scrapy's own resolvers.
TWISTED_DNS_RESOLVER = "crawler.fetch_policy.PolicyResolver"
REQUEST_FINGERPRINTER_IMPLEMENTATION = "2.7"  # Scrapy's current request fingerprints (no deprecation warning)

# --- rendering (scrapy-playwright on Debian's Chromium) ------------------------------
# Pages are fetched by Scrapy's HTTP downloader; a site with `render: true` then has them rendered
# in Chromium from the fetched bytes (crawler/middlewares/render.py). scrapy-playwright's handler
# passes every other request to Scrapy's own HTTP handler.
DOWNLOAD_HANDLERS = {
    "http": "crawler.handlers.SharedPlaywrightDownloadHandler",
    "https": "crawler.handlers.SharedPlaywrightDownloadHandler",
}
TWISTED_REACTOR = "twisted.internet.asyncioreactor.AsyncioSelectorReactor"  # asyncio, which scrapy-playwright needs
PLAYWRIGHT_BROWSER_TYPE = "chromium"  # Debian's Chromium (never a browser Playwright downloads)
# How Chromium starts: headless, the executable chromium_path() finds, and the flags a closed network needs.
PLAYWRIGHT_LAUNCH_OPTIONS = {
    "executable_path": chromium_path(),  # $CHROMIUM_PATH, else Debian's chromium-headless-shell, else chromium
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
        # WebRTC's UDP would leave the policy proxy aside (crawler/render/policy_proxy.py): none without a proxy.
        "--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
        # Not "--renderer-process-limit=4": pages sharing a renderer share its main thread, so one page whose
        # script hangs stalls the others (the offline renderer's bad-pages test failed 4 runs of 8 with it,
        # 0 of 8 without), for +7% pages/s on replayed pages (docs/evaluation/performance.md).
    ],
}
# Pages rendering at once: the renderer's own limit (RenderConfig.concurrency), apart from politeness.
PLAYWRIGHT_MAX_PAGES_PER_CONTEXT = 4
PLAYWRIGHT_DEFAULT_NAVIGATION_TIMEOUT = 30_000  # ms, until DOMContentLoaded
# The browser's requests (document answered from the fetched bytes) use a slot of their own, never
# delayed: the limit is PLAYWRIGHT_MAX_PAGES_PER_CONTEXT.
DOWNLOAD_SLOTS = {"render": {"concurrency": 64, "delay": 0.0, "jitter": 0.0}}
# Chromium's own requests (stylesheets, scripts, images) go through this proxy when set; Scrapy's
# requests honour the same environment variable (HttpProxyMiddleware).
RENDER_PROXY = os.environ.get("http_proxy") or os.environ.get("HTTP_PROXY") or ""

# RENDER_ENABLED, RENDER_SCREENSHOTS, RENDER_SCREENSHOT_REGION/FORMAT/QUALITY, RENDER_VIEWPORT_WIDTH/HEIGHT,
# RENDER_MAX_HEIGHT, RENDER_LOAD_TIMEOUT, RENDER_SCREENSHOT_TIMEOUT, RENDER_SERIALIZE_SCREENSHOTS,
# RENDER_BLOCK_RESOURCES, RENDER_CRASH_RETRIES, RENDER_DEADLINE: defaults in crawler/middlewares/render_config.py
# (RenderConfig), docs/reference/settings.md.
# SOURCE_PREFER, SOURCE_RENDERED_BELOW, SOURCE_RENDERED_RATIO (raw or rendered HTML for the text):
# defaults in extraction/process.py (SourceConfig).

# The project's downloader middlewares: robots.txt, rendering, meta refresh (each entry says why).
DOWNLOADER_MIDDLEWARES = {
    "crawler.middlewares.render.RenderMiddleware": 950,
    # robots.txt (crawler/robots.py): checked for every request that waits for it (Scrapy 2.19 let all but the
    # first through); an unreachable one allows nothing for the run (RFC 9309 section 2.3.1.4).
    "scrapy.downloadermiddlewares.robotstxt.RobotsTxtMiddleware": None,
    "crawler.robots.RobotsTxtMiddleware": 100,
    # The address policy (crawler/fetch_policy.py, docs/fetch-policy.md), before robots.txt (100): a refused host's
    # robots.txt is not asked for either; FETCH_ALLOW_NETWORKS, FETCH_ALLOW_HOSTS: defaults in FetchPolicyConfig.
    "crawler.middlewares.fetch_policy.FetchPolicyMiddleware": 90,
    # Scrapy's 3xx redirects, followed inside the site's scope only (SiteConfig.in_scope).
    "scrapy.downloadermiddlewares.redirect.RedirectMiddleware": None,
    "crawler.middlewares.fetch_policy.ScopedRedirectMiddleware": 600,
    # Scrapy's meta refresh redirect, reading the top of the body only, in the site's scope only
    # (crawler/middlewares/refresh.py).
    "scrapy.downloadermiddlewares.redirect.MetaRefreshMiddleware": None,
    "crawler.middlewares.refresh.MetaRefreshMiddleware": 580,
}

# --- per-page processing (extraction/process.py: one flow for the crawl and `scrapy extract`) ---
# Page type (paper 000; extraction/pagetype/, models/pagetype/).
# PAGETYPE_ENABLED, PAGETYPE_MODEL_DIR: defaults in extraction/process.py (PageTypeConfig); PAGETYPE_SITE_ENABLED,
# PAGETYPE_SITE_FLUSH_VOTES: crawler/sitetypes.py (SiteTypesConfig).
# Block classifier (papers 003 and 004; extraction/blockclf/, models/).
# BLOCKS_ENABLED, BLOCKS_FAVOR: defaults in extraction/process.py (BlocksConfig); the environment may name the
# model folder.
BLOCKS_MODEL_DIR = os.environ.get("BLOCKS_MODEL_DIR", "")  # meta.json, blocks.onnx, paragraphs.onnx (empty: models/)
# Title chooser (extraction/title.py, models/title/). TITLE_ENABLED, TITLE_MODEL_DIR: defaults in
# extraction/process.py (TitleConfig).
# Web2Text (paper 002; methods web2text and svm-web2text of `scrapy extract`).
WEB2TEXT_MODEL_DIR = os.environ.get("WEB2TEXT_MODEL_DIR", "")  # unary/pairwise ONNX (empty: models/web2text/)

# --- per-site template library (paper 004; templates_db/library.py) -----------------
# TEMPLATES_ENABLED, _STORE, _LEARN, _BATCH_PAGES, _MIN_FREQUENCY, _GUARD_MIN_CHARS, _GUARD_MIN_SHARE,
# _DRIFT_WINDOW, _DRIFT_RATIO, _REFRESH_INTERVAL: defaults in templates_db/library.py (TemplatesConfig).

# --- items and export ------------------------------------------------------------------
# ARCHIVE_ENABLED, ARCHIVE_DIR: defaults in pipelines/archive.py (ArchiveConfig).
# EXTRACT_WORKERS (-1: one per CPU; 0: in the reactor thread), EXTRACT_TIMEOUT, EXTRACT_MAX_PAGES_PER_WORKER:
# defaults in extraction/workers.py (WorkersConfig).

EXPORT_ERROR_ITEMS = True  # failed pages are exported as records with `error` set; False: left out of the feed

# The item pipelines, in order (each entry says what it does).
ITEM_PIPELINES = {
    # Archive the page as fetched (pipelines.archive), then extraction.process.process: type, templates, text;
    # in EXTRACT_WORKERS worker processes (extraction/workers.py).
    "pipelines.process.ProcessPipeline": 500,
    # The page-type votes of the site's evidence (crawler/sitetypes.py), from every processed page.
    "pipelines.sitetypes.SiteTypesPipeline": 600,
    # New / changed / duplicate (extraction/dedup.py), and the crawl state written once the record is exported.
    "pipelines.state.CrawlStatePipeline": 800,
    "pipelines.errors.ErrorItemFilterPipeline": 900,
}

# --- crawl state and duplicates (crawler/state.py, templates_db/state.py, extraction/dedup.py) ---------------
# CRAWL_STATE_ENABLED, _STORE (default: the site list's own, crawler/outputs.py), _RECRAWL, _REVISIT,
# _MAX_ATTEMPTS, _TIMEOUT: defaults in crawler/state.py (CrawlStateConfig), docs/guides/scheduled-crawls.md.
# With CRAWL_STATE_STORE=postgresql://... the sites are leased to any number of workers: CRAWL_LEASE_WORKER, _SITES,
# _KEEPALIVE, _INTERVAL, _WAIT, _POLL, _CHECK: defaults in crawler/leases.py (LeaseConfig), docs/distributed.md.
# DEDUP_ENABLED, _THRESHOLD, _SHINGLE, _PERMUTATIONS, _MIN_CHARS, _DROP: defaults in extraction/dedup.py.

# Feed files are written unbuffered, line by line, so a killed crawl keeps every record it exported (the crawl
# state counts a page as done only after its line is written).
FEED_STORAGES = {"": "crawler.feeds.LineFileFeedStorage", "file": "crawler.feeds.LineFileFeedStorage"}

# Written when no feed is given (no -o/-O, no FEEDS). A run's WARC folder and report are named after its feed
# (crawler/outputs.py).
DEFAULT_FEED_URI = "output/%(name)s-%(time)s.jsonl"
FEED_EXPORT_ENCODING = "utf-8"  # Chinese written as is, not \u escapes
FEED_EXPORT_FIELDS = EXPORT_FIELDS  # the record's fields in the schema's order (extraction/record.py)

# The crawl's extensions: the stats file, the crawl report, the progress line, the garbage collector's tuning.
EXTENSIONS = {
    "crawler.extensions.StatsFileExtension": 500,
    "crawler.extensions.CrawlReportExtension": 510,  # after the stats file: the report shows the same stats
    "crawler.extensions.CrawlProgressExtension": 520,
    "crawler.extensions.GarbageCollectorExtension": 530,  # gc.freeze and higher thresholds once the spider opens
}
STATS_FILE = ""  # path: the final stats as JSON (for scheduled crawls, monitoring, tests)
# REPORT_ENABLED, REPORT_FILE: defaults in crawler/extensions.py (ReportConfig); docs/guides/crawl-report.md.

# Quiet by default: each command prints its progress line, warnings and a short summary (crawler/logs.py); -L INFO
# brings back Scrapy's own lines (versions, settings, components, the stats dump), -L DEBUG one line per page.
LOG_LEVEL = "NOTICE"
# Scrapy checks each callback for a generator with `return value` by reading and parsing its source; its cache is
# keyed by the bound method, made afresh for every response, so the check ran on every page (1-2% of the crawl
# process's CPU, measured with py-spy in the replay benchmark). The spider's callbacks are tested instead.
WARN_ON_GENERATOR_RETURN_VALUE = False
