"""URL canonicalisation (one page, one URL, so that each page is fetched once) and the site a host belongs to."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from typing import Literal
from urllib.parse import unquote_plus, urlsplit, urlunsplit

from w3lib.url import canonicalize_url

from crawler.domains import registered_domain

TrailingSlash = Literal["keep", "strip", "add"]
TRAILING_SLASH_MODES: tuple[str, ...] = ("keep", "strip", "add")

# Query parameters that identify a campaign or a click, never the page. Matched on the
# lower-cased name; exact names plus the prefixes below. Sources: Google Analytics (utm_*,
# gclid, _ga), Facebook (fbclid), Mailchimp (mc_cid, mc_eid), Microsoft/Yandex (msclkid,
# yclid), HubSpot (_hs*), Alibaba/Chinese portals (spm).
TRACKING_PARAMS = frozenset(
    {"fbclid", "gclid", "dclid", "gbraid", "wbraid", "msclkid", "yclid", "mc_cid", "mc_eid",
     "_ga", "_gl", "igshid", "spm", "ref_src", "__twitter_impression", "mkt_tok"}
)
TRACKING_PREFIXES = ("utm_", "_hs", "pk_", "mtm_")

DEFAULT_PORTS = {"http": 80, "https": 443}
_LAST_SEGMENT_FILE_RE = re.compile(r"\.[A-Za-z0-9]{1,5}$")


def is_tracking_param(name: str) -> bool:
    """Return True when a query parameter name only tracks clicks or campaigns."""
    lowered = name.lower()
    return lowered in TRACKING_PARAMS or lowered.startswith(TRACKING_PREFIXES)


def canonical_url(url: str, trailing_slash: TrailingSlash = "keep") -> str:
    """Return the canonical form of ``url``.

    Lower-cased scheme and host, no default port, no fragment, no tracking parameters,
    remaining query parameters sorted and percent-encoding normalised (w3lib), and the
    trailing slash of the path kept, stripped or added (``add`` leaves paths whose last
    segment looks like a file name, such as ``story.html``, alone). The root path is
    always ``/``. Raises ValueError for a URL no request can have (a port over 65535, a broken IPv6 host).
    """
    parts = urlsplit(url.strip())
    # The parameters as the page wrote them, tracking ones left out: decoding them as UTF-8 (``parse_qsl``) made
    # a GBK query ("?kw=%C4%E3") U+FFFD, a URL the page never linked; w3lib sorts and re-encodes them as bytes.
    # A query of name=value pairs separated by ";" alone (CGI.pm's style, "?id=3;page=2") keeps ";" between
    # them: split on "&", its ";" and "=" were encoded into one value ("id=3%3Bpage%3D2"), which such a server
    # reads as another page. Any other ";" ("?q=a;b") is part of a value.
    separator = "&"
    if ";" in parts.query and "&" not in parts.query \
            and all("=" in piece for piece in parts.query.split(";") if piece):  # "?id=3;page=2;" too
        separator = ";"
    query = separator.join(piece for piece in parts.query.split(separator)
                           if piece and not is_tracking_param(unquote_plus(piece.split("=", 1)[0])))
    netloc = parts.hostname or ""
    if ":" in netloc:
        netloc = f"[{netloc}]"  # an IPv6 address (``hostname`` drops its brackets)
    if parts.port is not None and DEFAULT_PORTS.get(parts.scheme.lower()) != parts.port:
        netloc = f"{netloc}:{parts.port}"
    if parts.username:
        credentials = parts.username + (f":{parts.password}" if parts.password else "")
        netloc = f"{credentials}@{netloc}"
    path = _apply_trailing_slash(parts.path or "/", trailing_slash)
    rebuilt = urlunsplit((parts.scheme.lower(), netloc, path, query, ""))
    return canonicalize_url(rebuilt, keep_fragments=False, query_separator=separator)


def _apply_trailing_slash(path: str, mode: TrailingSlash) -> str:
    if path == "/" or mode == "keep":
        return path
    if mode == "strip":
        return path.rstrip("/") or "/"
    if path.endswith("/") or _LAST_SEGMENT_FILE_RE.search(path.rsplit("/", 1)[-1]):
        return path
    return path + "/"


def url_has_prefix(url: str, prefixes: tuple[str, ...]) -> str | None:
    """Return the longest of ``prefixes`` that ``url`` starts with, or None."""
    matches = [prefix for prefix in prefixes if url.startswith(prefix)]
    return max(matches, key=len) if matches else None


# Hosts that pages link to whatever their own site: never taken as a page's site.
_GENERIC_DOMAINS = frozenset(
    {
        "w3.org",
        "schema.org",
        "ogp.me",
        "macromedia.com",
        "adobe.com",
        "microsoft.com",
        "googleapis.com",
        "gstatic.com",
        "google-analytics.com",
        "googletagmanager.com",
        "googlesyndication.com",
        "doubleclick.net",
        "bootcss.com",
        "cloudflare.com",
        "jsdelivr.net",
        "jquery.com",
        "miit.gov.cn",  # the ICP licence link in the footer of every site hosted in China
    }
)
_LINK_HOST_RE = re.compile(rb"""https?://([a-z0-9.-]+\.[a-z]{2,})""")


def linked_site(html: bytes, domain_of: Callable[[str], str] = registered_domain) -> str | None:
    """Return the registered domain (``domain_of`` a host) that the page's absolute links name most often (generic
    hosts left out), or None.

    Ties go to the alphabetically first domain, so the answer is deterministic.
    """
    counts: Counter[str] = Counter()
    for match in _LINK_HOST_RE.finditer(html.lower()):
        domain = domain_of(match.group(1).decode("ascii"))
        if domain not in _GENERIC_DOMAINS:
            counts[domain] += 1
    if not counts:
        return None
    return min(counts.items(), key=lambda item: (-item[1], item[0]))[0]
