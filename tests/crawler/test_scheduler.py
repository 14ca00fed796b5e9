"""crawler.scheduler.SlotQueue pops exactly what Scrapy's DownloaderAwarePriorityQueue pops."""

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


def test_slot_queue_pops_what_scrapys_queue_pops() -> None:
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
            priority = rng.choice((0, 0, 0, 1, -1))
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
