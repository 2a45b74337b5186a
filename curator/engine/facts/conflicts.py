"""Facts that cannot both be true: pairs close in meaning that differ where it matters.

The embedding index finds the pairs (:meth:`FactIndex.pairs`); this module only judges them.
:func:`conflict_reason` says where two texts about the same subject disagree: a number with its
unit (a duration, a percentage, an amount of money, a count), a date, a time of day, a named
person or thing in the same role, a negation, an antonym, in English and in Chinese. Before
comparing, both texts are put in one form (number words and Chinese numerals as digits, "two
weeks" as fourteen days, "is not enabled" as "is disabled"), so a paraphrase is not a conflict.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from typing import Any

from curator.engine.corpus.facts import Fact, fact_words
from curator.engine.errors import CuratorError

# --- one form for both texts ------------------------------------------------------------------

_SMALL = {"zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
          "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14,
          "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19, "twenty": 20,
          "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90}
_SCALE = {"hundred": 100, "thousand": 1000, "million": 10**6, "billion": 10**9}
_NUMWORD = "|".join(sorted([*_SMALL, *_SCALE], key=len, reverse=True))
_NUMWORDS_RE = re.compile(rf"\b(?:{_NUMWORD})(?:(?:[\s-]+|\s+and\s+)(?:{_NUMWORD}))*\b", re.IGNORECASE)
_TIMES_WORDS = {"once": "1 times", "twice": "2 times", "thrice": "3 times"}
_CN_DIGIT = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7,
             "八": 8, "九": 9}
_CN_UNIT = {"十": 10, "百": 100, "千": 1000}
_CN_BIG = {"万": 10**4, "亿": 10**8}
#: What may follow a Chinese numeral for it to be read as a number (elsewhere 一 is "a", 十分 "very").
_CN_AFTER = "天日周年月点个名位次人小分秒倍台条件家岁元块%号星"
_NUMBER_WORDS = frozenset({*_SMALL, *_SCALE, *_TIMES_WORDS})
_RUN = re.compile(r"\w+")
_DIGIT = re.compile(r"\d")
_CN_NUM_RE = re.compile(rf"(百分之)([零〇一二两三四五六七八九十百千万亿]+)|([零〇一二两三四五六七八九十百千万亿]+)(?=[{_CN_AFTER}])")


def _words_to_number(words: str) -> int | None:
    total = current = 0
    seen = False
    for w in re.split(r"[\s-]+", words.lower()):
        if w == "and" or not w:
            continue
        if w in _SMALL:
            current += _SMALL[w]
        elif w == "hundred":
            current = max(current, 1) * 100
        else:
            total += max(current, 1) * _SCALE[w]
            current = 0
        seen = True
    return total + current if seen else None


def _cn_to_number(text: str) -> int:
    if not any(ch in _CN_UNIT or ch in _CN_BIG for ch in text):
        return int("".join(str(_CN_DIGIT[ch]) for ch in text))  # 二〇二四: digit by digit
    total = section = digit = 0
    for ch in text:
        if ch in _CN_DIGIT:
            digit = _CN_DIGIT[ch]
        elif ch in _CN_UNIT:
            section += (digit or 1) * _CN_UNIT[ch]
            digit = 0
        else:
            total += ((section + digit) or 1) * _CN_BIG[ch]
            section = digit = 0
    return total + section + digit


_LINK_RE = re.compile(r"!?\[\[([^\]|#]*)[^\]]*\]\]")


def _page_named(m: re.Match[str]) -> str:
    return m.group(1)  # (a function, not r"\1": no template to expand for each link)


def normalise(text: str) -> str:
    """``text`` in the form both sides are compared in (digits, ``%``, ``not`` spelt out)."""
    t = unicodedata.normalize("NFKC", text)
    # Each rewrite below is skipped when the text cannot hold what it rewrites (most texts hold
    # little of it). Only an ASCII text is judged by its lowercase: case-insensitive matching
    # also folds a few other letters onto ASCII ones ("ſ" onto "s"), and every rewrite keeps an
    # ASCII text ASCII.
    ascii = t.isascii()

    def may(*parts: str) -> bool:
        return not ascii or any(part in t.lower() for part in parts)

    if "[[" in t:
        t = _LINK_RE.sub(_page_named, t)  # a [[link]] reads as the page it names
    if "*" in t or "`" in t:
        t = re.sub(r"\*{1,3}|`+", "", t)  # emphasis and code marks
    if may("can"):
        t = re.sub(r"\b(can)'?t\b|\bcannot\b", "can not", t, flags=re.IGNORECASE)
    if may("won"):
        t = re.sub(r"\bwon'?t\b", "will not", t, flags=re.IGNORECASE)
    if "'" in t:
        t = re.sub(r"(\w)n't\b", r"\1 not", t, flags=re.IGNORECASE)
    if may("once", "twice", "thrice"):
        t = re.sub(r"\b(once|twice|thrice)\b", lambda m: _TIMES_WORDS[m.group(1).lower()], t, flags=re.IGNORECASE)

    def words(m: re.Match[str]) -> str:
        value = _words_to_number(m.group(0))
        return m.group(0) if value is None else str(value)

    # (a number word stands between \b's: a whole run of word characters)
    if not ascii or not _NUMBER_WORDS.isdisjoint(r.lower() for r in _RUN.findall(t)):
        t = _NUMWORDS_RE.sub(words, t)

    def cn(m: re.Match[str]) -> str:
        value = _cn_to_number(m.group(2) or m.group(3))
        return f"{value}%" if m.group(1) else str(value)

    if not ascii:
        t = _CN_NUM_RE.sub(cn, t)
        t = re.sub(r"百分之\s*(\d+(?:\.\d+)?)", r"\1%", t)
    if not _DIGIT.search(t):
        return t  # (what is left rewrites numbers)
    if may("per"):
        t = re.sub(r"(\d)\s*(?:percent|per cent)\b", r"\1%", t, flags=re.IGNORECASE)
    if "," in t:
        t = re.sub(r"\b(\d{1,3}(?:,\d{3})+)(?![\d,])", lambda m: m.group(1).replace(",", ""), t)
    mult = {"k": 1000, "thousand": 1000, "million": 10**6, "bn": 10**9, "billion": 10**9,
            "千": 1000, "万": 10**4, "亿": 10**8}

    def scaled(m: re.Match[str]) -> str:
        value = float(m.group(1) or m.group(3)) * mult[(m.group(2) or m.group(4)).lower()]
        return str(int(value)) if value.is_integer() else str(value)

    return re.sub(r"(\d+(?:\.\d+)?)\s*(k|thousand|million|bn|billion)\b|(\d+(?:\.\d+)?)(千|万|亿)", scaled, t,
                  flags=re.IGNORECASE)


# --- quantities -------------------------------------------------------------------------------

_MONTHS = {m: i for i, names in enumerate(
    [("january", "jan"), ("february", "feb"), ("march", "mar"), ("april", "apr"), ("may",), ("june", "jun"),
     ("july", "jul"), ("august", "aug"), ("september", "sep", "sept"), ("october", "oct"),
     ("november", "nov"), ("december", "dec")], start=1) for m in names}
_MON = "|".join(sorted(_MONTHS, key=len, reverse=True))
_ORD = r"(?:st|nd|rd|th)?"
_DATE_RES: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"(?<!\d)(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})(?!\d)"), "ymd"),
    (re.compile(r"(\d{4})\s*年\s*(\d{1,2})\s*月(?:\s*(\d{1,2})\s*[日号])?"), "ymd"),
    (re.compile(r"(?<![\d-])(\d{4})-(\d{2})()(?![\d-])"), "ymd"),
    (re.compile(rf"\b({_MON})\.?\s+(\d{{1,2}}){_ORD},?\s+(\d{{4}})\b", re.IGNORECASE), "mdy"),
    (re.compile(rf"\b(\d{{1,2}}){_ORD}\s+(?:of\s+)?({_MON})\.?,?\s+(\d{{4}})\b", re.IGNORECASE), "dmy"),
    (re.compile(rf"\b({_MON})\.?,?\s+(\d{{4}})\b", re.IGNORECASE), "my"),
    (re.compile(rf"\b({_MON})\.?\s+(\d{{1,2}}){_ORD}\b(?!:)", re.IGNORECASE), "md"),
    (re.compile(rf"\b(\d{{1,2}}){_ORD}\s+(?:of\s+)?({_MON})\b", re.IGNORECASE), "dm"),
    (re.compile(r"(?<!\d)(\d{1,2})\s*月\s*(\d{1,2})\s*[日号]"), "md"),
]
_TIME_RES = [
    re.compile(r"(?<![\d:])(\d{1,2}):(\d{2})(?::\d{2})?\s*(a\.?m\.?|p\.?m\.?)?(?![\d:])", re.IGNORECASE),
    re.compile(r"(?<![\d:])(\d{1,2})()\s*(a\.?m\.?|p\.?m\.?)(?![a-z])", re.IGNORECASE),
    re.compile(r"(上午|早上|凌晨|中午|下午|晚上)?\s*(\d{1,2})\s*[点時时](?:\s*(\d{1,2}|半)\s*分?)?"),
]
_CN_PATTERNS = frozenset(p for p in [*(p for p, _k in _DATE_RES), *_TIME_RES] if not p.pattern.isascii())
_MONTH_PATTERNS = frozenset(p for p, _k in _DATE_RES if _MON in p.pattern)
_SECONDS = {"second": 1, "sec": 1, "s": 1, "minute": 60, "min": 60, "hour": 3600, "hr": 3600, "h": 3600,
            "day": 86400, "d": 86400, "week": 604800, "wk": 604800, "month": 2592000, "year": 31536000,
            "yr": 31536000, "秒": 1, "秒钟": 1, "分钟": 60, "小时": 3600, "个小时": 3600, "天": 86400,
            "日": 86400, "周": 604800, "星期": 604800, "个星期": 604800, "个月": 2592000, "年": 31536000}
#: (no bare "m": minutes, metres and millions all write it)
_DUR_EN = (r"(?:business|working)\s+days?|seconds?|secs?|minutes?|mins?|hours?|hrs?|days?|weeks?|wks?"
           r"|months?|years?|yrs?|[shd](?![a-z])")
_DUR_CN = r"工作日|个工作日|秒钟|秒|分钟|个小时|小时|天|日|个星期|星期|周|个月|年"
_MONEY_PRE = re.compile(r"(?:([$€£¥￥])|\b(usd|eur|gbp|cny|rmb|us\$)\s*)$", re.IGNORECASE)
_MONEY_POST = re.compile(r"^\s*(usd|eur|gbp|cny|rmb|dollars?|euros?|pounds?|yuan|美元|欧元|英镑|元|块)",
                         re.IGNORECASE)
_CURRENCY = {"$": "usd", "us$": "usd", "dollar": "usd", "dollars": "usd", "美元": "usd", "€": "eur",
             "euro": "eur", "euros": "eur", "欧元": "eur", "£": "gbp", "pound": "gbp", "pounds": "gbp",
             "英镑": "gbp", "¥": "cny", "￥": "cny", "yuan": "cny", "元": "cny", "块": "cny", "rmb": "cny"}
_MEASURE = "个名位台条件家只次套份"
_NUMBER = re.compile(r"(?<![\w.])(\d+(?:\.\d+)*)|(?<=[^\x00-\x7f])(\d+(?:\.\d+)*)")


@dataclass(frozen=True, slots=True)
class Quantity:
    kind: str  # "date", "time", "duration", "percent", "money:usd", "count:<unit>", "number", ...
    value: object
    surface: str
    start: int
    end: int


def _date_value(kind: str, groups: tuple[str | None, ...]) -> str:
    g = [x or "" for x in groups]

    def mon(x: str) -> int:
        return _MONTHS[x.lower().rstrip(".")] if not x.isdigit() else int(x)

    if kind == "ymd":
        return f"{int(g[0]):04d}-{int(g[1]):02d}" + (f"-{int(g[2]):02d}" if g[2] else "")
    if kind == "mdy":
        return f"{int(g[2]):04d}-{mon(g[0]):02d}-{int(g[1]):02d}"
    if kind == "dmy":
        return f"{int(g[2]):04d}-{mon(g[1]):02d}-{int(g[0]):02d}"
    if kind == "my":
        return f"{int(g[1]):04d}-{mon(g[0]):02d}"
    if kind == "md":
        return f"--{mon(g[0]):02d}-{int(g[1]):02d}"
    return f"--{mon(g[1]):02d}-{int(g[0]):02d}"  # dm


def _time_value(m: re.Match[str]) -> int | None:
    g = m.groups()
    if m.re is _TIME_RES[2]:
        part, hour, minute = g
        h = int(hour)
        mins = 30 if minute == "半" else int(minute or 0)
        if (part in ("下午", "晚上") and h < 12) or (part == "中午" and h < 6):
            h += 12
    else:
        h, mins = int(g[0]), int(g[1] or 0)
        mer = (g[2] or "").lower().replace(".", "")
        if mer == "pm" and h < 12:
            h += 12
        elif mer == "am" and h == 12:
            h = 0
    return h * 60 + mins if h < 24 and mins < 60 else None


def _singular(word: str) -> str:
    w = word.lower()
    if len(w) > 4 and w.endswith("ies"):
        return w[:-3] + "y"
    if len(w) > 3 and w.endswith("s") and not w.endswith("ss"):
        return w[:-1]
    return w


#: After a number that labels an entry: a colon that opens what follows ("Copy note 31831: kept ...").
_LABEL_END = re.compile(r":(?:\s|$)")


def quantities(text: str) -> list[Quantity]:
    """Every date, time of day and number (with what it counts) of a :func:`normalise`\\ d text."""
    out: list[Quantity] = []
    if not _DIGIT.search(text):
        return out  # (every pattern below holds a digit)
    taken: list[tuple[int, int]] = []

    def free(a: int, b: int) -> bool:
        return all(b <= s or a >= e for s, e in taken)

    # An ASCII text skips the patterns of Chinese characters, and those of a month's name when it
    # has none (a name stands between \b's, a whole run; case-insensitive matching folds a few
    # non-ASCII letters onto ASCII ones, so only an ASCII text is judged by its lowercase).
    ascii = text.isascii()
    months = not ascii or not _MONTHS.keys().isdisjoint(r.lower() for r in _RUN.findall(text))
    for pattern, kind in _DATE_RES:
        if ascii and (pattern in _CN_PATTERNS or (not months and pattern in _MONTH_PATTERNS)):
            continue
        for m in pattern.finditer(text):
            if free(m.start(), m.end()):
                taken.append(m.span())
                out.append(Quantity("date", _date_value(kind, m.groups()), m.group(0).strip(), *m.span()))
    for pattern in _TIME_RES:
        if ascii and pattern in _CN_PATTERNS:
            continue
        for m in pattern.finditer(text):
            minutes = _time_value(m)
            if minutes is not None and free(m.start(), m.end()):
                taken.append(m.span())
                out.append(Quantity("time", minutes, m.group(0).strip(), *m.span()))
    for m in _NUMBER.finditer(text):
        start, end = m.span()
        if not free(start, end):
            continue
        raw = m.group(1) or m.group(2)
        after, before = text[end:], text[:start]
        if raw.count(".") > 1:
            out.append(Quantity("version", raw, raw, start, end))
            continue
        value = float(raw)
        if after.lstrip().startswith("%"):
            stop = end + after.index("%") + 1
            out.append(Quantity("percent", value, text[start:stop], start, stop))
            continue
        pre = _MONEY_PRE.search(before)
        post = _MONEY_POST.match(after)
        if pre or post:
            cur = (pre.group(1) or pre.group(2)) if pre else post.group(1) if post else ""
            s = pre.start() if pre else start
            e = end + post.end() if post else end
            out.append(Quantity(f"money:{_CURRENCY.get(cur.lower(), cur.lower())}", value, text[s:e].strip(), s, e))
            continue
        dur = re.match(rf"\s*(?:({_DUR_EN})\b|({_DUR_CN}))", after, re.IGNORECASE)
        if dur and not (dur.group(2) == "年" and 1900 <= value < 2200):
            unit = (dur.group(1) or dur.group(2)).lower()
            e = end + dur.end()
            if "business" in unit or "working" in unit or "工作日" in unit:
                out.append(Quantity("duration:workday", value, text[start:e], start, e))
            else:
                key = unit if unit in _SECONDS else _singular(unit)
                out.append(Quantity("duration", value * _SECONDS[key], text[start:e], start, e))
            continue
        if raw.isdigit() and (before.endswith("#") or _LABEL_END.match(after)):
            continue  # a number naming an entry ("Note 12: ...", "ticket #4512") labels, never measures
        if 1900 <= value < 2200 and raw.isdigit() and not re.match(r"\s*[A-Za-z]", after):
            e = end + (1 if after.startswith("年") else 0)
            out.append(Quantity("date", f"{int(value):04d}", text[start:e], start, e))
            continue
        word = re.match(r"\s*([A-Za-z][A-Za-z-]*)", after)
        cjk = re.match(rf"\s*([{_MEASURE}]?[^\x00-\x7f\s\d，。、；：,.;:])", after)
        if word:
            out.append(Quantity(f"count:{_singular(word.group(1))}", value, text[start:end + word.end()],
                                start, end + word.end()))
        elif cjk:
            out.append(Quantity(f"count:{cjk.group(1)}", value, text[start:end + cjk.end()], start,
                                end + cjk.end()))
        else:
            # a bare number is about what the words before it name ("limit is 5", "Python 3.11")
            prev = re.search(r"([^\W\d_]+)[^\w]*$", before)
            out.append(Quantity(f"number:{prev.group(1).lower() if prev else ''}", value, raw, start, end))
    out.sort(key=lambda q: q.start)
    return out


# --- words, negation, antonyms ----------------------------------------------------------------

_STOP = frozenset(["a", "an", "the", "is", "are", "was", "were", "be", "been", "being", "of", "to", "in", "on", "at", "by", "for", "with", "from", "and", "or", "as", "it", "its", "this", "that", "these", "those", "has", "have", "had", "will", "would", "shall", "should", "can", "could", "may", "might", "must", "do", "does", "did", "than", "then", "there", "their", "our", "your", "we", "you", "they", "he", "she", "his", "her", "所", "的", "了", "是", "在", "为", "和", "与", "及", "或", "将", "被", "把", "也", "都", "就", "这", "那", "其", "之", "而", "于", "以"])
_NEG_EN = frozenset({"not", "no", "never", "none", "nobody", "nothing", "neither", "nor"})
_ANTONYMS_EN = [("enabled", "disabled"), ("enable", "disable"), ("enables", "disables"), ("before", "after"),
                ("increase", "decrease"), ("increased", "decreased"), ("increases", "decreases"),
                ("allowed", "forbidden"), ("allowed", "prohibited"), ("permitted", "prohibited"),
                ("allow", "forbid"), ("allows", "forbids"), ("required", "optional"),
                ("mandatory", "optional"), ("true", "false"), ("public", "private"), ("open", "closed"),
                ("accepted", "rejected"), ("accept", "reject"), ("accepts", "rejects"),
                ("include", "exclude"), ("included", "excluded"), ("includes", "excludes"),
                ("minimum", "maximum"), ("more", "less"), ("more", "fewer"), ("higher", "lower"),
                ("faster", "slower"), ("above", "below"), ("success", "failure"), ("succeeded", "failed"),
                ("supported", "unsupported"), ("valid", "invalid"), ("online", "offline"),
                ("internal", "external"), ("synchronous", "asynchronous"), ("synchronously", "asynchronously"), ("sync", "async"),
                ("inclusive", "exclusive"), ("earliest", "latest"), ("passed", "failed"),
                ("visible", "hidden"), ("active", "inactive"), ("available", "unavailable"),
                ("encrypted", "unencrypted"), ("ascending", "descending"), ("always", "never"),
                ("with", "without"), ("can", "cannot"), ("safe", "unsafe"), ("secure", "insecure"),
                ("on", "off"), ("start", "stop"), ("starts", "stops"), ("win", "lose")]
_ANTONYMS_CN = [("启用", "禁用"), ("开启", "关闭"), ("打开", "关闭"), ("之前", "之后"), ("以前", "以后"),
                ("增加", "减少"), ("提高", "降低"), ("上升", "下降"), ("允许", "禁止"), ("必须", "可选"),
                ("必填", "选填"), ("必需", "可选"), ("公开", "私有"), ("同步", "异步"), ("成功", "失败"),
                ("最多", "最少"), ("最大", "最小"), ("最高", "最低"), ("有效", "无效"), ("在线", "离线"),
                ("升序", "降序"), ("接受", "拒绝"), ("包含", "排除"), ("可见", "隐藏"), ("早于", "晚于"),
                ("支持", "不支持"), ("可以", "不可以"), ("能", "不能")]
_ANTI_EN: dict[str, str] = {}
for _a, _b in _ANTONYMS_EN:
    _ANTI_EN.setdefault(_b, _a)  # "optional" is the opposite of "required" first
_ANTI_CN = sorted(((b, a) for a, b in _ANTONYMS_CN), key=lambda p: -len(p[0]))
#: Words with a negation character that negate nothing ("different", "but", "future", "very").
_CN_NOT_NEG = ["不得不", "不同", "不过", "不断", "不仅", "不少", "不管", "无论", "非常", "未来", "并且"]
_CN_NEG = re.compile(r"没有|并非|不|没|未|无|非|勿|别")
_TOKEN = re.compile(r"[A-Za-z][A-Za-z'-]*|\d+(?:\.\d+)*|[^\x00-\x7f\s\W]|[^\x00-\x7f\s]", re.UNICODE)
_NEG_MARK = "\x00"


@dataclass(slots=True)
class _Polar:
    tokens: list[str]  # lowercase words and CJK characters, negations and antonyms folded away
    negated: bool  # an odd number of negations (an antonym counts as one)
    #: the words that flipped, as written, with the word they are the opposite of (None: a negation)
    flips: list[tuple[str, str | None]] = field(default_factory=list)


def _polar(text: str) -> _Polar:
    t = text
    for i, word in enumerate(_CN_NOT_NEG):
        t = t.replace(word, f" \x01{i}\x01 ")
    flips: list[tuple[str, str | None]] = []
    for word, canon in _ANTI_CN:
        if word in t:
            flips.append((word, canon))
            t = t.replace(word, f"{canon}{_NEG_MARK}")
    t = re.sub(r"\bnot only\b", " ", t, flags=re.IGNORECASE)
    t = re.sub(r"\bno longer\b", " not ", t, flags=re.IGNORECASE)

    def cn_neg(m: re.Match[str]) -> str:
        flips.append((m.group(0), None))
        return _NEG_MARK

    t = _CN_NEG.sub(cn_neg, t)
    t = re.sub(r"\x01(\d+)\x01", lambda m: _CN_NOT_NEG[int(m.group(1))], t)
    tokens: list[str] = []
    negs = t.count(_NEG_MARK)
    for tok in _TOKEN.findall(t.replace(_NEG_MARK, " ")):
        low = tok.lower()
        if low in _NEG_EN:
            negs += 1
            flips.append((tok, None))
        elif low in _ANTI_EN:
            negs += 1
            flips.append((tok, _ANTI_EN[low]))
            tokens.append(_ANTI_EN[low])
        else:
            tokens.append(low)
    return _Polar(tokens, negs % 2 == 1, flips)


def _content(tokens: Iterable[str]) -> list[str]:
    return [_singular(t) for t in tokens if t not in _STOP and not t.isdigit() and t.strip()]


def _overlap(sa: frozenset[str], sb: frozenset[str]) -> float:
    return len(sa & sb) / min(len(sa), len(sb)) if sa and sb else 0.0


def _counted(tokens: Sequence[str]) -> frozenset[str]:
    """Each token marked with how many times it came before: the intersection of two of these is
    the multiset of tokens two texts share, an upper bound of what a SequenceMatcher finds equal."""
    distinct = frozenset(tokens)
    if len(distinct) == len(tokens):
        return distinct  # (most texts: no token twice)
    times: dict[str, int] = {}
    out = []
    for t in tokens:
        n = times.get(t, 0)
        times[t] = n + 1
        out.append(t + "\x00" * n)  # (no token holds a NUL)
    return frozenset(out)


def _without(text: str, spans: Iterable[Quantity]) -> str:
    for q in sorted(spans, key=lambda q: -q.start):
        text = text[:q.start] + " " + text[q.end:]
    return text


# --- names in the same role -------------------------------------------------------------------

_SURNAMES = set("王李张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗郑梁谢宋唐许韩冯邓曹彭曾肖田董袁潘于蒋蔡余杜叶程苏魏吕丁"
                "任沈姚卢姜崔钟谭陆汪范金石廖贾夏韦付方白邹孟熊秦邱江尹薛闫段雷侯龙史陶黎贺顾毛郝龚邵万钱严覃武戴莫孔向汤")
_WORD_OR_CHAR = re.compile(r"[A-Za-z][A-Za-z'-]*|\d+(?:\.\d+)*|[^\x00-\x7f\s\W]")


@dataclass(frozen=True, slots=True)
class _Words:
    """A normalised text's words and CJK characters, as :func:`_name_reason` compares them."""

    written: tuple[str, ...]
    lower: tuple[str, ...]
    counted: frozenset[str]  # (see _counted)
    #: a token a name could start with: a replaced span is a name only if both texts have one
    named: bool
    distinct: frozenset[str]  # the lowercase tokens
    #: the lowercase tokens that could be in no span _name_reason lets differ (neither a stop word
    #: nor a possible name): one missing from the other text ends the comparison
    plain: frozenset[str]


