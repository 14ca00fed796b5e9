"""The site list: which news sites to crawl and how, loaded from YAML and validated.

A file looks like::

    defaults:            # optional, merged into every site
      max_pages: 500
    sites:
      - name: en-gazette
        start_urls: ["${DEMO_URL}/en/"]
        allowed_prefixes: ["${DEMO_URL}/en/"]
        feeds: ["${DEMO_URL}/en/feed.xml"]
        sitemaps: ["${DEMO_URL}/en/sitemap.xml"]
        follow: []          # regexes; when given, only links matching one are followed
        deny: ["/print/"]   # regexes; links matching one are never followed
        max_pages: 200
        max_depth: 5
        render: true
        trailing_slash: keep
        delay: 2.0          # optional: a fixed delay (s) between requests to this site, AutoThrottle off for it
        concurrency: 2      # optional: requests in flight to this site (default CONCURRENT_REQUESTS_PER_DOMAIN)
        javascript: auto    # optional: run the page's scripts when rendering: true, false, auto (RENDER_JAVASCRIPT)
        revisit: 6h         # optional: hubs (start/list pages, feeds, sitemaps) refetched at most this often
        recrawl: changed    # optional: new | changed: known articles refetched, exported when changed
        redirect_domains: ["gazette-news.example"]  # optional: where redirects may lead besides the site itself

``${NAME}`` is replaced by the environment variable NAME, or by a value the caller gives
(the spider gives ``DEMO_URL``, the address of the bundled demo server). Every problem is
reported as a :class:`SiteListError` naming the file, the entry and the field.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import yaml

from crawler.domains import registered_domain
from crawler.urls import TRAILING_SLASH_MODES, TrailingSlash, canonical_url

# Defaults for a site entry (the manual's site-list reference shows them).

DEFAULT_MAX_PAGES = 1000
DEFAULT_MAX_DEPTH = 10
_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
_VARIABLE_RE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_DOMAIN_RE = re.compile(r"^[^\s/:?#@\[\]]+\.[^\s/:?#@\[\].]+$")  # a host name of two labels or more, no URL
_DURATION_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhd]?)\s*$")
_DURATION_UNITS = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}
RECRAWL_MODES = ("new", "changed")

# The top-level keys of a site-list file, and what each holds.
TOP_LEVEL_KEYS = {
    "sites": "the list of site entries (required, at least one)",
    "defaults": "optional: fields merged into every site entry (an entry's own value wins)",
}
# Every field a site entry may have, and what it means: the validator refuses any other (naming these), and the
# manual's site-list reference is made from this table (docs/reference.py), so the two cannot drift apart.
SITE_FIELDS = {
    "name": "required: the site's name, letters, digits and . _ - (unique in the list); records carry it as `site`",
    "start_urls": "pages the crawl starts from (absolute http(s) URLs inside `allowed_prefixes`); a site needs "
                  "start URLs, feeds or sitemaps",
    "allowed_prefixes": "required: URL prefixes of the site; links outside them are not followed",
    "feeds": "RSS 2.0 or Atom feeds whose entries are start points",
    "sitemaps": "sitemaps or sitemap indexes (.xml or .gz) whose URLs are start points",
    "follow": "regular expressions: when given, only links matching one are followed",
    "deny": "regular expressions: links matching one are never followed",
    "max_pages": "pages requested for this site at most, in one run",
    "max_depth": "link hops from a start point at most",
    "render": "true: pages are rendered in Chromium after the fetch, with a screenshot; false: plain HTTP",
    "trailing_slash": "keep, strip or add the trailing slash of a URL's path when it is canonicalised",
    "delay": "fixed seconds between two requests to this site (AutoThrottle off for it)",
    "concurrency": "requests in flight to this site (default CONCURRENT_REQUESTS_PER_DOMAIN)",
    "javascript": "run the page's scripts when rendering: true, false or auto (default: RENDER_JAVASCRIPT)",
    "revisit": "start and list pages, feeds and sitemaps are fetched again at most this often: seconds, or 90s, "
               "30m, 6h, 1d (default CRAWL_STATE_REVISIT: every run)",
    "recrawl": "new: known articles are not fetched again; changed: checked again and exported when their text "
               "changed (default CRAWL_STATE_RECRAWL, or -a recrawl=)",
    "redirect_domains": "domains (and their subdomains) redirects may lead to besides the site's own registered "
                        "domain, e.g. where the site moved (the fetch policy's scope)",
}
_KNOWN_FIELDS = frozenset(SITE_FIELDS)


class SiteListError(ValueError):
    """A site list that cannot be used; the message names the file, entry and field."""


@dataclass(frozen=True)
class SiteConfig:
    """One site of the list, validated."""

    name: str
    start_urls: tuple[str, ...]
    allowed_prefixes: tuple[str, ...]
    follow: tuple[re.Pattern[str], ...] = ()
    deny: tuple[re.Pattern[str], ...] = ()
    feeds: tuple[str, ...] = ()
    sitemaps: tuple[str, ...] = ()
    max_pages: int = DEFAULT_MAX_PAGES
    max_depth: int = DEFAULT_MAX_DEPTH
    render: bool = True
    trailing_slash: TrailingSlash = "keep"
    delay: float | None = None  # fixed seconds between requests (None: AutoThrottle measures the server)
    concurrency: int | None = None  # requests in flight to the site (None: CONCURRENT_REQUESTS_PER_DOMAIN)
    javascript: bool | None = None  # run scripts when rendering; None: RENDER_JAVASCRIPT decides ("auto")
    revisit: float | None = None  # seconds between hub revisits; None: CRAWL_STATE_REVISIT
    recrawl: str | None = None  # new | changed; None: CRAWL_STATE_RECRAWL (or -a recrawl=)
    # Domains (and their subdomains) that redirects may lead to besides the site's own (docs/fetch-policy.md).
    redirect_domains: tuple[str, ...] = ()

    @property
    def download_slot(self) -> str | None:
        """The site's own download slot when it overrides politeness, else None (Scrapy's per-host slot)."""
        return f"site:{self.name}" if self.delay is not None or self.concurrency is not None else None

    def canonical(self, url: str) -> str:
        """Return ``url`` canonicalised with this site's trailing-slash rule."""
        return canonical_url(url, self.trailing_slash)

    def allows(self, url: str) -> bool:
        """Return True when a canonical URL is inside the site and passes follow/deny."""
        if not any(url.startswith(prefix) for prefix in self.allowed_prefixes):
            return False
        if any(pattern.search(url) for pattern in self.deny):
            return False
        return not self.follow or any(pattern.search(url) for pattern in self.follow)

    @functools.cached_property
    def domains(self) -> frozenset[str]:
        """Return the registered domains of the hosts the site's URLs name (bbc.co.uk for news.bbc.co.uk)."""
        return frozenset(registered_domain(host) for url in (*self.start_urls, *self.allowed_prefixes,
                                                             *self.feeds, *self.sitemaps)
                         if (host := urlsplit(url).hostname))

    def in_scope(self, url: str) -> bool:
        """Return True when a redirect may lead to ``url``: inside the allowed prefixes, on the site's registered
        domain (http -> https and ``www.`` moves), or on one of its ``redirect_domains``; False for any other URL,
        a malformed one, or one that is not http(s)."""
        try:
            parts = urlsplit(url)
            host = (parts.hostname or "").rstrip(".")
            canonical = self.canonical(url)
        except ValueError:
            return False
        if parts.scheme not in ("http", "https") or not host:
            return False
        if any(canonical.startswith(prefix) for prefix in self.allowed_prefixes):
            return True
        if registered_domain(host) in self.domains:
            return True
        return any(host == domain or host.endswith("." + domain) for domain in self.redirect_domains)


