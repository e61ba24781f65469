"""A streamed-argument piece that cannot be placed in the call's arguments.

What it checks:
    Each ``partialArgs`` piece of a Vertex AI streamed function call must name a valid RFC 9535
    ``jsonPath`` into the arguments object, carry exactly one of ``stringValue``, ``numberValue``,
    ``boolValue`` or ``nullValue``, continue an open call, and arrive in document order (a member
    or array element that was already left is not reopened). A string whose last piece said
    ``willContinue`` must get another piece. Anything else is reported here, with what was done.

Why it matters:
    The arguments stream-doctor rebuilds (and any client's) are then missing a value, or hold one
    the model never sent (``null`` in a skipped array slot): running the call acts on wrong input.

Severity:
    error. The piece has no place in the arguments: every client rebuilds a call the model did not
    send.

Example:
    {"functionCall":{"partialArgs":[{"jsonPath":"$.items[0]","stringValue":"a"}],"willContinue":true}}
    {"functionCall":{"partialArgs":[{"jsonPath":"$.items[2]","stringValue":"c"}],"willContinue":true}}
    (element 1 is never sent)

How to fix:
    Do not run the call with these arguments; retry the request, and report the stream if it
    happens again.
"""

from __future__ import annotations

from typing import Iterator

from stream_doctor.accumulate.stream import AccumulatedStream
from stream_doctor.capture.problem_facts import PartialArgUnplaceable
from stream_doctor.rules.base import Rule, problems, rule
from stream_doctor.util.wording import preview
from stream_doctor.values.findings import Finding, Severity


@rule(
    "A streamed-argument piece cannot be placed in the call's arguments",
    Severity.ERROR,
    reads=("partial-args-unplaceable",),
)
def check(stream: AccumulatedStream, self: Rule) -> Iterator[Finding]:
    for problem in problems(stream, self):
        yield self.finding(
            stream,
            problem.pos,
            unplaceable(problem.facts) if isinstance(problem.facts, PartialArgUnplaceable) else problem.message,
            "Do not run the call with these arguments; retry the request and report the stream if it recurs",
        )


#: What each kind of unplaceable piece is, with the facts it names.
WORDS: dict[str, str] = {
    "not-an-object": "a partialArgs entry is not an object: {piece}",
    "no-json-path": "a partialArgs entry has no jsonPath: {piece}",
    "invalid-path": "jsonPath {path!r} is not a path into the arguments object",
    "value-count": "the piece for {path} carries {values}",
    "string-not-continued": "the string at {path} said willContinue but no further piece came; it was closed there",
    "string-not-finished": "the string at {path} said willContinue but the call ended; it was closed there",
    "root-is-array": "jsonPath {path} indexes the arguments as an array; they are an object",
    "member-of-array": "jsonPath {path} names a member of what earlier pieces made an array",
    "index-of-object": "jsonPath {path} indexes what earlier pieces made an object",
    "element-closed": "the piece for {path} goes back to element {element}, which is already closed; not placed",
    "member-closed": "the piece for {path} goes back to a member already closed; not placed",
    "elements-skipped": "the piece for {path} skips array {skipped}; null was put there",
    "elements-skipped-too-many": "the piece for {path} skips array {skipped}, too many to fill with null; not placed",
    "value-type": "{value_kind} at {path} is not {expected}",
    "continues-no-call": "functionCall part {piece} continues no open call",
    "args-and-partial-args": "a functionCall part has both args and willContinue/partialArgs; its args were not used",
    "partial-args-not-a-list": "partialArgs is not a list",
}

EXPECTED = {"stringValue": "a string", "numberValue": "a number", "boolValue": "a boolean"}


def unplaceable(facts: PartialArgUnplaceable) -> str:
    first, last = facts.element, facts.last
    if first is None or last is None:
        skipped = ""
    else:  # numbers the capture states: a range, never a list
        skipped = f"element {first:,}" if first == last else f"elements {first:,}-{last:,}"
    values = f"several values ({', '.join(facts.values)})" if facts.values else "no value"
    text = WORDS[facts.why].format(
        piece=preview(facts.piece, 60),
        path=facts.path,
        values=values,
        element=first,
        skipped=skipped,
        value_kind=facts.value_kind,
        expected=EXPECTED.get(facts.value_kind or "", "a value"),
    )
    return f"{facts.call}: {text}" if facts.call else text
