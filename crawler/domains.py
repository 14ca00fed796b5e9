"""The registered domain of a host (the site a host belongs to): standard library only, so that the evaluation's
peer workers, which run in other environments, read sites as the crawl and the site folds do."""

from __future__ import annotations

# Second-level labels under which country-code domains are registered (bbc.co.uk, abc.net.au,
# people.com.cn, yahoo.co.jp). A heuristic, not the Public Suffix List: an unknown suffix gives a
# coarser or finer domain, never a crash; coarser (all of blogspot.com) is the safe side for the
# site groups of evaluation.folds.
_SECOND_LEVEL = frozenset(
    {"ac", "co", "com", "edu", "gob", "go", "gouv", "gov", "int", "ltd", "mil", "ne", "net", "nic", "or", "org", "plc"}
)


def registered_domain(host: str) -> str:
    """Return the registered domain of a host name ("news.bbc.co.uk" -> "bbc.co.uk"); other strings lower-cased."""
    host = host.strip().lower().rstrip(".").removeprefix("www.")
    labels = host.split(".")
    if len(labels) <= 2 or all(label.isdigit() for label in labels):
        return host
    if len(labels[-1]) == 2 and (labels[-2] in _SECOND_LEVEL or len(labels[-2]) <= 2):
        return ".".join(labels[-3:])
    return ".".join(labels[-2:])
