"""Grading pasted text for auto-filing, and the secret / prompt-injection scan (docs/design.md §10).

Everything here is deterministic and reads only the text: the same text always gets the same
score, signals and type, so an agent's filing can be explained and tests can pin it.

Exclusions (never filed): fewer than 80 non-space characters, a short question (under 200
characters ending in a question mark), or a scan hit. Otherwise the score is the sum of the
signals below; >= 65 files the page, 30-64 is the grey band (held for review), < 30 is not filed.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import asdict, dataclass, field
from typing import Any

FILE_THRESHOLD = 65
REVIEW_THRESHOLD = 30
MIN_CHARS = 80
SHORT_QUESTION_CHARS = 200
DOC_TYPES: tuple[str, ...] = ("charter", "sop", "spec", "policy", "reference")

FILE = "file"
REVIEW = "review"
NOT_KNOWLEDGE = "not_knowledge"
BLOCKED = "blocked"

# --- scan --------------------------------------------------------------------------------

#: (name, pattern) of credentials that must never land in a wiki page.
_SECRETS: tuple[tuple[str, re.Pattern[str]], ...] = tuple((n, re.compile(p)) for n, p in (
    ("private key", r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"),
    ("AWS access key", r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),
    ("GitHub token", r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})"),
    ("GitLab token", r"\bglpat-[A-Za-z0-9_-]{20,}"),
    ("Slack token", r"\bxox[abposr]-[A-Za-z0-9-]{10,}"),
    ("Google API key", r"\bAIza[0-9A-Za-z_-]{35}\b"),
    ("Stripe key", r"\b(?:sk|rk)_live_[0-9A-Za-z]{16,}"),
    ("API key", r"\bsk-(?:ant-|proj-)?[A-Za-z0-9_-]{20,}"),
    ("JSON web token", r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),
    ("credentials in a URL", r"\b[a-z][a-z0-9+.-]*://[^\s:/@]+:[^\s@/]{3,}@[^\s]+"),
    ("password or secret assignment",
     r"(?i)\b(?:password|passwd|pwd|secret|api[_-]?key|access[_-]?token|auth[_-]?token|client[_-]?secret)"
     # the value must look like a secret (a digit or symbol in it), not "Password: minimum length"
     r"\s*[:=]\s*['\"]?(?=[^\s'\"]*[0-9!@#$%^&*_+=~-])[^\s'\"]{6,}"),
    ("password or secret", r"(?:密碼|密码|口令|金鑰|密钥)\s*[:：=]\s*\S{4,}"),
))

#: Phrases that try to steer an agent that later reads the page.
_INJECTIONS: tuple[tuple[str, re.Pattern[str]], ...] = tuple((n, re.compile(p, re.I)) for n, p in (
    ("ignore instructions",
     r"\b(?:ignore|disregard|forget|override)\b[^.\n]{0,40}\b(?:previous|prior|above|earlier|all|any|your|system)"
     r"\b[^.\n]{0,20}\b(?:instructions?|prompts?|rules|directives|guidelines)"),
    ("role hijack", r"\byou are now (?:an? |the )?(?:unrestricted|unfiltered|jailbroken|dan|evil)\b"
                    r"|\byou are now in \w+ mode\b|\bact as (?:an? )?(?:unfiltered|jailbroken|dan)\b"
                    r"|\bdo anything now\b|\benable developer mode\b"),
    ("system prompt probe", r"\b(?:reveal|print|show|repeat|leak)\b[^.\n]{0,30}\bsystem prompt\b"),
    ("chat-template tokens", r"<\|(?:im_start|im_end|system|endoftext)\|>|\[/?INST\]|</?system>"),
    ("hidden instruction", r"\bnew instructions?\s*:|\bsystem\s*:\s*you\b"),
    ("ignore instructions", r"(?:忽略|無視|无视|忘記|忘记)(?:之前|以上|先前|上述|所有|前面)[^。\n]{0,10}(?:指令|指示|提示|規則|规则)"),
))


@dataclass(slots=True, frozen=True)
class ScanHit:
    kind: str  # "secret" | "injection"
    name: str

    def __str__(self) -> str:
        return f"{self.kind}: {self.name}"


def scan(text: str) -> list[ScanHit]:
    """Secrets and prompt-injection phrases found in ``text`` (each name once, in table order)."""
    hits = [ScanHit("secret", n) for n, rx in _SECRETS if rx.search(text)]
    hits += [ScanHit("injection", n) for n, rx in _INJECTIONS if rx.search(text)]
    return list(dict.fromkeys(hits))


# --- signals -----------------------------------------------------------------------------

_DOC_NOUNS = re.compile(
    r"(?i)\b(?:charter|bylaws?|policy|policies|procedures?|sop|specification|spec|requirements|guidelines?"
    r"|handbook|manual|regulations?|rules|standard|playbook|runbook|reference|glossary|checklist"
    r"|protocol|terms of reference)\b"
    r"|章程|憲章|宪章|規章|规章|規範|规范|規定|规定|辦法|办法|政策|手冊|手册|規格|规格|守則|守则|流程|程序書|程序书|指南|條例|条例|標準|标准")
_FILE_VERBS = re.compile(
    r"(?i)\b(?:file|save|store|archive|record|add|put|keep)\s+(?:this|it|the following|these)\b[^.\n]{0,30}"
    r"\b(?:wiki|knowledge|docs?|notes?|reference|record|for later|permanently)\b"
    r"|\bfile this\b|\bplease file\b|\bfor the wiki\b"
    r"|(?:請|请|幫我|帮我)?(?:存檔|存档|歸檔|归档|收錄|收录|記錄下來|记录下来|存進|存进|加入知識庫|加入知识库)")
_ARTICLE = re.compile(r"第\s*[0-9０-９一二三四五六七八九十百千零〇两兩]+\s*[條条]")
_NUMBERED = re.compile(r"(?m)^[ \t]*(?:\d{1,3}[.)、．]|\(\d{1,3}\)|（\d{1,3}）|[一二三四五六七八九十]{1,3}[、.．])[ \t]*\S")
_MD_HEADING = re.compile(r"(?m)^#{1,6}[ \t]+\S")
_MD_TABLE = re.compile(r"(?m)^[ \t]*\|.*\|[ \t]*\n[ \t]*\|?[ \t]*:?-{3,}:?[ \t]*(?:\|[ \t]*:?-{3,}:?[ \t]*)*\|?[ \t]*$")
_MD_BULLETS = re.compile(r"(?m)^[ \t]*[-*+][ \t]+\S")
_MD_FENCE = re.compile(r"(?m)^[ \t]*(?:```|~~~)")
_PREFERENCE = re.compile(
    r"(?i)\bI\s+(?:really\s+|much\s+|would\s+)?(?:prefer|like|love|hate|dislike|enjoy|want|wish|don'?t like)\b"
    r"|\bI'd (?:rather|prefer|like)\b|\bmy (?:favou?rite|preference)\b"
    r"|我(?:比較|比较|最|很|不|真的)?(?:喜歡|喜欢|偏好|討厭|讨厌|想要|愛|爱)")
_TIME_BOUND = re.compile(
    r"(?i)\bremind me\b|\b(?:today|tonight|tomorrow|yesterday|this (?:morning|afternoon|evening|week(?:end)?)"
    r"|next (?:week|monday|tuesday|wednesday|thursday|friday|saturday|sunday|month)|in \d+ (?:minutes|hours|days))\b"
    r"|\bat \d{1,2}(?::\d{2})?\s*(?:am|pm)\b|\bdon'?t forget\b"
    r"|提醒我|明天|今天|今晚|後天|后天|下週|下周|下星期|待會|待会|稍後|稍后|別忘了|别忘了")
_PRONOUN_WORDS = frozenset({"i", "me", "my", "mine", "myself", "you", "your", "yours", "yourself", "we", "us",
                            "our", "ours", "he", "him", "his", "she", "her", "they", "them", "their"})
_CJK_PRONOUNS = frozenset("我你您他她它咱")
_WORD = re.compile(r"[A-Za-z]+(?:'[A-Za-z]+)?|[0-9]+")
_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff\u3040-\u30ff\uac00-\ud7af]")
_QUESTION_MARKS = re.compile(r"[?？]")
_SENTENCE_END = tuple(".?!。？！:：;；,，")

#: Keywords per doc type (scored per distinct hit); structure adds weight below.
_TYPE_WORDS: dict[str, re.Pattern[str]] = {
    "charter": re.compile(r"(?i)\b(?:charter|bylaws?|articles of|mission|constitution)\b|章程|憲章|宪章|組織|组织|宗旨"),
    "sop": re.compile(r"(?i)\b(?:sop|standard operating procedure|procedures?|steps?|runbook|playbook|checklist"
                      r"|how to)\b|流程|步驟|步骤|作業|作业|程序|操作"),
    "spec": re.compile(r"(?i)\b(?:spec|specification|requirements?|schema|fields?|parameters?|api|interface|format"
                       r"|version)\b|規格|规格|需求|欄位|栏位|參數|参数|介面|接口"),
    "policy": re.compile(r"(?i)\b(?:polic(?:y|ies)|must|shall|prohibited|forbidden|allowed|compliance|regulations?"
                         r"|rules?)\b|政策|規定|规定|規範|规范|禁止|不得|應|应|必須|必须|守則|守则"),
    "reference": re.compile(r"(?i)\b(?:reference|glossary|faq|list of|overview|contacts?|directory)\b"
                            r"|參考|参考|名詞|名词|一覽|一览|目錄|目录"),
}


@dataclass(slots=True)
class Grade:
    """The verdict on one text: score, the signals that made it, the decision and the doc type."""

    score: int
    decision: str  # file | review | not_knowledge | blocked
    doc_type: str
    signals: dict[str, int] = field(default_factory=dict)
    excluded: str | None = None  # why the text was excluded before scoring
    hits: list[ScanHit] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["hits"] = [str(h) for h in self.hits]
        return data


def decide(score: int) -> str:
    """The decision for a score: >= 65 file, 30..64 review (grey band), < 30 not knowledge."""
    if score >= FILE_THRESHOLD:
        return FILE
    if score >= REVIEW_THRESHOLD:
        return REVIEW
    return NOT_KNOWLEDGE


def _tokens(text: str) -> tuple[int, int]:
    """(tokens, pronoun tokens): words of Latin script, each CJK character one token."""
    words = [w.lower() for w in _WORD.findall(text)]
    cjk = _CJK.findall(text)
    pronouns = sum(1 for w in words if w in _PRONOUN_WORDS) + sum(1 for c in cjk if c in _CJK_PRONOUNS)
    return len(words) + len(cjk), pronouns


def _has_title_line(lines: list[str]) -> bool:
    """A first line that reads as a title: a heading, or a short line without sentence punctuation
    followed by more text."""
    content = [ln.strip() for ln in lines if ln.strip()]
    if len(content) < 2:
        return False
    first = content[0]
    if _MD_HEADING.match(first):
        return True
    return len(first) <= 80 and not first.endswith(_SENTENCE_END) and not _NUMBERED.match(first)


def _has_markdown(text: str) -> bool:
    return bool(_MD_HEADING.search(text) or _MD_TABLE.search(text) or _MD_FENCE.search(text)
                or len(_MD_BULLETS.findall(text)) >= 2)


def classify(text: str) -> str:
    """The doc type: the type whose keywords and structure weigh most; ``reference`` otherwise."""
    weights = {t: len({m.group(0).lower() for m in rx.finditer(text)}) for t, rx in _TYPE_WORDS.items()}
    if len(_ARTICLE.findall(text)) >= 2:
        weights["charter"] += 4
    if len(_NUMBERED.findall(text)) >= 3:
        weights["sop"] += 2
    if _MD_TABLE.search(text):
        weights["spec"] += 2
    best = max(DOC_TYPES, key=lambda t: (weights[t], -DOC_TYPES.index(t)))
    return best if weights[best] > 0 else "reference"


def grade(text: str, title: str = "") -> Grade:
    """Grade ``text`` (with the filing ``title``, which counts for the scan only)."""
    text = unicodedata.normalize("NFKC", text.replace("\r\n", "\n"))
    doc_type = classify(text)
    hits = scan(f"{title}\n{text}")
    if hits:
        return Grade(0, BLOCKED, doc_type, excluded="scan: " + ", ".join(str(h) for h in hits), hits=hits)
    stripped = text.strip()
    nonspace = sum(1 for c in stripped if not c.isspace())
    if nonspace < MIN_CHARS:
        return Grade(0, NOT_KNOWLEDGE, doc_type, excluded=f"fewer than {MIN_CHARS} non-space characters")
    if len(stripped) < SHORT_QUESTION_CHARS and stripped.endswith(("?", "？")):
        return Grade(0, NOT_KNOWLEDGE, doc_type, excluded="a short question")
    s: dict[str, int] = {}
    if _DOC_NOUNS.search(text):
        s["document nouns"] = 40
    if _FILE_VERBS.search(text):
        s["file-this verb"] = 50
    if len(_ARTICLE.findall(text)) >= 2:
        s["article markers"] = 35
    if len(_NUMBERED.findall(text)) >= 3:
        s["numbered lines"] = 25
    if _has_markdown(text):
        s["markdown structure"] = 10
    if len(stripped) >= 400:
        s["length >= 400"] = 15
    if len(stripped) >= 1000:
        s["length >= 1000"] = 15
    if _has_title_line(stripped.split("\n")):
        s["title line"] = 10
    if _PREFERENCE.search(text):
        s["first-person preference"] = -45
    if _TIME_BOUND.search(text):
        s["time-bound wording"] = -35
    tokens, pronouns = _tokens(text)
    if tokens and pronouns / tokens > 0.04:
        s["pronoun density"] = -20
    if len(_QUESTION_MARKS.findall(text)) >= 2:
        s["questions"] = -25
    score = sum(s.values())
    return Grade(score, decide(score), doc_type, s)
