"""MSV Big5 reader (``msv-big5``): ``Extraction/<subset>/{html,gold}``.

Subsets: ``big5-05``, ``big5-09``, ``big5-13``, ``big5-17`` (the "Big9" set: 10 pages from
each of 9 news sites per year, 2005/2009/2013/2017) and ``chaos-all`` (360 pages from about
240 sites, 2017, 36 queries x 10). File names are ``<keyword> (<n>).htm`` or ``<keyword>.html``:
the keyword is the article's subject, **not** the site, and the pages carry no URL. The site
of a Big9 page is therefore inferred from which of the nine sites' domains the HTML mentions
most (on the copy read here that gives exactly 10 pages per site per year, with a clear
margin every time); ``extra["site_inferred"]`` says so. Chaos pages get their URL (and site)
from ``<link rel=canonical>`` / ``og:url`` when present (357 of 360). Gold is
``gold/<name>.txt`` (the HTML name less ``.htm``/``.html``), many in windows-1252.
"""

from __future__ import annotations

import gzip
import re
from collections.abc import Iterator, Sequence
from pathlib import Path

from evaluation.datasets.base import Page, require_dir
from evaluation.datasets.textutil import decode_text, sniff_url, url_site

BIG5_SUBSETS = ("big5-05", "big5-09", "big5-13", "big5-17")
CHAOS_SUBSET = "chaos-all"
ALL_SUBSETS = (*BIG5_SUBSETS, CHAOS_SUBSET)

BIG9_SITES: dict[str, re.Pattern[bytes]] = {
    "arstechnica": re.compile(rb"arstechnica\.com"),
    "bbc": re.compile(rb"bbc\.co\.uk|bbc\.com|bbci\.co\.uk"),
    "cnn": re.compile(rb"cnn\.com"),
    "forbes": re.compile(rb"forbes\.com"),
    "foxnews": re.compile(rb"foxnews\.com"),
    "latimes": re.compile(rb"latimes\.com"),
    "nymag": re.compile(rb"nymag\.com"),
    "nypost": re.compile(rb"nypost\.com"),
    "yahoo": re.compile(rb"yahoo\.com|yimg\.com"),
}

_NAME_RE = re.compile(r"^(?P<keyword>.*?)(?: \((?P<number>\d+)\))?$")


def infer_big9_site(body: bytes) -> str | None:
    """Return the Big9 site whose domain ``body`` mentions most often, or None if it names none."""
    lowered = body.lower()
    counts = {site: len(pattern.findall(lowered)) for site, pattern in BIG9_SITES.items()}
    site, count = max(counts.items(), key=lambda item: item[1])
    return site if count else None


def _stem(html_path: Path) -> str:
    name = html_path.name.removesuffix(".gz")
    return name.rsplit(".", 1)[0]


def read_msv_big5(folder: Path, subsets: Sequence[str] = ALL_SUBSETS) -> Iterator[Page]:
    """Yield pages of the given subsets; page ids are "<subset>/<name>", e.g. "big5-05/amd (1)"."""
    extraction = require_dir(folder / "Extraction")
    for subset in subsets:
        if subset not in ALL_SUBSETS:
            raise ValueError(f"unknown msv-big5 subset {subset!r}; expected some of {ALL_SUBSETS}")
        html_dir = require_dir(extraction / subset / "html")
        gold_dir = extraction / subset / "gold"
        year = 2000 + int(subset[-2:]) if subset in BIG5_SUBSETS else 2017
        for html_path in sorted(html_dir.glob("*.gz")):
            stem = _stem(html_path)
            gold_path = gold_dir / f"{stem}.txt"
            gold = decode_text(gold_path.read_bytes()).strip() if gold_path.is_file() else None
            body = gzip.decompress(html_path.read_bytes())
            url: str | None = None
            if subset == CHAOS_SUBSET:
                url = sniff_url(body)
                site = url_site(url)
            else:
                site = infer_big9_site(body)
            match = _NAME_RE.match(stem)
            keyword = match.group("keyword") if match else stem
            yield Page(
                dataset="msv-big5",
                page_id=f"{subset}/{stem}",
                html_path=html_path,
                url=url,
                gold_text=gold or None,
                page_type="article",
                lang="en",
                site=site,
                extra={
                    "subset": subset,
                    "year": year,
                    "keyword": keyword,
                    "site_inferred": subset != CHAOS_SUBSET,
                },
            )
