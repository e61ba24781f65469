"""Shared by the SD6xx rules: turn the conversation's pairing issues of one kind into findings."""

from __future__ import annotations

from typing import Callable, Iterator, TypeVar

from stream_doctor.conversation.model import Conversation, EchoedInput, PairingIssue
from stream_doctor.events import MISSING
from stream_doctor.findings import Finding
from stream_doctor.rules.base import Rule, preview

I = TypeVar("I", bound=PairingIssue)  # noqa: E741


def issues_of(
    conversation: Conversation,
    rule: Rule,
    kind: type[I],
    message: Callable[[I], str],
    hint: str | Callable[[I], str],
) -> Iterator[Finding]:
    for issue in conversation.issues:
        if type(issue) is not kind:
            continue
        yield rule.finding_at(
            conversation.location(issue.at),
            message(issue),  # type: ignore[arg-type]
            hint(issue) if callable(hint) else hint,  # type: ignore[arg-type]
            [(label, conversation.location(place)) for label, place in issue.related],
            issue.call_id,
        )


def call_label(name: str | None, call_id: str | None) -> str:
    return f"{name or '?'} ({call_id or 'no id'})"


def value(detail: object, limit: int = 80) -> str:
    return preview(detail, limit)


def echoed_value(issue: EchoedInput) -> object:
    """What to show of an echoed input: the value, or the arguments text when that says more (``""``, bad JSON)."""
    raw = issue.raw
    if isinstance(raw, str) and (issue.echoed is MISSING or not raw.strip()):
        return raw
    return issue.echoed
