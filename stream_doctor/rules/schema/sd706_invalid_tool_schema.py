"""A tool's schema is not a valid JSON Schema, so its calls cannot be validated.

What it checks:
    Before a call is validated, its tool's schema is checked against the metaschema of the draft
    it declares (2020-12 when it declares none; Gemini's OpenAPI ``parameters`` once converted).
    Reported once per tool and turn, for tools that calls use.

Why it matters:
    Providers reject some invalid schemas outright, and accept others while ignoring the broken
    part, so the model gets no constraint where the developer believed there was one; strict
    modes refuse the request.

Severity:
    warning. Providers reject some invalid schemas and ignore others; the calls are not validated.
    info when the schema nests too deeply for the validator to follow (about 100 levels of ``anyOf``):
    it was not checked, may well be valid, and its calls were not validated either.
    info too, once per call, when a call's arguments nest too deeply for the validator to follow
    (some hundred levels): that call was not validated against its valid schema, and nothing says it
    breaks it.
    What if the request asked for this? The schema is the request's own: the finding is about what
    the request declared, not about the provider's answer to it.

Example:
    "input_schema": {"type":"object","properties":{"days":{"type":"int"}}}

How to fix:
    Fix the schema (here ``"type": "integer"``); validate tool schemas in your tests with the
    draft the provider uses.
"""

from __future__ import annotations

from typing import Iterator

from stream_doctor.conversation.model import Conversation
from stream_doctor.rules.base import Rule, rule
from stream_doctor.values.findings import Finding, Severity


@rule("A tool's schema is not valid JSON Schema; its calls were not validated", Severity.WARNING)
def check(conversation: Conversation, self: Rule) -> Iterator[Finding]:
    from stream_doctor.conversation.schemas import TOO_DEEP, schema_problem

    yield from _unvalidated_calls(conversation, self)

    reported: set[tuple[int, str]] = set()
    for turn, call, tools in conversation.checked_calls:
        tool = tools.get(call.name or "")
        if tool is None or tool.schema is None or (turn.number, tool.name) in reported:
            continue
        problem = schema_problem(tool)
        if problem is None:
            continue
        reported.add((turn.number, tool.name))
        related = [("a call to it", conversation.stream_location(turn.number, call.started))]
        if problem == TOO_DEEP:
            yield self.finding_at(
                conversation.tool_location(turn, tool),
                f"the schema of {tool.name} ({tool.path}) was not checked: {problem}; its calls were not validated",
                "Flatten the schema (a $ref to a definition in place of deep nesting) for its calls to be validated",
                related,
                severity=Severity.INFO,
                kind="too deep",
            )
            continue
        yield self.finding_at(
            conversation.tool_location(turn, tool),
            f"the schema of {tool.name} ({tool.path}) is not valid JSON Schema: {problem}; its calls were not "
            f"validated",
            "Fix the tool's schema; validate tool schemas in tests with the draft the provider uses",
            related,
        )


def _unvalidated_calls(conversation: Conversation, self: Rule) -> Iterator[Finding]:
    """The calls whose arguments nest too deeply to be validated against their tool's (valid) schema."""
    from stream_doctor.conversation.schemas import NOT_VALIDATED

    for turn, call, tool, violations in conversation.violations:
        for violation in violations:
            if violation.keyword != NOT_VALIDATED:
                continue
            yield self.finding_at(
                conversation.stream_location(turn.number, call.ended or call.started),
                f"{call.name} ({call.call_id or 'no id'}): {violation.message}; nothing was checked against "
                f"the schema at {tool.path}",
                "Flatten the arguments (or check them in your application) for the call to be validated",
                [("call started", conversation.stream_location(turn.number, call.started))],
                call.call_id,
                severity=Severity.INFO,
                kind="too deep",
            )