def _words(norm: str) -> _Words:
    written = tuple(_WORD_OR_CHAR.findall(norm))
    # (an ASCII text's tokens do not depend on case; elsewhere lowercasing may change a length)
    lower = tuple(_WORD_OR_CHAR.findall(norm.lower())) if norm.isascii() else tuple(t.lower() for t in written)
    kinds = set(written)
    capitalised = {t for t in kinds if t[:1].isupper() and t.isascii() and t.isalpha()}
    # (a sentence's first word is capitalised whatever it is: it alone, once, names nothing)
    named = ((bool(capitalised) and (capitalised != {written[0]} or written.count(written[0]) > 1))
             or not _SURNAMES.isdisjoint(kinds))
    plain = frozenset({t.lower() for t in kinds - capitalised if t.isascii()} - _STOP)
    return _Words(written, lower, _counted(lower), named, frozenset(lower), plain)


def _name_reason(wa: _Words, wb: _Words) -> str | None:
    if not (wa.named and wb.named):
        return None  # (see _Words.named)
    la, lb = wa.lower, wb.lower
    # The words both share bound what the matcher can find equal: most pairs stop here, cheaply.
    longest = max(len(la), len(lb))
    if min(len(la), len(lb)) < 0.6 * longest:
        return None
    if not (wa.plain <= wb.distinct and wb.plain <= wa.distinct):
        return None  # (see _Words.plain)
    shared = len(wa.counted & wb.counted)
    if shared < 3 or shared < 0.6 * longest:
        return None
    ta, tb = wa.written, wb.written
    sm = SequenceMatcher(None, la, lb, autojunk=False)
    equal = sum(block.size for block in sm.get_matching_blocks())
    if equal < 3 or equal < 0.6 * longest:
        return None
    found: list[str] = []
    for tag, i1, i2, j1, j2 in sm.get_opcodes():
        if tag == "equal":
            continue
        sa, sb = ta[i1:i2], tb[j1:j2]
        if tag != "replace":
            if all(t.lower() in _STOP for t in sa + sb):
                continue
            return None
        if _is_name(sa, i1) and _is_name(sb, j1):
            found.append(f"{' '.join(sa)} vs {' '.join(sb)}")
        elif _is_cn_name(sa) and _is_cn_name(sb):
            found.append(f"{''.join(sa)} vs {''.join(sb)}")
        else:
            return None
    return "; ".join(found) or None


