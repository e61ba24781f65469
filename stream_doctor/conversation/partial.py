"""When a client that runs a tool "as soon as the required fields are there" would have run it.

Clients that show or act on arguments while they stream repair the partial buffer (the AI SDK's
``parsePartialJson``, jiter's partial mode) and read a value for every key whose value has begun,
closing an open string: after ``{"command": "in`` they see ``{"command": "in"}``. Code that runs
the tool once the schema's required properties are present runs it on ``in``, not on ``install -r
requirements.txt``.

``eager_point`` finds the first fragment after which every required top-level property had a
value, and reports it when one of those values was still incomplete then and changed later. It
reads the buffer once: a regular expression steps over whole strings and structural characters,
tracking the depth and where each top-level value begins and ends; the fragment is found by
bisecting the fragments' end offsets. No parse is repeated per fragment.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from dataclasses import dataclass
from itertools import accumulate
from typing import Sequence

import orjson

from stream_doctor.accumulate.fragments import FragmentTexts

# Whole strings (never backtracking), structural characters, and runs of anything else (numbers, literals);
# the group that matched says which (``match.lastindex``), so the loop reads no token it steps over. A key
# is one token with its colon, and with the comma before it: an object's member costs two steps, not four.
_STRING_TEXT = r'"[^"\\]*(?:\\.[^"\\]*)*"'
_TOKEN = re.compile(
    rf'(?:,\s*({_STRING_TEXT})\s*:)|({_STRING_TEXT})(\s*:)?|([{{\[])|([}}\]])|(,)|(:)|[^\s{{}}\[\],:"]+', re.S
)
_NEXT_KEY, _STRING, _KEY, _OPEN, _CLOSE, _COMMA, _COLON = 1, 2, 3, 4, 5, 6, 7
_OTHER = None  # a run of anything else: no group


@dataclass(frozen=True, slots=True)
class EagerPoint:
    fragment: int  # 0-based index of the fragment after which the required properties were all present
    seen: dict[str, str]  # the changed required properties: the value a repairing client read (JSON text)
    final: dict[str, str]  # and their final value (JSON text)


def top_level_values(raw: str) -> dict[str, tuple[int, int]]:
    """Every top-level key of a JSON object text, with the offsets where its value begins and ends."""
    values: dict[str, tuple[int, int]] = {}
    depth = 0
    key: str | None = None
    expecting_key = False
    value_start = -1
    for match in _TOKEN.finditer(raw):
        group = match.lastindex
        if group == _OPEN:
            if depth == 1 and key is not None and value_start < 0:
                value_start = match.start()
            depth += 1
            if depth == 1:
                expecting_key = True
        elif group == _CLOSE:
            depth -= 1
            if depth == 1 and key is not None and value_start >= 0:
                values[key] = (value_start, match.end())
                key, value_start = None, -1
            elif depth == 0 and key is not None and value_start >= 0:
                values.setdefault(key, (value_start, match.start()))
        elif depth != 1:
            continue
        elif group == _NEXT_KEY:  # a comma, a key and its colon
            key, value_start, expecting_key = _key(match.group(1)), -1, False
        elif group == _COMMA:
            expecting_key = True
            key, value_start = None, -1
        elif group == _COLON:
            expecting_key = False
        elif expecting_key and group != _OTHER:  # a string, or a string and its colon: a key
            key = _key(match.group(_STRING))
            expecting_key = group == _STRING
        elif key is not None and value_start < 0:  # (of a string and a colon, the string is the value)
            start = match.start()
            values[key] = (start, match.end(_STRING) if group == _KEY else match.end())
            value_start = start
    return values


def _key(token: str) -> str:
    """A key's text; without a backslash it is what JSON reads (or, not JSON, the text as written)."""
    if "\\" not in token:
        return token[1:-1]
    try:
        key: str = orjson.loads(token)
    except orjson.JSONDecodeError:
        return token[1:-1]
    return key


def eager_point(fragments: Sequence[str], raw: str, required: Sequence[str]) -> EagerPoint | None:
    """The hazard, or None when no required value changed after they were all present (or some never was)."""
    if len(fragments) < 2 or not required:
        return None
    values = top_level_values(raw)
    present_at = 0  # where each required value's first character has arrived
    for name in required:
        value = values.get(name)
        if value is None:
            return None
        if value[0] >= present_at:
            present_at = value[0] + 1
    # A call's fragments are kept as where they end in ``raw``: read those rather than cut each text.
    ends = fragments.ends if isinstance(fragments, FragmentTexts) else list(accumulate(map(len, fragments)))
    fragment = bisect_left(ends, present_at)
    if fragment >= len(ends) - 1:
        return None
    cut = ends[fragment]
    seen: dict[str, str] = {}
    final: dict[str, str] = {}
    for name in required:
        start, end = values[name]
        if end <= cut:
            continue  # whole by then: a repairing client read the final value
        partial = raw[start:cut]
        whole = raw[start:end]
        if _same(partial, whole):
            continue
        seen[name] = _repaired(partial)
        final[name] = whole
    if not seen:
        return None
    return EagerPoint(fragment, seen, final)


def _same(partial: str, whole: str) -> bool:
    """Whether a repairing client reads the final value from the value's text so far."""
    if whole.startswith('"'):
        return partial.rstrip("\\") == whole[:-1] or partial == whole
    rest = whole[len(partial) :] if whole.startswith(partial) else None
    if rest is None:
        return False
    if partial.rstrip() and partial.strip() in ("t", "tr", "tru", "f", "fa", "fal", "fals", "n", "nu", "nul"):
        return True  # partial literals are completed by the repair
    return partial[:1] in "{[" and not rest.strip(" \t\r\n}]")


def _repaired(partial: str) -> str:
    """The value text a repairing client reads (open strings closed), for messages."""
    if partial.startswith('"'):
        text = partial.rstrip("\\")
        return text + '"'
    return partial.strip() + "…"
