"""extraction.dedup: exact and near copies, different texts, Chinese, short texts, config, storage, the index."""

from __future__ import annotations

import zlib

import numpy as np
import pytest
from datasketch import MinHash

from extraction.dedup import (
    EMPTY_HASH,
    DedupConfig,
    DuplicateIndex,
    Fingerprint,
    Match,
    MemoryStorage,
    band_keys,
    bands,
    containment,
    fingerprint,
    normalize,
    similarity,
    text_hash,
)

ARTICLE = """The city council approved a new budget for the harbor district on Tuesday night, ending months of
debate over how to pay for repairs to the old sea wall and the ferry terminal.

Council members voted seven to two for the plan, which sets aside 14 million dollars over three years. The
money will come from a mix of parking fees, a state grant and bonds that voters approved in the spring.

"This is not the budget anyone wanted, but it is the one the harbor needs," said Maria Okafor, who chairs
the finance committee. She said the sea wall had been patched eleven times since 1990 and could fail in a
strong winter storm.

Opponents argued that the parking fees would drive shoppers away from the small businesses along Front
Street. Several owners spoke during the public comment period, which lasted more than two hours.

Work on the sea wall is expected to begin in April. The ferry terminal will stay open during construction,
although some sailings may move to the north pier for a few weeks in the summer."""

# The same event told by another outlet: shared facts and a quote, different sentences.
SAME_STORY = """Harbor repairs will go ahead after a divided council backed a three-year spending plan late on
Tuesday.

The 14 million dollar package passed 7-2. It leans on higher parking charges downtown, a grant from the
state and bonds approved by voters earlier this year, according to the city's finance office.

Finance committee chair Maria Okafor called it "the one the harbor needs" and warned that the sea wall,
repaired again and again over three decades, might not survive another bad winter.

Shop owners on Front Street were unhappy. Several told the council that customers would stay away if they
had to pay more to park, and asked for the fees to be phased in more slowly.

Construction starts in the spring; ferries keep running, with some moved to the north pier for part of the
summer."""

OTHER = """Researchers at the university's medical school say a simple blood test can spot a rare liver disease
years before symptoms appear. The team followed 2,400 patients for a decade and found that a protein
marker rose steadily in those who later fell ill.

The test costs less than twenty dollars and uses equipment that most hospital laboratories already have.
The authors caution that larger studies are needed before doctors use it routinely, and that a positive
result should be confirmed with imaging.

The work was funded by a national research council and published this week in a medical journal. The
researchers plan a second study in three other countries next year."""

CHINESE = """本报讯（记者 王明）昨天下午，市政府召开新闻发布会，介绍今年城市绿化建设的最新进展。据介绍，全市今年
计划新建和改造公园二十座，新增绿地面积三百余公顷，其中沿江绿道将在年底前全线贯通。市园林局负责人表示
，今年的绿化建设坚持“见缝插绿”的原则，在老旧小区、学校周边和背街小巷建设一批口袋公园，让市民出门五
分钟就能走进绿地。目前，已有十二座口袋公园完工并向市民开放。在资金保障方面，市财政今年安排专项资金四
点五亿元，同时引导社会资本参与公园的建设和运营。该负责人还表示，将建立绿地养护考核制度，对养护不到位
的单位进行通报，确保“建得好，管得好”。不少市民对此表示欢迎。家住城南的李女士说，家门口的小公园建成
后，每天晚饭后都会带孩子去散步，“环境好了，心情也好了”。"""


def reflowed(text: str) -> str:
    """The same words with other line breaks, spacing, case and punctuation."""
    return " ".join(text.split()).replace(", ", " - ").replace(".", " .").upper()


def framed(text: str, lang: str = "en") -> str:
    """The text as another site's page shows it: a new headline, a credit line, a footer."""
    if lang == "zh":
        return f"转载｜城市绿化建设最新进展\n本文原载于某某日报，经授权转载。\n{text}\n责任编辑：张三"
    return (f"Report: Council backs harbor budget\nThis article was originally published by the Harbor Gazette.\n"
            f"{text}\nShare this story. Follow us for more local news.")


@pytest.fixture
def config() -> DedupConfig:
    return DedupConfig()


def test_normalize_keeps_letters_and_digits_only() -> None:
    assert normalize("Ｈｅｌｌｏ,  World!\n2024 — ok") == "helloworld2024ok"  # NFKC folds full-width letters
    assert normalize("你好，世界！") == "你好世界"


def test_reflowed_and_repunctuated_copy_is_exact(config: DedupConfig) -> None:
    assert text_hash(reflowed(ARTICLE)) == text_hash(ARTICLE)
    index = DuplicateIndex(config)
    assert index.check("https://a.example/harbor", ARTICLE) is None
    assert index.check("https://a.example/harbor?amp=1", reflowed(ARTICLE)) == \
        Match("https://a.example/harbor", 1.0, True)


