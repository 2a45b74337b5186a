"""Text as a reader sees it: what makes two strings look the same folded away, so a fact or a
name cannot pass as new by characters nobody can see (issue 45).

:func:`visible_form` removes what is invisible and folds what looks alike, in the spirit of
Unicode TR39's skeletons: HTML entities decoded (``&shy;``), compatibility forms folded (NFKC:
fullwidth ``ｐａｙ``, mathematical bold ``𝐩𝐚𝐲``), format characters dropped (zero-width space,
ZWNJ, ZWJ, word joiner, BOM, soft hyphen, bidirectional controls), accents on Latin letters
dropped (a script's own marks, such as kana's voicing marks, are kept), and
every letter Unicode lists as confusable with a Latin letter or digit mapped to it (Cyrillic
``а`` -> ``a``; the table is Unicode's ``confusables.txt`` as the ``confusable-homoglyphs``
package ships it). Plain ASCII without ``&`` is returned as it is, at no cost.
"""

from __future__ import annotations

import html
import unicodedata
from collections.abc import Iterable
from functools import lru_cache

#: Characters dropped besides the format (Cf) category: the Mongolian vowel separator and the
#: variation selectors, which render as nothing.
_INVISIBLE = frozenset({"\u180e", *map(chr, range(0xFE00, 0xFE10))})


@lru_cache(maxsize=1)
def _to_latin() -> dict[str, str]:
    """Every character Unicode lists as confusable with an ASCII letter or digit -> that one."""
    from confusable_homoglyphs.confusables import confusables_data

    out: dict[str, str] = {}
    for char, entries in confusables_data.items():
        if len(char) != 1 or char.isascii():
            continue
        latin = [e["c"] for e in entries if len(e.get("c", "")) == 1 and e["c"].isascii() and e["c"].isalnum()]
        if latin:
            out[char] = min(latin)
    return out


def _fold(decomposed: str, table: dict[str, str]) -> str:
    out: list[str] = []
    for char in decomposed:
        if char in _INVISIBLE:
            continue
        category = unicodedata.category(char)
        if category == "Cf":
            continue
        if category == "Mn" and out and out[-1].isascii():
            continue  # an accent on a Latin letter (kana's voicing marks, Indic vowel signs stay)
        out.append(table.get(char, char))
    return "".join(out)


def visible_form(text: str) -> str:
    """``text`` with invisible characters removed and look-alike letters folded (see the module
    docstring); the result is for comparing, never for showing or storing."""
    if text.isascii() and "&" not in text:
        return text
    if "&" in text:
        text = html.unescape(text)
    text = unicodedata.normalize("NFKC", text)
    if text.isascii():
        return text
    table = _to_latin()
    decomposed = unicodedata.normalize("NFD", text)
    return unicodedata.normalize("NFC", _fold(decomposed, table))


def lookalike_key(text: str) -> str:
    """A key under which look-alike strings meet: :func:`visible_form`, casefolded."""
    return visible_form(text).casefold()


def escape_controls(text: str, keep_lines: bool = False) -> str:
    """``text`` with every control and format character shown as ``<U+XXXX>``: what the operator
    decides on (a fact, a title, a path) reads as stored, never reordered by a bidirectional
    override (``‮yaP fo sutats‬`` shown as "status of Pay") nor hiding a zero-width character.
    Tabs stay; line breaks are shown too (a forged second line cannot pass as the tool's own),
    unless ``keep_lines`` (a whole answer of several lines: its own line breaks stay)."""
    plain = text.replace("\n", "").replace("\r", "").replace("\t", "") if keep_lines else text
    if text.isascii() and plain.isprintable():
        return text
    if keep_lines:  # (line by line: a line that is printable as a whole, CJK too, is taken as it is
        # without a look at each character: 84,000 lines of lint took 1.5 s, now a few ms)
        return "\n".join(_escape_line(line) for line in text.split("\n"))
    return _escape_chars(text, keep_lines)


def _escape_line(line: str) -> str:
    """:func:`escape_controls` of one line of a whole answer (its carriage return kept)."""
    plain = line.replace("\t", "").replace("\r", "") if ("\t" in line or "\r" in line) else line
    return line if plain.isprintable() else _escape_chars(line, True)


def _escape_chars(text: str, keep_lines: bool) -> str:
    out = []
    for char in text:
        category = unicodedata.category(char)
        if keep_lines and char in "\r\n":
            out.append(char)
        elif (category in ("Cc", "Cf") and char != "\t") or char in ("\u2028", "\u2029"):
            out.append(f"<U+{ord(char):04X}>")
        else:
            out.append(char)
    return "".join(out)


def lookalike_groups(names: Iterable[str]) -> list[list[str]]:
    """The groups of ``names`` that differ only by look-alike or invisible characters
    (``pаyments`` with a Cyrillic ``а`` beside ``payments``), each sorted; names that look like
    no other are left out. An ASCII name folds to itself: only the others are folded."""
    names = set(names)
    groups: dict[str, list[str]] = {}
    for name in names:
        if not name.isascii():
            groups.setdefault(lookalike_key(name), []).append(name)
    out = []
    for key, found in groups.items():
        if key in names and key not in found:
            found.append(key)
        if len(found) > 1:
            out.append(sorted(found))
    return out