def _is_name(tokens: Sequence[str], at: int) -> bool:
    if not tokens or not all(t[:1].isupper() and t.isascii() and t.isalpha() for t in tokens):
        return False
    return at > 0 or len(tokens) > 1  # a sentence's first word is capitalised whatever it is


def _is_cn_name(chars: Sequence[str]) -> bool:
    return 2 <= len(chars) <= 3 and chars[0] in _SURNAMES and all(not c.isascii() for c in chars)


# --- the reason -------------------------------------------------------------------------------

#: Names the rules below: the fact index remembers the reasons it found for whole-wiki pairs under
#: this version, so a change to the rules must change it (or old answers would be kept).
REASONS_VERSION = 3
#: How much of the rest two texts must share for a differing number to be about the same subject
#: (overlap coefficient of their content words, numbers left out).
SAME_SUBJECT = 0.6
#: How alike two texts must be, negations and antonyms folded, for opposite polarity to conflict.
SAME_CLAIM = 0.8


def _is_stamp(q: Quantity, text: str) -> bool:
    """A date that opens the fact or stands in parentheses dates the entry (a log line, minutes,
    a status): it is when the fact was written down, not what it says."""
    if q.kind != "date":
        return False
    if not re.search(r"[^\W_]", text[:q.start]):
        return True
    return text[:q.start].rstrip().endswith("(") and text[q.end:].lstrip().startswith(")")


