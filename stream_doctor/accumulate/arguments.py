"""Parsing a completed call's argument text once, and classifying how it failed."""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import replace
from itertools import accumulate as running_total
from typing import TYPE_CHECKING, Any, Sequence

import orjson

from stream_doctor.util import jsontext

if TYPE_CHECKING:
    from stream_doctor.accumulate.parse_failure import ParseFailure, ParseFailureKind

_ESCAPE = re.compile(r"\\.", re.DOTALL)


def parse_arguments(raw: str, fragment_lengths: Sequence[int]) -> tuple[Any, ParseFailure | None, int | None]:
    """Parse ``raw`` (the joined fragments, of ``fragment_lengths``) once.

    Returns ``(value, failure, complete_value_at)`` where ``complete_value_at`` is the index of the
    fragment at which the buffer first held a complete JSON value. For a valid buffer that is the
    fragment holding its last non-blank character; for "trailing data" it is where the leading
    value ended, the point at which run-it-when-it-parses code would have fired.
    """
    if not raw.strip():
        return {}, None, None

    def fragment_of(char: int) -> int | None:
        ends = list(running_total(fragment_lengths))
        found = bisect_right(ends, char)
        return found if found < len(ends) else None

    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError as error:
        failure = classify(raw, error)
        char = error.pos
        complete_at = None
        if failure.kind in ("trailing-data", "concatenated-objects"):
            complete_at = fragment_of(len(raw[:char].rstrip()) - 1)
        return None, _with_fragment(failure, fragment_of(char)), complete_at
    last = _last_fragment(raw, fragment_lengths)
    if not isinstance(value, dict):
        from stream_doctor.accumulate.parse_failure import ParseFailure

        kind: ParseFailureKind = "not-an-object"
        detail = f"the arguments are a JSON {_json_type(value)}, not an object"
        if isinstance(value, str) and value.lstrip().startswith("{"):
            detail += " (a string holding JSON: the arguments were encoded twice)"
        return value, ParseFailure(kind, detail, 0, 0 if fragment_lengths else None), last
    return value, None, last


def _last_fragment(raw: str, fragment_lengths: Sequence[int]) -> int | None:
    """The fragment holding ``raw``'s last non-blank character, found from the end: only the
    fragments after it are looked at, not a running total of a call's every fragment."""
    char = len(raw.rstrip()) - 1  # there is one: a blank buffer never gets here
    start = len(raw)  # the fragments join to ``raw``
    for index in range(len(fragment_lengths) - 1, -1, -1):
        start -= fragment_lengths[index]
        if start <= char:
            return index
    return None


def classify(raw: str, error: orjson.JSONDecodeError) -> ParseFailure:
    from stream_doctor.accumulate.parse_failure import ParseFailure  # arguments that failed to parse only

    message = error.msg
    char = error.pos
    if message in jsontext.GAVE_UP:
        open_containers = jsontext.open_containers(raw)
        if open_containers is None or open_containers > 0:  # cut inside a string, or containers left open
            where = "inside a string" if open_containers is None else f"{open_containers:,} containers open"
            char, message = len(raw), f"unexpected end of data ({where})"
        elif open_containers == 0 and message == jsontext.GAVE_UP[0]:
            detail = f"it {jsontext.TOO_DEEP}; it was not checked"
            return ParseFailure("too-deep", detail, len(raw[:char].encode("utf-8", "surrogatepass")), None)
    byte = len(raw[:char].encode("utf-8", "surrogatepass"))
    kind: ParseFailureKind
    if "after document" in message:
        rest = raw[char:].lstrip()
        kind = "concatenated-objects" if rest[:1] in ("{", "[") else "trailing-data"
    elif "end of data" in message or "EOF" in message or char >= len(raw.rstrip()):
        # A buffer that ends inside a string whose text ends like the object itself (`"}`) did not
        # stop early: a quote inside a value came out unescaped-wrong and the value swallowed the
        # rest of the object (fine-grained tool streaming, pi-anthropic-oauth #11).
        in_string = _ESCAPE.sub("", raw).count('"') % 2 == 1
        kind = "unterminated-string" if in_string and raw.rstrip().endswith("}") else "truncated"
    else:
        kind = "invalid"
    return ParseFailure(kind, message, byte, None)


def _with_fragment(failure: ParseFailure, fragment: int | None) -> ParseFailure:
    return replace(failure, fragment=fragment)


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if value is None:
        return "null"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "value"
