"""Shared by the SD6xx rules: turn the conversation's pairing issues of one kind into findings."""

from __future__ import annotations

from typing import Callable, Iterator, Literal, TypeVar

from stream_doctor.conversation.model import Conversation, EchoedInput, PairingIssue
from stream_doctor.events import MISSING
from stream_doctor.findings import Finding, Severity
from stream_doctor.rules.base import Rule
from stream_doctor.wording import preview

I = TypeVar("I", bound=PairingIssue)  # noqa: E741

#: How a rule that says "the API rejects this request" treats a capture that does not record the answer:
#: "documented" keeps the error (the provider documents the rejection), "shown" asks the capture to show it.
Rejection = Literal["documented", "shown"]


def issues_of(
    conversation: Conversation,
    rule: Rule,
    kind: type[I],
    message: Callable[[I], str],
    hint: str | Callable[[I], str],
    rejection: Rejection | None = None,
) -> Iterator[Finding]:
    for issue in conversation.issues:
        if type(issue) is not kind:
            continue
        text, severity = message(issue), None
        if rejection is not None:  # the claim is checked against the answer the capture recorded
            answer = answer_to(conversation, issue.at.turn)
            if answer == "accepted":
                text += (
                    f"; yet the capture shows the API accepted this request (turn {issue.at.turn} got a normal answer)"
                )
                severity = Severity.WARNING
            elif answer is None and rejection == "shown":
                text += "; the capture does not record the answer to this request"
                severity = Severity.WARNING
        yield rule.finding_at(
            conversation.location(issue.at),
            text,
            hint(issue) if callable(hint) else hint,
            [(label, conversation.location(place)) for label, place in issue.related],
            issue.call_id,
            severity=severity,
        )


def answer_to(conversation: Conversation, number: int) -> Literal["accepted", "rejected"] | None:
    """What the provider answered turn ``number``'s request, when the capture recorded it.

    Rejected: an HTTP 4xx, or an error event in place of an answer. Accepted: a 2xx (or no recorded status)
    and a stream that ended normally without an error. None: nothing recorded (a last request with no stream).
    """
    turn = conversation.turn(number)
    if turn.status is not None and 400 <= turn.status < 500:
        return "rejected"
    messages = turn.stream.messages
    if any(m.error is not None for m in messages):
        return "rejected" if not turn.stream.calls and not any(m.blocks for m in messages) else None
    if messages and (turn.status is None or 200 <= turn.status < 300) and any(m.stopped for m in messages):
        return "accepted"
    return None


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
