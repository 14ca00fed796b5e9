"""Authors in bylines: a byline's names apart ("By A and B", "甲、乙"), less the outlets and words that are
no names; Chinese bylines (作者 / 记者 / 编辑 / 责任编辑 labels, "（记者 某某）", closing signatures,
unlabelled forum and blog bylines); the authors an extracted text names."""

from __future__ import annotations

import re
from collections.abc import Iterable
from urllib.parse import urlsplit

from extraction.dom.lang import HAN_RE
from extraction.metadata.dates import MONTH_NAMES

MAX_AUTHORS = 10
BYLINE_MAX_CHARS = 200  # a byline element with more text is content, not a byline
HEAD_LINES = 40  # first lines of the visible text searched for a byline or dateline

EN_BY_RE = re.compile(r"^\W*(?:written\s+)?by[:\s]+(.+)$", re.I)
# An author box's line anywhere after an article's headline: "Written by Jane Doe", or the label alone with the
# name on the next line (a bare "By" is not read there: lists of related posts have one per item).
AUTHOR_BOX_RE = re.compile(r"\W*(?:written|authored)\s+by(?:[:\s]+(.+)|\W*)$", re.I)
AUTHOR_BOX_MAX_CHARS = 60
# An author's label on its own (a link preview's twitter:label1, a line before the name), in the languages of
# Yoast SEO's "Written by".
# The English labels both read: on a line of their own, and before the names of a byline (``_AUTHOR_NOISE_RE``).
_BY_LABELS = r"by|written\s+by|authors?"
# "Written by" in other languages, read in both places too (Blogger's German "Posted by" is "Eingestellt von").
_WRITTEN_BY_TRANSLATED = r"(?:verfasst|geschrieben|eingestellt)\s+von|écrit\s+par|escrito\s+por|scritto\s+da"
WRITTEN_BY_RE = re.compile(rf"\W*(?:{_BY_LABELS}|{_WRITTEN_BY_TRANSLATED}|geschreven\s+door|napisane\s+przez|"
                           r"skriven\s+av|作者)\W*", re.I)
_ZH_NAME = r"[\u4e00-\u9fff·]{2,4}"
_ZH_LABELS = ("作者", "撰文", "撰稿", "执笔人", "执笔", "特约记者", "本报记者", "记者", "实习生", "通讯员", "文",
              "责任编辑", "编辑", "责编")
# A name ends the byline's run of Chinese characters, or comes right before 报道 / 摄 / 电 / 讯 ("记者 某某
# 北京报道"): in running prose a label is a word of the sentence ("记者在孙某的办公室里"), and 电 / 讯 end a word
# there ("记者通过电子邮件联系了", by e-mail).
_ZH_NAME_END = r"(?=$|[^\u4e00-\u9fff·]|报道|摄|[电讯](?![\u4e00-\u9fff]))"
_ZH_AUTHOR_RE = re.compile(
    r"(?:^|(?<=[\s（(【\[|｜报台社网]))(作者|撰文|撰稿|执笔人|执笔|特约记者|本报记者|记者|实习生|通讯员|责任编辑|编辑|责编|文(?=\s*[/／｜|:：]))"
    rf"\s*[:：/／|｜]?\s*({_ZH_NAME}{_ZH_NAME_END}(?:[ \u3000、，,]+{_ZH_NAME}{_ZH_NAME_END}){{0,5}})")
_ZH_REPORTED_RE = re.compile(rf"[（(]\s*(?:记者\s*({_ZH_NAME}(?:[ \u3000、]+{_ZH_NAME}){{0,3}})|"
                             rf"({_ZH_NAME}(?:[ \u3000、]+{_ZH_NAME}){{0,3}})\s+[\u4e00-\u9fff]{{0,6}}报道)\s*[）)]")
