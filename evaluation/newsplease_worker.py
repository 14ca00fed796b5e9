"""news-please on pages for the evaluation, run with the Python of its own environment (``make newsplease``):
``.venv-newsplease/bin/python -m evaluation.newsplease_worker`` from the repository (:mod:`evaluation.peer_protocol`).

news-please cannot share the project's environment: its newspaper4k and botocore pin python-dateutil below 3
(the project's htmldate runs with 4.0.0), and it brings boto3, elasticsearch, psycopg2, redis and PyMySQL for its
own crawler's storage.

``NewsPlease.from_html(html, url, fetch_images=False)`` is what news-please's documentation gives for a page
already fetched: newspaper4k's extractor without its image download, readability-lxml, its date extractor and
its language detection, merged by its comparer; ``maintext`` is the text.
"""

from __future__ import annotations

from typing import Any

from evaluation.peer_protocol import EMPTY, quiet, serve


def main() -> None:
    quiet()
    from newsplease import NewsPlease

    def read(html: str, url: str | None) -> dict[str, Any]:
        article = NewsPlease.from_html(html, url=url, fetch_images=False)
        if isinstance(article, dict):  # from_html returns {} for an empty page
            return EMPTY
        published = article.date_publish
        return {"text": article.maintext or "", "title": article.title, "authors": list(article.authors or []),
                "date_publish": published.isoformat() if published is not None else None,
                "language": article.language}

    serve(read)


if __name__ == "__main__":
    main()
