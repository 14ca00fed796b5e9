"""Runs news-please on pages for the evaluation: run by the Python of its own environment (``make newsplease``).

news-please cannot share the project's environment: its newspaper4k and botocore pin python-dateutil below 3
(the project's htmldate runs with 4.0.0), and it brings boto3, elasticsearch, psycopg2, redis and PyMySQL for its
own crawler's storage. So
:mod:`evaluation.baselines` starts this file with ``.venv-newsplease/bin/python`` and talks to it in JSON lines:
one request ``{"html": ..., "url": ...}`` per line on standard input, one answer per line on standard output,
``{"text", "title", "authors", "date_publish", "language", "error"}`` (``date_publish`` as ISO 8601, ``error``
the exception of a page news-please raised on, else null). Only the standard library and news-please are imported here.

``NewsPlease.from_html(html, url, fetch_images=False)`` is what news-please's documentation gives for a page
already fetched: newspaper4k's extractor without its image download, readability-lxml, its date extractor and
its language detection, merged by its comparer; ``maintext`` is the text.
"""

from __future__ import annotations

import json
import logging
import sys
import warnings
from typing import Any

EMPTY: dict[str, Any] = {"text": "", "title": None, "authors": [], "date_publish": None, "language": None,
                         "error": None}


def _answer(newsplease: Any, request: dict[str, Any]) -> dict[str, Any]:
    try:
        article = newsplease.from_html(request["html"], url=request.get("url") or None, fetch_images=False)
    except Exception as exc:  # news-please raises on some pages (readability's Unparseable): counted by the caller
        return {**EMPTY, "error": f"{type(exc).__name__}: {exc}"[:300]}
    if isinstance(article, dict):  # from_html returns {} for an empty page
        return EMPTY
    published = article.date_publish
    return {"text": article.maintext or "", "title": article.title, "authors": list(article.authors or []),
            "date_publish": published.isoformat() if published is not None else None, "language": article.language,
            "error": None}


def main() -> None:
    warnings.simplefilter("ignore")
    logging.disable(logging.CRITICAL)  # news-please logs each page's extractor errors with their tracebacks
    from newsplease import NewsPlease

    out = sys.stdout
    sys.stdout = sys.stderr  # a print inside the libraries must not break the protocol
    out.write(json.dumps({"ready": True}) + "\n")
    out.flush()
    for line in sys.stdin:
        out.write(json.dumps(_answer(NewsPlease, json.loads(line))) + "\n")
        out.flush()


if __name__ == "__main__":
    main()