@dataclass(frozen=True, slots=True)
class _Seen:
    """A text's quantities, as every pair that reads a text compares them first."""

    norm: str
    found: Sequence[Quantity]  # all of them
    quantities: tuple[Quantity, ...]  # its stamps left out (see _is_stamp)
    kinds: dict[str, frozenset[object]]  # the values of those, by kind
    stamps: frozenset[object]  # the dates of its stamps


_NOTHING: frozenset[object] = frozenset()
_NO_KINDS: dict[str, frozenset[object]] = {}  # (never changed)


def _read(norm: str) -> _Seen:
    """The quantities of a normalised text (:func:`normalise`)."""
    qs = quantities(norm)
    stamps = [q for q in qs if _is_stamp(q, norm)]
    kept = tuple(q for q in qs if q not in stamps)
    kinds: dict[str, set[object]] = {}
    for q in kept:
        kinds.setdefault(q.kind, set()).add(q.value)
    if not qs:  # (most texts: nothing of their own kept, one object less for the collector to visit)
        return _Seen(norm, (), (), _NO_KINDS, _NOTHING)
    return _Seen(norm, qs, kept, {k: frozenset(v) for k, v in kinds.items()},
                 frozenset(q.value for q in stamps) if stamps else _NOTHING)


_FLIP_EN = frozenset({*_NEG_EN, *_ANTI_EN})
_LETTERS = re.compile(r"[A-Za-z]+")


