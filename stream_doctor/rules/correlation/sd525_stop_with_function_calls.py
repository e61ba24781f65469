"""A Gemini turn that made function calls ended with ``finishReason: STOP``.

What it checks:
    Gemini has no tool-call finish reason: a turn that calls functions ends with ``STOP``, like a
    turn that just answers. stream-doctor reads such a turn as waiting for tool results; this note
    says where the calls and the ``STOP`` are, for clients ported from other APIs.

Why it matters:
    Code that runs tools only on a tool-call finish reason (OpenAI's ``tool_calls``, Anthropic's
    ``tool_use``) skips every Gemini call. Translators that map ``STOP`` to a tool-call finish only
    when the last chunk holds a ``functionCall`` report ``stop`` when, as newer models do, the calls
    and the ``STOP`` come in different chunks (envoyproxy/ai-gateway PR #2399).

Severity:
    info. Gemini documents ``STOP`` as the finish reason of a turn that made calls; only code that
    waits for a tool-call finish reason skips them.

Example:
    {"candidates":[{"content":{"parts":[{"functionCall":{"name":"weather","args":{…}}}]}}]}
    {"candidates":[{"content":{"parts":[{"text":""}]},"finishReason":"STOP"}]}

How to fix:
    Decide from the ``functionCall`` parts of the whole turn whether it waits for tool results,
    and map ``STOP`` with calls to your tool-call finish reason.
"""

from __future__ import annotations

from typing import Iterator

from stream_doctor.accumulate.stream import AccumulatedStream
from stream_doctor.rules.base import Rule, rule
from stream_doctor.util.wording import where
from stream_doctor.values.findings import Finding, Severity


@rule("A Gemini turn with function calls ended with finishReason STOP", Severity.INFO)
def check(stream: AccumulatedStream, self: Rule) -> Iterator[Finding]:
    normal = stream.capture.protocol.finish_with_calls
    if normal is None:
        return
    for message in stream.messages:
        if message.stop_reason != normal or message.stop_reason_pos is None:
            continue
        calls = [
            stream.calls[i]
            for i in message.calls
            if not stream.calls[i].server_side and stream.calls[i].status == "complete"
        ]
        if not calls:
            continue
        names = ", ".join(c.name or "?" for c in calls[:5]) + (", …" if len(calls) > 5 else "")
        count = f"{len(calls)} function call" + ("" if len(calls) == 1 else "s")
        text = (
            f"the turn made {count} ({names}) and ended with finishReason {normal}, Gemini's only normal finish: "
            f"code that runs tools only on a tool-call finish reason skips {'it' if len(calls) == 1 else 'them'}"
        )
        last = max(c.ended or c.started for c in calls)
        if message.stop_reason_pos.number > last.number:
            text += (
                f"; {normal} comes in a later chunk than the last call ({where(last)}), so a translator that looks "
                f"for a functionCall only in the final chunk reports 'stop'"
            )
        yield self.finding(
            stream,
            message.stop_reason_pos,
            text,
            "Decide from the functionCall parts whether the turn waits for tool results; map STOP with calls to a "
            "tool-call finish",
            [("first call", calls[0].started)],
        )
