# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False, cdivision=True
"""The page table: one compiled pre-order pass over libxml2's nodes under a page's walk top.

``page_table(top, ...)`` reads lxml's C structs (``_Element._c_node``: ``children`` / ``next`` / ``type`` /
``name`` / ``content`` / ``properties``; headers from the lxml wheel through ``lxml.get_include()``), calls no
libxml2 function and never changes the tree. In that one pass it computes what the Python walks of the page's
path computed one walk each, with their exact rules:

* the **element table**: per element of ``top``'s subtree, in document (pre-)order, its parent, depth,
  subtree end, tag and kind codes, class and id string ids, and whether the segmentation walks it;
* the **segmentation** of ``extraction.dom.blocks.page_blocks``: its block regions and their counts, and the
  paragraphs (lines) as offsets into one page string decoded once;
* the **CETD statistics** of ``extraction.dom.stats.compute_stats(top, skipped)`` over the elements the
  segmentation walks (the statistics index is the segmentation's element ordinal) and the CETD-TPC scores of
  ``extraction.cetd.score`` over them;
* the page-type model's **structure and cue counts** (``extraction.pagetype.features``).

A text piece is lxml's ``.text`` or ``.tail`` (consecutive text nodes); its whitespace is Python's ``str.split``
whitespace (``Py_UNICODE_ISSPACE``), its length the code points of ``" ".join(piece.split())``.

What the pass reads of a tag, an attribute or a class value it asks the Python callbacks once per distinct
value a page (``kinds``, ``style_hides``, ``class_hides``, ``signature``): the rules stay where they are written.
"""

from cpython.unicode cimport PyUnicode_DecodeUTF8
from libc.stdint cimport int32_t, int64_t, uint8_t, uint64_t
from libc.stdlib cimport free, malloc, realloc
from libc.string cimport memcmp, memcpy, memset, strcmp, strlen
from libc.math cimport sqrt

from lxml.includes cimport tree
from lxml.includes.etreepublic cimport _Element, elementFactory, import_lxml__etree

import numpy as np

import_lxml__etree()

cdef extern from "Python.h":
    bint Py_UNICODE_ISSPACE(Py_UCS4 ch) nogil

# Kind bits of a tag (``kinds(tag)`` returns them; extraction.dom.blocks defines the first seven alike).
DEF K_BLOCK = 1
DEF K_BREAK = 2
DEF K_LINK = 4
DEF K_IMAGE = 8
DEF K_DECORATION = 16
DEF K_SKIPPED = 32  # the segmentation skips it with its subtree
DEF K_FIGURE = 64
DEF K_INVISIBLE = 128  # extraction.dom.text.INVISIBLE_TAGS
DEF K_P = 256
DEF K_ARTICLE = 512
DEF K_TIME = 1024
DEF K_HEADING = 2048
DEF K_CONTROL = 4096  # input, select, textarea, button
DEF K_CODE = 8192  # pre, code
DEF K_VIDEO = 16384
DEF K_IFRAME = 32768
DEF K_LOWER_LINK = 65536  # tag.lower() == "a" (the CETD statistics' link test)

KIND_BITS = {"block": K_BLOCK, "break": K_BREAK, "link": K_LINK, "image": K_IMAGE, "decoration": K_DECORATION,
             "skipped": K_SKIPPED, "figure": K_FIGURE, "invisible": K_INVISIBLE, "p": K_P, "article": K_ARTICLE,
             "time": K_TIME, "heading": K_HEADING, "control": K_CONTROL, "code": K_CODE, "video": K_VIDEO,
             "iframe": K_IFRAME, "lower_link": K_LOWER_LINK}

# Segmentation states of an element (``PageTable.seg``).
SEG_WALKED = 0
SEG_SKIPPED = 1  # skipped with its subtree (its tail is still text)
SEG_INSIDE = 2  # inside a skipped element

# The page-type model's CJK ranges (extraction.pagetype.features._CJK_RE).
cdef inline bint _cjk(Py_UCS4 c) noexcept nogil:
    return (0x3040 <= c <= 0x30ff) or (0x3400 <= c <= 0x4dbf) or (0x4e00 <= c <= 0x9fff) \
        or (0xac00 <= c <= 0xd7af) or (0xf900 <= c <= 0xfaff)


# --- growable arrays ---------------------------------------------------------------------------------------

cdef struct IVec:
    int32_t* data
    Py_ssize_t size
    Py_ssize_t cap


cdef int iv_grow(IVec* v, Py_ssize_t need) except -1:
    cdef Py_ssize_t cap = v.cap * 2 if v.cap else 64
    while cap < need:
        cap *= 2
    cdef int32_t* data = <int32_t*>realloc(v.data, cap * sizeof(int32_t))
    if data == NULL:
        raise MemoryError()
    v.data = data
    v.cap = cap
    return 0


cdef inline int iv_push(IVec* v, int32_t x) except -1:
    if v.size == v.cap:
        iv_grow(v, v.size + 1)
    v.data[v.size] = x
    v.size += 1
    return 0


cdef inline void iv_free(IVec* v) noexcept:
    free(v.data)
    v.data = NULL
    v.size = v.cap = 0


cdef object iv_array(IVec* v):
    """Return a copy of the vector as an int32 numpy array."""
    out = np.empty(v.size, dtype=np.int32)
    cdef int32_t[::1] view = out
    if v.size:
        memcpy(&view[0], v.data, v.size * sizeof(int32_t))
    return out


cdef struct Bytes:
    char* data
    Py_ssize_t size
    Py_ssize_t cap


cdef int bytes_reserve(Bytes* b, Py_ssize_t extra) except -1:
    if b.size + extra <= b.cap:
        return 0
    cdef Py_ssize_t cap = b.cap * 2 if b.cap else 4096
    while cap < b.size + extra:
        cap *= 2
    cdef char* data = <char*>realloc(b.data, cap)
    if data == NULL:
        raise MemoryError()
    b.data = data
    b.cap = cap
    return 0


_FILE_SEPARATORS = frozenset(b"\x1c\x1d\x1e\x1f")  # whitespace to str.split, not to bytes.split


# --- hash tables: strings to ids, int64 keys to slots -------------------------------------------------------

cdef inline uint64_t _hash_bytes(const char* s, Py_ssize_t n) noexcept nogil:
    cdef uint64_t h = 1469598103934665603ULL
    cdef Py_ssize_t i
    for i in range(n):
        h ^= <uint8_t>s[i]
        h *= 1099511628211ULL
    return h


cdef struct StrSlot:
    uint64_t hash
    const char* ptr  # into the tree's memory: valid during the pass only
    Py_ssize_t size
    int32_t id  # -1: empty slot


cdef class _Strings:
    """Distinct byte strings of a page to ids (their text in ``values``), looked up without a Python object."""

    cdef StrSlot* slots
    cdef Py_ssize_t mask
    cdef Py_ssize_t used
    cdef list values
    cdef bint owns  # keeps a copy of each string (a key built in a scratch buffer), freed with the table

    def __cinit__(self, bint owns=False):
        self.owns = owns
        self.mask = 255
        self.slots = <StrSlot*>malloc((self.mask + 1) * sizeof(StrSlot))
        if self.slots == NULL:
            raise MemoryError()
        cdef Py_ssize_t i
        for i in range(self.mask + 1):
            self.slots[i].id = -1
        self.used = 0
        self.values = []

    def __dealloc__(self):
        cdef Py_ssize_t i
        if self.owns and self.slots != NULL:
            for i in range(self.mask + 1):
                if self.slots[i].id >= 0:
                    free(<void*>self.slots[i].ptr)
        free(self.slots)

    cdef int _grow(self) except -1:
        cdef Py_ssize_t old_size = self.mask + 1, i, j
        cdef StrSlot* old = self.slots
        cdef Py_ssize_t mask = old_size * 2 - 1
        cdef StrSlot* slots = <StrSlot*>malloc((mask + 1) * sizeof(StrSlot))
        if slots == NULL:
            raise MemoryError()
        for i in range(mask + 1):
            slots[i].id = -1
        for i in range(old_size):
            if old[i].id >= 0:
                j = old[i].hash & mask
                while slots[j].id >= 0:
                    j = (j + 1) & mask
                slots[j] = old[i]
        free(old)
        self.slots = slots
        self.mask = mask
        return 0

    cdef int32_t intern(self, const char* s, Py_ssize_t n) except -2:
        cdef uint64_t h = _hash_bytes(s, n)
        cdef Py_ssize_t j = h & self.mask
        cdef StrSlot* slot
        while True:
            slot = &self.slots[j]
            if slot.id < 0:
                break
            if slot.hash == h and slot.size == n and memcmp(slot.ptr, s, n) == 0:
                return slot.id
            j = (j + 1) & self.mask
        cdef char* copy
        if self.owns:
            copy = <char*>malloc(n + 1)
            if copy == NULL:
                raise MemoryError()
            memcpy(copy, s, n)
            s = copy
        slot.hash = h
        slot.ptr = s
        slot.size = n
        slot.id = <int32_t>len(self.values)
        self.values.append(PyUnicode_DecodeUTF8(s, n, NULL))
        self.used += 1
        if self.used * 2 > self.mask:
            self._grow()
        return <int32_t>(len(self.values) - 1)


cdef inline bint _contains(const char* s, Py_ssize_t n, const char* word, Py_ssize_t k) noexcept nogil:
    cdef Py_ssize_t i
    for i in range(n - k + 1):
        if s[i] == word[0] and memcmp(s + i, word, k) == 0:
            return True
    return False


