"""Where Web2Text loses to the SVM pipeline on Dragnet, and how the training sets label comments.

``python -m bench.web2text_comments [--top N]``. Two measurements behind docs/evaluation/index.md's Web2Text section:

* **Comments in the training labels**: over the article pages of the train sets
  (``evaluation.folds.training_pages``), the characters of CDOM leaves that lie under an element
  whose class or id has a token of the ``comment`` group (``extraction.blockclf.features.CLASS_GROUPS``),
  and the share of them that the alignment labels content (``evaluation.labels.label_texts``),
  per dataset.
* **Dragnet held-out pages** where ``web2text`` loses most shingle precision against ``pipeline``
  (``evaluation.metrics.shingle_counts``), each with the mean precision/recall differences over
  the set and, per page, the first lines that Web2Text keeps and the gold mostly lacks, to read.

Printed only (nothing written).
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from collections.abc import Sequence

from evaluation.datasets import ARTICLE
from evaluation.folds import held_out_pages, training_pages
from evaluation.labels import label_texts
from evaluation.metrics import shingle_counts, word_tokens
from extraction.blockclf.features import CLASS_GROUPS, element_groups
from extraction.dom.encoding import decode_html
from extraction.dom.html import parse_html
from extraction.methods import extract
from extraction.web2text.cdom import collapse

COMMENT_GROUP = 1 << [name for name, _ in CLASS_GROUPS].index("comment")


def comment_label_shares() -> dict[str, tuple[int, float]]:
    """Return per training dataset the characters under comment classes and the share labelled content."""
    chars: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for page in training_pages():
        if page.page_type not in (None, ARTICLE):
            continue
        tree = collapse(parse_html(decode_html(page.html_bytes()).text))
        for text, owner, content in zip(tree.texts, tree.owners, label_texts(tree.texts, page.gold_text),
                                        strict=True):
            if any(element_groups(element) & COMMENT_GROUP for element in (owner, *owner.iterancestors())):
                chars[page.dataset][0] += len(text)
                chars[page.dataset][1] += len(text) if content else 0
    return {name: (total, kept / total if total else 0.0) for name, (total, kept) in chars.items()}


def dragnet_losses(top: int) -> None:
    """Print the mean precision/recall differences and the ``top`` pages of largest precision loss."""
    rows = []
    for page in held_out_pages("dragnet"):
        if page.gold_text is None:
            continue
        html = decode_html(page.html_bytes()).text
        ours = extract(html, "web2text").text
        svm = extract(html, "pipeline").text
        a = shingle_counts(ours, page.gold_text, word_tokens)
        b = shingle_counts(svm, page.gold_text, word_tokens)
        rows.append((a.precision - b.precision, a.recall - b.recall, page.page_id, ours, page.gold_text))
    print(f"dragnet held-out, {len(rows)} pages: web2text - pipeline, mean precision "
          f"{sum(r[0] for r in rows) / len(rows):+.3f}, mean recall {sum(r[1] for r in rows) / len(rows):+.3f}")
    for d_precision, d_recall, page_id, text, gold in sorted(rows)[:top]:
        gold_words = set(word_tokens(gold.lower()))
        extra = [line for line in text.split("\n") if len(line) > 30
                 and sum(w in gold_words for w in word_tokens(line.lower())) < 0.5 * len(word_tokens(line))]
        print(f"\n{page_id}: precision {d_precision:+.2f}, recall {d_recall:+.2f}, "
              f"{len(extra)} kept lines not in the gold")
        for line in extra[:4]:
            print("   ", line[:140])


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--top", type=int, default=8, help="Dragnet pages to show (default 8)")
    args = parser.parse_args(argv)
    for name, (total, share) in comment_label_shares().items():
        print(f"{name}: {total} characters under comment classes/ids, {share:.0%} labelled content")
    print()
    dragnet_losses(args.top)
    return 0


if __name__ == "__main__":
    sys.exit(main())