def _may_flip(norm: str) -> bool:
    """Whether _polar could find a negation or an opposite in ``norm``: an English one is a token
    of letters only, so a whole run of letters (the tokens run over letters, "'" and "-")."""
    return not norm.isascii() or not _FLIP_EN.isdisjoint(r.lower() for r in _LETTERS.findall(norm))


class _Text:
    """One text as :func:`conflict_reason` compares it, read once however many pairs it is in:
    the cheap first look at once, each further part when a pair first needs it (most pairs of a
    big wiki stop at the first look, most of the rest before the words are compared)."""

    __slots__ = ("_claim", "_content", "_negated", "_norm", "_polar", "_seen", "_words", "material", "reference",
                 "text")

    def __init__(self, text: str) -> None:
        self.text = text
        self.material = _material(text)
        self.reference = _reference_line(text)
        self._norm: str | None = None
        self._seen: _Seen | None = None
        self._content: frozenset[str] | None = None
        self._words: _Words | None = None
        self._polar: _Polar | None = None
        self._negated: bool | None = None
        self._claim: tuple[tuple[str, ...], frozenset[str]] | None = None

    @property
    def norm(self) -> str:
        if self._norm is None:
            self._norm = normalise(self.text)
        return self._norm

    @property
    def seen(self) -> _Seen:
        """Its quantities (read only for a pair of texts that both hold a number)."""
        if self._seen is None:
            self._seen = _read(self.norm)
        return self._seen

    @property
    def content(self) -> frozenset[str]:
        """Its content words, quantities left out."""
        if self._content is None:
            seen = self.seen
            rest = _polar(_without(seen.norm, seen.found)) if seen.found else self.polar
            self._content = frozenset(_content(rest.tokens))
        return self._content

    @property
    def words(self) -> _Words:
        if self._words is None:
            self._words = _words(self.norm)
        return self._words

    @property
    def negated(self) -> bool:
        """:attr:`_Polar.negated`, without reading the polarity of a text that holds no word of it."""
        if self._negated is None:
            self._negated = _may_flip(self.norm) and self.polar.negated
        return self._negated

    @property
    def polar(self) -> _Polar:
        if self._polar is None:
            self._polar = _polar(self.norm)
        return self._polar

    @property
    def claim(self) -> tuple[tuple[str, ...], frozenset[str]]:
        """The content words of :attr:`polar` (negations and antonyms folded), and those _counted."""
        if self._claim is None:
            words = tuple(_content(self.polar.tokens))
            self._claim = (words, _counted(words))
        return self._claim


