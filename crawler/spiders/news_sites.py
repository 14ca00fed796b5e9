"""The ``news_sites`` spider: crawls every site of a site list into page items.

Start points are each site's start URLs, RSS/Atom feeds and sitemaps. From every HTML
page it follows links inside the site's allowed prefixes (and its follow/deny patterns),
canonicalising each URL so that one page is requested once, within the site's page and
depth limits. Every request goes through Scrapy's HTTP downloader; the pages of a site with
``render: true`` (the default) are then rendered in Chromium from the fetched bytes
(crawler/middlewares/render.py).
Every page, good or failed, becomes a :class:`~extraction.record.Record` carrying its
:class:`~extraction.page.Page` to the pipelines; the only requests
that end without an item are those robots.txt forbids (counted in stats).

With the crawl state in PostgreSQL the sites are leased (crawler/leases.py): ``start()`` takes each site as
this worker claims it, instead of every site of the list, and any number of workers share the list.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import AsyncIterator, Iterable, Iterator
from datetime import UTC, datetime
from typing import Any, ClassVar
from urllib.parse import urlsplit

from parsel import Selector
from scrapy import Request, Spider, signals
from scrapy.crawler import Crawler
from scrapy.exceptions import CloseSpider
from scrapy.http import Response
from scrapy.settings import BaseSettings
from scrapy.utils.gz import gunzip
from twisted.python.failure import Failure

from crawler.domains import registered_domain
from crawler.errors import RedirectOffsite, failure_reason, short_message
from crawler.feeds import durable
from crawler.leases import LeaseConfig, SiteLeases, fatal_closes, site_released
from crawler.links import page_links
from crawler.middlewares.render_result import RenderResult
from crawler.outputs import CrawlOutputs, feed_time, fill_feed_uris, state_location
from crawler.responses import content_type, http_exchange
from crawler.sites import RECRAWL_MODES, SiteConfig, SiteList, load_site_list
from crawler.sitetypes import SiteTypeEvidence
from crawler.spiders.fetching import amp_links, fetch_info, politeness
from crawler.spiders.listings import NewsSitemap, feed_date, listing_kind, xml_text
from crawler.state import CrawlStateConfig, CrawlStateManager, date_timestamp, parse_since
from extraction.page import Page
from extraction.record import Record
from templates_db.postgres import is_postgres
from templates_db.state import KnownPage, QueuedPage

logger = logging.getLogger(__name__)
# A page's request priority, above a sitemap's or a feed's (0): the scheduler's queue (crawler/scheduler.py) sends a
# site's pages before other sites' sitemaps, so a broad crawl extracts pages while it still discovers sites.
PAGE_PRIORITY = 1

# Largest decompressed sitemap we read (the sitemaps.org limit is 50 MB uncompressed).
SITEMAP_MAX_BYTES = 50 * 1024 * 1024
# Sitemap indexes followed below a configured sitemap (real sites nest two or three).
SITEMAP_INDEX_DEPTH = 5


def _joined(response: Response, link: str) -> str | None:
    """Return a feed's or sitemap's link made absolute against the response, None for a malformed one."""
    try:
        return response.urljoin(link.strip())
    except ValueError:  # a broken IPv6 host ("http://[::1/b")
        return None


class NewsSitesSpider(Spider):
    """Crawl the sites of a site list (``-a sites=FILE``, default NEWS_SITES_FILE)."""

    name = "news_sites"
    # The spider's arguments (-a NAME=VALUE): what ``scrapy crawl --help`` lists and check_arguments accepts.
    arguments: ClassVar[dict[str, tuple[str, str]]] = {
        "sites": ("FILE", "the site list (default: the NEWS_SITES_FILE setting, the bundled demo sites)"),
        "recrawl": ("new|changed", "changed: known articles the hubs list are fetched again and exported again "
                                   "when their text changed (default: the site's recrawl:, else "
                                   "CRAWL_STATE_RECRAWL)"),
        "since": ("DATE", "leave out feed and sitemap entries and records published before this ISO 8601 date "
                          "or time (UTC when no zone)"),
    }

    @classmethod
    def check_arguments(cls, arguments: dict[str, str]) -> None:
        """Raise ValueError for an argument the spider does not take or a value it cannot use."""
        for name in arguments:
            if name not in cls.arguments and not name.startswith("_"):  # scrapyd passes _job and _version
                known = ", ".join(f"{key}={value}" for key, (value, _) in cls.arguments.items())
                raise ValueError(f"unknown spider argument -a {name}=...; the news_sites spider takes {known}")
        recrawl = arguments.get("recrawl")
        if recrawl is not None and recrawl not in RECRAWL_MODES:
            raise ValueError(f"-a recrawl must be one of {', '.join(RECRAWL_MODES)}, got {recrawl!r}")
        if "sites" in arguments and not arguments["sites"].strip():
            raise ValueError("-a sites needs the path of a site list")
        try:
            parse_since(arguments.get("since"))
        except ValueError as exc:
            raise ValueError(f"-a {exc}") from None

    def __init__(self, sites: str | None = None, recrawl: str | None = None, since: str | None = None,
                 **kwargs: Any) -> None:
        self.check_arguments({name: value for name, value in
                              {"recrawl": recrawl, "since": since, **kwargs}.items() if value is not None})
        super().__init__(**kwargs)
        self.sites_file = sites
        self.recrawl = recrawl  # -a recrawl=new|changed: CRAWL_STATE_RECRAWL for this run
        self.since = parse_since(since)  # -a since=DATE: entries and records dated before it are left out
        self.site_list: SiteList
        self.outputs: CrawlOutputs
        self.crawl_state: CrawlStateManager
        self.leases: SiteLeases | None = None  # with a PostgreSQL crawl state
        self.lease_config = LeaseConfig()
        self.worker = ""  # this worker's name (CRAWL_LEASE_WORKER, else the host's): %(worker)s in a feed URI
        self.site_types: SiteTypeEvidence
        self._local_state: dict[str, Any] = {}
        self._sitemaps: set[str] = set()  # sitemaps requested in this run (canonical)
        self._closing: asyncio.Future[None] | None = None

    @classmethod
    def update_settings(cls, settings: BaseSettings) -> None:
        super().update_settings(settings)
        # Scrapy merges FEEDS from every source, so a default in settings.py would also be
        # written next to `-O corpus.jsonl`; add it only when no feed was asked for.
        default_feed = settings.get("DEFAULT_FEED_URI")
        if default_feed and not settings.getdict("FEEDS"):
            settings.set("FEEDS", {default_feed: {"format": "jsonlines", "encoding": "utf8"}},
                         priority="spider")

    @classmethod
    def from_crawler(cls, crawler: Crawler, *args: Any, **kwargs: Any) -> NewsSitesSpider:
        spider: NewsSitesSpider = super().from_crawler(crawler, *args, **kwargs)
        path = spider.sites_file or crawler.settings.get("NEWS_SITES_FILE")
        spider.site_list = load_site_list(path)  # ${NAME} from the environment (the crawl command sets DEMO_URL)
        logger.info("Site list %s: %d site(s): %s", path, len(spider.site_list.sites),
                    ", ".join(site.name for site in spider.site_list.sites))
        spider._site_slots(crawler.settings)
        spider.lease_config = LeaseConfig.from_settings(crawler.settings)
        spider.worker = spider.lease_config.worker_name
        spider.outputs = spider._name_outputs(crawler.settings, path)
        overrides = {"recrawl": recrawl} if (recrawl := spider.recrawl) else {}
        config = CrawlStateConfig.from_settings(crawler.settings, **overrides)
        spider.crawl_state = CrawlStateManager.from_settings(
            config, path, lambda key: spider._stat(key), spider._set_stat, crawler.settings.get("TEMPLATES_STORE", ""))
        if config.enabled and is_postgres(spider.crawl_state.location):
            if crawler.settings.get("JOBDIR"):
                raise ValueError("JOBDIR cannot be used with a PostgreSQL crawl state: the state is the job's record, "
                                 "shared by every worker")
            spider.leases = SiteLeases(spider.lease_config, spider.crawl_state,
                                       [site.name for site in spider.site_list.sites], crawler, spider._stat)
            spider.crawl_state.on_lost = spider._state_lost
            crawler.signals.connect(spider.leases.close, signal=signals.spider_closed)  # before the state's end
        crawler.signals.connect(spider.crawl_state.end, signal=signals.spider_closed)
        spider.site_types = SiteTypeEvidence.from_settings(crawler.settings, lambda key, n: spider._stat(key, n))
        crawler.signals.connect(spider.site_types.release, signal=site_released)
        crawler.signals.connect(spider.site_types.close, signal=signals.spider_closed)
        if config.enabled:
            for uri, options in crawler.settings.getdict("FEEDS").items():
                if not durable(str(uri), options):
                    logger.warning("Feed %s is not written line by line to a local file: a crawl killed before it "
                                   "closes loses records the crawl state counts as exported "
                                   "(docs/guides/scheduled-crawls.md)", uri)
        return spider

    def _name_outputs(self, settings: BaseSettings, sites_file: str) -> CrawlOutputs:
        """Fill in the feeds' ``%(time)s`` and name the run's other files after its feed (crawler/outputs.py):
        the WARC folder (ARCHIVE_DIR) and, unless the settings name them, the crawl state's place."""
        time = feed_time()
        feeds = fill_feed_uris(settings.getdict("FEEDS"), self.name, time, self.worker)
        settings.set("FEEDS", feeds, priority=settings.getpriority("FEEDS") or "spider")
        outputs = CrawlOutputs.of(feeds, self.name, time)
        if not settings.get("ARCHIVE_DIR"):
            settings.set("ARCHIVE_DIR", str(outputs.folder), priority="spider")
        if not settings.get("CRAWL_STATE_STORE") and not is_postgres(settings.get("TEMPLATES_STORE", "")):
            served = settings.getbool("DEMO_SERVED") and "DEMO_URL" in self.site_list.variables_used
            settings.set("CRAWL_STATE_STORE", state_location(sites_file, outputs if served else None),
                         priority="spider")
        return outputs

    def _site_slots(self, settings: BaseSettings) -> None:
        """Give each site with its own ``delay`` / ``concurrency`` a download slot with them (DOWNLOAD_SLOTS)."""
        slots = dict(settings.getdict("DOWNLOAD_SLOTS"))
        for site in self.site_list.sites:
            if site.download_slot is None:
                continue
            slots[site.download_slot] = {
                "concurrency": site.concurrency or settings.getint("CONCURRENT_REQUESTS_PER_DOMAIN"),
                "delay": site.delay if site.delay is not None else settings.getfloat("DOWNLOAD_DELAY"),
            }
        settings.set("DOWNLOAD_SLOTS", slots, priority="spider")

    # -- bookkeeping that survives a JOBDIR restart (SpiderState pickles self.state) --

    @property
    def _state(self) -> dict[str, Any]:
        state: dict[str, Any] = getattr(self, "state", self._local_state)
        state.setdefault("seen", set())
        state.setdefault("pages", {})
        return state

    def _revisit(self, site: SiteConfig) -> float:
        return site.revisit if site.revisit is not None else self.crawl_state.config.revisit_seconds

    def _recrawl(self, site: SiteConfig) -> str:
        """-a recrawl= for the run, else the site's ``recrawl:``, else CRAWL_STATE_RECRAWL."""
        return self.recrawl or site.recrawl or self.crawl_state.config.recrawl

    def _stat(self, key: str, count: int = 1) -> None:
        assert self.crawler.stats is not None
        self.crawler.stats.inc_value(key, count)

    def _set_stat(self, key: str, value: Any) -> None:
        assert self.crawler.stats is not None
        self.crawler.stats.set_value(key, value)

    # -- requests --

    async def start(self) -> AsyncIterator[Request]:
        """Yield each site's sitemaps, feeds and start pages; with a crawl state, also the list pages to
        revisit and the URLs left from an earlier run, and not what this round has already done."""
        state = self.crawl_state
        state.begin([site.name for site in self.site_list.sites], self.worker, self.lease_config.keepalive)
        if state.fatal is not None:  # a shared state that cannot be used: a full crawl would repeat the others' work
            fatal_closes.append("crawl_state_lost")
            raise CloseSpider("crawl_state_lost")
        if state.active and all(not r.resumed and r.number > 1 for r in state.rounds.values()):
            # A new round after a finished one: what JOBDIR kept of the last run (its seen set, its page counts)
            # is in the state; with a state that has no earlier round, JOBDIR's seen set is all there is.
            self._state["seen"].clear()
            self._state["pages"].clear()
        async for site in self._sites_to_crawl():
            for url in site.sitemaps:
                if self._aux_due(url, site):
                    yield self._aux_request(url, site, self.parse_sitemap, "sitemap")
            for url in site.feeds:
                if self._aux_due(url, site):
                    yield self._aux_request(url, site, self.parse_feed, "feed")
            if not state.active:
                for url in site.start_urls:
                    request = self._page_request(url, site)
                    if request is not None:
                        yield request
                continue
            starts = [site.canonical(url) for url in site.start_urls]
            for hub in state.due_hubs(site.name, starts, self._revisit(site)):
                request = self._revisit_request(hub, site)
                if request is not None:
                    yield request
            for request in self._schedule(site, [(url, None) for url in site.start_urls], 0):
                yield request
            queued = state.queued(site.name)
            self._stat("crawl/queued_from_state", len(queued))
            for entry in queued:
                request = self._page_request(entry.found_url or entry.url, site, entry.listed_date, depth=entry.depth,
                                             url=entry.url)
                if request is not None:
                    yield request

    async def _sites_to_crawl(self) -> AsyncIterator[SiteConfig]:
        """Yield every site of the list, or with site leases each site as this worker claims it. A resumed round's
        budget (``max_pages``) goes on from what the state counted, whichever run or worker crawled it."""
        state = self.crawl_state
        if self.leases is None:
            for site in self.site_list.sites:
                self._resume_budget(site)
                yield site
            return
        async for claim in self.leases.claims():
            site = self._site(claim.site)
            self._state["pages"].pop(site.name, None)
            if state.active:
                self._resume_budget(site)
                yield site

    def _resume_budget(self, site: SiteConfig) -> None:
        round_ = self.crawl_state.rounds.get(site.name)
        if self.crawl_state.active and round_ is not None and round_.resumed:
            pages = self._state["pages"]
            pages[site.name] = max(pages.get(site.name, 0), self.crawl_state.budget_used(site.name))

    def _state_lost(self, exc: Exception) -> None:
        """The crawl state went away mid-crawl: this worker can record nothing more, and its leases went with the
        session; it stops (reason ``crawl_state_lost``) and its sites are free for any worker."""
        if self.leases is not None:
            self.leases.lost_all()
        fatal_closes.append("crawl_state_lost")
        engine = self.crawler.engine
        if engine is not None and engine.spider is not None:
            self._closing = asyncio.ensure_future(engine.close_spider_async(reason="crawl_state_lost"))

    def _aux_due(self, url: str, site: SiteConfig, canonical: str | None = None) -> bool:
        """Return True when a feed or sitemap is due this round (``canonical``: its canonical URL, when known)."""
        if self.crawl_state.aux_due(url, site.name, self._revisit(site)):
            return True
        self._stat("crawl/skipped/visited")
        self._state["seen"].add(canonical or site.canonical(url))
        return False

    def _aux_request(self, url: str, site: SiteConfig, callback: Any, kind: str,
                     canonical: str | None = None) -> Request:
        # Pages often link to their feed and sitemap: seen, so they are not fetched as pages.
        canonical = canonical or site.canonical(url)
        self._state["seen"].add(canonical)
        if kind == "sitemap":
            self._sitemaps.add(canonical)  # requested once a run (``_child_sitemaps``)
        # dont_filter: revisited every round; JOBDIR's saved duplicate filter would drop it for good.
        return Request(url, callback=callback, errback=self.on_error, dont_filter=True,
                       meta={"site": site.name, "kind": kind, "aux_url": url, **politeness(site)})

    def _page_request(self, found_url: str, site: SiteConfig, listed_date: str | None = None, *,
                      depth: int | None = None, url: str | None = None, known: KnownPage | None = None,
                      revisit: bool = False, listed: bool = False) -> Request | None:
        """Return the request for a page, or None when it is outside the site, seen, or over the site's budget.

        ``known``: a page the state has (refetched for ``recrawl=changed``, conditionally); ``revisit``: a hub
        revisited in a new round. ``depth`` is the link depth when the request does not come from a callback;
        ``listed``: a feed or a news sitemap listed it (article evidence for the page type's site evidence).
        """
        url = url or self._canonical(site, found_url)
        if url is None:
            return None
        if not site.allows(url):
            self._stat("crawl/skipped/outside_site")
            return None
        state = self._state
        if url in state["seen"]:
            self._stat("crawl/skipped/duplicate")
            return None
        pages = state["pages"].get(site.name, 0)
        if pages >= site.max_pages and not revisit:  # hubs revisited for their links do not use the budget
            self._stat(f"crawl/skipped/max_pages/{site.name}")
            return None
        state["seen"].add(url)
        if not revisit:
            state["pages"][site.name] = pages + 1
        self._stat("crawl/scheduled")
        meta: dict[str, Any] = {"site": site.name, "kind": "page", "found_url": found_url, "canonical_url": url,
                                "render": site.render, "render_javascript": site.javascript, **politeness(site)}
        if listed_date:
            meta["listed_date"] = listed_date
        if listed:
            meta["listed"] = True
        if depth is not None:
            meta["depth"] = depth
        headers = {}
        if known is not None:  # what the state pipeline compares the new text with
            meta["known"] = {"text_hash": known.text_hash, "revisit": revisit,
                             "export_changed": self._recrawl(site) == "changed"}
            if not revisit:  # a known article: a conditional GET; hubs are fetched in full (their links matter)
                meta["handle_httpstatus_list"] = [304]
                if known.etag:
                    headers["If-None-Match"] = known.etag
                if known.last_modified:
                    headers["If-Modified-Since"] = known.last_modified
        # dont_filter: the seen set above is the duplicate filter for pages. With Scrapy's
        # filter on too, a redirect back to a URL already requested (a redirect loop, or an
        # old URL redirecting to a crawled one) would vanish without an item or an error.
        return Request(url, callback=self.parse_page, errback=self.on_error, dont_filter=True, meta=meta,
                       headers=headers or None, priority=PAGE_PRIORITY)

    def _revisit_request(self, hub: KnownPage, site: SiteConfig) -> Request | None:
        request = self._page_request(hub.found_url or hub.url, site, depth=hub.depth, url=hub.url, known=hub,
                                     revisit=True)
        if request is not None:
            self._stat("crawl/revisit")
        return request

    def _schedule(self, site: SiteConfig, found: list[tuple[str, str | None]], depth: int,
                  from_listing: Iterable[str] = ()) -> list[Request]:
        """Return the requests for links or feed/sitemap entries (URL as found, listed date) at ``depth``.

        With a crawl state, URLs it has completed are skipped (or, with ``recrawl: changed``, refetched
        conditionally unless the listed date says they did not change), and the new ones are written to the
        state's queue in one transaction before their requests leave. ``from_listing``: the URLs (as found) that a
        feed or a news sitemap lists.
        """
        listing = set(from_listing)
        seen = self._state["seen"]
        candidates: dict[str, tuple[str, str | None]] = {}
        state = self.crawl_state
        budget = site.max_pages - self._state["pages"].get(site.name, 0)
        for index, (found_url, listed_date) in enumerate(found):
            # Over the site's budget nothing more can be requested: the rest of a sitemap of a million URLs is not
            # canonicalised (20 s of the crawl's thread). Without a state every candidate takes budget; with one,
            # those it has done do not, so only an exhausted budget stops.
            if budget <= 0 or (not state.active and len(candidates) >= budget):
                self._stat(f"crawl/skipped/max_pages/{site.name}", len(found) - index)
                break
            url = self._canonical(site, found_url)
            if url is None:
                continue
            if url in seen or url in candidates:
                self._stat("crawl/skipped/duplicate")
                continue
            if not site.allows(url):
                self._stat("crawl/skipped/outside_site")
                continue
            listed = date_timestamp(listed_date)
            if self.since is not None and listed is not None and listed < self.since:
                self._stat("crawl/skipped/before_since")
                continue
            candidates[url] = (found_url, listed_date)
        known = state.known(candidates) if state.active and candidates else {}
        requests, queue = [], []
        for url, (found_url, listed_date) in candidates.items():
            page = known.get(url)
            if page is not None and (page.status == "done" or page.url != url):
                seen.add(url)
                if self._recrawl(site) != "changed" or page.url != url:
                    self._stat("crawl/skipped/known")
                    continue
                listed = date_timestamp(listed_date)
                if listed is not None and page.fetched_at is not None and listed <= page.fetched_at:
                    self._stat("crawl/skipped/lastmod")  # the sitemap or feed says it did not change since
                    continue
                seen.discard(url)
                request = self._page_request(found_url, site, listed_date, depth=depth, url=url, known=page,
                                             listed=found_url in listing)
                if request is not None:
                    self._stat("crawl/recrawl")
            else:
                request = self._page_request(found_url, site, listed_date, depth=depth, url=url,
                                             listed=found_url in listing)
                if request is not None and state.active:
                    queue.append(QueuedPage(url, site.name, depth, found_url, listed_date, state.round(site.name)))
            if request is not None:
                requests.append(request)
        state.enqueue(queue)
        return requests

    def _site(self, name: str) -> SiteConfig:
        return self.site_list.named(name)

    def _canonical(self, site: SiteConfig, url: str) -> str | None:
        """Return the site's canonical form of a URL, None (counted) for one no request can have: a port over
        65535, a broken IPv6 host, in a page's link, a feed or a sitemap."""
        try:
            return site.canonical(url)
        except ValueError:
            self._stat("crawl/skipped/malformed_url")
            return None

    # -- callbacks --

    def parse_page(self, response: Response) -> Iterator[Record | Request]:
        """Yield the page's record (carrying its page), then requests for the in-site links it has."""
        site = self._site(response.meta["site"])
        assert response.request is not None
        if response.status == 304:  # a conditional refetch of a known page: not modified
            self.crawl_state.unchanged(response.meta["canonical_url"], site.name)
            self._stat("crawl/unchanged/not_modified")
            return
        item = self._new_item(response.request, response.meta)
        item.status = response.status
        item.final_url = response.url
        item.crawl.update(fetch_info(response))
        media_type = content_type(response) or None
        page: Page = response.meta.get("fetched_page") or Page(response.body, response.url, media_type)
        page.site = site.name
        page.listed_date = response.meta.get("listed_date")
        page.site_hint = self.site_types.hint(site.name, response.meta.get("canonical_url", response.url))
        page.http = http_exchange(response)
        latency = response.meta.get("download_latency")
        item.fetch_ms = round(1000 * latency) if latency is not None else None
        if response.meta.get("redirect_urls"):
            item.crawl["redirect_urls"] = list(response.meta["redirect_urls"])
        result: RenderResult | None = response.meta.get("render_result")
        if result is not None:
            page.rendered = result.html
            page.screenshot = result.screenshot
            item.render_ms = result.milliseconds
            item.rendered = result.html is not None
            item.page_height = result.page_height
            item.screenshot_height = result.screenshot_height
            item.flags.extend(result.flags)
            if item.rendered and not result.javascript:
                item.flags.append("rendered_without_javascript")
        if result is not None and result.navigated_to and not site.in_scope(result.navigated_to):
            # The page's script sends it elsewhere: a redirect off the site, not followed (as a 3xx would be).
            item.error, item.redirect_to = "redirect_offsite", result.navigated_to
            self._stat("fetch/refused/redirect_offsite")
            self._stat("crawl/error/redirect_offsite")
            logger.info("Script navigation off the site %s, not followed: %s -> %s", site.name, response.url,
                        result.navigated_to)
            yield item
            return
        item.page = page
        self._stat("crawl/page")
        self._stat(f"crawl/site/{site.name}")
        kind = listing_kind(response.body) if page.refusal == "not_html" else None
        if kind is not None:  # a feed or sitemap a page linked to: read for its entries, not exported as a page
            self._stat(f"crawl/discovered/{kind}")
            self._state["pages"][site.name] -= 1  # no page of the site's max_pages
            self.crawl_state.listing(response.meta["canonical_url"], site.name, item.depth or 0)
            if (item.depth or 0) >= site.max_depth:  # its entries would be links past max_depth
                self._stat("crawl/skipped/max_depth")
                return
            response.meta["aux_url"] = response.url
            yield from (self.parse_feed if kind == "feed" else self.parse_sitemap)(response)
            return
        if page.refusal is not None:  # the process pipeline records it in the item
            self._stat(f"crawl/error/{page.refusal}")
            logger.info("Not an HTML page (%s, %s): %s", page.refusal, media_type or "no content type", response.url)
            yield item
            return
        if item.depth is not None and item.depth >= site.max_depth:
            yield item
            self._stat("crawl/skipped/max_depth")  # its links are not followed: not even looked for
            return
        # The links come from the tree before the pipelines see the page (the item is processed when yielded).
        try:
            links = page_links(page.tree, response.url, page.decoded.encoding)
        except Exception as exc:  # an unparsable page: the process pipeline records it
            logger.debug("No links from %s: %s", response.url, exc)
            links = []
        item.crawl["amp"] = amp_links(page, response)
        # Scheduled (and written to the crawl state's queue) before the page's item: a page is completed in
        # the state only once every link it has is queued there.
        requests = self._schedule(site, [(url, None) for url in links], (item.depth or 0) + 1)
        yield item
        yield from requests

    def parse_feed(self, response: Response) -> Iterator[Request]:
        """Yield page requests for the entries of an RSS 2.0 or Atom feed."""
        site = self._site(response.meta["site"])
        selector = Selector(text=xml_text(response), type="xml")
        selector.remove_namespaces()
        entries: list[tuple[str, str | None]] = [
            (item.xpath("link/text()").get(""), item.xpath("pubDate/text()").get() or item.xpath("date/text()").get())
            for item in selector.xpath("//item")]
        entries += [(entry.xpath("link[not(@rel) or @rel='alternate']/@href").get(""),
                     entry.xpath("published/text()").get() or entry.xpath("updated/text()").get())
                    for entry in selector.xpath("//entry")]
        entries = [(link.strip(), date) for link, date in entries if link.strip()]
        self._stat("crawl/feed/entries", len(entries))
        # The entry's date goes with the request: a source of the page's date.
        depth = response.meta.get("depth", 0) + 1
        found = [(url, feed_date(date)) for url, date in ((_joined(response, link), date) for link, date in entries)
                 if url is not None]
        requests = self._schedule(site, found, depth, from_listing=[url for url, _ in found])
        self.crawl_state.visit_aux(response.meta["aux_url"], site.name, "feed")
        yield from requests

    def parse_sitemap(self, response: Response) -> Iterator[Request]:
        """Yield page requests for a sitemap's URLs, or sitemap requests for an index."""
        site = self._site(response.meta["site"])
        body = response.body
        try:
            if body[:2] == b"\x1f\x8b":  # a truncated or corrupt stream, or one over SITEMAP_MAX_BYTES: unreadable
                body = gunzip(body, max_size=SITEMAP_MAX_BYTES)
            sitemap = NewsSitemap(body)
        except Exception as exc:  # lxml raises several types on garbage
            logger.warning("Unreadable sitemap %s: %s", response.url, exc)
            self._stat("crawl/error/sitemap_unreadable")
            return
        entries = [entry for entry in sitemap if entry.get("loc")]
        self._stat("crawl/sitemap/urls", len(entries))
        if sitemap.type == "sitemapindex":
            # Not recorded as visited: its children are, each once its URLs are queued, so a run killed before
            # them fetches the index again and then only the children not yet visited in the round.
            yield from self._child_sitemaps(response, site, [entry["loc"] for entry in entries])
            return
        found = [(entry["loc"], entry.get("publication_date") or entry.get("lastmod") or None) for entry in entries]
        # A news sitemap (news: tags) lists articles; a plain one lists every kind of page.
        published = [entry["loc"] for entry in entries if "publication_date" in entry]
        requests = self._schedule(site, found, response.meta.get("depth", 0) + 1, from_listing=published)
        self.crawl_state.visit_aux(response.meta["aux_url"], site.name, "sitemap")
        yield from requests

    def _child_sitemaps(self, response: Response, site: SiteConfig, locs: list[str]) -> Iterator[Request]:
        """Yield the requests for a sitemap index's children: HTTP(S) addresses in the index's own domain (the
        sitemap protocol keeps them on its host; sites spread them over their subdomains) or inside the site, each
        once a run (an index that lists itself, or a cycle, was fetched forever), at most ``SITEMAP_INDEX_DEPTH``
        indexes deep (a generated chain of indexes). A relative address is read against the index's; ``file:``,
        ``data:``, other domains and bare IP addresses are not fetched."""
        depth = response.meta.get("sitemap_depth", 0) + 1
        domain = registered_domain(urlsplit(response.url).hostname or "")
        for loc in locs:
            url = _joined(response, loc)
            if url is None:
                continue
            canonical = self._canonical(site, url)
            if canonical is None:
                continue
            parts = urlsplit(url)
            same_domain = parts.hostname is not None and registered_domain(parts.hostname) == domain
            if parts.scheme not in ("http", "https") or not (same_domain or site.allows(canonical)):
                self._stat("crawl/skipped/sitemap_outside_site")
                continue
            if canonical in self._sitemaps:
                self._stat("crawl/skipped/sitemap_repeated")
                continue
            if depth > SITEMAP_INDEX_DEPTH:
                self._stat("crawl/skipped/sitemap_too_deep")
                continue
            if self._aux_due(url, site, canonical):
                request = self._aux_request(url, site, self.parse_sitemap, "sitemap", canonical)
                request.meta["sitemap_depth"] = depth
                yield request

    def on_error(self, failure: Failure) -> Iterator[Record]:
        """Turn a failed page request into an item with ``error``; log other failures."""
        request: Request = failure.request  # type: ignore[attr-defined]
        reason = failure_reason(failure)
        kind = request.meta.get("kind", "page")
        if reason in ("robots_forbidden", "fetch_refused"):
            # No record: nothing was fetched (a refusal's reason is in the stats, fetch/refused/<reason>).
            self._stat(f"crawl/dropped/{reason}")
            if kind == "page":
                self.crawl_state.forbidden(request.meta["canonical_url"], request.meta["site"],
                                           request.meta.get("depth", 0), reason)
            if reason == "robots_forbidden":
                logger.info("Forbidden by robots.txt, not fetched: %s", request.url)
            return
        self._stat(f"crawl/error/{reason}" if kind == "page" else f"crawl/error/{kind}/{reason}")
        detail = short_message(failure.value) if failure.value is not None else ""
        logger.warning("Failed %s %s: %s (%s)", kind, request.url, reason, detail)
        if kind != "page":
            return
        item = self._new_item(request, request.meta)
        response = getattr(failure.value, "response", None)
        if response is not None:
            item.status = response.status
            item.final_url = response.url
        item.error = reason
        if isinstance(failure.value, RedirectOffsite):
            item.redirect_to = failure.value.target
        yield item

    def _new_item(self, request: Request, meta: dict[str, Any]) -> Record:
        record = Record(
            url=meta.get("found_url", request.url),
            canonical_url=meta.get("canonical_url", request.url),
            site=meta["site"],
            fetched_at=datetime.now(UTC).isoformat(timespec="seconds"),
            depth=meta.get("depth", 0),
        )
        record.crawl["url"] = meta.get("canonical_url", request.url)  # the crawl state's key of the page
        record.crawl["capture"] = uuid.uuid4().hex  # the page's id in the WARC archive (extraction/warc.py)
        if meta.get("listed"):
            record.crawl["listed"] = True
        return record

    def budget(self) -> dict[str, tuple[int, int]]:
        """Return per site (pages scheduled in this run, its max_pages): what CrawlProgressExtension logs."""
        pages = self._state["pages"]
        return {site.name: (pages.get(site.name, 0), site.max_pages) for site in self.site_list.sites}

    # -- for the state pipeline --

    def canonical(self, site_name: str, url: str) -> str | None:
        """Return ``url`` in the site's canonical form when it is inside the site, else None."""
        site = self._site(site_name)
        canonical = self._canonical(site, url)
        return canonical if canonical is not None and site.allows(canonical) else None

    def mark_seen(self, urls: Iterable[str]) -> None:
        """Add URLs to this run's seen set (aliases of a fetched article: never fetched themselves)."""
        self._state["seen"].update(urls)
