"""Training labels from gold text: which blocks (or paragraphs) of a page are main content.

The texts of one page, in document order, are tokenised and concatenated into one sequence,
aligned to the gold text's tokens by a longest common subsequence (LCS), and each text is
labelled by the share of its tokens that the alignment matches::

    labels = label_texts(["Home | News", "Storm hits coast.", "(c) 2024"], gold="Storm hits coast.")
    # [False, True, False]

Why one alignment for the whole page rather than a test per block: a block's words may all
occur somewhere in the gold (navigation such as "News", "World", a date) without the block
being content. An order-preserving alignment can use each gold token once, so a noise block
only matches gold tokens that the content blocks around it did not already take.

Ties. Several alignments can reach the LCS length (a heading word repeated by a breadcrumb
before it, a teaser that repeats the article's first sentence). rapidfuzz resolves ties towards
the earliest page position, which would credit the breadcrumb; ``align_tokens`` then moves each
matched run to a copy of the same tokens that continues a neighbouring run, so matches stay as
contiguous as possible. The number of matched tokens is unchanged: the result is still an LCS.
A page that carries its article twice (e.g. a hidden mobile copy) gets the earlier copy.

L3S-GN1 labels its blocks on an annotated copy of the page; ``l3s_gold_text`` turns that copy
into a gold text (labels 1-3: headline, full text, supplemental) so that blocks of the original
page are labelled by the same alignment as every other dataset.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from evaluation.datasets.l3s import MAIN_LABELS, labelled_blocks

# A text is content when at least this share of its tokens is matched to the gold: "most of
# its text appears in the gold". Chosen by definition, not tuned; the shares themselves are
# available from text_shares() so training can drop ambiguous texts (say 0.2-0.8) instead.
CONTENT_SHARE = 0.5

# Scripts written without spaces between words: each character is one token. With `\w+` alone
# a whole Chinese clause (up to the next punctuation mark) is one token, so a block that shares
# most of a clause with the gold would match nothing. Hangul is written with spaces: not here.
_CJK_CHARS = (
    "\u3040-\u30ff"  # Hiragana, Katakana
    "\uff66-\uff9f"  # half-width Katakana
    "\u3400-\u4dbf"  # CJK Unified Ideographs Extension A
    "\u4e00-\u9fff"  # CJK Unified Ideographs
    "\uf900-\ufaff"  # CJK Compatibility Ideographs
    "\U00020000-\U0002fa1f"  # Extensions B-F and Compatibility Supplement
)
_TOKEN_RE = re.compile(f"[{_CJK_CHARS}]|[^\\W{_CJK_CHARS}]+")

Run = tuple[int, int, int]  # (page start, gold start, length) of a run matched in both sequences


def tokens_for_alignment(text: str | None) -> list[str]:
    """Return the lower-cased `\\w+` tokens of ``text``, each CJK character (Han, kana) a token of its own."""
    return _TOKEN_RE.findall((text or "").lower())


def align_tokens(page_tokens: Sequence[str], gold_tokens: Sequence[str]) -> list[bool]:
    """Return, per page token, whether an LCS alignment of the two sequences matches it to the gold.

    Ties between equally long alignments are resolved towards contiguous matches (see the module
    docstring). Runs in O(len(page) * len(gold) / 64) with rapidfuzz's bit-parallel LCS.
    """
    from rapidfuzz.distance import LCSseq  # lazy: only label building needs rapidfuzz

    # Tokens that occur in only one of the sequences can never match; leaving them out keeps
    # the LCS identical and makes the bit-parallel problem (and its memory) smaller.
    gold_vocab = set(gold_tokens)
    page_vocab = set(page_tokens)
    page_index = [i for i, token in enumerate(page_tokens) if token in gold_vocab]
    gold_index = [j for j, token in enumerate(gold_tokens) if token in page_vocab]
    page_kept = [page_tokens[i] for i in page_index]
    gold_kept = [gold_tokens[j] for j in gold_index]
    runs: list[Run] = []
    if page_kept and gold_kept:
        for block in LCSseq.editops(page_kept, gold_kept).as_matching_blocks():
            for offset in range(block.size):
                _extend_runs(runs, page_index[block.a + offset], gold_index[block.b + offset])
    matched = [False] * len(page_tokens)
    for start, _, length in _prefer_contiguous(runs, page_tokens):
        matched[start : start + length] = [True] * length
    return matched


def _extend_runs(runs: list[Run], page_pos: int, gold_pos: int) -> None:
    """Append the matched pair to ``runs``, growing the last run when the pair continues it in both sequences."""
    if runs:
        start, gold_start, length = runs[-1]
        if start + length == page_pos and gold_start + length == gold_pos:
            runs[-1] = (start, gold_start, length + 1)
            return
    runs.append((page_pos, gold_pos, 1))


def _prefer_contiguous(runs: list[Run], page_tokens: Sequence[str]) -> list[Run]:
    """Return ``runs`` with each run moved, where an identical copy allows, next to the run it continues in the gold.

    A run that continues the previous run in the gold but not on the page moves to the tokens
    right after the previous run if they are the same; otherwise a run that the next run
    continues in the gold moves to the tokens right before the next run. Both targets lie
    between the neighbouring runs, so the alignment stays order-preserving and as long.
    """
    result = list(runs)
    index = 0
    while index < len(result):
        start, gold_start, length = result[index]
        tokens = page_tokens[start : start + length]
        if index > 0:
            prev_start, prev_gold, prev_length = result[index - 1]
            target = prev_start + prev_length
            continues = prev_gold + prev_length == gold_start
            if continues and target != start and page_tokens[target : target + length] == tokens:
                result[index - 1] = (prev_start, prev_gold, prev_length + length)
                del result[index]
                continue
        if index + 1 < len(result):
            next_start, next_gold, next_length = result[index + 1]
            target = next_start - length
            continued = gold_start + length == next_gold
            if continued and target != start and page_tokens[target:next_start] == tokens:
                result[index] = (target, gold_start, length + next_length)
                del result[index + 1]
                continue  # the merged run may now continue the previous one
        index += 1
    return result


def text_shares(texts: Sequence[str], gold: str | None) -> list[float]:
    """Return, per text, the share of its alignment tokens matched to the gold (0.0 for a text without tokens).

    The texts are one page's blocks or paragraphs in document order; they are aligned to the
    gold as one concatenated sequence.
    """
    return _shares([tokens_for_alignment(text) for text in texts], tokens_for_alignment(gold))


def label_texts(texts: Sequence[str], gold: str | None, threshold: float = CONTENT_SHARE) -> list[bool]:
    """Return, per text, True (content) when at least ``threshold`` of its tokens are matched to the gold.

    Texts without tokens (empty, punctuation only) are noise.
    """
    per_text = [tokens_for_alignment(text) for text in texts]
    shares = _shares(per_text, tokens_for_alignment(gold))
    return [bool(tokens) and share >= threshold for tokens, share in zip(per_text, shares, strict=True)]


def _shares(per_text: Sequence[Sequence[str]], gold_tokens: Sequence[str]) -> list[float]:
    """Return the matched share of each token list after aligning their concatenation to ``gold_tokens``."""
    page_tokens = [token for tokens in per_text for token in tokens]
    matched = align_tokens(page_tokens, gold_tokens)
    shares: list[float] = []
    position = 0
    for tokens in per_text:
        count = len(tokens)
        shares.append(sum(matched[position : position + count]) / count if count else 0.0)
        position += count
    return shares


def l3s_gold_text(annotated_html: bytes) -> str:
    """Return the main content of an annotated L3S-GN1 page: its blocks labelled 1-3, one per line, in order.

    This is what ``Page.gold_text`` of the ``l3s-gn1`` reader holds (the same span parsing,
    ``evaluation.datasets.l3s.labelled_blocks``); use it directly when only the annotated HTML
    is at hand. The annotated copy replaced many non-ASCII characters with ``?``: punctuation
    does not matter to the alignment, but a word with an accented letter is split there.
    """
    return "\n".join(text for label, text in labelled_blocks(annotated_html) if label in MAIN_LABELS)


def l3s_block_labels(texts: Sequence[str], annotated_html: bytes, threshold: float = CONTENT_SHARE) -> list[bool]:
    """Return content labels for blocks of the *original* L3S-GN1 page, aligned to the annotated page's labels 1-3."""
    return label_texts(texts, l3s_gold_text(annotated_html), threshold)
