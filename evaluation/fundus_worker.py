"""Fundus on pages for the evaluation, run with the Python of its own environment (``make fundus``):
``.venv-fundus/bin/python -m evaluation.fundus_worker`` from the repository (:mod:`evaluation.peer_protocol`).

Fundus pins lxml below 6 (the project runs 6.1.3). It parses a page with the parser written for its publisher:
the publisher is the one whose domain has the page URL's registered domain (``crawler.domains``: the Public Suffix
List of ``publicsuffixlist``, pinned in this environment too), and its newest parser version reads the page
(``publisher.parser().parse(html, error_handling="suppress")``); the text is the body's. A page of a site Fundus has
no parser for is an error. The ready line lists the publishers' domains (``domains``), so the caller can choose
the pages Fundus covers.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from crawler.domains import registered_domain
from evaluation.peer_protocol import quiet, serve


def site(url: str) -> str:
    """Return the registered domain of a URL's host (``crawler.domains``, as the crawl reads it)."""
    return registered_domain(urlsplit(url).hostname or "")


def main() -> None:
    quiet()
    from fundus import PublisherCollection

    publishers = {site(publisher.domain): publisher for publisher in PublisherCollection}

    def read(html: str, url: str | None) -> dict[str, Any]:
        publisher = publishers.get(site(url or ""))
        if publisher is None:
            raise LookupError(f"Fundus has no parser for {url}")
        parsed = publisher.parser().parse(html, error_handling="suppress")
        body = parsed.get("body")
        published = parsed.get("publishing_date")
        return {"text": str(body) if body else "", "title": parsed.get("title"),
                "authors": list(parsed.get("authors") or []),
                "date_publish": published.isoformat() if published is not None else None}

    serve(read, {"domains": sorted(publishers)})


if __name__ == "__main__":
    main()
