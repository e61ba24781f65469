"""The call sent back carries other arguments than its stream did.

What it checks:
    The input of each call in the assistant turn the next request sends back is compared with the
    arguments the stream carried (parsed, so key order and spacing do not count). A difference
    other than the empty input of SD608 is reported with both values: a dropped key, a changed
    value, arguments that no longer parse.

Why it matters:
    The history no longer says what the model asked for: the tool probably ran with the
    recorded input, and the model reasons from a call it did not make. Causes: a parse of a
    partial buffer kept (vercel/ai #13137), a client that "repaired" the arguments, a gateway
    that rewrote them.

Severity:
    warning. The history differs from the stream; what ran is not proven by the request alone.
    What if the request asked for this? The request here is the application's own next request: what
    it echoes is its history, not a provider setting it asked for.

Example:
    stream        {"query":"test","limit":10}
    next request  "arguments":"{\\"query\\":\\"test\\"}"

How to fix:
    Keep the arguments exactly as completed from the stream, and send the same value to the tool
    and back to the model.
"""

from __future__ import annotations

from typing import Iterator

from stream_doctor.conversation.model import Conversation
from stream_doctor.conversation.pairing_problems import EchoedInputDiffers
from stream_doctor.rules.base import Rule, rule
from stream_doctor.rules.pairing._problems import call_label, echoed_value, problems_of, value
from stream_doctor.values.findings import Finding, Severity


@rule("The call sent back carries other arguments than its stream did", Severity.WARNING, reach=1)
def check(conversation: Conversation, self: Rule) -> Iterator[Finding]:
    def message(problem: EchoedInputDiffers) -> str:
        echoed = echoed_value(problem)
        return (
            f"{call_label(problem.name, problem.call_id)} is sent back in turn {problem.at.turn}'s request ({problem.at.request_path}) with "
            f"{value(echoed)}, but its stream carried {value(problem.streamed)}"
        )

    return problems_of(
        conversation,
        self,
        EchoedInputDiffers,
        message,
        "Send back the arguments exactly as completed from the stream, and run the tool with the same value",
    )
