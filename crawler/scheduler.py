"""The scheduler's priority queue: Scrapy's downloader-aware queue, without its cost on broad crawls.

Scrapy's default ``DownloaderAwarePriorityQueue`` picks, at every pop, the download slot (site) with
the fewest active downloads, ties broken round-robin by slot name. It finds it by reading every slot
that has requests waiting, so a crawl of many sites pays O(sites) per request: at the start of a
3,502-site crawl (replay benchmark, plain HTTP) that was a quarter of the crawl process's time,
when every site has its robots.txt and sitemap round to make.

:class:`SlotQueue` makes the same choice. It keeps the slots sorted by name and looks at them from the
one after the last slot chosen: the first slot there with no active download is the one Scrapy's
queue chooses whenever such a slot exists, and it is usually found at once. When every slot is
busy it falls back to Scrapy's full comparison. Its length is counted, not summed. Its state on
disk (``JOBDIR``) is Scrapy's: a crawl started with either queue resumes with the other.

One departure, for broad crawls: a slot whose next request has a priority above 0 (a page, which the
spider sends at ``PAGE_PRIORITY``; sitemaps and feeds are at 0) is chosen before the other idle slots,
in the same round-robin order. Scrapy's queue orders priorities inside a slot only, so on a site list of
thousands of sites every site's sitemap went out before the first page found in one (the replay
benchmark's first 20 s of 5,000 pages on 3,470 hosts served 200 pages, its extraction workers idle).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right, insort
from collections import Counter
from collections.abc import Callable
from contextlib import suppress
from pathlib import Path
from typing import Any

from scrapy import Request
from scrapy.core.scheduler import Scheduler
from scrapy.pqueues import DownloaderAwarePriorityQueue, _path_safe


class SlotQueue(DownloaderAwarePriorityQueue):
    """``DownloaderAwarePriorityQueue`` with the same choice of slot, found without reading every slot
    while one of them is idle, but for idle slots whose next request has a priority above 0, chosen first
    (module docstring). Setting: ``SCHEDULER_PRIORITY_QUEUE``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._slots: list[str] = sorted(self.pqueues)  # the slots with requests waiting, by name
        # The slots whose next request has a priority above 0 (Scrapy's queue keys are minus the priority), by name.
        self._urgent: list[str] = [slot for slot in self._slots if self._is_urgent(slot)]
        self._length = sum(len(queue) for queue in self.pqueues.values())

    def _is_urgent(self, slot: str) -> bool:
        queue = self.pqueues.get(slot)
        return queue is not None and queue.curprio is not None and queue.curprio < 0

    def _urgent_position(self, slot: str) -> tuple[int, bool]:
        """Return where ``slot`` is or would go in the urgent slots, and whether it is there."""
        position = bisect_left(self._urgent, slot)
        return position, position < len(self._urgent) and self._urgent[position] == slot

    def _idle_after(self, slots: list[str], last: str | None) -> str | None:
        """Return the first slot of ``slots`` after ``last`` (round robin by name) with no active download."""
        active = self._downloader_interface.downloader.slots
        start = bisect_right(slots, last) if last is not None else 0
        count = len(slots)
        for offset in range(count):
            slot = slots[(start + offset) % count]
            downloads = active.get(slot)
            if downloads is None or not downloads.active:  # no active download: the fewest there can be
                return slot
        return None

    def _choose(self, update_state: bool) -> str | None:
        """Return the slot to pop from next (None when nothing waits): an idle slot with a request above priority 0,
        else the one Scrapy's queue would choose."""
        slots = self._slots
        if not slots:
            return None
        last = self._last_selected_slot
        chosen = self._idle_after(self._urgent, last) if self._urgent else None
        if chosen is None:
            chosen = self._idle_after(slots, last)
        if chosen is None:  # every slot is busy: compare their counts, as Scrapy does
            chosen = self._next_slot(self._downloader_interface.stats(self.pqueues), update_state=False)
        if update_state:
            self._last_selected_slot = chosen
        return chosen

    def pop(self) -> Request | None:
        slot = self._choose(update_state=True)
        if slot is None:
            return None
        queue = self.pqueues[slot]
        request = queue.pop()
        if request is not None:
            self._length -= 1
        position, listed = self._urgent_position(slot)
        if listed and not self._is_urgent(slot):  # its pages are out (an emptied queue has no priority)
            del self._urgent[position]
        if len(queue) == 0:
            del self.pqueues[slot]
            del self._slots[bisect_left(self._slots, slot)]
            queue.close()
            if self.key:  # as Scrapy's: reclaim the slot's folder when its queues left it empty
                with suppress(OSError):
                    Path(self.key, _path_safe(slot)).rmdir()
        return request

    def push(self, request: Request) -> None:
        slot = self._downloader_interface.get_slot_key(request)
        new = slot not in self.pqueues
        try:
            super().push(request)  # may raise (a request that cannot be serialised to JOBDIR)
            self._length += 1
        finally:
            if new and slot in self.pqueues:
                insort(self._slots, slot)
            position, listed = self._urgent_position(slot)
            if not listed and self._is_urgent(slot):
                self._urgent.insert(position, slot)

    def peek(self) -> Request | None:
        slot = self._choose(update_state=False)
        return None if slot is None else self.pqueues[slot].peek()

    def close(self) -> dict[str, list[int]]:
        self._slots.clear()
        self._urgent.clear()
        self._length = 0
        return super().close()

    def __len__(self) -> int:
        return self._length


class SiteScheduler(Scheduler):
    """Scrapy's scheduler, counting the requests it holds per site (``request.meta["site"]``): with site leases
    (crawler/leases.py) a site is done when none of its requests waits here and none is in the engine. ``admit``,
    when set, leaves out the requests of sites the worker no longer holds. Setting: ``SCHEDULER``."""

    pending: Counter[str]
    admit: Callable[[Request], bool] | None = None

    def open(self, spider: Any) -> Any:
        self.pending = Counter()
        return super().open(spider)

    def enqueue_request(self, request: Request) -> bool:
        queued = super().enqueue_request(request)
        site = request.meta.get("site")
        if queued and site is not None:
            self.pending[site] += 1
        return queued

    def next_request(self) -> Request | None:
        while True:
            request = super().next_request()
            if request is None:
                return None
            site = request.meta.get("site")
            if site is not None and self.pending[site] > 0:
                self.pending[site] -= 1
                if not self.pending[site]:
                    del self.pending[site]
            if self.admit is None or self.admit(request):
                return request