@dataclass(frozen=True)
class SiteList:
    """All sites of a file, in file order."""

    sites: tuple[SiteConfig, ...]
    source: str = "<memory>"
    variables_used: frozenset[str] = field(default_factory=frozenset)

    @functools.cached_property
    def _by_name(self) -> dict[str, SiteConfig]:
        return {site.name: site for site in self.sites}

    def named(self, name: str) -> SiteConfig:
        """Return the site called ``name`` (names are unique; KeyError for none): a dict lookup, as the
        spider asks for every response of a crawl of thousands of sites."""
        return self._by_name[name]

    def site_for(self, url: str) -> SiteConfig | None:
        """Return the site with the longest allowed prefix matching ``url``, or None."""
        best: tuple[int, SiteConfig] | None = None
        for site in self.sites:
            for prefix in site.allowed_prefixes:
                if url.startswith(prefix) and (best is None or len(prefix) > best[0]):
                    best = (len(prefix), site)
        return best[1] if best else None


# libyaml's safe loader when PyYAML was built with it (its wheels are): a site list of 1,500 sites loads in
# a fraction of the pure-Python parser's time.
_YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def referenced_variables(text: str) -> frozenset[str]:
    """Return the ``${NAME}`` variables that a site-list text refers to."""
    return frozenset(_VARIABLE_RE.findall(text))


