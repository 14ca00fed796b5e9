"""The address policy: which hosts the crawl may connect to, checked on the addresses it connects to.

Everything a crawl reads is untrusted, the redirects and scripts of a listed site too. Before any connection the
host's addresses are checked, and a connection goes only to an address that passed:

- **Refused by default**: loopback (127.0.0.0/8, ::1), private networks (RFC 1918: 10/8, 172.16/12, 192.168/16;
  IPv6 unique-local fc00::/7), link-local (169.254.0.0/16, where clouds answer with the machine's credentials, and
  fe80::/10), unspecified (0.0.0.0, ::), multicast, and every other range that is not globally routable (IANA's
  special-purpose registries, as Python's ``ipaddress.is_global`` reads them: 100.64/10, 192.0.0/24, 240/4, ...).
  An IPv4 address written in IPv6 (``::ffff:127.0.0.1``, NAT64 ``64:ff9b::``) is checked as the IPv4 address.
- **Allowed all the same**: a host the site list names itself (a host or address of its ``start_urls``,
  ``allowed_prefixes``, ``feeds`` or ``sitemaps``: the demo's 127.0.0.1, a listed intranet site), a proxy the crawl
  is configured with (``http_proxy``/``https_proxy``, RENDER_PROXY), the hosts of ``FETCH_ALLOW_HOSTS``, and the
  addresses inside ``FETCH_ALLOW_NETWORKS`` (CIDR blocks; ``private`` stands for RFC 1918 and fc00::/7).
- **Through a proxy** the proxy resolves names, so only what the request itself says can be checked: an address
  written in the URL, and ``localhost`` names.

One :class:`AddressPolicy` serves every request of a crawl process: Scrapy's (pages, robots.txt, feeds, sitemaps,
redirects) through :class:`PolicyResolver`, the reactor's name resolver (``TWISTED_DNS_RESOLVER``), so the address
Scrapy's HTTP/1.1 handler connects to is the one that was checked (no DNS-rebinding gap between a check and the
connection), and Chromium's through the policy proxy of the renderer (:mod:`crawler.render.policy_proxy`).
``crawler.middlewares.fetch_policy`` refuses a request before it is sent, with its reason (stats
``fetch/refused/<reason>``). For a one-off fetch outside a crawl see :func:`checked_addresses`.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import socket
import time
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar
from urllib.parse import urlsplit
from urllib.request import getproxies

from scrapy.exceptions import IgnoreRequest
from twisted.internet.address import IPv4Address, IPv6Address
from twisted.internet.interfaces import IHostnameResolver, IHostResolution
from zope.interface import implementer

from extraction.config import ComponentConfig

if TYPE_CHECKING:
    from typing import Self

    from crawler.sites import SiteList

logger = logging.getLogger(__name__)

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network

# The networks "private" stands for in FETCH_ALLOW_NETWORKS: RFC 1918 and IPv6 unique-local addresses (RFC 4193).
PRIVATE_NETWORKS: tuple[Network, ...] = tuple(
    ipaddress.ip_network(block) for block in ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "fc00::/7"))
_NAT64 = ipaddress.ip_network("64:ff9b::/96")  # RFC 6052: an IPv4 address in its last 32 bits
# The reasons a request is refused (stats fetch/refused/<reason>), in the order an address is classified.
REASONS = ("unspecified", "loopback", "link_local", "multicast", "private", "reserved", "scheme")
# Seconds a host's checked addresses are reused (getaddrinfo gives no TTL). A longer crawl resolves again; a new
# answer is checked again, so the cache only decides freshness, never what may be connected to.
CACHE_SECONDS = 600.0
SCHEMES = frozenset({"http", "https"})


class FetchRefused(IgnoreRequest):
    """A request the address policy refuses: ``reason`` (one of REASONS) and the ``host``."""

    def __init__(self, reason: str, host: str, address: str | None = None) -> None:
        self.reason, self.host, self.address = reason, host, address
        where = f"{host} ({address})" if address and address != host else host
        super().__init__(f"Refused by the address policy: {where} is {reason.replace('_', '-')}")


@dataclass(frozen=True)
class FetchPolicyConfig(ComponentConfig):
    """FETCH_* settings (docs/fetch-policy.md)."""

    prefix: ClassVar[str] = "FETCH"
    # CIDR blocks whose addresses may be fetched although not globally routable; "private" stands for
    # PRIVATE_NETWORKS. Empty (the default): only the hosts the site list names reach such addresses.
    allow_networks: tuple[str, ...] = ()
    # Host names or addresses allowed as if the site list named them (e.g. for `scrapy extract -u`).
    allow_hosts: tuple[str, ...] = ()
    # Seconds a name's resolution may take: Scrapy's DNS_TIMEOUT (its default, 60).
    dns_timeout: float = field(default=60.0, metadata={"setting": "DNS_TIMEOUT"})

    def validate(self) -> None:
        if not self.dns_timeout > 0:
            raise ValueError(f"DNS_TIMEOUT must be a positive number of seconds, got {self.dns_timeout}")
        self.networks()  # raises for a block that is not one

    def networks(self) -> tuple[Network, ...]:
        """Return the allowed networks, parsed; ValueError names the setting and the bad value."""
        found: list[Network] = []
        for block in self.allow_networks:
            if block.lower() == "private":
                found.extend(PRIVATE_NETWORKS)
                continue
            try:
                found.append(ipaddress.ip_network(block, strict=False))
            except ValueError:
                raise ValueError(f"FETCH_ALLOW_NETWORKS: not a network (CIDR such as 10.1.0.0/16, or 'private'): "
                                 f"{block!r}") from None
        return tuple(found)


def parse_address(host: str) -> IPAddress | None:
    """Return the address a host is written as (``127.0.0.1``, ``[::1]``, ``::1``), or None for a name."""
    text = host.strip().strip("[]")
    try:
        return ipaddress.ip_address(text.split("%", 1)[0])  # an IPv6 zone ("fe80::1%eth0") names no other address
    except ValueError:
        return None


def address_class(address: IPAddress) -> str | None:
    """Return why an address is not a public one (one of REASONS but "scheme"), or None for a global address."""
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return address_class(address.ipv4_mapped)
        if address in _NAT64:
            return address_class(ipaddress.IPv4Address(int(address) & 0xFFFFFFFF))
    if address.is_unspecified:
        return "unspecified"
    if address.is_loopback:
        return "loopback"
    if address.is_link_local:
        return "link_local"
    if address.is_multicast:
        return "multicast"
    if any(address in network for network in PRIVATE_NETWORKS if network.version == address.version):
        return "private"
    if not address.is_global:
        return "reserved"
    return None


def normal_host(host: str) -> str:
    """Return a host as the policy compares hosts: lower case, no trailing dot, no IPv6 brackets."""
    return host.strip().lower().rstrip(".").strip("[]")


def site_list_hosts(site_list: SiteList) -> frozenset[str]:
    """Return the hosts a site list names (its sites' start URLs, allowed prefixes, feeds and sitemaps)."""
    hosts = set()
    for site in site_list.sites:
        for url in (*site.start_urls, *site.allowed_prefixes, *site.feeds, *site.sitemaps):
            host = urlsplit(url).hostname
            if host:
                hosts.add(normal_host(host))
    return frozenset(hosts)


def proxy_hosts(extra: Iterable[str] = ()) -> frozenset[str]:
    """Return the hosts of the proxies the environment configures (``http_proxy``...), and of ``extra`` URLs."""
    hosts = set()
    for url in (*getproxies().values(), *extra):
        if not url:
            continue
        host = urlsplit(url if "://" in url else f"http://{url}").hostname
        if host:
            hosts.add(normal_host(host))
    return frozenset(hosts)


class AddressPolicy:
    """Decides which hosts and addresses may be connected to (module docstring); resolves and caches names."""

    def __init__(self, config: FetchPolicyConfig, named_hosts: Iterable[str] = (),
                 cache_size: int = 10_000) -> None:
        self.config = config
        self.networks = config.networks()
        self.named: set[str] = {normal_host(host) for host in (*named_hosts, *config.allow_hosts) if host}
        self.cache_size = cache_size
        # host -> (expiry, addresses that passed, the reason of the first refused one)
        self._cache: OrderedDict[str, tuple[float, tuple[IPAddress, ...], FetchRefused | None]] = OrderedDict()

    def name(self, hosts: Iterable[str]) -> None:
        """Allow ``hosts`` as named (a site list's, a proxy's)."""
        self.named.update(normal_host(host) for host in hosts if host)
        self._cache.clear()  # answers checked before were checked without them

    def is_named(self, host: str) -> bool:
        """Return True when the host is one the site list or the settings name."""
        return normal_host(host) in self.named

    def refusal(self, address: IPAddress, host: str) -> FetchRefused | None:
        """Return why ``host``, resolved to ``address``, may not be connected to; None when it may."""
        reason = address_class(address)
        if reason is None or self.is_named(host) or any(
                address in network for network in self.networks if network.version == address.version):
            return None
        return FetchRefused(reason, host, str(address))

    def literal_refusal(self, url: str) -> FetchRefused | None:
        """Return why a URL is refused by what it says alone (scheme, an address or a ``localhost`` host), else
        None: the check of a request that a proxy resolves."""
        parts = urlsplit(url)
        if parts.scheme.lower() not in SCHEMES:
            return FetchRefused("scheme", parts.scheme or url)
        host = normal_host(parts.hostname or "")
        address = parse_address(host)
        if address is not None:
            return self.refusal(address, host)
        if (host == "localhost" or host.endswith(".localhost")) and not self.is_named(host):
            return FetchRefused("loopback", host)  # RFC 6761: always the machine itself
        return None

    def _cached(self, host: str) -> tuple[tuple[IPAddress, ...], FetchRefused | None] | None:
        entry = self._cache.get(host)
        if entry is None or entry[0] < time.monotonic():
            return None
        self._cache.move_to_end(host)
        return entry[1], entry[2]

    def _store(self, host: str, found: Sequence[str]) -> tuple[tuple[IPAddress, ...], FetchRefused | None]:
        """Check the addresses a name resolved to: keep those that pass, and the first refusal."""
        allowed: list[IPAddress] = []
        refused = None
        for text in found:
            address = ipaddress.ip_address(text.split("%", 1)[0])
            refusal = self.refusal(address, host)
            if refusal is None:
                allowed.append(address)
            elif refused is None:
                refused = refusal
        result = (tuple(dict.fromkeys(allowed)), refused)
        if self.cache_size:
            self._cache[host] = (time.monotonic() + CACHE_SECONDS, *result)
            while len(self._cache) > self.cache_size:
                self._cache.popitem(last=False)
        return result

    async def addresses(self, host: str) -> tuple[IPAddress, ...]:
        """Return the addresses of ``host`` that may be connected to; raise FetchRefused when none may, OSError (or
        TimeoutError) when the name does not resolve."""
        host = normal_host(host)
        found = self._literal(host) or self._cached(host)
        if found is None:
            found = self._store(host, await asyncio.wait_for(self.resolve(host), self.config.dns_timeout))
        return _allowed(host, found)

    def addresses_sync(self, host: str) -> tuple[IPAddress, ...]:
        """:meth:`addresses` for code outside an event loop (a blocking getaddrinfo)."""
        host = normal_host(host)
        found = self._literal(host) or self._cached(host)
        if found is None:
            found = self._store(host, self.resolve_sync(host))
        return _allowed(host, found)

    async def resolve(self, host: str) -> list[str]:
        """Return the addresses a name resolves to (the system's resolver, in the event loop's executor)."""
        infos = await asyncio.get_running_loop().getaddrinfo(host, None, type=socket.SOCK_STREAM)
        return [str(info[4][0]) for info in infos]

    def resolve_sync(self, host: str) -> list[str]:
        """Return the addresses a name resolves to (a blocking getaddrinfo)."""
        return [str(info[4][0]) for info in socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)]

    def _literal(self, host: str) -> tuple[tuple[IPAddress, ...], FetchRefused | None] | None:
        address = parse_address(host)
        if address is None:
            return None
        refusal = self.refusal(address, host)
        return ((), refusal) if refusal is not None else ((address,), None)