#: One small record per text read, for every pair it is in (see forget_texts).
_TEXTS: dict[str, _Text] = {}
_KEEP = 1 << 18  # every text of a big wiki's whole-wiki run


def _text(text: str) -> _Text:
    found = _TEXTS.get(text)
    if found is None:
        if len(_TEXTS) >= _KEEP:
            _TEXTS.clear()  # (a bound for a long-lived process that never forgets)
        found = _TEXTS[text] = _Text(text)
    return found


def forget_texts() -> None:
    """Drop what :func:`conflict_reason` keeps of the texts it read (after a whole-wiki run)."""
    _TEXTS.clear()


_FLIP_WORDS = frozenset({*_NEG_EN, *_ANTI_EN, "cannot", "longer"})
# The English words _material looks for stand between \b's, so each is a whole run of word
# characters (_RUN): a set look-up per run instead of a long alternation tried at every character.
# (case-insensitive matching folds a few non-ASCII letters onto ASCII ones, "ſ" onto "s": a run
# with any non-ASCII character is matched the patterns' way)
_WORD_RES = [re.compile(rf"(?:{'|'.join(sorted(words, key=len, reverse=True))})", re.IGNORECASE)
             for words in (_NUMBER_WORDS, _FLIP_WORDS)]
_NT_RE = re.compile(r"n't\b", re.IGNORECASE)
_CN_FLIP_RE = re.compile(f"{_CN_NEG.pattern}|" + "|".join(re.escape(w) for w, _c in _ANTI_CN))
#: a capitalised word other than the first (a sentence's first word is capitalised whatever it is)
_NAMEISH = re.compile(rf"(?<=.)\b[A-Z]|[{''.join(sorted(_SURNAMES))}]", re.DOTALL)


