"""A tool call started after its choice's ``finish_reason``.

What it checks:
    In OpenAI's stream the ``finish_reason`` chunk is the last content of a choice. Some compatible
    servers (Together) send ``finish_reason: "tool_calls"`` on the last fragment of each call, so a
    second call streams after the first finish_reason, then gets its own. stream-doctor keeps
    reading: the later call completes at the next finish_reason (or at ``[DONE]``), so nothing is
    abandoned, and this rule says which call came late.

Why it matters:
    openai-python's ``chat.completions.stream()`` helper marks a call done on the first chunk after a
    finish_reason (``ChoiceEventState.get_done_events`` in ``lib/streaming/chat/_completions.py``: once
    the snapshot has a finish_reason, the current tool index gets its ``arguments.done``), so a later
    call is handed over before its last fragment, or never when it ends the stream; openai-node's
    ``ChatCompletionStream`` does the same (its profile, 7.57.0). Hand-written loops that ``break`` on
    the first finish_reason lose the call. LangChain, LiteLLM and the AI SDK read to the end and get
    both calls.

Severity:
    warning. The calls are complete (stream-doctor's accumulator, LangChain, LiteLLM and the AI SDK
    get them all), but openai-python's stream helper and openai-node hand a later call over cut, or
    not at all.
    What if the request asked for this? ``n`` asks for several choices, each with its own
    finish_reason: the rule reads calls per choice, so a call in one choice after another choice's
    finish is never reported.

Example:
    data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"}"}}]},"finish_reason":"tool_calls"}]}
    data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_s4…","function":{"name":"get_tomorrow_weather"}}]}}]}

How to fix:
    In the client, read to ``[DONE]`` (or the end of the stream) and take the last finish_reason; on
    the server, send ``finish_reason`` once, after the choice's last call.
"""

from __future__ import annotations

from typing import Iterator

from stream_doctor.accumulate.stream import AccumulatedStream
from stream_doctor.capture.problem_facts import CallAfterFinishReason
from stream_doctor.rules.base import Rule, rule
from stream_doctor.rules.capture._problems import problems_of
from stream_doctor.values.findings import Finding, Severity


@rule("A tool call started after its choice's finish_reason", Severity.WARNING, reads=("call-after-finish-reason",))
def check(stream: AccumulatedStream, self: Rule) -> Iterator[Finding]:
    return problems_of(
        stream,
        self,
        "Read to [DONE] and take the last finish_reason; do not stop at the first one",
        "{message}: the call completes at the next finish_reason, but openai-python's stream helper "
        "(ChoiceEventState.get_done_events) and openai-node mark it done at its first chunk after a finish_reason, "
        "so they hand it over cut or never, and a loop that breaks on the first finish_reason never sees it",
        words=(CallAfterFinishReason, late),
    )


def late(facts: CallAfterFinishReason) -> str:
    line = facts.reason_line if facts.reason_line is not None else "?"
    return (
        f"{facts.tool or 'a tool call'} ({facts.call_id or 'no id'}) starts in choice {facts.choice} after its "
        f"finish_reason {facts.reason} at line {line}"
    )