# A paper's closing signature of names alone, "（某某 某某）" after the last sentence of the text.
_ZH_SIGNED_RE = re.compile(rf"(?:^|(?<=[。！？!?”\"]))\s*[（(]\s*({_ZH_NAME}(?:[ \u3000、]+{_ZH_NAME}){{0,3}})"
                           r"\s*[）)]\s*$")
# A byline without a label: "ggjjzhzz 发表于 2005-9-15" (a blog's or forum's user), "[ 黄宇 ] 来源：[ 国际金融报 ]".
_ZH_POSTED = r"([^\W\d_][\w.\-]{1,19})\s+发表于\s*\d{4}"
_ZH_POSTED_RE = re.compile(rf"(?:^|(?<=\s)){_ZH_POSTED}")
_ZH_POSTED_LINE_RE = re.compile(rf"^{_ZH_POSTED}\D")  # the same, a line of its own
# A name alone on its line: two or three Han characters (stricter than a labelled byline's _ZH_NAME).
_ZH_LONE_NAME_RE = re.compile(r"[\u4e00-\u9fff]{2,3}")
_ZH_BRACKETED_RE = re.compile(rf"[\[［【]\s*({_ZH_NAME})\s*[\]］】]\W{{0,3}}来源")
# A reporter's closing line of its own: "新京报记者 彭冲 山东冠县报道" (an outlet, 记者, the names, a place and
# 报道). Looked for in every line after the headline: papers sign at the end, sometimes after text that the
# page folds away ("展开全文"), so the line is neither in the extracted text nor among the head lines.
ZH_CLOSING_RE = re.compile(rf"^[\u4e00-\u9fff]{{0,8}}记者[ \u3000]*({_ZH_NAME}(?:[ \u3000、]+{_ZH_NAME}){{0,3}})"
                            r"[ \u3000]+[\u4e00-\u9fff]{2,8}报道$")
_ZH_NOT_A_NAME_RE = re.compile(r"未知|佚名|匿名|不详|"  # "unknown", "anonymous": the site's placeholder
                               r"报道|报社|日报|晚报|新闻|网站|集团|出版|期刊|政府|公司|中心|大学|学院|来源|发布|时间|"
                               r"记者|编辑|作者|首页|文章|频道|专栏|责任|阅读|访问|统计|全文|展开|查看|更多|返回|待续|组图|资料|视频|"
                               r"完|续|篇|本文|本站|[网报社台站图]$|"
                               # a compiler's words after the reporter's name ("记者陈智 整合"), a forum's buttons
                               r"整合|整理|综合|编译|摄影|翻译|校对|回复|评论|分享|收藏|打印|登录|注册|关闭|字号|公告|搜索")
_AUTHOR_SPLIT_RE = re.compile(r"\s*(?:,|;|&|\band\b|\bund\b|\bet\b|、|，|；|\s和\s|\||"
                              r"\((?:with|avec|mit|con)\s)\s*", re.I)  # "A (avec B et C)"
# A role after a name ends the names: "Zackery Cuevas Writer, Hardware", "Rasmus Barslund Founder, Lead Reviewer",
# "Krishna Bharat, Distinguished Scientist" (roles that name no one; "Editor", "Staff" and the like make a part no
# name, ``_NOT_A_NAME_RE``).
_ROLE_RE = r"(?:writer|founder|co-founder|reviewer|columnist|journalist|analyst|manager|scientist|engineer|" \
           r"director|officer|president)s?\b"
# The desk and the wire before a role are part of it: "JOSEPH WHITE, AP Sports Writer", "Jane Doe, Sports Writer",
# "Susan Hallam MBE Managing Director"; a part of these words alone is no name ("Managing" of "Managing Director").
_DESK_WORDS = (r"sports|technology|tech|business|science|medical|health|political|politics|entertainment|economics|"
               r"travel|food|religion|education|music|film|movie|arts?|fashion|features?|senior|contributing|guest|"
               r"freelance|managing|product|marketing|distinguished|executive|chief|former|general|technical|"
               r"creative|research|principal|lead|associate|deputy|vice")