def test_copy_in_another_frame_is_near(config: DedupConfig) -> None:
    original, copy = fingerprint(ARTICLE, config), fingerprint(framed(ARTICLE), config)
    assert original.text_hash != copy.text_hash
    assert original.signature is not None and copy.signature is not None
    assert similarity(original.signature, copy.signature) >= config.min_jaccard
    assert containment(original.signature, copy.signature) >= config.threshold
    index = DuplicateIndex(config)
    index.add("original", original)
    match = index.find(copy)
    # Every shingle of the article is in the framed copy: containment 1.0, though the texts differ.
    assert match is not None and match.key == "original" and not match.exact and match.similarity >= config.threshold


def test_different_texts_are_not_duplicates(config: DedupConfig) -> None:
    index = DuplicateIndex(config)
    assert index.check("harbor", ARTICLE) is None
    assert index.check("medicine", OTHER) is None
    assert index.check("harbor-elsewhere", SAME_STORY) is None  # the same story, another article
    story, article = fingerprint(SAME_STORY, config), fingerprint(ARTICLE, config)
    assert story.signature is not None and article.signature is not None
    assert containment(story.signature, article.signature) < config.threshold


def test_chinese_copy_is_near(config: DedupConfig) -> None:
    index = DuplicateIndex(config)
    assert index.check("zh-original", CHINESE) is None
    match = index.check("zh-copy", framed(CHINESE, "zh"))
    assert match is not None and match.key == "zh-original" and not match.exact
    assert index.check("zh-other", CHINESE[200:] + "另外，" + OTHER) is None


def test_short_text_has_exact_hash_only(config: DedupConfig) -> None:
    short = "Photo gallery: the harbor at dawn."
    fp = fingerprint(short, config)
    assert fp.signature is None and fp.text_hash == text_hash(short)
    index = DuplicateIndex(config)
    assert index.check("a", short) is None
    assert index.check("b", short.lower()) == Match("a", 1.0, True)
    assert index.check("c", short + " More photos.") is None  # no signature: no near match


def test_empty_text_never_matches(config: DedupConfig) -> None:
    index = DuplicateIndex(config)
    assert fingerprint(" — ", config) == Fingerprint(EMPTY_HASH, None)
    assert index.check("a", "") is None
    assert index.check("b", "...") is None


def test_find_excludes_its_own_key(config: DedupConfig) -> None:
    index = DuplicateIndex(config)
    fp = fingerprint(ARTICLE, config)
    index.add("harbor", fp)
    assert index.find(fp, exclude="harbor") is None
    assert index.check("harbor", ARTICLE) is None  # a page crawled again is not its own duplicate
    index.add("harbor-copy", fingerprint(framed(ARTICLE), config))
    match = index.find(fp, exclude="harbor")
    assert match is not None and match.key == "harbor-copy"


def _with_equal(signature: bytes, equal: int, size: int | None = None) -> bytes:
    """Return a signature that shares exactly ``equal`` values with ``signature`` (and has ``size`` shingles)."""
    values = np.frombuffer(signature[4:], dtype="<u4").copy()
    values[equal:] ^= np.uint32(0x5A5A5A5A)
    prefix = signature[:4] if size is None else np.array([size], dtype="<u4").tobytes()
    return prefix + values.tobytes()


class OneCandidate:
    """A storage that offers one stored signature for every lookup (the LSH step aside)."""

    def __init__(self, signature: bytes) -> None:
        self.signature = signature

    def by_hash(self, text_hash: str) -> str | None:
        return None

    def candidates(self, keys: object) -> list[tuple[str, bytes]]:
        return [("stored", self.signature)]

    def add(self, key: str, fp: Fingerprint, keys: object) -> None:
        raise AssertionError("not used")


def test_threshold_boundary(config: DedupConfig) -> None:
    fp = fingerprint(ARTICLE, config)
    assert fp.signature is not None
    n = config.permutations
    # Two texts of one size: containment 2J / (1 + J); the fewest equal values that reach the threshold.
    at = next(k for k in range(n + 1) if 2 * k / n / (1 + k / n) >= config.threshold and k / n >= config.min_jaccard)
    assert similarity(fp.signature, _with_equal(fp.signature, at)) == at / n
    assert containment(fp.signature, _with_equal(fp.signature, at)) >= config.threshold
    assert DuplicateIndex(config, OneCandidate(_with_equal(fp.signature, at))).find(fp) is not None
    assert DuplicateIndex(config, OneCandidate(_with_equal(fp.signature, at - 1))).find(fp) is None


