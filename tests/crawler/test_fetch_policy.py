"""The address policy (crawler/fetch_policy.py): which addresses are refused, what names them allowed, and the
check of a one-off URL (`scrapy extract -u`) against an unlisted server that counts what it gets."""

from __future__ import annotations

import asyncio
import ipaddress

import pytest

from crawler.fetch_policy import (
    AddressPolicy,
    FetchPolicyConfig,
    FetchRefused,
    address_class,
    checked_addresses,
    parse_address,
    proxy_hosts,
    site_list_hosts,
)
from crawler.sites import parse_site_list
from tests.crawl_helpers import sites_yaml
from tests.fetch_servers import CountingServer, MappedPolicy


@pytest.mark.parametrize(("address", "reason"), [
    ("127.0.0.1", "loopback"), ("127.0.0.2", "loopback"), ("::1", "loopback"),
    ("10.1.2.3", "private"), ("172.16.0.1", "private"), ("172.31.255.255", "private"), ("192.168.1.1", "private"),
    ("fd12:3456::1", "private"), ("fc00::1", "private"),
    ("169.254.169.254", "link_local"), ("fe80::1", "link_local"),
    ("0.0.0.0", "unspecified"), ("::", "unspecified"),
    ("224.0.0.1", "multicast"), ("ff02::1", "multicast"),
    ("100.64.0.1", "reserved"), ("192.0.2.1", "reserved"), ("240.0.0.1", "reserved"), ("198.18.0.1", "reserved"),
    ("::ffff:127.0.0.1", "loopback"), ("::ffff:169.254.169.254", "link_local"), ("64:ff9b::a00:1", "private"),
    ("8.8.8.8", None), ("172.32.0.1", None), ("2606:4700::1111", None), ("64:ff9b::808:808", None),
])
def test_address_class(address: str, reason: str | None) -> None:
    assert address_class(ipaddress.ip_address(address)) == reason


def test_parse_address() -> None:
    assert parse_address("[::1]") == ipaddress.ip_address("::1")
    assert parse_address("127.0.0.1") == ipaddress.ip_address("127.0.0.1")
    assert parse_address("fe80::1%eth0") == ipaddress.ip_address("fe80::1")
    assert parse_address("example.com") is None


def _policy(hosts: dict[str, list[str]], named: tuple[str, ...] = (), **settings: str) -> MappedPolicy:
    config = FetchPolicyConfig.from_settings({f"FETCH_{key.upper()}": value for key, value in settings.items()})
    policy = MappedPolicy(config, named)
    policy.hosts = hosts
    return policy


def _refusal(policy: AddressPolicy, host: str) -> str | None:
    """Return the reason the policy refuses ``host`` (None: allowed), asked in an event loop and outside one."""
    reasons = []
    for ask in (lambda: asyncio.run(policy.addresses(host)), lambda: policy.addresses_sync(host)):
        policy._cache.clear()
        try:
            ask()
            reasons.append(None)
        except FetchRefused as refused:
            reasons.append(refused.reason)
    assert reasons[0] == reasons[1]
    return reasons[0]


def test_names_that_resolve_to_the_machine_or_its_network_are_refused() -> None:
    policy = _policy({"loop.test": ["127.0.0.1"], "meta.test": ["169.254.169.254"], "lan.test": ["192.168.0.7"],
                      "v6.test": ["::1"], "public.test": ["93.184.216.34"]})
    assert _refusal(policy, "loop.test") == "loopback"
    assert _refusal(policy, "META.test.") == "link_local"  # as hosts are compared: lower case, no trailing dot
    assert _refusal(policy, "lan.test") == "private"
    assert _refusal(policy, "v6.test") == "loopback"
    assert _refusal(policy, "public.test") is None
    assert _refusal(policy, "127.0.0.1") == "loopback" and _refusal(policy, "[::1]") == "loopback"
    with pytest.raises(FetchRefused, match=r"169\.254\.169\.254 is link-local"):
        policy.addresses_sync("169.254.169.254")


def test_a_name_with_a_public_and_a_private_address_connects_to_the_public_one_only() -> None:
    policy = _policy({"mixed.test": ["127.0.0.1", "93.184.216.34"]})
    assert asyncio.run(policy.addresses("mixed.test")) == (ipaddress.ip_address("93.184.216.34"),)


