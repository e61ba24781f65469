"""What the SD8xx rules share: who the client is, how a handoff is shown, and the finding itself."""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Iterable

from stream_doctor.capture.base import Pos
from stream_doctor.rules.base import Rule
from stream_doctor.util.wording import excerpt, preview, where
from stream_doctor.values.events import MISSING
from stream_doctor.values.findings import Finding, Severity

if TYPE_CHECKING:
    from stream_doctor.accumulate.stream import ToolCall
    from stream_doctor.clients.base import Handoff
    from stream_doctor.clients.compare import ClientReview, Difference


def who(review: ClientReview) -> str:
    return review.who


def hint(review: ClientReview) -> str:
    """The client's one-line summary, and why its model answered when a library was not run."""
    return f"{review.who}: {review.profile.summary}{_noted(review)}."


def _noted(review: ClientReview) -> str:
    provenance = review.provenance
    return f" ({provenance.note})" if provenance is not None and provenance.note else ""


def severity(review: ClientReview) -> Severity:
    return Severity.WARNING if review.profile.kind == "library" else Severity.INFO


def shown(handoff: Handoff) -> str:
    """The input as the tool would get it: the value, or the text when it does not parse."""
    if handoff.input is not MISSING:
        return preview(handoff.input)
    if handoff.arguments == "":
        return "an empty argument text"
    if handoff.arguments is not None:
        return excerpt(handoff.arguments)
    return "no input"


def when(handoff: Handoff) -> str:
    place = where(handoff.at) if handoff.at is not None else "the end of the stream"
    return f"{place}, on {handoff.when}"


def correct(call: ToolCall) -> str:
    return preview(call.arguments) if call.arguments is not None else excerpt(call.raw_arguments)


def report(
    rule: Rule,
    review: ClientReview,
    kind: str,
    message: Callable[[ClientReview, Difference, ToolCall], str],
    advice: str,
) -> Iterable[Finding]:
    """One finding per difference of ``kind``, at the event where the client acts (or the call's start)."""
    for difference in review.differences:
        if difference.kind != kind:
            continue
        call = review.call(difference.call)
        handoff = difference.handoff
        pos: Pos | None = handoff.at if handoff is not None and handoff.at is not None else call.started
        related = [("call started", call.started), ("call completed", call.ended)]
        yield rule.finding(
            review.stream,
            pos,
            message(review, difference, call),
            advice.format(client=who(review), summary=review.profile.summary + _noted(review)),
            related,
            call,
            severity(review),
        )
