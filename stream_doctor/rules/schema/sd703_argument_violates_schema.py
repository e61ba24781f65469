"""A call's arguments break another rule of its tool's schema (enum, pattern, bounds, extra properties …).

What it checks:
    Like SD701, each completed call's arguments are validated against its tool's schema; every
    violation of a keyword other than ``required`` and ``type`` (``enum``, ``const``,
    ``pattern``, ``minimum``, ``maxItems``, ``additionalProperties`` …) is reported with the
    argument's JSON path and the schema rule.

Why it matters:
    Models outside strict mode do not always respect enums, bounds or closed objects; a tool
    that trusts its input then acts on a value it was never meant to get. Under strict mode
    (OpenAI ``strict: true``, Anthropic structured tools) a violation points at a gateway or a
    client that changed the arguments.

Severity:
    warning. Outside strict mode models do break enums and bounds; validating clients reject the
    call and ask the model again.
    What if the request asked for this? With strict function calling (``strict: true``) the provider
    guarantees the schema, so a violation is the server's; without it the request left the model
    free, and a validating client still rejects the call: a warning either way.

Example:
    schema     {"properties":{"unit":{"enum":["celsius","fahrenheit"]}}}
    arguments  {"location":"Oslo","unit":"kelvin"}

How to fix:
    Validate before running the tool and return the error to the model; turn on strict tool use
    where the provider supports it.
"""

from __future__ import annotations

from typing import Iterator

from stream_doctor.conversation.model import Conversation
from stream_doctor.rules.base import Rule, rule
from stream_doctor.rules.schema._calls import violation_findings
from stream_doctor.values.findings import Finding, Severity


@rule("A call's arguments break a rule of its tool's schema (enum, pattern, bounds …)", Severity.WARNING)
def check(conversation: Conversation, self: Rule) -> Iterator[Finding]:
    return violation_findings(
        conversation,
        self,
        None,
        "Validate arguments before running the tool and send the validation error back to the model",
    )
