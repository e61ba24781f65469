"""Shared by the SD6xx rules: turn the conversation's pairing problems of one kind into findings."""

from __future__ import annotations

from typing import Callable, Iterator, Literal, TypeVar

from stream_doctor.conversation.model import Conversation
from stream_doctor.conversation.pairing_problems import EchoedInput, PairingProblem
from stream_doctor.rules.base import Rule
from stream_doctor.util.wording import preview
from stream_doctor.values.events import MISSING
from stream_doctor.values.findings import Finding, Severity

I = TypeVar("I", bound=PairingProblem)  # noqa: E741

#: How a rule that says "the API rejects this request" treats a capture that does not record the answer:
#: "documented" keeps the error (the provider documents the rejection), "shown" asks the capture to show it.
Rejection = Literal["documented", "shown"]


def problems_of(
    conversation: Conversation,
    rule: Rule,
    kind: type[I],
    message: Callable[[I], str],
    hint: str | Callable[[I], str],
    rejection: Rejection | None = None,
) -> Iterator[Finding]:
    """``rejection``: how the rule's claim that the API rejects the request is checked against the answer the
    capture recorded. When the capture shows the API accepted that request (a normal answer to it), nothing
    broke: the finding is info, naming the answer (docs/severity.md)."""
    for problem in conversation.problems:
        if type(problem) is not kind:
            continue
        text, severity = message(problem), None
        if rejection is not None:  # the claim is checked against the answer the capture recorded
            answer = answer_to(conversation, problem.at.turn)
            if answer == "accepted":
                text += f"; yet the capture shows the API accepted this request (turn {problem.at.turn} got a normal answer)"
                severity = Severity.INFO
            elif answer is None and rejection == "shown":
                text += "; the capture does not record the answer to this request"
                severity = Severity.WARNING
        yield rule.finding_at(
            conversation.location(problem.at),
            text,
            hint(problem) if callable(hint) else hint,
            [(label, conversation.location(place)) for label, place in problem.related],
            problem.call_id,
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


def echoed_value(problem: EchoedInput) -> object:
    """What to show of an echoed input: the value, or the arguments text when that says more (``""``, bad JSON)."""
    raw = problem.raw
    if isinstance(raw, str) and (problem.echoed is MISSING or not raw.strip()):
        return raw
    return problem.echoed
