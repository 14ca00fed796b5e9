"""crawler.scheduler.SlotQueue: what Scrapy's DownloaderAwarePriorityQueue pops, but idle slots with a page first."""

from __future__ import annotations

import random
from types import SimpleNamespace
from urllib.parse import urlsplit

from scrapy import Request, Spider
from scrapy.pqueues import DownloaderAwarePriorityQueue
from scrapy.squeues import FifoMemoryQueue
from scrapy.utils.test import get_crawler

from crawler.scheduler import SlotQueue


class FakeDownloader:
    """The part of Scrapy's downloader the queues read: its slots' active requests and the slot key."""

    def __init__(self) -> None:
        self.slots: dict[str, SimpleNamespace] = {}

    def get_slot_key(self, request: Request) -> str:
        return urlsplit(request.url).hostname or ""


def test_slot_queue_pops_what_scrapys_queue_pops_without_pages_above_priority_0() -> None:
    rng = random.Random(7)
    downloader = FakeDownloader()
    crawler = get_crawler(Spider)
    crawler.engine = SimpleNamespace(downloader=downloader)  # type: ignore[assignment]
    theirs = DownloaderAwarePriorityQueue(crawler, FifoMemoryQueue, "")
    ours = SlotQueue(crawler, FifoMemoryQueue, "")
    hosts = [f"site{i:02d}.test" for i in range(40)]
    popped = 0
    for step in range(20_000):
        action = rng.random()
        if action < 0.45:
            url = f"http://{rng.choice(hosts)}/{step}"
            priority = rng.choice((0, 0, 0, -1, -2))
            theirs.push(Request(url, priority=priority))
            ours.push(Request(url, priority=priority))
        elif action < 0.85:
            expected, got = theirs.pop(), ours.pop()
            assert (expected and expected.url) == (got and got.url), step
            popped += expected is not None
        else:  # downloads start and finish: the slots' active counts change under the queues
            slot = downloader.slots.setdefault(rng.choice(hosts), SimpleNamespace(active=set()))
            if slot.active and rng.random() < 0.5:
                slot.active.pop()
            else:
                slot.active.add(step)
        assert len(ours) == len(theirs), step
        peeked = theirs.peek()
        assert (peeked and peeked.url) == ((ours.peek() or None) and ours.peek().url), step
    assert popped > 5_000


def test_an_idle_slot_with_a_page_goes_before_the_other_sites_sitemaps() -> None:
    """A broad crawl: every site's sitemap is waiting when a page is found on one site; the page goes next."""
    downloader = FakeDownloader()
    crawler = get_crawler(Spider)
    crawler.engine = SimpleNamespace(downloader=downloader)  # type: ignore[assignment]
    queue = SlotQueue(crawler, FifoMemoryQueue, "")
    for i in range(50):
        queue.push(Request(f"http://site{i:02d}.test/sitemap.xml"))
    assert queue.pop().url == "http://site00.test/sitemap.xml"  # type: ignore[union-attr]
    queue.push(Request("http://site30.test/a.html", priority=1))
    queue.push(Request("http://site30.test/b.html", priority=1))
    queue.push(Request("http://site40.test/c.html", priority=1))
    assert queue.peek().url == "http://site30.test/a.html"  # type: ignore[union-attr]
    assert queue.pop().url == "http://site30.test/a.html"  # type: ignore[union-attr]
    # site30 now has a download active: the other site with a page goes next, then the sitemaps, round robin
    # from there, until site30 is idle again.
    downloader.slots["site30.test"] = SimpleNamespace(active={"a"})
    assert queue.pop().url == "http://site40.test/c.html"  # type: ignore[union-attr]
    assert queue.pop().url == "http://site41.test/sitemap.xml"  # type: ignore[union-attr]
    downloader.slots["site30.test"].active.clear()
    assert queue.pop().url == "http://site30.test/b.html"  # type: ignore[union-attr]
    assert not queue._urgent
    rest = [request.url for request in iter(queue.pop, None)]
    assert len(rest) == 48 and len(queue) == 0
    assert rest[0] == "http://site31.test/sitemap.xml" and "http://site30.test/sitemap.xml" in rest


def test_site_scheduler_counts_the_requests_it_holds_per_site_and_leaves_out_what_is_not_admitted() -> None:
    from crawler.scheduler import SiteScheduler

    crawler = get_crawler(Spider, {"SCHEDULER_PRIORITY_QUEUE": "scrapy.pqueues.ScrapyPriorityQueue"})
    scheduler = SiteScheduler.from_crawler(crawler)
    scheduler.open(crawler._create_spider("s"))
    for n in range(3):
        scheduler.enqueue_request(Request(f"http://a.test/{n}", meta={"site": "a"}, dont_filter=True))
    scheduler.enqueue_request(Request("http://b.test/", meta={"site": "b"}, dont_filter=True))
    scheduler.enqueue_request(Request("http://b.test/robots.txt", dont_filter=True))  # no site: not counted
    assert scheduler.pending == {"a": 3, "b": 1}
    scheduler.admit = lambda request: request.meta.get("site") != "a"  # site a's lease is gone
    popped = [scheduler.next_request() for _ in range(3)]
    assert sorted(str(r.url) for r in popped if r is not None) == ["http://b.test/", "http://b.test/robots.txt"]
    assert popped[-1] is None and scheduler.pending == {}