def _material(text: str) -> tuple[bool, bool, bool]:
    """What a text holds that a conflict could turn on, read cheaply from the raw text and never
    missing what :func:`_read` would find: (a number of any kind, a negation or an opposite, a
    capitalised word or a Chinese surname)."""
    number = bool(_DIGIT.search(text))
    flip = "'" in text and bool(_NT_RE.search(text))
    runs = set(_RUN.findall(text))
    if text.isascii():
        low = {r.lower() for r in runs}
        number = number or not _NUMBER_WORDS.isdisjoint(low)
        flip = flip or not _FLIP_WORDS.isdisjoint(low)
    else:
        number = number or bool(_CN_NUM_RE.search(text))
        flip = flip or bool(_CN_FLIP_RE.search(text))
        for r in runs:
            if number and flip:
                break
            if r.isascii():
                low_r = r.lower()
                number = number or low_r in _NUMBER_WORDS
                flip = flip or low_r in _FLIP_WORDS
            else:
                number = number or bool(_WORD_RES[0].fullmatch(r))
                flip = flip or bool(_WORD_RES[1].fullmatch(r))
    return number, flip, bool(_NAMEISH.search(text))


#: Words of a line that only points to pages ("See [[X]].", "Mentioned in [[X]]", "Related: [[X]]",
#: "To write: [[X]]"): such a line claims nothing, and two of them pointing to different pages are
#: two references, not a disagreement (on an agent-kept wiki they were most of the "conflicts").
_REFERENCE_WORDS = frozenset({"see", "also", "mentioned", "related", "write", "cf", "compare", "source", "sources",
                              "via", "link", "links", "backlink", "backlinks", "more", "details", "reference",
                              "references", "next", "previous", "prev", "up", "parent", "index", "todo", "under"})
_PATHISH = re.compile(r"\S*/\S*")


def _reference_line(text: str) -> bool:
    """Whether ``text`` only points to pages: a [[link]], and outside its links and paths nothing
    but words of pointing (:data:`_REFERENCE_WORDS`), small words and punctuation, no number."""
    if "[[" not in text:
        return False
    rest = _PATHISH.sub(" ", _LINK_RE.sub(" ", text))
    if not rest.isascii() and any(ch.isalnum() for ch in rest if not ch.isascii()):
        return False  # (words of another script: read as a claim)
    return not _DIGIT.search(rest) and all(w in _STOP or w in _REFERENCE_WORDS
                                           for w in (r.lower() for r in _LETTERS.findall(rest)))


def conflict_reason(a: str, b: str) -> str | None:
    """Where ``a`` and ``b`` disagree (``"30 days vs 14 days"``, ``"enabled vs disabled"``), or
    None when nothing that matters differs (a paraphrase, one saying more than the other, two
    statements about different subjects, or a line that only points to pages)."""
    ta, tb = _TEXTS.get(a) or _text(a), _TEXTS.get(b) or _text(b)
    if ta.reference or tb.reference:
        return None
    (num_a, flip_a, name_a), (num_b, flip_b, name_b) = ta.material, tb.material
    if not ((num_a and num_b) or flip_a or flip_b or (name_a and name_b)):
        return None  # (most pairs of a big wiki: no reading of either text needed)
    # (a stamp and a quantity are numbers: without one on each side neither check can find anything,
    # and most pairs of a big wiki skip reading quantities)
    if num_a and num_b:
        sa, sb = ta.seen, tb.seen
        if sa.stamps and sb.stamps and not sa.stamps & sb.stamps:
            return None  # entries of a series (a log, minutes, measurements): each true at its own date
        qa, qb = sa.quantities, sb.quantities
        if qa and qb and _overlap(ta.content, tb.content) >= SAME_SUBJECT:
            for q in qa:
                values_b = sb.kinds.get(q.kind)
                if values_b and q.value not in values_b:
                    values_a = sa.kinds[q.kind]
                    if values_b - values_a:
                        other = next(x for x in qb if x.kind == q.kind and x.value not in values_a)
                        return f"{q.surface} vs {other.surface}"
    names = _name_reason(ta.words, tb.words)
    if names:
        return names
    if ta.negated != tb.negated:
        pa, pb = ta.polar, tb.polar
        (ca, counted_a), (cb, counted_b) = ta.claim, tb.claim
        # (the ratio's bound from the words both share, as SequenceMatcher.quick_ratio reckons it)
        total = len(ca) + len(cb)
        if total and 2.0 * len(counted_a & counted_b) / total < SAME_CLAIM:
            return None
        if SequenceMatcher(None, ca, cb, autojunk=False).ratio() >= SAME_CLAIM:
            return _polarity_words(pa, pb)
    return None


