"""The registered domain of a host (the site a host belongs to), from the Public Suffix List.

The list comes bundled with ``publicsuffixlist`` (pinned in requirements.txt; its version carries the list's date),
read once per process and never downloaded at run time. Its private section counts: ``a.github.io`` and
``b.github.io``, or two ``*.blogspot.com`` or ``*.s3.amazonaws.com`` hosts, are two sites, not one. The crawl
(redirect scope, sitemap indexes), the site folds of the evaluation (evaluation/folds.py) and the evaluation's
peer workers read sites with this one function (the Fundus environment pins the same package).
"""

from __future__ import annotations

import functools
import ipaddress

from publicsuffixlist import PublicSuffixList


@functools.cache
def _list() -> PublicSuffixList:
    return PublicSuffixList()  # the bundled list, ICANN and private sections (0.17 s to read)


@functools.lru_cache(maxsize=65_536)
def registered_domain(host: str) -> str:
    """Return the registered domain of a host name ("news.bbc.co.uk" -> "bbc.co.uk"); an IP address, a public
    suffix itself ("github.io") or a single label ("localhost") lower-cased as it is."""
    host = host.strip().lower().rstrip(".")
    try:
        ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        pass
    else:
        return host
    domain = _list().privatesuffix(host)
    return domain if isinstance(domain, str) else host.removeprefix("www.")
