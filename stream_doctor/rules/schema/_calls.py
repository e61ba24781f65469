"""Shared by the SD7xx rules: the calls that are checked against a schema, and their violations."""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from stream_doctor.accumulate.stream import ToolCall
from stream_doctor.conversation.model import Conversation, ToolDef, Turn
from stream_doctor.rules.base import Rule
from stream_doctor.values.findings import Finding

if TYPE_CHECKING:
    from stream_doctor.conversation.schemas import Violation


def checked_calls(conversation: Conversation) -> Iterator[tuple[Turn, ToolCall, dict[str, ToolDef]]]:
    """Every complete client call whose arguments parsed, in a turn that has tool definitions."""
    for turn in conversation.turns:
        tools = conversation.tools_for(turn)
        if not tools:
            continue
        for call in turn.stream.calls:
            if call.server_side or call.status != "complete" or call.parse_failure is not None:
                continue
            if call.input_format != "json" or call.name is None:
                continue
            yield turn, call, tools


def violation_findings(
    conversation: Conversation, rule: Rule, keywords: set[str] | None, hint: str
) -> Iterator[Finding]:
    """One finding per violation whose keyword is in ``keywords`` (None: every keyword but required and type)."""
    from stream_doctor.conversation.schemas import violations

    for turn, call, tools in checked_calls(conversation):
        tool = tools.get(call.name or "")
        if tool is None or tool.schema is None:
            continue
        for violation in violations(tool, call.arguments):
            wanted = (
                violation.keyword in keywords if keywords is not None else violation.keyword not in ("required", "type")
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