_DESK_RE = rf"(?:\s+(?:AP|Associated\s+Press))?(?:\s+(?:{_DESK_WORDS}))*"
_ROLE_AFTER = rf"(?<=[\w,]){_DESK_RE}\s+{_ROLE_RE}.*$"
_ROLE_AFTER_RE = re.compile(_ROLE_AFTER, re.I)
_AUTHOR_NOISE_RE = re.compile(rf"^\W*(?:{_BY_LABELS}|"
                              r"(?:posted|post|penned|reported|authored|text|words|story|recipe)\s+by|"
                              r"autor(?:en|in)?|auteurs?|"
                              rf"{_WRITTEN_BY_TRANSLATED}|veröffentlicht\s+von|publié\s+par|publicado\s+por|"
                              r"pubblicato\s+da|von|par)(?:[:\s]+|$)|"
                              r"\s*[|·•⋅»]\s*.*$|\s+(?:on|at|(?:last\s+)?updated|published)(?:\s|:).*$|"
                              r"\s+in\s+(?-i:[A-Z]\w+(?:\s+[A-Z]\w+)?)$|"  # "Stan Crock in Washington"
                              # WordPress's post data after the byline ("by A , Filed under: Celebrity, ...")
                              r"[\s,]+(?:filed\s+under|posted\s+in|categor(?:y|ies)|tags?)\s*:.*$|"
                              rf"\s+(?:{MONTH_NAMES})\.?\s+\d.*$|"  # "Jane Doe March 2, 2024"
                              rf"\s+[-–—]\s+(?:{MONTH_NAMES})\b.*$|"  # "Jason Shafrin - Oct" (its day on the next line)
                              rf"{_ROLE_AFTER}", re.I)
# No names: a date ("Jan 4", "5 November", "2024"), an e-mail address ("[at]" included), the outlet's words.
# A single digit is a user's ("ron1cne"); more digits are a date's or a count's ("15,911 silver badges"), but in a
# user's handle (``_HANDLE_RE``).
_NOT_A_NAME_RE = re.compile(rf"\d{{2}}|^(?:{MONTH_NAMES})\.?\s+\d|^\d{{1,2}}\.?\s+(?:{MONTH_NAMES})\b|"
                            r"@|\[at\]|\(at\)|https?:|www\.|\b(?:staff|news|reporters?|editors?|team|admin|"
                            r"contributors?|press|wire|desk|agency|correspondent|updated|published|posted|"
                            # the labels and links of an author box, found where its name was looked for ("View
                            # Profile", "Full Bio", "The Author", "Date", "Editorials"); "published" and
                            # "sponsored" in German ("Veröffentlicht am", "von Gesponserte Inhalte")
                            r"profile|bio|authors?|date|editorials?|veröffentlicht|publiziert|"
                            r"aktualisiert|gesponsert\w*|publié|publicado|pubblicato|"
                            r"sign\s+in|log\s+in|powered\s+by)\b|"  # a login link, a footer's "Powered by"
                            # a weekday alone, also short ("Sunday Oliseh" stays)
                            r"^(?:mon|tues|wednes|thurs|fri|satur|sun)day$|^(?:mon|tue|wed|thu|fri|sat|sun)\.?$|"
                            r"^(?:name|user|username|null|none|undefined|home)$|"  # a placeholder, a crumb
                            rf"^(?:{_DESK_WORDS})$", re.I)
# A user's handle: one word, letters first, digits last ("LingoLover94", "user447274", "JWoodguy13"; not "Jan2024").
_HANDLE_RE = re.compile(rf"(?!(?:{MONTH_NAMES})\.?\d)[^\W\d_]{{2,}}[^\W\d]*?\d+", re.I)
# Degrees and credentials after a name ("Dylan Bailey, MS, RD, FAND" in JSON-LD): split off by the comma, they
# stay with the name before them (as the site writes it), not names of their own.
_CREDENTIALS = frozenset({
    "ba", "bs", "bsc", "ma", "ms", "msc", "mba", "mph", "mfa", "phd", "md", "do", "dds", "dmd", "dvm", "jd", "llm",
    "edd", "psyd", "pharmd", "rn", "bsn", "msn", "dnp", "np", "pa", "pa-c", "rd", "rdn", "ld", "ldn", "cdces", "cde",
    "fand", "cssd", "cscs", "cpt", "cpa", "cfa", "cfp", "lcsw", "lmft", "facp", "faan", "facs", "mrcp", "frcp",
    "jr", "sr", "ii", "iii", "iv"})
