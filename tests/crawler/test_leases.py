"""crawler.leases: the CRAWL_LEASE_* settings (the leases at work: tests/crawler/test_crawl_workers.py and
tests/templates_db/test_pgstate.py)."""

from __future__ import annotations

import socket

import pytest

from crawler.leases import LeaseConfig
from crawler.state import CrawlStateConfig


def test_defaults_and_durations() -> None:
    config = LeaseConfig.from_settings({})
    assert config.worker_name == socket.gethostname().split(".")[0]
    assert config.interval_seconds == 3600
    assert LeaseConfig.from_settings({"CRAWL_LEASE_INTERVAL": "50m", "CRAWL_LEASE_WORKER": "w1"}).interval_seconds \
        == 3000


@pytest.mark.parametrize(("setting", "value", "message"), [
    ("CRAWL_LEASE_SITES", "0", "CRAWL_LEASE_SITES"),
    ("CRAWL_LEASE_KEEPALIVE", "1", "CRAWL_LEASE_KEEPALIVE"),
    ("CRAWL_LEASE_INTERVAL", "soon", "CRAWL_LEASE_INTERVAL"),
    ("CRAWL_LEASE_POLL", "0", "CRAWL_LEASE_POLL"),
    ("CRAWL_LEASE_WORKER", "two words", "CRAWL_LEASE_WORKER"),
])
def test_values_that_cannot_work_are_refused(setting: str, value: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        LeaseConfig.from_settings({setting: value})


def test_the_state_goes_with_the_templates_into_one_postgresql_database() -> None:
    uri = "postgresql://crawl@db.example/crawl"
    assert CrawlStateConfig().location("my-sites.yaml", uri) == uri
    assert CrawlStateConfig(store="postgresql://other@db/x").location("my-sites.yaml", uri) == "postgresql://other@db/x"
    assert CrawlStateConfig().location("lists/my-sites.yaml", "templates_db") == "lists/my-sites.state"
