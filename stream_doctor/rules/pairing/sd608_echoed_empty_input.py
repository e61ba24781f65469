"""The assistant turn sent back carries ``{}`` for a call whose stream carried real arguments.

What it checks:
    The next request sends the assistant turn back with each call's input (Anthropic
    ``tool_use.input``, OpenAI ``tool_calls[].function.arguments``, Gemini ``functionCall.args``,
    Bedrock ``toolUse.input``). When the stream carried a non-empty input for a call and the echo
    is ``{}``, an empty string or nothing, the client built the call from the start event's
    placeholder and never accumulated the fragments. Both values are reported.

Why it matters:
    This is the empty-input bug seen from the next request: whatever the client ran, it ran
    with what it recorded, ``{}`` (crustly PR #38, langchain #38679). The model then reads a
    history in which it called the tool without arguments, and often repeats the call.

Severity:
    error. The history the client sent proves it recorded (and so most likely ran) the call with
    ``{}`` while the stream carried arguments.

Example:
    stream        input_json_delta ×6 → {"path":"notes/todo.md","content":"…"}
    next request  {"type":"tool_use","id":"toolu_01A…","name":"write_file","input":{}}

How to fix:
    Accumulate every argument fragment of the call and parse them once when the call completes;
    never keep the start event's ``input`` when deltas follow.
"""

from __future__ import annotations

from typing import Iterator

from stream_doctor.conversation.model import Conversation
from stream_doctor.conversation.pairing_problems import EchoedEmptyInput
from stream_doctor.rules.base import Rule, rule
from stream_doctor.rules.pairing._problems import call_label, echoed_value, problems_of, value
from stream_doctor.values.findings import Finding, Severity


@rule("The call sent back has {} where its stream carried arguments (the empty-input bug)", Severity.ERROR, reach=1)
def check(conversation: Conversation, self: Rule) -> Iterator[Finding]:
    def message(problem: EchoedEmptyInput) -> str:
        echoed = echoed_value(problem)
        return (
            f"{call_label(problem.name, problem.call_id)} is sent back in turn {problem.at.turn}'s request ({problem.at.request_path}) with "
            f"{value(echoed)}, but its stream carried {value(problem.streamed)}: the client kept the empty "
            f"start input, so the tool most likely ran without its arguments too"
        )

    return problems_of(
        conversation,
        self,
        EchoedEmptyInput,
        message,
        "Accumulate every argument fragment and parse once at the call's completion; never keep the start event's {}",
    )
