"""Two calls in one message run the same tool with the same arguments under different ids.

What it checks:
    Within one message, a completed client call whose tool name and parsed arguments equal an
    earlier call's, while its id differs (or either has none).

Why it matters:
    A model may mean to call a tool twice with the same input, but more often one invocation has
    been surfaced twice: a gateway that re-emits the finished call at the end of the stream under
    a new id or index (the LiteLLM proxy's trailing summary chunk, litellm #20480). A client that runs every call runs a
    side-effecting tool twice; one that deduplicates by (name, arguments) drops a legitimate twin
    (llama_index #22464), so look at the stream before choosing.

Severity:
    warning. Not provably wrong (a model may call a tool twice with one input), but clients that run
    every call run a side-effecting tool twice when a gateway re-emitted it (litellm #20480).
    What if the request asked for this? ``parallel_tool_calls: false`` asks for one call a message,
    so two equal calls under it are the server's; with parallel calls allowed the model may make
    both, which is why this stays a warning and not an error.

Example:
    data: {…"tool_calls":[{"index":0,"id":"call_A","function":{"name":"send_email","arguments":"{…}"}}]…}
    data: {…"tool_calls":[{"index":1,"id":"call_B","function":{"name":"send_email","arguments":"{…same…}"}}]…}

How to fix:
    Find the layer that repeats the call (compare with the provider's raw stream) and fix it; in
    the client, run a call once per id and confirm twins that are not intended.
"""

from __future__ import annotations

from typing import Iterator

import orjson

from stream_doctor import jsontext
from stream_doctor.accumulate.stream import AccumulatedStream, ToolCall
from stream_doctor.findings import Finding, Severity
from stream_doctor.rules.base import Rule, rule
from stream_doctor.wording import preview


@rule("SD509", "duplicate-call", "Two calls in one message have the same tool and arguments", Severity.WARNING)
def check(stream: AccumulatedStream, self: Rule) -> Iterator[Finding]:
    for message in stream.messages:
        # Calls by tool and a hash of their arguments: keeping every call's serialised arguments
        # would hold as much as the capture again. Equal hashes are confirmed on the bytes.
        seen: dict[tuple[str, int], list[ToolCall]] = {}
        for ordinal in message.calls:
            call = stream.calls[ordinal]
            if call.server_side or call.status != "complete" or call.parse_failure is not None or not call.name:
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
            yield self.finding(
                stream,
                call.started,
                f"{call.label} repeats {first.label}: the same tool with the same arguments "
                f"{preview(call.arguments, 60)}; if the model did not mean to call it twice, a layer re-emitted the "
                f"call and a client that runs every call runs it twice",
                "Check the provider's raw stream for the second call; run a call once per invocation",
                [("first call", first.started)],
                call,
            )


def _identity(call: ToolCall) -> bytes:
    return jsontext.dumps(call.arguments, orjson.OPT_SORT_KEYS)
