"""A tool-call fragment carries neither an index nor an id.

What it checks:
    Every argument fragment says which call it belongs to: OpenAI-style streams by
    ``tool_calls[].index`` (or at least the call's ``id``). A fragment with neither is given to the
    latest open call, as the AI SDK's tracker does, and reported with where it went.

Why it matters:
    Gemini's OpenAI-compatible endpoint and older Ollama ``/v1`` servers leave the index out.
    openai-python's ``accumulate_delta`` raises "Expected list delta entry to have an `index` key"
    on such a fragment (AstrBot #6661), LiteLLM files it under index 0, and with two calls open
    "the latest call" may be the wrong one. With no call open the fragment is lost.

Severity:
    warning. openai-python's ``accumulate_delta`` raises "Expected list delta entry to have an
    `index` key"; clients that fall back to the open call read it right.
    What if the request asked for this? No request setting removes the index and id that tie a
    fragment to its call.

Example:
    data: {…"tool_calls":[{"id":"call_1","type":"function","function":{"name":"search","arguments":""}}]…}
    data: {…"tool_calls":[{"function":{"arguments":"{\\"q\\":\\"paris\\"}"}}]…}

How to fix:
    Make the server send ``index`` on every fragment (and the id on the first). Clients should
    attribute an index-less fragment by id, then to the only open call, and fail loudly otherwise.
"""

from __future__ import annotations

from typing import Iterator

from stream_doctor.accumulate.irregularities import UncorrelatedFragment
from stream_doctor.accumulate.stream import AccumulatedStream
from stream_doctor.rules.base import Rule, problems, rule
from stream_doctor.util.wording import excerpt, where
from stream_doctor.values.findings import Finding, Severity


@rule("A tool-call fragment carries neither an index nor an id", Severity.WARNING, reads=(UncorrelatedFragment,))
def check(stream: AccumulatedStream, self: Rule) -> Iterator[Finding]:
    groups: dict[tuple[int | None, int | None], list[UncorrelatedFragment]] = {}
    for problem in problems(stream, self):
        groups.setdefault((problem.message, problem.attributed), []).append(problem)
    for (_, attributed), group in groups.items():
        text = "".join(a.text for a in group)
        count = f"{len(group)} fragment{'s' if len(group) != 1 else ''}"
        first = group[0].pos
        if attributed is None:
            yield self.finding(
                stream,
                first,
                f"{count} with neither an index nor an id arrived while no call was open, from {where(first)}: "
                f"{len(text)} characters of arguments ({excerpt(text, 50)}) belong to no call and are lost",
                "Make the server send tool_calls[].index and the call's id; a client cannot place these fragments",
                severity=Severity.ERROR,
            )
            continue
        call = stream.calls[attributed]
        yield self.finding(
            stream,
            first,
            f"{count} of {call.label} carried neither an index nor an id (first at {where(first)}, "
            f"{excerpt(text, 40)}); stream-doctor gave them to the latest open call, as the AI SDK does, while "
            f'openai-python\'s accumulate_delta raises "Expected list delta entry to have an `index` key" and '
            f"LiteLLM files them under index 0",
            "Make the server send tool_calls[].index on every fragment; attribute index-less fragments by id, "
            "then to the only open call",
            [("call started", call.started)],
            call,
        )