# Words of a sentence that are in no name (lower case; name particles are ``_PARTICLES``): "By the end of this
# program, you will be able to", "... by people, we can create stronger communities".
_SENTENCE_WORDS = frozenset({
    "the", "a", "an", "of", "this", "that", "these", "those", "we", "you", "our", "your", "they", "their", "it",
    "its", "will", "can", "be", "is", "are", "was", "were", "to", "in", "at", "on", "for", "with", "from", "into",
    "about", "not", "have", "has", "had", "been", "do", "does", "did", "would", "should", "could", "may", "must",
    "when", "what", "how", "why", "which", "who", "if", "but", "or", "so", "than", "there", "here", "all", "more",
    "most", "very", "just", "also", "i", "me", "my", "he", "she", "him", "his", "her", "them", "us"})


def split_authors(text: str, declared: bool = False) -> list[str]:
    """Return the names in a byline's text ("By A and B", "A, B", "甲、乙"), less the parts that read as a sentence;
    none when the first part does, or (not ``declared``) most parts do: a "By ..." line of the page that is no
    byline. ``declared``: the text is an author's value in JSON-LD, microdata or a meta tag, whose later parts
    may be a role ("Benjamin Johnson, Sr. Director of Operations, Atlas Van Lines")."""
    text = " ".join(text.split())
    role = _ROLE_AFTER_RE.search(text) is not None  # "Stephen Shankland Staff Writer": no collective byline
    text = _AUTHOR_NOISE_RE.sub("", text)
    names: list[str] = []
    parts = [_UNCLOSED_RE.sub("", part.strip(" .:：-–—()[]/")) for part in _AUTHOR_SPLIT_RE.split(text)]
    parts = [part for part in parts if part]
    sentences = 0
    for part in parts:
        if part.lower().replace(".", "") in _CREDENTIALS:  # "Ph.D" as "PhD"
            if names:
                names[-1] += f", {part}"
        elif part is parts[0] and not role and _collective(part):
            names.append(part)
        elif _sentence(part):
            if part is parts[0]:
                return []
            sentences += 1
        elif len(part) <= 60 and (_HANDLE_RE.fullmatch(part) or not _NOT_A_NAME_RE.search(part)) \
                and len(part.split()) <= 5 \
                and not _ZH_NOT_A_NAME_RE.search(part) and not _prose(part):
            names.append(part)
    return [] if not declared and 2 * sentences > len(parts) else names


# A collective byline: a name of a team, a desk or a site's editors ("Podium Staff", "TOI Lifestyle Desk", "The
# Currency editors", "Team SimplyThrilled"). Read as the byline's first part only, and not in a byline with a role
# (``_ROLE_AFTER``): after a person's name the same words are the outlet ("Jane Doe, CNN Staff") or a role's
# ("Stephen Shankland Staff Writer"). A singular "Editor" or "Contributor" is a role, also without a comma ("Ben
# Silverman Games Editor").
_GROUP_WORDS = r"staff|team|desk|editors|editorial\s+(?:team|staff|board)|contributors|newsroom"
_COLLECTIVE_RE = re.compile(rf"(?:(?:the|our)\s+)?((?:[^\W\d_][\w.&'’-]*\s+){{1,3}})(?:{_GROUP_WORDS})|"
                            r"team\s+([^\W\d_][\w.&'’-]*)", re.I)


