"""Two calls in one message run the same tool with the same arguments under different ids.

What it checks:
    Within one message, a completed client call whose tool name and parsed arguments equal an
    earlier call's, while its id differs (or either has none). The twin is a warning when it has the
    shape of a re-emitted call: the earlier call's arguments were streamed in several fragments, all
    before the twin began, and the twin's arrived whole in one piece (the LiteLLM proxy's trailing
    summary chunk, litellm #20480). Twins that each came the way the provider streams its calls (two
    calls of a no-argument tool, two whole calls from a server that sends every call in one chunk)
    are info.

Why it matters:
    A model may mean to call a tool twice with the same input, but sometimes one invocation has
    been surfaced twice: a gateway that re-emits the finished call at the end of the stream under
    a new id or index (litellm #20480). A client that runs every call runs a side-effecting tool
    twice; one that deduplicates by (name, arguments) drops a legitimate twin (llama_index #22464),
    so look at the stream before choosing.

Severity:
    warning for the re-emitted shape: openai-python (``ChatCompletionStreamState`` keys calls by
    ``index``), openai-node (likewise) and the AI SDK (a tool-call part per call) hand both calls to
    the application (their profiles, ``--client``, predict both run), so an agent loop runs the tool
    twice for one invocation of the model. info for an ordinary twin: a
    model calling the same tool twice with one input is documented behaviour (parallel calls), and
    the provider streamed each call as its own (a real llm-anthropic cassette calls a no-argument tool
    twice on purpose and sends both results back).
    What if the request asked for this? ``parallel_tool_calls: false`` asks for one call a message,
    so two equal calls under it are the server's; with parallel calls allowed the model may make
    both, which is why the re-emitted shape stays a warning and not an error.

Example:
    data: {…"tool_calls":[{"index":0,"id":"call_A","function":{"name":"send_email","arguments":""}}]…}
    data: {…"tool_calls":[{"index":0,"function":{"arguments":"{\"to\":"}}]…}   (… more fragments)
    data: {…"tool_calls":[{"index":1,"id":"call_B","function":{"name":"send_email","arguments":"{…same…}"}}]…}

How to fix:
    Find the layer that repeats the call (compare with the provider's raw stream) and fix it; in
    the client, run a call once per id and confirm twins that are not intended.
"""

from __future__ import annotations

from collections import Counter
from typing import Iterator

import orjson

from stream_doctor.accumulate.stream import AccumulatedStream, ToolCall
from stream_doctor.rules.base import Rule, rule
from stream_doctor.util import jsontext
from stream_doctor.util.wording import preview
from stream_doctor.values.findings import Finding, Severity


@rule("Two calls in one message have the same tool and arguments", Severity.WARNING)
def check(stream: AccumulatedStream, self: Rule) -> Iterator[Finding]:
    for message in stream.messages:
        if len(message.calls) < 2:
            continue  # a call alone in its message has no twin (a session's every turn): nothing to count
        calls = [stream.calls[ordinal] for ordinal in message.calls]
        calls = [call for call in calls if _comparable(call)]
        # Only a tool called twice can have a twin: a call alone under its name is not read (its
        # arguments parsed and serialised again), which a message of one long call would pay in full.
        named = Counter(call.name for call in calls)
        # Calls by tool and a hash of their arguments: keeping every call's serialised arguments
        # would hold as much as the capture again. Equal hashes are confirmed on the bytes.
        seen: dict[tuple[str | None, int], list[ToolCall]] = {}
        for call in calls:
            if named[call.name] < 2:
                continue
            try:
                identity = _identity(call)
            except TypeError:
                continue
            alike = seen.setdefault((call.name, hash(identity)), [])
            first = next((other for other in alike if _identity(other) == identity), None)
            if first is None:
                alike.append(call)
                continue
            if first.call_id is not None and first.call_id == call.call_id:
                continue  # the same id twice is SD405's
            same = f"{call.label} repeats {first.label}: the same tool with the same arguments {preview(call.arguments, 60)}"
            if _reemitted(first, call):
                yield self.finding(
                    stream,
                    call.started,
                    f"{same}; {first.label} was streamed in fragments and this one arrived whole after it, as a "
                    "gateway re-emits a finished call (litellm #20480): openai-python, openai-node and the AI SDK "
                    "hand both calls over, and an agent loop runs the tool twice",
                    "Check the provider's raw stream for the second call; run a call once per invocation",
                    [("first call", first.started)],
                    call,
                )
                continue
            yield self.finding(
                stream,
                call.started,
                f"{same}; each was streamed as its own call, as a model calling a tool twice is: a client that "
                "runs every call runs it twice, one that deduplicates runs it once",
                "If the tool has side effects, confirm the twin is intended before running it twice",
                [("first call", first.started)],
                call,
                severity=Severity.INFO,
            )


def _comparable(call: ToolCall) -> bool:
    """A completed client call of a named tool whose arguments parsed: one that can have a twin."""
    return not call.server_side and call.status == "complete" and call.parse_failure is None and bool(call.name)


def _identity(call: ToolCall) -> bytes:
    return jsontext.dumps(call.arguments, orjson.OPT_SORT_KEYS)


def _reemitted(first: ToolCall, twin: ToolCall) -> bool:
    """The twin has a re-emitted call's shape: the first call's arguments came in several non-empty
    fragments, all before the twin began, and the twin's came whole (at most one non-empty fragment)."""
    streamed = [pos for text, pos in zip(first.fragment_texts, first.fragment_positions, strict=True) if text]
    if len(streamed) < 2 or streamed[-1].number >= twin.started.number:
        return False
    return sum(1 for text in twin.fragment_texts if text) <= 1