def _allowed(host: str, found: tuple[tuple[IPAddress, ...], FetchRefused | None]) -> tuple[IPAddress, ...]:
    allowed, refused = found
    if not allowed:
        raise refused or OSError(f"{host} has no address")
    return allowed


def checked_addresses(url: str, policy: AddressPolicy) -> tuple[str, int, tuple[IPAddress, ...]]:
    """Return (host, port, addresses) for a one-off fetch of ``url`` outside a crawl (``scrapy extract -u``):
    connect to one of the addresses (sending ``host`` in the Host header and TLS SNI); check each redirect's
    target again. Raises FetchRefused when the policy refuses the URL, OSError when its host does not resolve."""
    refusal = policy.literal_refusal(url)
    if refusal is not None:
        raise refusal
    parts = urlsplit(url)
    host = normal_host(parts.hostname or "")
    port = parts.port or (443 if parts.scheme.lower() == "https" else 80)
    return host, port, policy.addresses_sync(host)


@implementer(IHostResolution)
class _Resolution:
    def __init__(self, name: str) -> None:
        self.name = name

    def cancel(self) -> None:
        """Nothing to cancel: the answer arrives at once or not at all."""


@implementer(IHostnameResolver)
class PolicyResolver:
    """The reactor's name resolver (``TWISTED_DNS_RESOLVER``): it hands Scrapy's connections only the addresses
    the policy allows, so a name cannot resolve to one address when checked and to another when connected.
    It resolves in the asyncio loop of Twisted's asyncio reactor, the reactor the project runs on."""

    policy_class: type[AddressPolicy] = AddressPolicy

    def __init__(self, policy: AddressPolicy) -> None:
        self.policy = policy
        self._tasks: set[asyncio.Task[None]] = set()

    @classmethod
    def from_crawler(cls, crawler: Any, reactor: Any) -> Self:
        # Scrapy builds the resolver with the CrawlerProcess (settings only, no spider): the spider's site list is
        # named later, by the fetch policy middleware (crawler/middlewares/fetch_policy.py).
        settings = crawler.settings
        cache_size = settings.getint("DNSCACHE_SIZE") if settings.getbool("DNSCACHE_ENABLED") else 0
        resolver = cls(cls.policy_class(FetchPolicyConfig.from_settings(settings), cache_size=cache_size))
        resolver.reactor = reactor
        return resolver

    reactor: Any = None

    def install_on_reactor(self) -> None:
        self.reactor.installNameResolver(self)

    # resolutionReceiver: an IResolutionReceiver (zope interfaces are not types mypy reads).
    def resolveHostName(self, resolutionReceiver: Any, hostName: str, portNumber: int = 0,
                        addressTypes: Sequence[type] | None = None, transportSemantics: str = "TCP") -> Any:
        resolution = _Resolution(hostName)
        resolutionReceiver.resolutionBegan(resolution)
        task = asyncio.ensure_future(self._resolve(resolutionReceiver, hostName, portNumber))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return resolution

    async def _resolve(self, receiver: Any, host: str, port: int) -> None:
        try:
            addresses = await self.policy.addresses(host)
        except FetchRefused as refused:
            logger.info("%s: not connected", refused)
            addresses = ()
        except (OSError, TimeoutError, UnicodeError) as exc:  # the connection fails as an unresolved name
            logger.debug("No address for %s: %s", host, exc)
            addresses = ()
        for address in addresses:
            if address.version == 6:
                receiver.addressResolved(IPv6Address("TCP", str(address), port))
            else:
                receiver.addressResolved(IPv4Address("TCP", str(address), port))
        receiver.resolutionComplete()


