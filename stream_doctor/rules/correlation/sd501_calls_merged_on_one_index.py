"""Two or more tool calls share one ``tool_calls[].index`` while both are open.

What it checks:
    Within a choice, a fragment that names a tool under a new id (or names another tool) arrives on
    an index whose call has not finished. stream-doctor keeps such calls apart by id or name; this
    rule says what a client that keys calls by index would build from them instead.

Why it matters:
    Harmless to a client that looks calls up by id first (the AI SDK's tracker, stream-doctor), but
    the index-keyed accumulators fuse them: openai-python's ``accumulate_delta`` concatenates the
    names, ids and arguments into one call with ``{…}{…}`` arguments; LiteLLM's
    ``stream_chunk_builder`` keeps the last id and merges the arguments. Servers that do this: Groq
    sending one whole call per chunk at index 0 (litellm #7621), NVIDIA Dynamo and Ollama via
    LiteLLM giving every call index 0 (ai-dynamo/dynamo PR #4723, ollama #15457).

Severity:
    warning. openai-python's ``accumulate_delta`` and LiteLLM's ``stream_chunk_builder`` fuse the
    calls; id-first clients read them right.
    What if the request asked for this? ``parallel_tool_calls`` asks for several calls or one, never
    for two calls on one index.

Example:
    data: {…"tool_calls":[{"index":0,"id":"call_A","function":{"name":"get_weather","arguments":"{\\"city\\":\\"Paris\\"}"}}]…}
    data: {…"tool_calls":[{"index":0,"id":"call_B","function":{"name":"get_time","arguments":"{\\"tz\\":\\"CET\\"}"}}]…}

How to fix:
    In the client, look calls up by non-empty id first, then by index, and start a new call when a
    new id names a tool. Report the server: each parallel call needs its own index.
"""

from __future__ import annotations

from typing import Iterator

import orjson

from stream_doctor.accumulate.irregularities import IndexShared
from stream_doctor.accumulate.stream import AccumulatedStream, ToolCall
from stream_doctor.rules.base import Rule, problems, rule
from stream_doctor.rules.correlation._calls import choice_of
from stream_doctor.util.wording import excerpt
from stream_doctor.values.findings import Finding, Severity


@rule("Several open tool calls share one index", Severity.WARNING, reads=(IndexShared,))
def check(stream: AccumulatedStream, self: Rule) -> Iterator[Finding]:
    groups: dict[int, list[ToolCall]] = {}
    for problem in problems(stream, self):
        first = stream.calls[problem.first]
        group = groups.setdefault(first.ordinal, [first])
        joined = next(
            (
                c
                for c in stream.calls
                if c.started == problem.pos
                and c.index == problem.index
                and c not in group
                and (c.call_id == problem.call_id or problem.call_id is None)
            ),
            None,
        )
        # With n > 1 every choice numbers its calls from 0: the same index in another choice is no merge.
        if joined is not None and choice_of(joined) == choice_of(first):
            group.append(joined)
    for group in groups.values():
        if len(group) < 2:
            continue
        first, second = group[0], group[1]
        fragments = sorted(
            (fragment for call in group for fragment in call.fragments), key=lambda f: (f.pos.number, f.pos.offset)
        )
        merged = "".join(f.text for f in fragments)
        try:
            orjson.loads(merged)
            parses = "which parses, but holds only part of what was asked"
        except orjson.JSONDecodeError:
            parses = "which does not parse"
        names = "".join(c.name or "" for c in group)
        calls = ", ".join(c.label for c in group)
        choice = choice_of(first)
        where = f"index {first.index}" + (f" of choice {choice}" if isinstance(choice, int) and choice else "")
        yield self.finding(
            stream,
            second.started,
            f"{len(group)} calls are open on call {where} ({calls}); a client that keys calls by index "
            f"(openai-python's accumulate_delta, LiteLLM's stream_chunk_builder) builds one call named "
            f"{excerpt(names, 50)} with arguments {excerpt(merged, 70)}, {parses}",
            "Look calls up by id before index and start a new call when a new id names a tool; "
            "report the server that gives parallel calls one index",
            [("first call on this index", first.started)],
            second,
        )
