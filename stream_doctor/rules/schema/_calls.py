"""Shared by the SD701 to SD703 rules: the findings of the violations ``Conversation.violations`` found."""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from stream_doctor.conversation.model import Conversation
from stream_doctor.conversation.schemas import NOT_VALIDATED
from stream_doctor.rules.base import Rule
from stream_doctor.values.findings import Finding

if TYPE_CHECKING:
    from stream_doctor.conversation.schemas import Violation


def violation_findings(
    conversation: Conversation, rule: Rule, keywords: set[str] | None, hint: str
) -> Iterator[Finding]:
    """One finding per violation whose keyword is in ``keywords`` (None: every keyword but required and type)."""
    for turn, call, tool, violations in conversation.violations:
        for violation in violations:
            wanted = (
                violation.keyword in keywords
                if keywords is not None
                else violation.keyword not in ("required", "type", NOT_VALIDATED)
            )
            if not wanted:
                continue
            where = conversation.tool_location(turn, tool)
            yield rule.finding_at(
                conversation.stream_location(turn.number, call.ended or call.started),
                f"{call.name} ({call.call_id or 'no id'}): {describe(violation)} (schema rule "
                f"{violation.keyword} at {tool.path}#{violation.schema_path})",
                hint,
                [("call started", conversation.stream_location(turn.number, call.started)), ("tool declared", where)],
                call.call_id,
            )


def describe(violation: Violation) -> str:
    if violation.keyword == "required":
        return f"{violation.json_path} is missing"
    return f"{violation.json_path}: {violation.message}"
