"""Types of the compiled page table (``extraction/dom/pagetable.pyx``), for mypy."""

from collections.abc import Callable, Collection
from typing import Any

import numpy as np
import numpy.typing as npt
from lxml import etree

Int32 = npt.NDArray[np.int32]
Int64 = npt.NDArray[np.int64]
Float64 = npt.NDArray[np.float64]

KIND_BITS: dict[str, int]
SEG_WALKED: int
SEG_SKIPPED: int
SEG_INSIDE: int

class PageTable:
    parent: Int32
    depth: Int32
    end: Int32
    tag: Int32
    cls: Int32
    ident: Int32
    seg: Int32
    order: Int32
    tags: list[str]
    lower_tags: list[str]
    strings: list[str]
    top: Any
    region_node: Int32
    region_order: Int32
    region_depth: Int32
    region_tags: Int32
    region_links: Int32
    region_imgs: Int32
    region_deco: Int32
    region_elements: list[Any]
    line_region: Int32
    line_start: Int32
    line_chars: Int32
    line_link: Int32
    line_cjk: Int32
    text: str
    elements: int
    max_depth: int
    lines: int
    skipped: list[int]
    s_node: Int32
    s_parent: Int32
    s_path: Int32
    s_in_link: Int32
    s_cn: Int32
    s_lcn: Int32
    s_tn: Int32
    s_ltn: Int32
    s_text_nodes: Int32
    s_own_len: Int32
    s_own_nodes: Int32
    path_parent: list[int]
    path_tag: list[str]
    counts: dict[str, int]

def page_table(top: etree._Element, kinds: Callable[[str], tuple[int, str]], style_hides: Callable[[str], bool],
               class_hides: Callable[[str, bool], bool], signature: Callable[[str, str | None], str],
               player_words: tuple[str, ...], headline_chars: int, headline_cjk: int,
               item_link_share: float) -> PageTable: ...
def cetd_scores(t: PageTable, tau_lambda: float) -> tuple[Float64, Float64, Float64, float, frozenset[int], int]: ...
def element_masks(t: PageTable, nodes: Int32, groups_of: Callable[[str | None, str | None], int]) -> tuple[Int64,
                                                                                                           Int64]: ...
def metadata_elements(root: etree._Element, not_text: Callable[[str], bool], byline_words: tuple[bytes, ...],
                      dateline_words: tuple[bytes, ...], names_kinds: Callable[[str, str, str], tuple[bool, bool]]
                      ) -> tuple[list[tuple[Any, str]], list[Any], list[tuple[Any, bool, bool]]]: ...
def table_blocks(t: PageTable, page: Any, paragraph_class: type, block_class: type) -> list[Any]: ...
def token_shape(tokens: tuple[str, ...]) -> tuple[int, int, int, int, int]: ...
def noise_tokens(tokens: tuple[str, ...], words: frozenset[str], prefixes: frozenset[str]) -> int: ...
def char_counts(text: str, first: str, second: str) -> tuple[int, int]: ...
def class_mask(value: str, word_masks: dict[str, int]) -> int: ...
def dom_stats(top: etree._Element, skip: Collection[Any]) -> tuple[list[Any], list[int], list[int], list[bool],
                                                                   list[int], list[int], list[int], list[int],
                                                                   list[int], list[int], list[int], list[int],
                                                                   list[str]]: ...
