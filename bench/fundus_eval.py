"""The default extraction beside Fundus on the pages Fundus has a parser for, with trafilatura and news-please.

``python -m bench.fundus_eval [--out bench/results/fundus.md]`` (needs ``make fundus`` and ``make newsplease``)

Fundus reads only the sites it has a hand-written parser for (177 publishers in 0.5.7), so its text is measured on
the pages of those sites among each set's held-out pages (the site is the page URL's registered domain,
``evaluation.fundus_worker.site``), each set with its own metric, every candidate on the same pages in one run (the
harness's :func:`evaluation.harness.evaluate`: paired bootstrap intervals of the default's lead). Fundus reads a
page with its publisher's newest parser; most of these pages are years older than that layout (L3S-GN1's are from
2008), which is what a user of Fundus gets for them: its publishers' parsers are written for the layouts it crawls
now.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from evaluation.baselines import FUNDUS, PeerWorker, load_baseline, peer_baseline
from evaluation.fundus_worker import site
from evaluation.harness import HELD_OUT, evaluate, load_pages, markdown_table, method_candidate, resolve_split

SETS = ("cleaneval", "wcxb-dev", "chinese-wced-dev", "l3s-gn1", "dragnet", "trafilatura-eval")
OUT = Path(__file__).parent / "results" / "fundus.md"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.fundus_eval", description=__doc__.split("\n\n")[0])
    parser.add_argument("--sets", nargs="+", default=list(SETS), choices=SETS)
    parser.add_argument("--out", default=str(OUT))
    args = parser.parse_args(argv)
    fundus = PeerWorker(FUNDUS)
    fundus.start()
    domains = set(fundus.info["domains"])
    candidates = [("pipeline", "method", method_candidate("pipeline"))]
    candidates += [(name, "baseline", load_baseline(name)) for name in ("trafilatura", "news-please")]
    candidates.append(("fundus", "baseline", peer_baseline(fundus)))
    lines = [f"# The default beside Fundus on its publishers' pages (`python -m bench.fundus_eval`, "
             f"{time.strftime('%Y-%m-%d')})", "", " ".join(__doc__.split("\n\n")[2].split()), ""]
    for name in args.sets:
        split = resolve_split(name, HELD_OUT)
        pages = [page for page in load_pages(name, split) if page.url and site(page.url) in domains]
        print(f"{name}: {len(pages)} pages of Fundus's publishers", file=sys.stderr)
        if not pages:
            lines += [f"**{name}** ({split}): no page of a Fundus publisher", ""]
            continue
        result = evaluate(pages, name, candidates, split=split)
        sites = sorted({site(page.url) for page in pages if page.url})
        lines += [markdown_table(result), "", f"Sites: {', '.join(sites)}.", ""]
        print(lines[-4], file=sys.stderr)
    Path(args.out).write_text("\n".join(lines), encoding="utf-8")
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
