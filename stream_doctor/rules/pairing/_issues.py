"""Shared by the SD6xx rules: turn the conversation's pairing issues of one kind into findings."""

from __future__ import annotations

from typing import Callable, Iterator

from stream_doctor.conversation.model import Conversation, PairingIssue
from stream_doctor.events import MISSING
from stream_doctor.findings import Finding
from stream_doctor.rules.base import Rule, preview


def issues_of(
    conversation: Conversation,
    rule: Rule,
    kind: str,
    message: Callable[[PairingIssue], str],
    hint: str | Callable[[PairingIssue], str],
) -> Iterator[Finding]:
    for issue in conversation.issues:
        if issue.kind != kind:
            continue
        yield rule.finding_at(
            conversation.location(issue.at),
            message(issue),
            hint(issue) if callable(hint) else hint,
            [(label, conversation.location(place)) for label, place in issue.related],
            issue.call_id,
        )


def call_label(issue: PairingIssue, call_id: str | None = None) -> str:
    name = issue.detail.get("name")
    ident = call_id if call_id is not None else issue.call_id
    return f"{name or '?'} ({ident or 'no id'})"


def value(detail: object, limit: int = 80) -> str:
    return preview(detail, limit)


def echoed_value(detail: dict[str, object]) -> object:
    """What to show of an echoed input: the value, or the arguments text when that says more (``""``, bad JSON)."""
    raw = detail.get("raw")
    if isinstance(raw, str) and (detail.get("echoed") is MISSING or not raw.strip()):
        return raw
    return detail.get("echoed")