def installed_resolver() -> PolicyResolver | None:
    """Return the reactor's PolicyResolver, None when another resolver is installed."""
    from twisted.internet import reactor

    resolver = getattr(reactor, "nameResolver", None)
    return resolver if isinstance(resolver, PolicyResolver) else None


_CRAWL_POLICY = "_newscorpus_fetch_policy"


def crawl_policy(crawler: Any) -> AddressPolicy:
    """Return the one policy of a crawl: the reactor's PolicyResolver's (the one Scrapy's connections resolve
    with), its site list's hosts and the configured proxies named; made once per crawler."""
    policy: AddressPolicy | None = getattr(crawler, _CRAWL_POLICY, None)
    if policy is not None:
        return policy
    settings = crawler.settings
    resolver = installed_resolver()
    if resolver is not None:
        policy = resolver.policy
    else:
        policy = AddressPolicy(FetchPolicyConfig.from_settings(settings))
        logger.warning("TWISTED_DNS_RESOLVER is not crawler.fetch_policy.PolicyResolver: hosts are checked before "
                       "a request is sent, but the connection resolves the name again (docs/fetch-policy.md)")
    site_list = getattr(crawler.spider, "site_list", None)
    if site_list is not None:
        policy.name(site_list_hosts(site_list))
    policy.name(proxy_hosts([settings.get("RENDER_PROXY") or ""]))
    setattr(crawler, _CRAWL_POLICY, policy)
    return policy