def test_hosts_the_site_list_names_and_allowed_networks_pass() -> None:
    sites = parse_site_list(sites_yaml([
        {"name": "demo", "start_urls": ["http://127.0.0.1:8080/en/"], "allowed_prefixes": ["http://127.0.0.1:8080/en/"]},
        {"name": "intranet", "start_urls": ["http://Intranet.Corp/news/"], "allowed_prefixes": ["http://intranet.corp/"],
         "feeds": ["http://feeds.corp/news.xml"]}]))
    assert site_list_hosts(sites) == {"127.0.0.1", "intranet.corp", "feeds.corp"}
    policy = _policy({"intranet.corp": ["10.0.0.5"], "other.corp": ["10.0.0.6"], "db.corp": ["10.9.0.1"]},
                     tuple(site_list_hosts(sites)))
    assert _refusal(policy, "127.0.0.1") is None and _refusal(policy, "intranet.corp") is None
    assert _refusal(policy, "127.0.0.2") == "loopback"  # named: the address itself, not its network
    assert _refusal(policy, "other.corp") == "private"  # a name is named, not the addresses it resolves to
    assert _refusal(policy, "10.0.0.5") == "private"
    wider = _policy({"db.corp": ["10.9.0.1"], "home.test": ["192.168.1.2"]}, allow_networks="10.9.0.0/16")
    assert _refusal(wider, "db.corp") is None and _refusal(wider, "10.9.200.1") is None
    assert _refusal(wider, "10.10.0.1") == "private" and _refusal(wider, "home.test") == "private"
    private = _policy({"home.test": ["192.168.1.2"]}, allow_networks="private")
    assert _refusal(private, "home.test") is None and _refusal(private, "fd00::1") is None
    assert _refusal(private, "127.0.0.1") == "loopback" and _refusal(private, "169.254.169.254") == "link_local"
    hosts = _policy({}, allow_hosts="127.0.0.3,Metadata.Internal")
    assert _refusal(hosts, "127.0.0.3") is None and hosts.is_named("metadata.internal")


def test_bad_networks_are_refused_with_the_setting_named() -> None:
    with pytest.raises(ValueError, match=r"FETCH_ALLOW_NETWORKS: not a network.*'10\.0\.0\.0/33'"):
        FetchPolicyConfig.from_settings({"FETCH_ALLOW_NETWORKS": "10.0.0.0/8,10.0.0.0/33"})


def test_through_a_proxy_only_what_the_url_says_is_checked() -> None:
    policy = _policy({})
    assert policy.literal_refusal("http://169.254.169.254/latest/").reason == "link_local"  # type: ignore[union-attr]
    assert policy.literal_refusal("http://LOCALHOST:8000/").reason == "loopback"  # type: ignore[union-attr]
    assert policy.literal_refusal("http://db.localhost/").reason == "loopback"  # type: ignore[union-attr]
    assert policy.literal_refusal("file:///etc/passwd").reason == "scheme"  # type: ignore[union-attr]
    assert policy.literal_refusal("https://example.com/") is None  # the proxy resolves it


def test_proxy_hosts(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("http_proxy", "http://127.0.0.1:3128")
    monkeypatch.setenv("https_proxy", "proxy.corp:8080")
    assert proxy_hosts(["http://[::1]:9000", ""]) >= {"127.0.0.1", "proxy.corp", "::1"}


def test_a_one_off_fetch_of_an_unlisted_loopback_server_sends_it_nothing() -> None:
    # What `scrapy extract -u URL` calls before it connects (docs/fetch-policy.md).
    with CountingServer("127.0.0.2") as secret:
        policy = AddressPolicy(FetchPolicyConfig())
        with pytest.raises(FetchRefused) as refused:
            checked_addresses(f"{secret.url}/latest/meta-data/", policy)
        assert refused.value.reason == "loopback"
        with pytest.raises(FetchRefused, match="scheme"):
            checked_addresses("file:///etc/hostname", policy)
        assert dict(secret.hits) == {}
        allowed = AddressPolicy(FetchPolicyConfig.from_settings({"FETCH_ALLOW_HOSTS": "127.0.0.2"}))
        assert checked_addresses(f"{secret.url}/x", allowed) == ("127.0.0.2", secret.port,
                                                                 (ipaddress.ip_address("127.0.0.2"),))