cdef inline bint _has_hint(const char* s, Py_ssize_t n) noexcept nogil:
    """Whether a class value holds one of extraction.dom.blocks._HIDING_HINT_RE's words (case-sensitive, ASCII:
    the same test on UTF-8 bytes as on the text); a value read another way (n < 0) is asked about."""
    if n < 0:
        return True
    return _contains(s, n, "hidden", 6) or _contains(s, n, "d-none", 6) or _contains(s, n, "invisible", 9)


cdef struct KeySlot:
    int64_t key
    int64_t a
    int64_t b
    bint used


cdef class _Counts:
    """int64 keys to two int64 counters (open addressing)."""

    cdef KeySlot* slots
    cdef Py_ssize_t mask
    cdef Py_ssize_t used

    def __cinit__(self):
        self.mask = 63
        self.slots = <KeySlot*>malloc((self.mask + 1) * sizeof(KeySlot))
        if self.slots == NULL:
            raise MemoryError()
        memset(self.slots, 0, (self.mask + 1) * sizeof(KeySlot))
        self.used = 0

    def __dealloc__(self):
        free(self.slots)

    cdef int _grow(self) except -1:
        cdef Py_ssize_t old_size = self.mask + 1, i, j
        cdef KeySlot* old = self.slots
        cdef Py_ssize_t mask = old_size * 2 - 1
        cdef KeySlot* slots = <KeySlot*>malloc((mask + 1) * sizeof(KeySlot))
        if slots == NULL:
            raise MemoryError()
        memset(slots, 0, (mask + 1) * sizeof(KeySlot))
        for i in range(old_size):
            if old[i].used:
                j = _mix(old[i].key) & mask
                while slots[j].used:
                    j = (j + 1) & mask
                slots[j] = old[i]
        free(old)
        self.slots = slots
        self.mask = mask
        return 0

    cdef KeySlot* get(self, int64_t key) except NULL:
        """Return the key's slot, a new one (counters 0) when it has none."""
        cdef Py_ssize_t j = _mix(key) & self.mask
        cdef KeySlot* slot
        while True:
            slot = &self.slots[j]
            if not slot.used:
                break
            if slot.key == key:
                return slot
            j = (j + 1) & self.mask
        if (self.used + 1) * 2 > self.mask:
            self._grow()
            return self.get(key)
        slot.used = True
        slot.key = key
        slot.a = 0
        slot.b = 0
        self.used += 1
        return slot


cdef inline uint64_t _mix(int64_t key) noexcept nogil:
    cdef uint64_t x = <uint64_t>key
    x ^= x >> 33
    x *= 0xff51afd7ed558ccdULL
    x ^= x >> 33
    return x


# --- text pieces ----------------------------------------------------------------------------------------------

cdef struct Run:  # what the walks read of a text piece or of a concatenation of pieces
    int64_t ns  # code points that are not whitespace
    int64_t words  # maximal runs of them
    int64_t cjk  # code points in the page-type model's CJK ranges
    bint any  # holds any code point
    bint starts  # its first code point is no whitespace
    bint ends  # its last one is no whitespace


cdef inline int64_t run_length(Run r) noexcept nogil:
    """The length of ``" ".join(text.split())``."""
    return r.ns + r.words - 1 if r.words else 0


cdef inline void run_concat(Run* a, Run b) noexcept nogil:
    if not b.any:
        return
    if not a.any:
        a[0] = b
        return
    a.words += b.words - (1 if a.ends and b.starts else 0)
    a.ns += b.ns
    a.cjk += b.cjk
    a.ends = b.ends


# Python's str.split whitespace among ASCII: \t \n \v \f \r, \x1c-\x1f and the space.
cdef bint _ASCII_SPACE[128]
for _c in range(128):
    _ASCII_SPACE[_c] = chr(_c).isspace()


cdef inline bint _token_less(const char* a, Py_ssize_t na, const char* b, Py_ssize_t nb) noexcept nogil:
    cdef Py_ssize_t k = na if na < nb else nb
    cdef int order = memcmp(a, b, k)
    return order < 0 or (order == 0 and na < nb)