def test_containment_of_a_text_inside_a_longer_one(config: DedupConfig) -> None:
    fp = fingerprint(ARTICLE, config)
    assert fp.signature is not None
    size = int(np.frombuffer(fp.signature[:4], dtype="<u4")[0])
    # The stored text has twice the shingles and half of them equal: all of this text is in it.
    longer = _with_equal(fp.signature, config.permutations // 2, 2 * size)
    assert containment(fp.signature, longer) == pytest.approx(1.0)
    assert DuplicateIndex(config, OneCandidate(longer)).find(fp) is not None
    # Four times the shingles: under the Jaccard floor (a text quoted inside a page, not a copy of it).
    quoted = _with_equal(fp.signature, config.permutations // 4, 4 * size)
    assert DuplicateIndex(config, OneCandidate(quoted)).find(fp) is None


def test_band_keys(config: DedupConfig) -> None:
    fp = fingerprint(ARTICLE, config)
    assert fp.signature is not None
    keys = band_keys(fp.signature, config)
    count, rows = bands(config.min_jaccard, config.permutations)
    assert len(keys) == count and count * rows <= config.permutations
    assert [int.from_bytes(key[:2], "big") for key in keys] == list(range(count))
    assert band_keys(fingerprint(reflowed(ARTICLE), config).signature or b"", config) == keys
    with pytest.raises(ValueError, match="DEDUP_PERMUTATIONS"):
        band_keys(fp.signature[:-4], config)
    with pytest.raises(ValueError):
        similarity(fp.signature, fp.signature[:-4])


def test_memory_storage_round_trip(config: DedupConfig) -> None:
    storage = MemoryStorage()
    first, second = fingerprint(ARTICLE, config), fingerprint(OTHER, config)
    assert first.signature is not None and second.signature is not None
    first_keys, second_keys = band_keys(first.signature, config), band_keys(second.signature, config)
    storage.add("a", first, first_keys)
    storage.add("b", second, second_keys)
    assert len(storage) == 2
    assert storage.by_hash(first.text_hash) == "a" and storage.by_hash("0" * 32) is None
    assert storage.candidates(first_keys) == [("a", first.signature)]
    assert storage.candidates(first_keys + second_keys) == [("a", first.signature), ("b", second.signature)]
    storage.add("a", second, second_keys)  # a key stored again replaces its fingerprint
    assert storage.by_hash(first.text_hash) is None and storage.candidates(first_keys) == []
    assert storage.by_hash(second.text_hash) == "b"
    assert [key for key, _ in storage.candidates(second_keys)] == ["b", "a"]


@pytest.mark.parametrize(("setting", "value"), [
    ("DEDUP_THRESHOLD", "0"), ("DEDUP_THRESHOLD", "1.5"), ("DEDUP_SHINGLE", "0"),
    ("DEDUP_PERMUTATIONS", "1"), ("DEDUP_PERMUTATIONS", "5000"), ("DEDUP_MIN_CHARS", "-1"),
    ("DEDUP_THRESHOLD", "high"), ("DEDUP_MIN_JACCARD", "0"),
])
def test_config_errors_name_the_setting(setting: str, value: str) -> None:
    with pytest.raises(ValueError, match=setting):
        DedupConfig.from_settings({setting: value})


def test_config_from_settings() -> None:
    config = DedupConfig.from_settings({"DEDUP_THRESHOLD": "0.7", "DEDUP_SHINGLE": 5, "DEDUP_DROP": "true"})
    assert (config.threshold, config.shingle, config.drop, config.enabled) == (0.7, 5, True, True)
    assert DedupConfig.setting_names()["min_chars"] == "DEDUP_MIN_CHARS"


@pytest.mark.parametrize("text", [
    "The council approved the new budget on Tuesday after a long debate about schools and roads. " * 6,
    "市政府周二批准了新的预算，此前围绕学校和道路进行了长时间的辩论。" * 10,
    "Emoji and rare scripts: 🙂 𝒜 𐍈 then plain words follow here, with digits 2026 and more words. " * 5,
])
def test_the_signature_is_datasketchs_minhash_of_the_distinct_shingles(text: str) -> None:
    """The vectorised signature gives exactly what MinHash.update_batch gives with crc32 over the shingle set."""
    config = DedupConfig()
    data = normalize(text).encode("utf-32-le")
    width = 4 * config.shingle
    shingles = {data[start:start + width] for start in range(0, len(data) - width + 4, 4)}
    reference = MinHash(num_perm=config.permutations, seed=1, hashfunc=zlib.crc32, scheme="affine32")
    reference.update_batch(list(shingles))
    signature = fingerprint(text, config).signature
    assert signature is not None
    assert np.frombuffer(signature[:4], dtype="<u4")[0] == len(shingles)
    assert np.array_equal(np.frombuffer(signature[4:], dtype="<u4"), reference.hashvalues)