def another_fact_in_the_same_words(a: str, b: str) -> bool:
    """Whether ``a`` and ``b`` are two facts however close their meaning: they disagree where it
    matters (:func:`conflict_reason`), or one is the other with a word or two of substance put in
    another's place ("ann recorded the payout" / "bob recorded the payout": the frame is shared,
    the fact is the filler). The write door asks this before calling a close meaning a duplicate:
    a wrong duplicate loses a fact, a missed one only repeats it."""
    if conflict_reason(a, b) is not None:
        return True
    ta = [t.lower() for t in _WORD_OR_CHAR.findall(normalise(a))]
    tb = [t.lower() for t in _WORD_OR_CHAR.findall(normalise(b))]
    matcher = SequenceMatcher(None, ta, tb, autojunk=False)
    changed = [(ta[i1:i2], tb[j1:j2]) for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal"]
    if not changed or matcher.ratio() < 0.8:
        return False  # the same words, or a rewording (a paraphrase keeps less of the sentence)
    return any(tag == "replace" and [t for t in ta[i1:i2] if t not in _STOP] and [t for t in tb[j1:j2] if t not in _STOP]
               and len(ta[i1:i2]) <= 2 and len(tb[j1:j2]) <= 2
               for tag, i1, i2, j1, j2 in matcher.get_opcodes())


def _polarity_words(pa: _Polar, pb: _Polar) -> str:
    fa = [f for f in pa.flips if f[0] not in {x[0] for x in pb.flips}]
    fb = [f for f in pb.flips if f[0] not in {x[0] for x in pa.flips}]
    if fa and fb:
        return f"{fa[0][0]} vs {fb[0][0]}"
    word, opposite = (fa or fb)[0] if fa or fb else ("not", None)
    if opposite is None:
        return f"negated ({word}) vs affirmed" if fa else f"affirmed vs negated ({word})"
    return f"{word} vs {opposite}" if fa else f"{opposite} vs {word}"


# --- conflicts --------------------------------------------------------------------------------

def normalised_fact(text: str) -> str:
    """A fact's text as decisions remember it: its words as a reader sees them, lowercase."""
    return " ".join(fact_words(text))


def decision_key(a: str, b: str) -> tuple[str, str]:
    """The order-independent key of two facts' texts (what a "both are true" decision names)."""
    x, y = normalised_fact(a), normalised_fact(b)
    return (x, y) if x <= y else (y, x)


def fact_json(fact: Fact) -> dict[str, Any]:
    return {"path": fact.path, "line": fact.line, "text": fact.text, "added": fact.added, "key": fact.key}


@dataclass(frozen=True, slots=True)
class Conflict:
    """Two facts that cannot both be true: ``a`` and ``b`` (1 and 2 of ``facts resolve``)."""

    a: Fact
    b: Fact
    score: float
    reason: str
    verdict: dict[str, str] | None = None  # the judge's, when asked: shown, never applied
    _id: str | None = field(default=None, init=False, compare=False, hash=False, repr=False)  # (worked out once)

    @property
    def id(self) -> str:
        """Stable while both facts keep their words (either order)."""
        if self._id is None:
            keys = sorted((self.a.key, self.b.key))
            object.__setattr__(self, "_id", hashlib.sha1("\n".join(keys).encode()).hexdigest()[:12])
        assert self._id is not None
        return self._id

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "score": round(self.score, 4), "reason": self.reason,
                               "facts": [fact_json(self.a), fact_json(self.b)]}
        if self.verdict is not None:
            out["judge"] = dict(self.verdict)
        return out


def find_conflicts(pairs: Iterable[tuple[Fact, Fact, float]],
                   decided: Collection[tuple[str, str]] = ()) -> list[Conflict]:
    """The pairs (close in meaning, from elsewhere) that disagree where it matters, best score
    first; a pair whose texts are ``decided`` (:func:`decision_key`: both true) is left out."""
    return reasoned_conflicts(((a, b, score, conflict_reason(a.text, b.text)) for a, b, score in pairs), decided)


def reasoned_conflicts(pairs: Iterable[tuple[Fact, Fact, float, str | None]],
                       decided: Collection[tuple[str, str]] = ()) -> list[Conflict]:
    """:func:`find_conflicts` of pairs whose :func:`conflict_reason` is known already (None: they
    do not conflict), such as the ones the fact index remembers for the whole wiki."""
    # (a whole-wiki run may give hundreds of thousands: facts are told apart by page and line here,
    # and two on one page are one fact when their keys, worked out once per fact, agree)
    out: dict[tuple[str, int, str, int], Conflict] = {}
    for a, b, score, reason in pairs:
        if reason is None or (a.path == b.path and (a.text == b.text or a.key == b.key)) or (decided and decision_key(a.text, b.text) in decided):
            continue
        key = (a.path, a.line, b.path, b.line) if (a.path, a.line, a.text) <= (b.path, b.line, b.text) \
            else (b.path, b.line, a.path, a.line)
        found = out.get(key)
        if found is None or found.score < score:
            out[key] = Conflict(a, b, float(score), reason)
    return sorted(out.values(), key=lambda c: (-c.score, c.a.path, c.a.line, c.b.path, c.b.line))


def conflict_by_id(conflicts: Iterable[Conflict], ref: str) -> Conflict:
    """The conflict whose id is or starts with ``ref`` (as ``facts resolve ID`` names it); a
    one-line :class:`CuratorError` when none or several match."""
    ref = ref.strip().lower()
    found = [c for c in conflicts if ref and c.id.startswith(ref)]
    if len(found) == 1:
        return found[0]
    if not found:
        raise CuratorError(f"no conflict {ref!r}: list them again with 'curator facts conflicts' (an id "
                           "changes when either fact's words change, and a decided pair is no longer listed)")
    raise CuratorError(f"{ref!r} names {len(found)} conflicts; give more of the id")