cdef inline bint _starts_space(const unsigned char* s, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t i = 0
    cdef Py_UCS4 c = s[0]
    if c < 0x80:
        return _ASCII_SPACE[c]
    c = _decode(s, n, &i)
    return Py_UNICODE_ISSPACE(c)


cdef inline Py_UCS4 _decode(const unsigned char* s, Py_ssize_t n, Py_ssize_t* i) noexcept nogil:
    """Return the code point at ``s[i]`` and move ``i`` past it (libxml2's text is UTF-8)."""
    cdef unsigned char c = s[i[0]]
    cdef Py_ssize_t k = i[0]
    if c < 0x80:
        i[0] = k + 1
        return c
    if c >= 0xf0 and k + 3 < n:
        i[0] = k + 4
        return ((c & 0x07) << 18) | ((s[k + 1] & 0x3f) << 12) | ((s[k + 2] & 0x3f) << 6) | (s[k + 3] & 0x3f)
    if c >= 0xe0 and k + 2 < n:
        i[0] = k + 3
        return ((c & 0x0f) << 12) | ((s[k + 1] & 0x3f) << 6) | (s[k + 2] & 0x3f)
    if c >= 0xc0 and k + 1 < n:
        i[0] = k + 2
        return ((c & 0x1f) << 6) | (s[k + 1] & 0x3f)
    i[0] = k + 1
    return c


# --- the pass -------------------------------------------------------------------------------------------------

cdef struct Open:  # an open element of the pass
    tree.xmlNode* node
    int32_t index  # in the element table
    int32_t kinds
    int32_t order  # segmentation ordinal (-1: not walked)
    bint seg  # walked by the segmentation
    bint vis  # walked by the structure walk (INVISIBLE_TAGS, hidden by markup)
    Run pending  # CETD: the text node being read
    Run text  # every text node of its subtree (text_content)
    int64_t chars  # structure walk: characters of its subtree ...
    int64_t link_chars  # ... inside links
    bint has_link


cdef struct Region:
    tree.xmlNode* c_node  # valid during the pass only
    int32_t node  # element table index
    int32_t order
    int32_t depth
    int32_t tags
    int32_t links
    int32_t imgs
    int32_t deco


cdef class PageTable:
    """The arrays of one page (module docstring); numpy int32 unless said."""

    # element table
    cdef public object parent, depth, end, tag, cls, ident, seg, order
    cdef public list tags  # tag names by code
    cdef public list lower_tags  # tag.lower() by code
    cdef public list strings  # class and id values by id
    cdef public object top
    # segmentation
    cdef public object region_node, region_order, region_depth, region_tags, region_links, region_imgs, region_deco
    cdef public object line_region, line_start, line_chars, line_link, line_cjk
    cdef public str text  # the paragraphs, each followed by "\n", in document order
    cdef public int elements, max_depth, lines
    cdef public list skipped  # element table indices of the elements the segmentation skipped (outermost)
    cdef public list region_elements  # per region, its lxml element when it has a paragraph, else None
    # CETD statistics by segmentation ordinal
    cdef public object s_node, s_parent, s_path, s_in_link, s_cn, s_lcn, s_tn, s_ltn, s_text_nodes, s_own_len
    cdef public object s_own_nodes
    cdef public list path_parent, path_tag
    # page-type structure and cue counts
    cdef public dict counts


cdef inline int _attr_value(tree.xmlAttr* a, const char** value, Py_ssize_t* size) noexcept:
    """Set the value of a plain attribute (no child or one text child); 0 when it is another kind."""
    cdef tree.xmlNode* c = a.children
    if c == NULL:
        value[0] = ""
        size[0] = 0
        return 1
    if c.next == NULL and (c.type == tree.XML_TEXT_NODE or c.type == tree.XML_CDATA_SECTION_NODE):
        if c.content == NULL:
            value[0] = ""
            size[0] = 0
        else:
            value[0] = <const char*>c.content
            size[0] = strlen(<const char*>c.content)
        return 1
    return 0


cdef class _Pass:
    """The state of one pass (``page_table``)."""

    cdef _Element top_proxy
    cdef object kinds_of, style_hides, class_hides, signature
    cdef _Strings names, strings, styles
    cdef list tag_lower, keep
    cdef IVec tag_kinds, lower_names  # by tag code: kind bits, lower-case tag id
    cdef IVec class_state  # by class id: 1 + hidden (outside a figure), 0 not known yet; the same << 2 inside one
    cdef IVec style_state  # by style id: 1 + hides
    cdef dict lower_ids
    cdef tuple player_words
    cdef int64_t headline_chars, headline_cjk
    cdef double item_link_share
    cdef _Counts signature_ids  # (tag code, class id) -> 1 + signature id
    cdef _Strings signatures  # signature -> its id
    # element table
    cdef IVec parent, depth, end, tag, cls, ident, seg, order
    # segmentation
    cdef IVec l_region, l_start, l_chars, l_link, l_cjk
    cdef list skipped
    cdef Bytes buf
    cdef int64_t cps  # code points written to buf
    cdef int64_t line_cps, line_cjk, line_link
    cdef int64_t line_pieces
    cdef bint pending_space
    cdef int32_t order_count, seg_depth, max_depth
    cdef int32_t in_link, in_figure
    cdef IVec region_stack
    cdef Region* regions
    cdef Py_ssize_t regions_size, regions_cap
    # CETD by ordinal
    cdef IVec s_node, s_parent, s_path, s_in_link, s_cn, s_lcn, s_tn, s_ltn, s_text_nodes, s_own_len, s_own_nodes
    cdef _Counts path_ids
    cdef list path_parent, path_tag
    # structure
    cdef int64_t total, p_chars, s_in_link_count, in_p
    cdef int64_t anchors, headline_anchors, headings, linked_headings, articles, times
    cdef _Counts groups
    cdef int64_t controls, code, videos, images
    # the stack
    cdef Open* stack
    cdef Py_ssize_t depth_now, stack_cap
    cdef int32_t open_anchors  # open <a> elements the structure walk reads the text_content() of
    cdef int32_t seg_skip  # open elements inside (and of) a skipped one: segmentation
    cdef int32_t vis_skip  # the same for the structure walk

    def __cinit__(self):
        self.stack = NULL
        self.regions = NULL

    def __dealloc__(self):
        free(self.stack)
        free(self.regions)
        free(self.buf.data)
        iv_free(&self.parent)
        iv_free(&self.tag_kinds)
        iv_free(&self.lower_names)
        iv_free(&self.class_state)
        iv_free(&self.style_state)
        iv_free(&self.depth)
        iv_free(&self.end)
        iv_free(&self.tag)
        iv_free(&self.cls)
        iv_free(&self.ident)
        iv_free(&self.seg)
        iv_free(&self.order)
        iv_free(&self.l_region)
        iv_free(&self.l_start)
        iv_free(&self.l_chars)
        iv_free(&self.l_link)
        iv_free(&self.l_cjk)
        iv_free(&self.region_stack)
        iv_free(&self.s_node)
        iv_free(&self.s_parent)
        iv_free(&self.s_path)
        iv_free(&self.s_in_link)
        iv_free(&self.s_cn)
        iv_free(&self.s_lcn)
        iv_free(&self.s_tn)
        iv_free(&self.s_ltn)
        iv_free(&self.s_text_nodes)
        iv_free(&self.s_own_len)
        iv_free(&self.s_own_nodes)

    # --- text ----------------------------------------------------------------------------------------------

    cdef Run scan(self, const unsigned char* s, Py_ssize_t n, bint write) except *:
        """Return the run of one text node; with ``write``, add its code points to the current line."""
        cdef Run r
        r.ns = r.words = r.cjk = 0
        r.any = n > 0
        r.starts = r.ends = False
        if not n:
            return r
        cdef Py_ssize_t i = 0, start, k
        cdef Py_UCS4 c
        cdef bint space, previous_space = True, cjk
        cdef char* out
        if write:
            bytes_reserve(&self.buf, 2 * n + 2)
        out = self.buf.data
        cdef Py_ssize_t size = self.buf.size
        cdef int64_t line_cps = self.line_cps, line_cjk = self.line_cjk
        cdef bint pending_space = self.pending_space
        while i < n:
            start = i
            c = s[i]
            if c < 0x80:
                i += 1
                space = _ASCII_SPACE[c]
                cjk = False
            else:
                c = _decode(s, n, &i)
                space = Py_UNICODE_ISSPACE(c)
                cjk = _cjk(c)
            if space:
                pending_space = True
            else:
                r.ns += 1
                if previous_space:
                    r.words += 1
                if cjk:
                    r.cjk += 1
                if write:
                    if pending_space and line_cps:
                        out[size] = 32
                        size += 1
                        line_cps += 1
                    for k in range(start, i):
                        out[size] = <char>s[k]
                        size += 1
                    line_cps += 1
                    if cjk:
                        line_cjk += 1
                pending_space = False
            previous_space = space
        r.starts = not _starts_space(s, n)
        r.ends = not previous_space
        if write:
            self.buf.size = size
            self.line_cps = line_cps
            self.line_cjk = line_cjk
            self.pending_space = pending_space
        return r

    cdef int flush(self) except -1:
        """End the current line (``extraction.dom.blocks._flush``): a paragraph of the open region if it has text."""
        cdef int32_t region = self.region_stack.data[self.region_stack.size - 1]
        if self.line_cps:
            iv_push(&self.l_region, region)
            iv_push(&self.l_start, <int32_t>self.cps)
            iv_push(&self.l_chars, <int32_t>self.line_cps)
            iv_push(&self.l_link, <int32_t>self.line_link)
            iv_push(&self.l_cjk, <int32_t>self.line_cjk)
            bytes_reserve(&self.buf, 1)
            self.buf.data[self.buf.size] = 10
            self.buf.size += 1
            self.cps += self.line_cps + 1
        self.line_cps = self.line_cjk = self.line_link = self.line_pieces = 0
        self.pending_space = False
        return 0

    cdef int piece(self, tree.xmlNode* first, bint after_other) except -1:
        """Read one text piece (the run of text nodes from ``first``) into the open element's walks."""
        cdef Open* top = &self.stack[self.depth_now - 1]
        cdef bint write = top.seg and self.seg_skip == 0
        cdef Run r, part
        r.ns = r.words = r.cjk = 0
        r.any = r.starts = r.ends = False
        if not (top.vis or self.open_anchors):  # text no walk reads (a script's, a hidden element's)
            return 0
        cdef tree.xmlNode* c = first
        cdef Py_ssize_t n
        cdef bint wrote = False
        while c != NULL:
            if c.type == tree.XML_TEXT_NODE or c.type == tree.XML_CDATA_SECTION_NODE:
                n = strlen(<const char*>c.content) if c.content != NULL else 0
                part = self.scan(<const unsigned char*>c.content, n, write)
                wrote = wrote or n > 0
                run_concat(&r, part)
            elif c.type != tree.XML_XINCLUDE_START and c.type != tree.XML_XINCLUDE_END:
                break
            c = c.next
        if not r.any:
            return 0
        run_concat(&top.text, r)
        cdef int64_t length = run_length(r)
        if write and wrote:
            self.line_pieces += 1
            if self.in_link:
                self.line_link += length
        if write:  # CETD: the open element's current text node
            if after_other:  # a comment's tail is a text node of its own
                self.own_text(top.order, length)
            else:
                run_concat(&top.pending, r)
        if top.vis and self.vis_skip == 0 and r.words:
            top.chars += length
            self.total += length
            if self.s_in_link_count:
                top.link_chars += length
            if self.in_p:
                self.p_chars += length
        return 0

    cdef inline int own_text(self, int32_t i, int64_t length) except -1:
        """``extraction.dom.stats._add_own_text``."""
        if not length:
            return 0
        self.s_own_len.data[i] += <int32_t>length
        self.s_own_nodes.data[i] += 1
        self.s_cn.data[i] += <int32_t>length
        self.s_text_nodes.data[i] += 1
        if self.s_in_link.data[i]:
            self.s_lcn.data[i] += <int32_t>length
        return 0

    # --- elements ------------------------------------------------------------------------------------------

    cdef int32_t tag_code(self, tree.xmlNode* node) except -1:
        cdef const char* name = b""
        if node.name != NULL:
            name = <const char*>node.name
        cdef int32_t code
        if node.ns != NULL and node.ns.href != NULL:  # lxml's "{namespace}name"
            text = "{%s}%s" % ((<bytes>(<const char*>node.ns.href)).decode("utf-8"), (<bytes>name).decode("utf-8"))
            encoded = text.encode("utf-8")
            code = self.names.intern(<const char*>encoded, len(encoded))
            self.keep.append(encoded)  # the interner points into it: it must outlive the pass
        else:
            code = self.names.intern(name, strlen(name))
        if code >= self.tag_kinds.size:
            self.new_tag(code)
        return code

    cdef int new_tag(self, int32_t code) except -1:
        while code >= self.tag_kinds.size:
            tag = self.names.values[self.tag_kinds.size]
            kinds, lower = self.kinds_of(tag)
            iv_push(&self.tag_kinds, kinds)
            lower_id = self.lower_ids.get(lower)
            if lower_id is None:
                lower_id = self.lower_ids[lower] = len(self.tag_lower)
                self.tag_lower.append(lower)
            iv_push(&self.lower_names, lower_id)
        return 0

    cdef int enter(self, tree.xmlNode* node) except -1:
        cdef int32_t index = <int32_t>self.parent.size
        cdef int32_t parent = self.stack[self.depth_now - 1].index if self.depth_now else -1
        cdef int32_t code = self.tag_code(node)
        cdef int32_t kinds = self.tag_kinds.data[code]
        # attributes (those without a namespace, as lxml's get() reads them)
        cdef int32_t cls = -1, ident = -1, style = -1
        cdef bint hidden = False, has_class = False, plain
        cdef const char* class_value = NULL
        cdef Py_ssize_t class_size = 0
        cdef bint is_iframe = (kinds & K_IFRAME) != 0, player = False
        cdef tree.xmlAttr* a = node.properties
        cdef const char* value
        cdef Py_ssize_t size
        while a != NULL:
            if a.ns == NULL and a.name != NULL:
                name = <const char*>a.name
                if strcmp(name, "class") == 0:
                    has_class = True
                    plain = _attr_value(a, &value, &size)
                    if plain:
                        cls = self.strings.intern(value, size)
                        class_value, class_size = value, size
                    else:
                        cls = self.slow_attr(node, "class")
                        class_value, class_size = NULL, -1
                elif strcmp(name, "id") == 0:
                    plain = _attr_value(a, &value, &size)
                    ident = self.strings.intern(value, size) if plain else self.slow_attr(node, "id")
                elif strcmp(name, "hidden") == 0:
                    hidden = True
                elif strcmp(name, "aria-hidden") == 0:
                    if _attr_value(a, &value, &size):
                        hidden = hidden or (size == 4 and memcmp(value, b"true", 4) == 0)
                    else:
                        hidden = hidden or self.proxy(node).get("aria-hidden") == "true"
                elif strcmp(name, "style") == 0:
                    if _attr_value(a, &value, &size):
                        style = self.styles.intern(value, size)
                    else:
                        style = self.styles_slow(node)
                elif is_iframe and strcmp(name, "src") == 0:
                    player = self.is_player(node)
            a = a.next
        if style >= 0 and not hidden:
            while style >= self.style_state.size:
                iv_push(&self.style_state, 1 + bool(self.style_hides(self.styles.values[self.style_state.size])))
            hidden = self.style_state.data[style] == 2
        iv_push(&self.parent, parent)
        iv_push(&self.depth, <int32_t>self.depth_now)
        iv_push(&self.end, 0)
        iv_push(&self.tag, code)
        iv_push(&self.cls, cls)
        iv_push(&self.ident, ident)
        # cue counts: every descendant of the top
        if self.depth_now:
            if kinds & K_CONTROL:
                self.controls += 1
            if kinds & K_CODE:
                self.code += 1
            if kinds & K_VIDEO or player:
                self.videos += 1
            if kinds & K_IMAGE:
                self.images += 1

        if self.depth_now == self.stack_cap:
            self.grow_stack()
        cdef Open* o = &self.stack[self.depth_now]
        o.node = node
        o.index = index
        o.kinds = kinds
        o.order = -1
        o.seg = False
        o.vis = False
        o.pending.any = o.pending.starts = o.pending.ends = False
        o.pending.ns = o.pending.words = o.pending.cjk = 0
        o.text = o.pending
        o.chars = o.link_chars = 0
        o.has_link = False
        self.depth_now += 1

        # the structure walk (INVISIBLE_TAGS and markup hide)
        if self.vis_skip:
            self.vis_skip += 1
        elif kinds & K_INVISIBLE or hidden:
            self.vis_skip = 1
        else:
            o.vis = True
            if kinds & K_LINK:
                self.s_in_link_count += 1
                self.open_anchors += 1
            elif kinds & K_P:
                self.in_p += 1
            elif kinds & K_ARTICLE:
                self.articles += 1
            elif kinds & K_TIME:
                self.times += 1

        # the segmentation
        if self.seg_skip:
            self.seg_skip += 1
            iv_push(&self.seg, SEG_INSIDE)
            iv_push(&self.order, -1)
            return 0
        if kinds & K_SKIPPED or hidden or (has_class and self.hidden_class(cls, class_value, class_size)):
            self.seg_skip = 1
            iv_push(&self.seg, SEG_SKIPPED)
            iv_push(&self.order, -1)
            self.skipped.append(index)
            return 0
        iv_push(&self.seg, SEG_WALKED)
        cdef int32_t order = self.order_count
        self.order_count += 1
        iv_push(&self.order, order)
        o.seg = True
        o.order = order
        self.seg_depth += 1
        if kinds & K_BREAK and self.line_pieces:
            self.flush()
        if self.seg_depth > self.max_depth:
            self.max_depth = self.seg_depth
        cdef Region* region
        if kinds & K_BLOCK or self.depth_now == 1:
            iv_push(&self.region_stack, <int32_t>self.regions_size)
            self.new_region(node, index, order, self.seg_depth)
        region = &self.regions[self.region_stack.data[self.region_stack.size - 1]]
        region.tags += 1
        if kinds & K_LINK:
            region.links += 1
            self.in_link += 1
        if kinds & K_FIGURE:
            self.in_figure += 1
        if kinds & K_IMAGE:
            region.imgs += 1
        if kinds & K_DECORATION:
            region.deco += 1
        # CETD statistics: the parent's current text node ends here
        cdef int32_t s_parent = -1, path_parent = -1
        cdef bint parent_in_link = False
        cdef Open* up
        if self.depth_now > 1:
            up = &self.stack[self.depth_now - 2]
            if up.pending.words:
                self.own_text(up.order, run_length(up.pending))
            up.pending.any = up.pending.starts = up.pending.ends = False
            up.pending.ns = up.pending.words = up.pending.cjk = 0
            s_parent = up.order
            path_parent = self.s_path.data[up.order]
            parent_in_link = self.s_in_link.data[up.order] != 0
        cdef int32_t lower = self.lower_names.data[code]
        cdef KeySlot* slot = self.path_ids.get(((<int64_t>path_parent + 1) << 31) + lower)
        if slot.a == 0:
            slot.a = len(self.path_tag) + 1
            self.path_parent.append(path_parent)
            self.path_tag.append(self.tag_lower[lower])
        iv_push(&self.s_node, index)
        iv_push(&self.s_parent, s_parent)
        iv_push(&self.s_path, <int32_t>(slot.a - 1))
        cdef bint is_link = (kinds & K_LOWER_LINK) != 0
        iv_push(&self.s_in_link, 1 if (is_link or parent_in_link) else 0)
        iv_push(&self.s_cn, 0)
        iv_push(&self.s_lcn, 0)
        iv_push(&self.s_tn, 1)
        iv_push(&self.s_ltn, 1 if is_link else 0)
        iv_push(&self.s_text_nodes, 0)
        iv_push(&self.s_own_len, 0)
        iv_push(&self.s_own_nodes, 0)
        return 0

    cdef int leave(self) except -1:
        cdef Open* o = &self.stack[self.depth_now - 1]
        cdef Open* up = &self.stack[self.depth_now - 2] if self.depth_now > 1 else NULL
        cdef int32_t kinds = o.kinds
        cdef int32_t i, p
        cdef int64_t length
        self.end.data[o.index] = <int32_t>self.parent.size
        # the structure walk
        if o.vis:
            if kinds & K_LINK:
                self.s_in_link_count -= 1
                self.open_anchors -= 1
                o.has_link = True
                length = run_length(o.text)
                if length:
                    self.anchors += 1
                    if length >= self.headline_chars or o.text.cjk >= self.headline_cjk:
                        self.headline_anchors += 1
            elif kinds & K_P:
                self.in_p -= 1
            elif kinds & K_HEADING:
                self.headings += 1
                if o.has_link:
                    self.linked_headings += 1
            if up != NULL:
                up.chars += o.chars
                up.link_chars += o.link_chars
                up.has_link = up.has_link or o.has_link
                if o.has_link and o.link_chars >= self.item_link_share * o.chars:
                    self.group(up.index, o)
        if self.vis_skip:
            self.vis_skip -= 1
        # the segmentation
        cdef bint is_block
        if o.seg:
            if kinds & K_LINK:
                self.in_link -= 1
            if kinds & K_FIGURE:
                self.in_figure -= 1
            is_block = (kinds & K_BLOCK) != 0 or self.depth_now == 1
            if (kinds & K_BREAK or is_block) and self.line_pieces:
                self.flush()
            if is_block:
                self.region_stack.size -= 1
            self.seg_depth -= 1
            # CETD statistics: the last text node, then the subtree into the parent
            i = o.order
            if o.pending.words:
                self.own_text(i, run_length(o.pending))
            if up != NULL:
                p = up.order
                self.s_cn.data[p] += self.s_cn.data[i]
                self.s_lcn.data[p] += self.s_lcn.data[i]
                self.s_tn.data[p] += self.s_tn.data[i]
                self.s_ltn.data[p] += self.s_ltn.data[i]
                self.s_text_nodes.data[p] += self.s_text_nodes.data[i]
        elif self.seg_skip:
            self.seg_skip -= 1
        if up != NULL:
            run_concat(&up.text, o.text)
        self.depth_now -= 1
        return 0

    cdef int group(self, int32_t parent, Open* o) except -1:
        """Count ``o`` in its parent's group of item siblings by signature (``_structure_features``)."""
        cdef int32_t code = self.tag.data[o.index], cls = self.cls.data[o.index]
        cdef KeySlot* known = self.signature_ids.get(((<int64_t>code) << 32) + cls + 1)
        if known.a == 0:
            known.a = self.signature_id(code, cls) + 1
        cdef KeySlot* slot = self.groups.get(((<int64_t>parent) << 32) + known.a - 1)
        slot.a += 1
        slot.b += o.chars
        return 0

    cdef int32_t signature_id(self, int32_t code, int32_t cls) except -1:
        """Return the id of the item signature of a tag and a class value, built here as the callback builds it
        (digits out, split at whitespace, sorted, joined by spaces) for a class value of ASCII without the file
        separators (whitespace to str.split), else by the callback."""
        cdef bytes classes
        cdef const unsigned char* c
        cdef Py_ssize_t n, i, k, count = 0, size
        cdef bint plain = True
        if cls >= 0 and self.strings.values[cls]:
            classes = self.strings.values[cls].encode("utf-8", "surrogatepass")
            c = <const unsigned char*>classes
            n = len(classes)
            for i in range(n):
                if c[i] >= 0x80 or 0x1c <= c[i] <= 0x1f:
                    plain = False
                    break
            if not plain:
                text = self.signature(self.names.values[code], self.strings.values[cls]).encode(
                    "utf-8", "surrogatepass")
                return self.signatures.intern(<const char*>text, len(text))
        tag = self.names.values[code].encode("utf-8", "surrogatepass")
        cdef const char* t = <const char*>tag
        cdef Py_ssize_t tag_size = len(tag)
        if cls < 0 or not self.strings.values[cls]:
            return self.signatures.intern(t, tag_size)
        # tokens of the class value without its digits
        cdef char* digitless = <char*>malloc(n + 1)
        cdef Py_ssize_t* starts = <Py_ssize_t*>malloc((n + 1) * sizeof(Py_ssize_t))
        cdef Py_ssize_t* sizes = <Py_ssize_t*>malloc((n + 1) * sizeof(Py_ssize_t))
        cdef char* key = <char*>malloc(tag_size + 2 * n + 2)
        cdef Py_ssize_t m = 0, j, start
        cdef int32_t result
        try:
            if digitless == NULL or starts == NULL or sizes == NULL or key == NULL:
                raise MemoryError()
            for i in range(n):
                if not (48 <= c[i] <= 57):
                    digitless[m] = <char>c[i]
                    m += 1
            i = 0
            while i < m:
                while i < m and _ASCII_SPACE[<unsigned char>digitless[i]]:
                    i += 1
                if i == m:
                    break
                start = i
                while i < m and not _ASCII_SPACE[<unsigned char>digitless[i]]:
                    i += 1
                starts[count] = start
                sizes[count] = i - start
                count += 1
            # insertion sort of the tokens (Python's order of ASCII strings: bytes, then length)
            for i in range(1, count):
                j = i
                while j > 0 and _token_less(digitless + starts[j], sizes[j], digitless + starts[j - 1], sizes[j - 1]):
                    starts[j], starts[j - 1] = starts[j - 1], starts[j]
                    sizes[j], sizes[j - 1] = sizes[j - 1], sizes[j]
                    j -= 1
            memcpy(key, t, tag_size)
            size = tag_size
            key[size] = 46  # "."
            size += 1
            for i in range(count):
                if i:
                    key[size] = 32
                    size += 1
                memcpy(key + size, digitless + starts[i], sizes[i])
                size += sizes[i]
            result = self.signatures.intern(key, size)
        finally:
            free(digitless)
            free(starts)
            free(sizes)
            free(key)
        return result

    cdef int new_region(self, tree.xmlNode* node, int32_t index, int32_t order, int32_t depth) except -1:
        cdef Region* regions
        if self.regions_size == self.regions_cap:
            self.regions_cap = self.regions_cap * 2 if self.regions_cap else 64
            regions = <Region*>realloc(self.regions, self.regions_cap * sizeof(Region))
            if regions == NULL:
                raise MemoryError()
            self.regions = regions
        cdef Region* r = &self.regions[self.regions_size]
        r.c_node = node
        r.node = index
        r.order = order
        r.depth = depth
        r.tags = r.links = r.imgs = r.deco = 0
        self.regions_size += 1
        return 0

    cdef int grow_stack(self) except -1:
        self.stack_cap = self.stack_cap * 2 if self.stack_cap else 256
        cdef Open* stack = <Open*>realloc(self.stack, self.stack_cap * sizeof(Open))
        if stack == NULL:
            raise MemoryError()
        self.stack = stack
        return 0

    cdef bint hidden_class(self, int32_t cls, const char* value, Py_ssize_t size) except -1:
        """Return ``class_hides(classes, in a figure)``, asked once per class value a page; outside a figure, a
        value without any of ``_HIDING_HINTS`` hides nothing (``_HIDING_HINT_RE``, tested here in C)."""
        cdef int shift = 2 if self.in_figure > 0 else 0
        while cls >= self.class_state.size:
            iv_push(&self.class_state, 0)
        cdef int32_t state = (self.class_state.data[cls] >> shift) & 3
        if state == 0:
            if not shift and not _has_hint(value, size):
                state = 1
            else:
                state = 1 + bool(self.class_hides(self.strings.values[cls], self.in_figure > 0))
            self.class_state.data[cls] |= state << shift
        return state == 2

    cdef object proxy(self, tree.xmlNode* node):
        return elementFactory(self.top_proxy._doc, node)

    cdef int32_t slow_attr(self, tree.xmlNode* node, str name) except -2:
        value = self.proxy(node).get(name) or ""
        encoded = value.encode("utf-8", "surrogatepass")
        self.keep.append(encoded)
        return self.strings.intern(<const char*>encoded, len(encoded))

    cdef int32_t styles_slow(self, tree.xmlNode* node) except -2:
        value = self.proxy(node).get("style") or ""
        encoded = value.encode("utf-8", "surrogatepass")
        self.keep.append(encoded)
        return self.styles.intern(<const char*>encoded, len(encoded))

    cdef bint is_player(self, tree.xmlNode* node) except -1:
        src = self.proxy(node).get("src")
        return src is not None and any(word in src for word in self.player_words)


def page_table(_Element top not None, kinds, style_hides, class_hides, signature, tuple player_words,
               int headline_chars, int headline_cjk, double item_link_share):
    """Return the :class:`PageTable` of ``top``'s subtree (module docstring).

    ``kinds(tag) -> (bits, tag.lower())``; ``style_hides(style) -> bool`` (extraction.dom.text.is_hidden's
    style test); ``class_hides(classes, in_figure) -> bool`` (extraction.dom.blocks._hidden_by_class);
    ``signature(tag, classes or None) -> str`` (extraction.pagetype.features' item signature); then the
    page-type constants the structure walk reads.
    """
    cdef _Pass w = _Pass()
    w.top_proxy = top
    w.kinds_of, w.style_hides, w.class_hides, w.signature = kinds, style_hides, class_hides, signature
    w.player_words = player_words
    w.headline_chars, w.headline_cjk, w.item_link_share = headline_chars, headline_cjk, item_link_share
    w.names, w.strings, w.styles = _Strings(), _Strings(), _Strings()
    w.tag_lower, w.lower_ids, w.keep = [], {}, []
    w.signature_ids, w.signatures = _Counts(), _Strings(True)
    w.skipped = []
    w.path_ids, w.groups = _Counts(), _Counts()
    w.path_parent, w.path_tag = [], []
    _walk(w, top._c_node)
    return _table(w, top)


cdef int _walk(_Pass w, tree.xmlNode* top) except -1:
    cdef tree.xmlNode* cur
    cdef tree.xmlNode* done
    cdef bint after_other = False
    w.enter(top)
    cur = top.children
    while True:
        if cur == NULL:
            done = w.stack[w.depth_now - 1].node
            w.leave()
            if done == top:
                break
            cur = done.next
            after_other = False
            continue
        if cur.type == tree.XML_ELEMENT_NODE:
            w.enter(cur)
            if cur.children != NULL:
                cur = cur.children
                after_other = False
                continue
            w.leave()
            cur = cur.next
            after_other = False
        elif cur.type == tree.XML_TEXT_NODE or cur.type == tree.XML_CDATA_SECTION_NODE:
            w.piece(cur, after_other)
            while cur != NULL and (cur.type == tree.XML_TEXT_NODE or cur.type == tree.XML_CDATA_SECTION_NODE
                                   or cur.type == tree.XML_XINCLUDE_START or cur.type == tree.XML_XINCLUDE_END):
                cur = cur.next
            after_other = False
        elif cur.type == tree.XML_COMMENT_NODE or cur.type == tree.XML_PI_NODE \
                or cur.type == tree.XML_ENTITY_REF_NODE:
            after_other = True
            cur = cur.next
        else:
            cur = cur.next
    return 0


cdef PageTable _table(_Pass w, _Element top):
    cdef PageTable t = PageTable()
    t.top = top
    t.parent, t.depth, t.end, t.tag = iv_array(&w.parent), iv_array(&w.depth), iv_array(&w.end), iv_array(&w.tag)
    t.cls, t.ident, t.seg, t.order = iv_array(&w.cls), iv_array(&w.ident), iv_array(&w.seg), iv_array(&w.order)
    t.tags = list(w.names.values[:w.tag_kinds.size])
    t.lower_tags = w.tag_lower
    t.strings = w.strings.values
    cdef Py_ssize_t k, n = w.regions_size
    cdef IVec rv[7]
    memset(rv, 0, sizeof(rv))
    try:
        for k in range(n):
            iv_push(&rv[0], w.regions[k].node)
            iv_push(&rv[1], w.regions[k].order)
            iv_push(&rv[2], w.regions[k].depth - 1)
            iv_push(&rv[3], w.regions[k].tags)
            iv_push(&rv[4], w.regions[k].links)
            iv_push(&rv[5], w.regions[k].imgs)
            iv_push(&rv[6], w.regions[k].deco)
        t.region_node, t.region_order, t.region_depth = iv_array(&rv[0]), iv_array(&rv[1]), iv_array(&rv[2])
        t.region_tags, t.region_links, t.region_imgs = iv_array(&rv[3]), iv_array(&rv[4]), iv_array(&rv[5])
        t.region_deco = iv_array(&rv[6])
    finally:
        for k in range(7):
            iv_free(&rv[k])
    t.line_region, t.line_start, t.line_chars = iv_array(&w.l_region), iv_array(&w.l_start), iv_array(&w.l_chars)
    t.line_link, t.line_cjk = iv_array(&w.l_link), iv_array(&w.l_cjk)
    t.text = PyUnicode_DecodeUTF8(w.buf.data, w.buf.size, NULL) if w.buf.size else ""
    t.elements = w.order_count
    t.max_depth = w.max_depth - 1 if w.max_depth else 0
    t.lines = <int>w.l_region.size
    t.skipped = w.skipped
    has_text = bytearray(n)
    for k in range(w.l_region.size):
        has_text[w.l_region.data[k]] = 1
    elements = [None] * n
    for k in range(n):
        if has_text[k]:
            elements[k] = elementFactory(top._doc, w.regions[k].c_node)
    t.region_elements = elements
    t.s_node, t.s_parent, t.s_path = iv_array(&w.s_node), iv_array(&w.s_parent), iv_array(&w.s_path)
    t.s_in_link, t.s_cn, t.s_lcn = iv_array(&w.s_in_link), iv_array(&w.s_cn), iv_array(&w.s_lcn)
    t.s_tn, t.s_ltn, t.s_text_nodes = iv_array(&w.s_tn), iv_array(&w.s_ltn), iv_array(&w.s_text_nodes)
    t.s_own_len, t.s_own_nodes = iv_array(&w.s_own_len), iv_array(&w.s_own_nodes)
    t.path_parent, t.path_tag = w.path_parent, w.path_tag
    cdef int64_t best_size = 0, best_chars = 0
    cdef Py_ssize_t j
    for j in range(w.groups.mask + 1):
        if w.groups.slots[j].used:
            if w.groups.slots[j].a > best_size or (w.groups.slots[j].a == best_size and w.groups.slots[j].b > best_chars):
                best_size, best_chars = w.groups.slots[j].a, w.groups.slots[j].b
    t.counts = {"total": w.total, "p_chars": w.p_chars, "anchors": w.anchors, "headline_anchors": w.headline_anchors,
                "headings": w.headings, "linked_headings": w.linked_headings, "articles": w.articles,
                "times": w.times, "best_size": best_size, "best_chars": best_chars, "controls": w.controls,
                "code": w.code, "videos": w.videos, "images": w.images}
    return t


# --- CETD-TPC over the table (extraction.cetd.score, the same arithmetic in the same order) -------------------

def cetd_scores(PageTable t, double tau_lambda):
    """Return ``(tbd, ctpc, tdtpc, tau, content paths, best)`` of the table's CETD statistics, as
    ``extraction.cetd.score`` computes them (float64 arrays; ``best`` -1 when the page has no text)."""
    cdef const int32_t[::1] path = t.s_path, own_nodes = t.s_own_nodes, own_len = t.s_own_len
    cdef const int32_t[::1] parent = t.s_parent, in_link = t.s_in_link, cn = t.s_cn, lcn = t.s_lcn
    cdef const int32_t[::1] tn = t.s_tn, ltn = t.s_ltn
    cdef Py_ssize_t size = path.shape[0], paths = len(t.path_tag), i
    chars_array = np.zeros(paths, dtype=np.int64)
    nodes_array = np.zeros(paths, dtype=np.int64)
    cdef int64_t[::1] chars = chars_array, nodes = nodes_array
    for i in range(size):
        if own_nodes[i]:
            chars[path[i]] += own_len[i]
            nodes[path[i]] += own_nodes[i]
    # TPR per path, in the order the Python dict of path_ratios holds them (first seen by element order)
    tpr_array = np.zeros(paths, dtype=np.float64)
    cdef double[::1] tpr = tpr_array
    for i in range(paths):
        if nodes[i]:
            tpr[i] = <double>chars[i] / <double>nodes[i]
    # tau: the population std of TPR over the text nodes (sums in element order, as threshold() adds them)
    cdef int64_t total_nodes = 0
    cdef double weighted = 0.0, mean, variance = 0.0, tau = 0.0, diff
    for i in range(size):
        if own_nodes[i]:
            total_nodes += own_nodes[i]
    if total_nodes:
        for i in range(size):
            if own_nodes[i]:
                weighted += tpr[path[i]] * own_nodes[i]
        mean = weighted / total_nodes
        for i in range(size):
            if own_nodes[i]:
                diff = tpr[path[i]] - mean
                variance += own_nodes[i] * (diff * diff)
        variance = variance / total_nodes
        tau = tau_lambda * sqrt(variance)
    content_array = np.zeros(paths, dtype=np.uint8)
    cdef uint8_t[::1] content = content_array
    for i in range(paths):
        content[i] = 1 if nodes[i] and tpr[i] > tau else 0
    tbd_array = np.zeros(size, dtype=np.float64)
    covered_array = np.zeros(size, dtype=np.int64)
    cdef double[::1] tbd = tbd_array
    cdef int64_t[::1] covered = covered_array
    cdef int64_t own
    cdef int32_t up
    for i in range(size - 1, -1, -1):
        own = own_nodes[i]
        tbd[i] += own if in_link[i] else own_len[i] + own
        if content[path[i]]:
            covered[i] += own
        up = parent[i]
        if up >= 0:
            tbd[up] += <double>(cn[i] - lcn[i] + 1) / <double>(tn[i] - ltn[i] + 1)
            covered[up] += covered[i]
    cdef int64_t total = covered[0] if size else 0
    ctpc_array = np.zeros(size, dtype=np.float64)
    tdtpc_array = np.zeros(size, dtype=np.float64)
    cdef double[::1] ctpc = ctpc_array, tdtpc = tdtpc_array
    cdef Py_ssize_t best = -1
    for i in range(size):
        ctpc[i] = <double>covered[i] / <double>total if total else 0.0
        tdtpc[i] = tbd[i] * ctpc[i]
        if total and (best < 0 or tdtpc[i] > tdtpc[best]):
            best = i
    paths_set = frozenset(i for i in range(paths) if content[i])
    return tbd_array, ctpc_array, tdtpc_array, tau, paths_set, best


# --- class and id groups of elements and of their ancestors (extraction.blockclf.features) -------------------

def element_masks(PageTable t, nodes, groups_of):
    """Return, for the table elements ``nodes``, the class groups of each (``groups_of(class, id)``, asked once
    per distinct pair of values a page, None for an absent attribute) and those of its ancestors strictly below
    the top (element 0), as two int64 arrays."""
    cdef const int32_t[::1] parent = t.parent, cls = t.cls, ident = t.ident
    cdef const int32_t[::1] wanted = np.ascontiguousarray(nodes, dtype=np.int32)
    cdef Py_ssize_t n = parent.shape[0], count = wanted.shape[0], k
    own_array = np.zeros(count, dtype=np.int64)
    up_array = np.zeros(count, dtype=np.int64)
    cdef int64_t[::1] own_out = own_array, up_out = up_array
    # inclusive[e]: the groups of e and its ancestors below the top, -1 until known
    inclusive_array = np.full(n, -1, dtype=np.int64)
    cdef int64_t[::1] inclusive = inclusive_array
    cdef _Counts pairs = _Counts()
    cdef IVec chain
    memset(&chain, 0, sizeof(IVec))
    cdef int32_t node, e
    cdef int64_t mask
    strings = t.strings
    try:
        if n:
            inclusive[0] = 0
        for k in range(count):
            node = wanted[k]
            own_out[k] = _own_mask(node, cls, ident, strings, pairs, groups_of)
            if node == 0:
                continue
            e = parent[node]
            chain.size = 0
            while e > 0 and inclusive[e] < 0:
                iv_push(&chain, e)
                e = parent[e]
            mask = inclusive[e] if e >= 0 else 0
            while chain.size:
                chain.size -= 1
                e = chain.data[chain.size]
                mask |= _own_mask(e, cls, ident, strings, pairs, groups_of)
                inclusive[e] = mask
            up_out[k] = inclusive[parent[node]]
    finally:
        iv_free(&chain)
    return own_array, up_array


cdef int64_t _own_mask(int32_t e, const int32_t[::1] cls, const int32_t[::1] ident, list strings, _Counts pairs,
                       groups_of) except -1:
    cdef int32_t c = cls[e], i = ident[e]
    if c < 0 and i < 0:
        return 0
    cdef KeySlot* slot = pairs.get(((<int64_t>c + 1) << 32) + i + 1)
    if slot.a == 0:
        slot.a = 1 + groups_of(strings[c] if c >= 0 else None, strings[i] if i >= 0 else None)
    return slot.a - 1


# --- the metadata's walk (extraction.metadata.fields._scan) ---------------------------------------------------

cdef inline bint _contains_lower(const char* s, Py_ssize_t n, const char* word) noexcept nogil:
    """Whether ``word`` (lower-case ASCII) is in ``s`` lower-cased: ASCII letters fold; no other UTF-8 byte is
    ASCII (the two characters whose lower case holds an ASCII letter are asked about in Python: ``_folds_ascii``)."""
    cdef Py_ssize_t k = strlen(word), i, j
    cdef char c
    for i in range(n - k + 1):
        for j in range(k):
            c = s[i + j]
            if 65 <= c <= 90:
                c = c + 32
            if c != word[j]:
                break
        else:
            return True
    return False


cdef inline bint _folds_ascii(const char* s, Py_ssize_t n) noexcept nogil:
    """Whether ``s`` holds U+0130 or U+212A, whose lower case is an ASCII letter (with a combining dot)."""
    cdef Py_ssize_t i
    for i in range(n - 1):
        if <unsigned char>s[i] == 0xc4 and <unsigned char>s[i + 1] == 0xb0:
            return True
        if i + 2 < n and <unsigned char>s[i] == 0xe2 and <unsigned char>s[i + 1] == 0x84 \
                and <unsigned char>s[i + 2] == 0xaa:
            return True
    return False


cdef inline bint _any_lower(const char* s, Py_ssize_t n, tuple words) except -1:
    cdef bytes word
    for word in words:
        if _contains_lower(s, n, <const char*>word):
            return True
    return False


cdef inline bint _attr(tree.xmlNode* node, const char* name, const char** value, Py_ssize_t* size, bint* plain):
    """Find the attribute ``name`` (no namespace); set its value when it is plain (``_attr_value``)."""
    cdef tree.xmlAttr* a = node.properties
    while a != NULL:
        if a.ns == NULL and a.name != NULL and strcmp(<const char*>a.name, name) == 0:
            plain[0] = _attr_value(a, value, size)
            return True
        a = a.next
    return False


def metadata_elements(_Element root not None, not_text, tuple byline_words, tuple dateline_words, names_kinds):
    """Return the elements of ``root``'s subtree (itself included, document order) that the metadata's walk reads:
    ``(itemprops, users, named)``: the elements with an ``itemprop`` and its value; those (not ``not_text(tag)``)
    whose class holds "name"; and ``(element, byline, dateline)`` for those (not ``not_text``) whose class, id or
    rel name a byline (``byline_words``, not "comment" in class or id) or whose class or id name a dateline
    (``dateline_words``), lower-cased substrings; a value of another form is asked of ``names_kinds(cls, id,
    rel)``."""
    itemprops, users, named = [], [], []
    cdef _Strings tags = _Strings()
    cdef IVec text_tags  # by tag code: 1 not a text tag, 2 a text tag
    memset(&text_tags, 0, sizeof(IVec))
    cdef tree.xmlNode* top = root._c_node
    cdef tree.xmlNode* node = top
    cdef tree.xmlNode* next_node
    cdef const char* name
    cdef const char* value
    cdef Py_ssize_t size
    cdef bint plain, byline, dateline
    cdef const char* values[3]
    cdef Py_ssize_t sizes[3]
    cdef bint present[3], plains[3]
    cdef int32_t code
    cdef int k
    try:
        while node != NULL:
            if node.type == tree.XML_ELEMENT_NODE:
                if _attr(node, "itemprop", &value, &size, &plain):
                    prop = PyUnicode_DecodeUTF8(value, size, NULL) if plain else \
                        elementFactory(root._doc, node).get("itemprop")
                    if prop:
                        itemprops.append((elementFactory(root._doc, node), prop))
                name = b""
                if node.name != NULL:
                    name = <const char*>node.name
                if node.ns != NULL:
                    text_tag = not not_text(elementFactory(root._doc, node).tag)
                else:
                    code = tags.intern(name, strlen(name))
                    while code >= text_tags.size:
                        iv_push(&text_tags, 1 if not_text(tags.values[text_tags.size]) else 2)
                    text_tag = text_tags.data[code] == 2
                if text_tag:
                    present[0] = _attr(node, "class", &values[0], &sizes[0], &plains[0])
                    present[1] = _attr(node, "id", &values[1], &sizes[1], &plains[1])
                    present[2] = _attr(node, "rel", &values[2], &sizes[2], &plains[2])
                    for k in range(3):
                        if not present[k]:
                            values[k], sizes[k], plains[k] = b"", 0, True
                    if not (plains[0] and plains[1] and plains[2]) \
                            or _folds_ascii(values[0], sizes[0]) or _folds_ascii(values[1], sizes[1]) \
                            or _folds_ascii(values[2], sizes[2]):
                        element = elementFactory(root._doc, node)
                        cls, ident, rel = element.get("class"), element.get("id"), element.get("rel")
                        if cls and "name" in cls:
                            users.append(element)
                        if cls or ident or rel:
                            byline, dateline = names_kinds(cls or "", ident or "", rel or "")
                            if byline or dateline:
                                named.append((element, byline, dateline))
                    else:
                        if sizes[0] and _contains(values[0], sizes[0], "name", 4):
                            users.append(elementFactory(root._doc, node))
                        if sizes[0] or sizes[1] or sizes[2]:
                            byline = (_any_lower(values[0], sizes[0], byline_words)
                                      or _any_lower(values[1], sizes[1], byline_words)
                                      or _any_lower(values[2], sizes[2], byline_words)) \
                                and not _contains_lower(values[0], sizes[0], "comment") \
                                and not _contains_lower(values[1], sizes[1], "comment")
                            dateline = _any_lower(values[0], sizes[0], dateline_words) \
                                or _any_lower(values[1], sizes[1], dateline_words)
                            if byline or dateline:
                                named.append((elementFactory(root._doc, node), byline, dateline))
                if node.children != NULL:
                    node = node.children
                    continue
            # the next node in document order within root's subtree
            while node != NULL:
                if node == top:
                    node = NULL
                    break
                if node.next != NULL:
                    node = node.next
                    break
                node = node.parent
    finally:
        iv_free(&text_tags)
    return itemprops, users, named


# --- the blocks of a table (extraction.dom.blocks.table_blocks) ------------------------------------------------

cdef extern from "Python.h":
    int PyObject_GenericSetAttr(object o, object name, object value) except -1

_PARAGRAPH_FIELDS = ("text", "index", "chars", "link_chars", "line_start", "line_end")
_BLOCK_FIELDS = ("element", "index", "order", "depth", "text", "paragraphs", "chars", "link_chars", "links", "imgs",
                 "tags", "deco_tags", "page", "node")


cdef object _make(type cls, tuple names, tuple values):
    """Return an instance of the frozen, slotted dataclass ``cls`` with these field values, set through the slots
    as its ``__init__`` would (without the frozen class's per-field ``object.__setattr__`` calls in Python)."""
    obj = cls.__new__(cls)
    cdef Py_ssize_t k
    for k in range(len(names)):
        PyObject_GenericSetAttr(obj, names[k], values[k])
    return obj


def table_blocks(PageTable t, page, type paragraph_class, type block_class):
    """Return the blocks of the table's regions that have a paragraph, in document order, as
    ``extraction.dom.blocks.Block`` objects (``paragraph_class``, ``block_class``) of the page totals ``page``."""
    cdef const int32_t[::1] owner = t.line_region, start = t.line_start, count = t.line_chars, link = t.line_link
    cdef const int32_t[::1] node = t.region_node, order = t.region_order, depth = t.region_depth
    cdef const int32_t[::1] tags = t.region_tags, links = t.region_links, imgs = t.region_imgs, deco = t.region_deco
    cdef Py_ssize_t lines = owner.shape[0], regions = node.shape[0], i, r
    cdef str text = t.text
    cdef list by_region = [None] * regions
    cdef list paragraphs
    cdef int32_t chars, linked
    paragraph_names, block_names = _PARAGRAPH_FIELDS, _BLOCK_FIELDS
    for i in range(lines):
        r = owner[i]
        paragraphs = by_region[r]
        if paragraphs is None:
            paragraphs = by_region[r] = []
        chars = count[i]
        linked = link[i] if link[i] < chars else chars
        paragraphs.append(_make(paragraph_class, paragraph_names,
                                (text[start[i]:start[i] + chars], len(paragraphs), chars, linked, i, i)))
    blocks = []
    elements = t.region_elements
    cdef int64_t total, total_links
    for r in range(regions):
        paragraphs = by_region[r]
        if paragraphs is None:
            continue
        total = total_links = 0
        for p in paragraphs:
            total += p.chars
            total_links += p.link_chars
        blocks.append(_make(block_class, block_names, (
            elements[r], len(blocks), order[r], depth[r], "\n".join([p.text for p in paragraphs]), paragraphs,
            total, total_links, links[r], imgs[r], tags[r], deco[r], page, node[r])))
    return blocks


# --- counts over a paragraph's tokens and characters (extraction.blockclf.features and .context) ---------------

cdef extern from "Python.h":
    bint Py_UNICODE_ISUPPER(Py_UCS4 ch) nogil
    bint Py_UNICODE_ISDECIMAL(Py_UCS4 ch) nogil


def token_shape(tuple tokens):
    """Return ``(tokens, their characters, those of at most 3 characters, those whose first character is upper
    case, those whose first is a decimal digit)``: ``str.isupper``/``str.isdecimal`` of one character."""
    cdef Py_ssize_t chars = 0, short = 0, capital = 0, numeric = 0, n
    cdef str token
    for token in tokens:
        n = len(token)
        chars += n
        if n <= 3:
            short += 1
        if n:
            if Py_UNICODE_ISUPPER(token[0]):
                capital += 1
            if Py_UNICODE_ISDECIMAL(token[0]):
                numeric += 1
    return len(tokens), chars, short, capital, numeric


def noise_tokens(tuple tokens, frozenset words, frozenset prefixes):
    """Return how many of the (lower-cased) tokens are noise words: an entry matches the longest run of
    consecutive tokens whose concatenation equals it, and all tokens of the run count; a match's tokens start
    no other (``extraction.blockclf.features.text_counts``)."""
    cdef list lowered = [token.lower() for token in tokens]
    cdef Py_ssize_t size = len(lowered), i, end, matched, after = 0, noise = 0
    cdef str key
    for i in range(size):
        if i < after or lowered[i] not in prefixes:
            continue
        key = lowered[i]
        end = i
        matched = 0
        while key in prefixes:
            if key in words:
                matched = end - i + 1
            end += 1
            if end == size:
                break
            key = key + lowered[end]
        noise += matched
        after = i + matched
    return noise


def char_counts(str text, str first, str second):
    """Return how many characters of ``text`` are in ``first`` and how many in ``second``."""
    cdef Py_ssize_t a = 0, b = 0
    cdef Py_UCS4 c
    for c in text:
        if c in first:
            a += 1
        if c in second:
            b += 1
    return a, b


cdef inline bint _upper(Py_UCS4 c) noexcept nogil:
    return 65 <= c <= 90


cdef inline bint _lower(Py_UCS4 c) noexcept nogil:
    return 97 <= c <= 122


def class_mask(str value, dict word_masks):
    """Return the OR of ``word_masks`` over the tokens of a class/id value, as
    ``extraction.blockclf.features.class_groups`` reads them: the runs of ASCII letters lower-cased, and the
    camelCase parts of each (``[A-Z]+(?![a-z])|[A-Z]?[a-z]+``) lower-cased."""
    cdef Py_ssize_t n = len(value), i = 0, start, end, j, k
    cdef int64_t mask = 0
    while i < n:
        while i < n and not (_upper(value[i]) or _lower(value[i])):
            i += 1
        if i == n:
            break
        start = i
        while i < n and (_upper(value[i]) or _lower(value[i])):
            i += 1
        end = i
        mask |= word_masks.get(value[start:end].lower(), 0)
        j = start
        while j < end:  # the camelCase parts, as re.findall reads them
            if _upper(value[j]):
                k = j
                while k < end and _upper(value[k]):
                    k += 1
                if k == end or not _lower(value[k]):
                    mask |= word_masks.get(value[j:k].lower(), 0)
                    j = k
                    continue
                if k - j >= 2:  # the run gives back its last capital, which starts the next part
                    mask |= word_masks.get(value[j:k - 1].lower(), 0)
                    j = k - 1
                    continue
            k = j + 1 if _upper(value[j]) else j
            while k < end and _lower(value[k]):
                k += 1
            mask |= word_masks.get(value[j:k].lower(), 0)
            j = k
    return mask


# --- DOM statistics of any subtree (extraction.dom.stats.compute_stats) ----------------------------------------

cdef struct StatOpen:
    tree.xmlNode* node
    int32_t index
    Run pending


def dom_stats(_Element top not None, skip):
    """Return the statistics of ``extraction.dom.stats.compute_stats(top, skip)`` as ``(elements, parent, path,
    in_link, cn, lcn, tn, ltn, text_nodes, own_text_len, own_text_nodes, path_parent, path_tag)``: lists in
    document order; ``skip``'s elements (but the top) are left out with their subtrees, their tails kept."""
    cdef _Counts skipped = _Counts()
    cdef _Element element
    for item in skip:
        if isinstance(item, _Element):
            element = <_Element>item
            if element._c_node != NULL:
                skipped.get(<int64_t><size_t>element._c_node).a = 1
    cdef bint any_skip = skipped.used > 0
    elements, parents, paths, in_links = [], [], [], []
    cdef IVec cn, lcn, tn, ltn, text_nodes, own_len, own_nodes, link
    memset(&cn, 0, sizeof(IVec)); memset(&lcn, 0, sizeof(IVec)); memset(&tn, 0, sizeof(IVec))
    memset(&ltn, 0, sizeof(IVec)); memset(&text_nodes, 0, sizeof(IVec)); memset(&own_len, 0, sizeof(IVec))
    memset(&own_nodes, 0, sizeof(IVec)); memset(&link, 0, sizeof(IVec))
    path_parent, path_tag = [], []
    cdef _Strings names = _Strings()
    cdef IVec lower_of, lower_link  # by tag code: lower-case tag id; by that id: it is "a"
    memset(&lower_of, 0, sizeof(IVec))
    memset(&lower_link, 0, sizeof(IVec))
    lower_ids, lowers, keep = {}, [], []
    cdef bint is_link, linked
    cdef _Counts path_ids = _Counts()
    cdef StatOpen* stack = NULL
    cdef Py_ssize_t depth = 0, cap = 0
    cdef tree.xmlNode* cur
    cdef tree.xmlNode* c
    cdef tree.xmlNode* done
    cdef bint after_other = False, walked
    cdef Run r, part
    cdef Py_ssize_t n
    cdef int32_t index, up, code, path_up, lower
    cdef KeySlot* slot
    cdef StatOpen* o
    cdef const char* name
    try:
        cur = top._c_node
        while True:
            if cur == NULL or (depth == 0 and cur != top._c_node):
                if depth == 0:
                    break
                # the open element ends
                o = &stack[depth - 1]
                index = o.index
                if o.pending.words:
                    _stat_text(index, run_length(o.pending), &cn, &lcn, &text_nodes, &own_len, &own_nodes, &link)
                depth -= 1
                if depth:
                    up = stack[depth - 1].index
                    cn.data[up] += cn.data[index]
                    lcn.data[up] += lcn.data[index]
                    tn.data[up] += tn.data[index]
                    ltn.data[up] += ltn.data[index]
                    text_nodes.data[up] += text_nodes.data[index]
                done = o.node
                if done == top._c_node:
                    break
                cur = done.next
                after_other = False
                continue
            if cur.type == tree.XML_ELEMENT_NODE:
                if depth and any_skip and skipped.get(<int64_t><size_t>cur).a:
                    after_other = False  # its tail joins the text before it
                    cur = cur.next
                    continue
                if depth:  # the parent's current text node ends here
                    o = &stack[depth - 1]
                    if o.pending.words:
                        _stat_text(o.index, run_length(o.pending), &cn, &lcn, &text_nodes, &own_len, &own_nodes,
                                   &link)
                    o.pending.any = o.pending.starts = o.pending.ends = False
                    o.pending.ns = o.pending.words = o.pending.cjk = 0
                index = <int32_t>len(elements)
                up = stack[depth - 1].index if depth else -1
                element_proxy = elementFactory(top._doc, cur)
                if cur.ns != NULL:  # lxml's "{namespace}name": looked up by the proxy's tag
                    encoded = element_proxy.tag.encode("utf-8", "surrogatepass")
                    keep.append(encoded)
                    code = names.intern(<const char*>encoded, len(encoded))
                else:
                    name = b""
                    if cur.name != NULL:
                        name = <const char*>cur.name
                    code = names.intern(name, strlen(name))
                while code >= lower_of.size:
                    low = names.values[lower_of.size].lower()
                    lid = lower_ids.get(low)
                    if lid is None:
                        lid = lower_ids[low] = len(lowers)
                        lowers.append(low)
                        iv_push(&lower_link, 1 if low == "a" else 0)
                    iv_push(&lower_of, lid)
                lower = lower_of.data[code]
                path_up = paths[up] if up >= 0 else -1
                slot = path_ids.get(((<int64_t>path_up + 1) << 31) + lower)
                if slot.a == 0:
                    slot.a = len(path_tag) + 1
                    path_parent.append(path_up)
                    path_tag.append(lowers[lower])
                is_link = lower_link.data[lower] != 0
                linked = is_link or (up >= 0 and link.data[up] != 0)
                elements.append(element_proxy)
                parents.append(up)
                paths.append(<int32_t>(slot.a - 1))
                in_links.append(linked)
                iv_push(&link, 1 if linked else 0)
                iv_push(&cn, 0); iv_push(&lcn, 0); iv_push(&tn, 1); iv_push(&ltn, 1 if is_link else 0)
                iv_push(&text_nodes, 0); iv_push(&own_len, 0); iv_push(&own_nodes, 0)
                if depth == cap:
                    cap = cap * 2 if cap else 256
                    stack = <StatOpen*>realloc(stack, cap * sizeof(StatOpen))
                    if stack == NULL:
                        raise MemoryError()
                o = &stack[depth]
                o.node = cur
                o.index = index
                o.pending.any = o.pending.starts = o.pending.ends = False
                o.pending.ns = o.pending.words = o.pending.cjk = 0
                depth += 1
                after_other = False
                cur = cur.children
                continue
            if cur.type == tree.XML_TEXT_NODE or cur.type == tree.XML_CDATA_SECTION_NODE:
                r.ns = r.words = r.cjk = 0
                r.any = r.starts = r.ends = False
                c = cur
                while c != NULL and (c.type == tree.XML_TEXT_NODE or c.type == tree.XML_CDATA_SECTION_NODE
                                     or c.type == tree.XML_XINCLUDE_START or c.type == tree.XML_XINCLUDE_END):
                    if c.type == tree.XML_TEXT_NODE or c.type == tree.XML_CDATA_SECTION_NODE:
                        n = strlen(<const char*>c.content) if c.content != NULL else 0
                        part = _scan_run(<const unsigned char*>c.content, n)
                        run_concat(&r, part)
                    c = c.next
                if depth and r.any:
                    o = &stack[depth - 1]
                    if after_other:  # a comment's tail is a text node of its own
                        if r.words:
                            _stat_text(o.index, run_length(r), &cn, &lcn, &text_nodes, &own_len, &own_nodes, &link)
                    else:
                        run_concat(&o.pending, r)
                cur = c
                after_other = False
                continue
            if cur.type == tree.XML_COMMENT_NODE or cur.type == tree.XML_PI_NODE:
                after_other = True
            cur = cur.next
        return (elements, parents, paths, in_links, _ivec_list(&cn), _ivec_list(&lcn), _ivec_list(&tn),
                _ivec_list(&ltn), _ivec_list(&text_nodes), _ivec_list(&own_len), _ivec_list(&own_nodes),
                path_parent, path_tag)
    finally:
        free(stack)
        iv_free(&cn); iv_free(&lcn); iv_free(&tn); iv_free(&ltn); iv_free(&text_nodes); iv_free(&own_len)
        iv_free(&own_nodes); iv_free(&link); iv_free(&lower_of); iv_free(&lower_link)


cdef inline int _stat_text(int32_t i, int64_t length, IVec* cn, IVec* lcn, IVec* text_nodes, IVec* own_len,
                           IVec* own_nodes, IVec* link) except -1:
    """``extraction.dom.stats._add_own_text``."""
    if not length:
        return 0
    own_len.data[i] += <int32_t>length
    own_nodes.data[i] += 1
    cn.data[i] += <int32_t>length
    text_nodes.data[i] += 1
    if link.data[i]:
        lcn.data[i] += <int32_t>length
    return 0


cdef Run _scan_run(const unsigned char* s, Py_ssize_t n) noexcept:
    """The run of one text node (``_Pass.scan`` without writing)."""
    cdef Run r
    r.ns = r.words = r.cjk = 0
    r.any = n > 0
    r.starts = r.ends = False
    if not n:
        return r
    cdef Py_ssize_t i = 0
    cdef Py_UCS4 c
    cdef bint space, previous_space = True
    while i < n:
        c = s[i]
        if c < 0x80:
            i += 1
            space = _ASCII_SPACE[c]
        else:
            c = _decode(s, n, &i)
            space = Py_UNICODE_ISSPACE(c)
        if not space:
            r.ns += 1
            if previous_space:
                r.words += 1
        previous_space = space
    r.starts = not _starts_space(s, n)
    r.ends = not previous_space
    return r


cdef list _ivec_list(IVec* v):
    cdef Py_ssize_t k
    return [v.data[k] for k in range(v.size)]