def load_site_list(path: str | Path, variables: Mapping[str, str] | None = None) -> SiteList:
    """Read, expand and validate a site-list file; raises SiteListError on any problem."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise SiteListError(f"{path}: cannot read site list: {exc.strerror or exc}") from exc
    return parse_site_list(text, source=str(path), variables=variables)


def parse_site_list(
    text: str, source: str = "<memory>", variables: Mapping[str, str] | None = None
) -> SiteList:
    """Parse a site-list YAML text; raises SiteListError naming the entry and field."""
    import os

    values = {**os.environ, **(variables or {})}
    return _parse(text, source, tuple(sorted((name, values.get(name)) for name in referenced_variables(text))))


# The crawl command validates the file before Scrapy starts and the spider loads it again: 0.5 s for 3,500 sites.
@functools.lru_cache(maxsize=2)
def _parse(text: str, source: str, bound: tuple[tuple[str, str | None], ...]) -> SiteList:
    """Parse ``text`` with the values of the variables it uses (``bound``); SiteList is immutable, so one parse
    serves every caller with the same text and values (a raised SiteListError is not cached)."""
    values = {name: value for name, value in bound if value is not None}

    def expand(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in values:
            raise SiteListError(f"{source}: variable ${{{name}}} is not set")
        return values[name]

    used = frozenset(name for name, _ in bound)
    try:
        data = yaml.load(_VARIABLE_RE.sub(expand, text), Loader=_YAML_LOADER)  # safe: no Python objects
    except yaml.YAMLError as exc:
        raise SiteListError(f"{source}: not valid YAML: {exc}") from exc
    if not isinstance(data, dict) or not isinstance(data.get("sites"), list) or not data["sites"]:
        raise SiteListError(f"{source}: expected a mapping with a non-empty 'sites' list")
    defaults = data.get("defaults") or {}
    if not isinstance(defaults, dict):
        raise SiteListError(f"{source}: 'defaults' must be a mapping")
    unknown_top = set(data) - set(TOP_LEVEL_KEYS)
    if unknown_top:
        raise SiteListError(f"{source}: unknown top-level key(s): {', '.join(sorted(unknown_top))}")
    sites: list[SiteConfig] = []
    names: set[str] = set()
    for index, entry in enumerate(data["sites"], start=1):
        if not isinstance(entry, dict):
            raise SiteListError(f"{source}: site #{index}: expected a mapping, got {type(entry).__name__}")
        site = _validate_site({**defaults, **entry}, f"{source}: site #{index}")
        if site.name in names:
            raise SiteListError(f"{source}: site #{index} '{site.name}': field 'name': duplicate name")
        names.add(site.name)
        sites.append(site)
    return SiteList(tuple(sites), source=source, variables_used=used)


def _validate_site(entry: dict[str, Any], where: str) -> SiteConfig:
    name = entry.get("name")
    if not isinstance(name, str) or not _NAME_RE.match(name):
        raise SiteListError(f"{where}: field 'name': required, letters/digits/._- only, got {name!r}")
    where = f"{where} '{name}'"

    def fail(field_name: str, problem: str) -> SiteListError:
        return SiteListError(f"{where}: field '{field_name}': {problem}")

    unknown = set(entry) - _KNOWN_FIELDS
    if unknown:
        raise fail(sorted(unknown)[0], f"unknown field (known: {', '.join(sorted(_KNOWN_FIELDS))})")
    trailing = entry.get("trailing_slash", "keep")
    if trailing not in TRAILING_SLASH_MODES:
        raise fail("trailing_slash", f"must be one of {', '.join(TRAILING_SLASH_MODES)}, got {trailing!r}")

    def urls(field_name: str, required: bool = False) -> tuple[str, ...]:
        value = entry.get(field_name, [])
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise fail(field_name, "must be a list of URLs")
        if required and not value:
            raise fail(field_name, "at least one URL is required")
        for url in value:
            if not re.match(r"^https?://[^/\s]+", url):
                raise fail(field_name, f"not an absolute http(s) URL: {url!r}")
        return tuple(canonical_url(url, trailing) for url in value)

    def patterns(field_name: str) -> tuple[re.Pattern[str], ...]:
        value = entry.get(field_name, [])
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list):
            raise fail(field_name, "must be a list of regular expressions")
        compiled = []
        for pattern in value:
            try:
                compiled.append(re.compile(pattern))
            except (re.error, TypeError) as exc:
                raise fail(field_name, f"bad regular expression {pattern!r}: {exc}") from exc
        return tuple(compiled)

    def positive_int(field_name: str, default: int) -> int:
        value = entry.get(field_name, default)
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise fail(field_name, f"must be a positive integer, got {value!r}")
        return value

    delay = entry.get("delay")
    if delay is not None and (isinstance(delay, bool) or not isinstance(delay, int | float) or delay < 0):
        raise fail("delay", f"must be a number of seconds >= 0, got {delay!r}")
    concurrency = entry.get("concurrency")
    if concurrency is not None:
        concurrency = positive_int("concurrency", 1)
    render = entry.get("render", True)
    if not isinstance(render, bool):
        raise fail("render", f"must be true or false, got {render!r}")
    javascript = entry.get("javascript", "auto")
    if not isinstance(javascript, bool) and javascript != "auto":
        raise fail("javascript", f"must be true, false or auto, got {javascript!r}")
    revisit = entry.get("revisit")
    if revisit is not None:
        revisit = duration(revisit)
        if revisit is None:
            raise fail("revisit", f"must be seconds or a duration such as 90s, 30m, 6h, 1d, got {entry['revisit']!r}")
    recrawl = entry.get("recrawl")
    if recrawl is not None and recrawl not in RECRAWL_MODES:
        raise fail("recrawl", f"must be one of {', '.join(RECRAWL_MODES)}, got {recrawl!r}")
    redirect_domains = entry.get("redirect_domains", [])
    if isinstance(redirect_domains, str):
        redirect_domains = [redirect_domains]
    if not isinstance(redirect_domains, list) or not all(
            isinstance(d, str) and _DOMAIN_RE.match(d.strip().rstrip(".")) for d in redirect_domains):
        raise fail("redirect_domains", f"must be a list of domain names such as example.com, got {redirect_domains!r}")
    try:  # as request URLs write hosts: IDNA (新华网.中国 -> xn--xkrr14bows.xn--fiqs8s)
        redirect_domains = [d.strip().rstrip(".").encode("idna").decode("ascii").lower() for d in redirect_domains]
    except UnicodeError as exc:
        raise fail("redirect_domains", f"not a domain name: {exc}") from None
    start_urls = urls("start_urls")
    feeds = urls("feeds")
    sitemaps = urls("sitemaps")
    if not (start_urls or feeds or sitemaps):
        raise fail("start_urls", "a site needs start_urls, feeds or sitemaps")
    allowed = urls("allowed_prefixes", required=True)
    for url in start_urls:
        if not any(url.startswith(prefix) for prefix in allowed):
            raise fail("start_urls", f"{url} is outside allowed_prefixes")
    return SiteConfig(
        name=name,
        start_urls=start_urls,
        allowed_prefixes=allowed,
        follow=patterns("follow"),
        deny=patterns("deny"),
        feeds=feeds,
        sitemaps=sitemaps,
        max_pages=positive_int("max_pages", DEFAULT_MAX_PAGES),
        max_depth=positive_int("max_depth", DEFAULT_MAX_DEPTH),
        render=render,
        trailing_slash=trailing,
        delay=None if delay is None else float(delay),
        concurrency=concurrency,
        javascript=None if javascript == "auto" else javascript,
        revisit=revisit,
        recrawl=recrawl,
        redirect_domains=tuple(redirect_domains),
    )


def duration(value: Any) -> float | None:
    """Return seconds from a number or a text such as "90s", "30m", "6h", "1d"; None when it is neither."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value) if value >= 0 else None
    match = _DURATION_RE.match(str(value))
    return float(match.group(1)) * _DURATION_UNITS[match.group(2)] if match else None