def _collective(part: str) -> bool:
    """Return whether a byline's first part is a collective byline (``_COLLECTIVE_RE``): its own words capitalised,
    none a word of a sentence."""
    match = _COLLECTIVE_RE.fullmatch(part) if len(part) <= 60 else None
    if not match:
        return False
    words = (match.group(1) or match.group(2)).split()
    return words[0][:1].isupper() and not any(word.lower() in _SENTENCE_WORDS for word in words)


def _sentence(part: str) -> bool:
    return any(word in _SENTENCE_WORDS or word.endswith(("n't", "n’t")) for word in part.split())


# A parenthesis left open by the byline's cut: "Edward M. Gomez ( Email", "Yalcin (Fehlpass.com".
_UNCLOSED_RE = re.compile(r"\s*\([^)]*$")


# Words of a sentence, not of a name: a lower-case word of three letters or more beside a capitalised one ("Learn
# about products", "In-home services are offered nationwide!"; names written all in lower case, "annette thurmon",
# and name particles stay), or a "!".
_PARTICLES = frozenset({"van", "von", "der", "den", "del", "della", "des", "dos", "das", "bin", "ibn", "ben", "al",
                        "la", "le", "de", "da", "di", "du"})


def _prose(part: str) -> bool:
    words = part.split()
    return "!" in part or (any(word[:1].isupper() for word in words) and any(
        len(word) >= 3 and word.isalpha() and word.islower() and word not in _PARTICLES for word in words))


def zh_authors(text: str) -> list[str]:
    """Return the authors of a Chinese byline: the names after the most author-like label (作者 before
    记者 before 编辑), else the name of a closing "（记者 某某）" or "（某某 北京报道）", else the names alone
    in parentheses that end the text ("（某某 某某）"), else an unlabelled byline ("[ 某某 ] 来源：", "网名 发表于
    2005-9-15")."""
    if not HAN_RE.search(text):  # every form above holds a Chinese character (most texts are in no Chinese)
        return []
    found: dict[str, list[str]] = {}
    for match in _ZH_AUTHOR_RE.finditer(text):
        parts = re.split(r"([ \u3000、，,]+)", match.group(2))  # names and their separators
        place_next = parts[-1].endswith(("报道", "电", "讯")) or text.startswith(("报道", "电", "讯"), match.end())
        if len(parts) > 1 and not parts[-2].strip() and place_next:
            del parts[-2:]  # "记者 某某 山东冠县报道", "北京电": the place, set apart by a space (names by 、)
        names = [name for name in (re.sub("(?:报道|摄|电|讯)$", "", part) for part in parts[::2])
                 if 2 <= len(name) <= 4 and not _ZH_NOT_A_NAME_RE.search(name)]
        if names:
            found.setdefault(match.group(1), names)
    for label in _ZH_LABELS:
        if found.get(label):
            return found[label]
    reported = _ZH_REPORTED_RE.search(text)
    if reported:
        return zh_names(reported.group(1) or reported.group(2))
    signed = _ZH_SIGNED_RE.search(text.rstrip().rsplit("\n", 1)[-1])
    if signed:
        return zh_names(signed.group(1))
    for pattern in (_ZH_BRACKETED_RE, _ZH_POSTED_RE):
        unlabelled = pattern.search(text)
        if unlabelled and _unlabelled_name(unlabelled.group(1)):
            return [unlabelled.group(1)]
    return []


def zh_posted_user(lines: Iterable[str]) -> list[str]:
    """Return the user of the first line of its own that reads "网名 发表于 2005-9-15 11:46:00" (a blog's footer
    under the post, after it the comments'), as a one-name list; [] without one."""
    posted = (_ZH_POSTED_LINE_RE.match(line.strip()) for line in lines if "发表于" in line)
    user = next((match.group(1) for match in posted if match), None)
    return [user] if user and _unlabelled_name(user) else []


