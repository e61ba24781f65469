"""The tool calls of a choice are not numbered 0, 1, 2 … in order.

What it checks:
    In OpenAI-style streams ``tool_calls[].index`` numbers a choice's calls from 0 in the order
    they start. Reported per choice: indices that start above 0, skip a number, or go back.
    Calls sharing one index are SD501's; only adapters whose protocol numbers calls densely are
    checked (not Ollama's native API, whose calls come whole and are collected into a list).

Why it matters:
    Harmless to a client that keys calls by the index value (stream-doctor, LangChain, the AI SDK
    since vercel/ai #18382). A client that uses the index as a position in an array crashes or
    misplaces calls: openai-python's ``accumulate_delta`` and the AI SDK before #18382 failed on
    gateways that copy Anthropic's content block index (so the first call is 1) or leave gaps
    (vercel/ai #18333).

Severity:
    warning. openai-python's ``accumulate_delta`` and the AI SDK before vercel/ai #18382 use the
    index as a list position and fail; value-keyed clients are unaffected.
    What if the request asked for this? ``n`` asks for several choices, and each choice numbers its
    own calls from 0: the rule reads indices per choice, so what ``n`` asked for is never reported.

Example:
    data: {…"tool_calls":[{"index":1,"id":"toolu_01A","function":{"name":"get_weather","arguments":""}}]…}
    data: {…"tool_calls":[{"index":2,"id":"toolu_01B","function":{"name":"get_time","arguments":""}}]…}

How to fix:
    Key calls by the index value, never by array position; report the gateway that renumbers.
"""

from __future__ import annotations

from itertools import pairwise
from typing import Hashable, Iterator

from stream_doctor.accumulate.stream import AccumulatedStream, ToolCall
from stream_doctor.rules.base import Rule, rule
from stream_doctor.rules.correlation._calls import choice_of
from stream_doctor.values.findings import Finding, Severity


@rule("Tool call indices do not count 0, 1, 2 … in order", Severity.WARNING)
def check(stream: AccumulatedStream, self: Rule) -> Iterator[Finding]:
    if not stream.capture.protocol.dense_call_indices:
        return
    for message in stream.messages:
        choices: dict[Hashable, list[ToolCall]] = {}
        for ordinal in message.calls:
            call = stream.calls[ordinal]
            if call.index is not None:
                choices.setdefault(choice_of(call), []).append(call)
        for choice, calls in choices.items():
            firsts: dict[int, ToolCall] = {}
            for call in calls:
                firsts.setdefault(call.index, call)  # type: ignore[arg-type]
            seen = list(firsts)
            expected = list(range(len(seen)))
            if seen == expected:
                continue
            off = next(firsts[i] for i, e in zip(seen, expected, strict=True) if i != e)
            if seen[0] != 0:
                how = f"start at {seen[0]}"
            elif sorted(seen) == seen:
                how = "skip " + ", ".join(_gaps(seen))
            else:
                how = "go back"
            owner = (
                f"choice {choice} of message {message.index + 1}"
                if isinstance(choice, int) and choice
                else (f"message {message.index + 1}")
            )
            yield self.finding(
                stream,
                off.started,
                f"the tool call indices of {owner} are {', '.join(map(str, seen))}: they {how} where "
                f"{', '.join(map(str, expected))} was expected; harmless to a client that keys calls by the index "
                f"value, but one that uses it as an array position crashes or misplaces calls (vercel/ai #18333)",
                "Key calls by the index value, never by array position; report the gateway that renumbers calls",
                [("first call", calls[0].started)],
                off,
            )


def _gaps(seen: list[int]) -> Iterator[str]:
    """The numbers missing between ascending ``seen`` as ranges (``1-99,999,999``): an index is a number
    the capture states, so the missing ones are never listed one by one (10^8 of them took 6.9 GB)."""
    for before, after in pairwise(seen):
        if after - before == 2:
            yield f"{before + 1:,}"
        elif after - before > 2:
            yield f"{before + 1:,}-{after - 1:,}"
