"""A completed call's reassembled arguments are not a valid JSON object.

What it checks:
    At the call's completion event the joined fragments are parsed once. A failure is classified:
    ``truncated`` (ends inside a value), ``unterminated-string`` (the call completed but a string
    value never closes and ends like the object, ``…"}``: it swallowed the rest of the object),
    ``trailing-data`` (bytes after a complete
    object, e.g. fine-grained streaming escaping errors), ``concatenated-objects`` (``}{``: two calls
    merged under one index), ``not-an-object`` (a string holding JSON: encoded twice) or ``invalid``
    (broken escaping, a dropped first fragment). The byte and fragment where parsing failed are given.
    An empty buffer is a no-argument call, ``{}``, not an error. A buffer the JSON reader gives up
    on for its nesting alone (balanced, deeper than its 1,024 levels) is ``too-deep``: not checked.

Why it matters:
    ``JSON.parse`` throws mid-turn, or a lenient parser "repairs" the buffer into different
    arguments. Fine-grained tool streaming gives no validity guarantee (anthropic-sdk-python #1265,
    pi-anthropic-oauth #11).

Severity:
    error. Every client that follows the provider's contract parses the completed arguments as JSON
    (``json.loads`` in the SDKs, ``JSON.parse`` in the AI SDK) and fails or repairs them into
    another call.
    info for ``too-deep``: whether the arguments parse was not checked, and nothing says they broke.

Example:
    {"path": "a.txt", "content": "x"}"}   → trailing-data at byte 33

How to fix:
    Handle the parse failure explicitly: do not run the tool; send the error back to the model as
    a tool result with ``is_error: true`` so it can retry, and log the raw buffer.
"""

from __future__ import annotations

from typing import Iterator

from stream_doctor.accumulate.stream import AccumulatedStream
from stream_doctor.rules.base import Rule, rule
from stream_doctor.values.findings import Finding, Severity

HINTS = {
    "truncated": "The buffer ends mid-value; do not run the call, check the stop reason",
    "unterminated-string": "A value swallowed the rest of the object (an escaping error); return an error result to the model",
    "trailing-data": "Bytes follow a complete object; do not repair silently, return an error result to the model",
    "concatenated-objects": "Two objects run together: two calls were merged under one key; key calls by id and index",
    "not-an-object": "Tool arguments must be a JSON object; decode once, and do not encode arguments twice",
    "invalid": "The buffer is not JSON; return an error result to the model instead of running the tool",
    "too-deep": "Flatten the arguments; Python's json.loads also stops near 1,000 levels",
}


@rule("A completed call's arguments are not a valid JSON object", Severity.ERROR, needs="unparsed-call")
def check(stream: AccumulatedStream, self: Rule) -> Iterator[Finding]:
    for call in stream.calls:
        failure = call.parse_failure
        if failure is None or call.status != "complete":
            continue  # abandoned calls are SD301's
        # The failing byte's fragment, when the arguments came as fragments: a Responses call whose
        # ``arguments.done`` carries the whole text with no delta before it has none to point at.
        number = failure.fragment
        fragment = call.fragments[number] if number is not None and 0 <= number < len(call.fragments) else None
        at = (
            f" (fragment {failure.fragment + 1} of {call.fragment_count}, line {fragment.pos.line})"
            if fragment and failure.fragment is not None
            else ""
        )
        deep = failure.kind == "too-deep"  # valid or not, nothing here can tell: said, at info
        yield self.finding(
            stream,
            call.ended,
            f"{call.label}: arguments were not parsed: {failure.detail} (at byte {failure.position} of "
            f"{call.byte_count})"
            if deep
            else f"{call.label}: arguments do not parse ({failure.kind}): {failure.detail} at byte "
            f"{failure.position} of {call.byte_count}{at}",
            HINTS.get(failure.kind, HINTS["invalid"]),
            [("call started", call.started)] + ([("failing fragment", fragment.pos)] if fragment and not deep else []),
            call,
            severity=Severity.INFO if deep else None,
            kind="too deep" if deep else f"{failure.kind} {begins(call.raw_arguments)}",
        )


#: What a value that begins with this character is. A client that reads the arguments as they stream
#: (the Anthropic SDK's partial-mode ``jiter``) reads a cut object or array as far as it goes, but fails
#: on a cut scalar (``t``, ``-``, ``"ab``): a cut object and a cut ``true`` are not the same failure.
_BEGINS = {
    "{": "object",
    "[": "array",
    '"': "string",
    "t": "boolean",
    "f": "boolean",
    "n": "null",
    **dict.fromkeys("-0123456789", "number"),
}


def begins(raw: str) -> str:
    """What the argument text begins as (``object``, ``number`` …; ``nothing`` for no JSON value)."""
    return _BEGINS.get(raw.lstrip(" \t\r\n")[:1], "nothing")
