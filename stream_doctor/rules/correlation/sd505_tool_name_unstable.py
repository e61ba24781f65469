"""A tool call's name arrives after its first fragment, is blanked, or changes.

What it checks:
    A call's ``function.name`` comes on its first fragment and never changes. Reported: a call that
    started without a name and got it later (``name-late``), a later fragment that sends
    ``"name": ""`` (``name-blank``), and a later fragment naming another tool (``name-changed``).

Why it matters:
    A client that creates the call from its first fragment has no name to dispatch (the AI SDK
    throws "Expected 'function.name' to be a string": vercel/ai #14722, fixed in #14760). A client
    that replaces the name whenever the field is present wipes it to ``""`` on the blank fragment
    (captured from a model served by Mistral's API, vercel/ai ``mistral-incremental-tool-call``).
    A name that changes leaves the tool to run ambiguous.

Severity:
    warning for a name that arrives late: the AI SDK creates the call from its first fragment and
    threw on a missing name until vercel/ai #14760. info for a later ``"name": ""``: no widely used
    client blanks the name on it (openai-python's ``accumulate_delta`` appends the empty string,
    openai-node sets the name only when it is non-empty, LangChain and LiteLLM join the fragments,
    the AI SDK keeps the first name; their profiles all run the call on the Mistral-format and
    watsonx captures), so only a hand-written client that overwrites the name breaks. error for a
    name that changes: which tool to run is ambiguous.
    What if the request asked for this? No request setting asks for a call's name to change or be
    emptied mid-call.

Example:
    data: {…"tool_calls":[{"index":0,"id":"chatcmpl-tool-9f14","function":{"name":"webSearchTool","arguments":""}}]…}
    data: {…"tool_calls":[{"index":0,"function":{"name":"","arguments":"{\\"query\\": …}"}}]…}

How to fix:
    Take the first non-empty name and ignore empty or equal ones later; do not dispatch a call until
    it has a name. Report a server that changes a call's name.
"""

from __future__ import annotations

from typing import Iterator

from stream_doctor.accumulate.irregularities import NameBlank, NameChanged, NameLate
from stream_doctor.accumulate.stream import AccumulatedStream
from stream_doctor.rules.base import Rule, problems, rule
from stream_doctor.util.wording import where
from stream_doctor.values.findings import Finding, Severity

HINT = "Take the first non-empty name and ignore empty or equal ones; dispatch a call only once it has a name"


@rule(
    "A tool call's name arrives late, is blanked, or changes",
    Severity.WARNING,
    reads=(NameLate, NameBlank, NameChanged),
)
def check(stream: AccumulatedStream, self: Rule) -> Iterator[Finding]:
    renamed: set[tuple[int, str]] = set()
    for problem in problems(stream, self):
        if isinstance(problem, NameLate):
            call = stream.calls[problem.call]
            yield self.finding(
                stream,
                problem.pos,
                f"{call.label} started without a name; {problem.name!r} arrived at {where(problem.pos)}: a client "
                f"that reads the name from the first fragment has none to dispatch (the AI SDK threw "
                f"\"Expected 'function.name' to be a string\", vercel/ai #14722)",
                HINT,
                [("call started", call.started)],
                call,
            )
        elif isinstance(problem, NameBlank):
            call = stream.calls[problem.call]
            yield self.finding(
                stream,
                problem.pos,
                f'a later fragment of {call.label} sends "name": "" at {where(problem.pos)}: a client that '
                f"replaces the name whenever the field is present wipes {problem.name!r} to an empty name; "
                f"openai-python, openai-node, LangChain, LiteLLM and the AI SDK keep or append it and are unaffected",
                HINT,
                [("call started", call.started)],
                call,
                severity=Severity.INFO,
            )
        elif isinstance(problem, NameChanged) and (problem.call, problem.after) not in renamed:
            renamed.add((problem.call, problem.after))
            call = stream.calls[problem.call]
            yield self.finding(
                stream,
                problem.pos,
                f"the name of {call.label} changes from {problem.before!r} to {problem.after!r} at "
                f"{where(problem.pos)}: which tool to run is ambiguous (stream-doctor keeps the first)",
                "Report the server: a call's name must not change; do not run the call",
                [("call started", call.started)],
                call,
                severity=Severity.ERROR,
            )