def _unlabelled_name(name: str) -> bool:
    """Return whether a byline without a label holds a name: no word, Chinese or English, that is no name."""
    return not _ZH_NOT_A_NAME_RE.search(name) and not _NOT_A_NAME_RE.search(name)


def zh_lone_name(line: str) -> list[str]:
    """Return ``line`` as a one-name list when it is a Chinese name alone (two or three Han characters, no word
    that is no name): read on the line after an article's headline ("犬儒病(上) / 胡平 / ——当代中国的...")."""
    return [line] if _ZH_LONE_NAME_RE.fullmatch(line) and not _ZH_NOT_A_NAME_RE.search(line) else []


def zh_names(names: str) -> list[str]:
    """Return the names of a run of names set apart by spaces or 、, less the words that are no names."""
    return [name for name in re.split(r"[ \u3000、]+", names) if not _ZH_NOT_A_NAME_RE.search(name)]


def text_authors(text: str) -> list[str]:
    """Return the authors a page's extracted text names: a Chinese byline anywhere in it (papers often
    sign at the end: "（记者 某某）"), else an English "By ..." line among its first ``HEAD_LINES``."""
    names = zh_authors(text)
    if names:
        return names[:MAX_AUTHORS]
    for line in text.split("\n")[:HEAD_LINES]:
        by = EN_BY_RE.match(" ".join(line.split()))
        if by and len(line) <= BYLINE_MAX_CHARS:
            names = split_authors(by.group(1))
            if names:
                return names[:MAX_AUTHORS]
    return []


# News agencies, whose name after a reporter's is the story's source ("Jane Doe, AP"), as ``_letters`` writes them.
_WIRES = frozenset({"ap", "afp", "reuters", "dpa", "upi", "cp", "pa", "efe", "ansa", "kyodo", "xinhua", "apa", "sda",
                    "epd", "kna", "tass", "bloomberg", "ians", "pti", "aap", "bernama", "yonhap"})


def without_outlet(names: list[str], site_name: str | None, url: str | None) -> list[str]:
    """Return ``names`` less the site's own name or a news agency's where it follows a person's ("By Greg Botelho,
    CNN", JSON-LD authors "Manoj Jain", "The Commercial Appeal"; "Jane Doe, AP"): the outlet is no author beside a
    name. An outlet named alone stays: it is who the page says wrote it ("Swoogo", a personal blog's "Rick
    Steves"), and the golds keep it."""
    if len(names) < 2:
        return names
    outlets = _outlets(site_name, url) | _WIRES
    return [names[0], *(name for name in names[1:] if _letters(name) not in outlets)]


def outlet_address(names: list[str], site_name: str | None, url: str | None) -> list[str]:
    """Return the names of one declared author value less the outlet's address: a value that names the site first
    ("SPIEGEL ONLINE, Hamburg, Germany", "Süddeutsche.de GmbH, Munich, Germany") is the outlet, and its other parts
    are where it sits, not authors."""
    if len(names) < 2:
        return names
    return names[:1] if _letters(_COMPANY_RE.sub("", names[0])) in _outlets(site_name, url) else names


def _outlets(site_name: str | None, url: str | None) -> set[str]:
    """The outlet's names as ``_letters`` writes them: the site's name, its host, the host without its suffix."""
    host = (urlsplit(url).hostname or "") if url else ""
    host = host.removeprefix("www.")
    return {_letters(site_name or ""), _letters(host), _letters(host.rpartition(".")[0])} - {""}


# A company's legal form after its name ("Süddeutsche.de GmbH", "Example Media Inc."): the outlet all the same.
_COMPANY_RE = re.compile(r"[\s,]+(?:GmbH|AG|SE|KG|Inc|Ltd|LLC|Corp|plc|S\.?A|B\.?V|N\.?V)\.?$", re.IGNORECASE)


def _letters(text: str) -> str:
    """``text`` lower-cased, letters and digits only: "CBSNews.com" and "cbsnews.com" are one name."""
    return re.sub(r"[\W_]+", "", text.lower())
