"""Client reviews on the report: per call, what each client would hand the tool, as the report's
per-call extra data (``Report.with_extra``), so every reporter shows it without knowing profiles."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from stream_doctor.util.wording import excerpt, preview, where
from stream_doctor.values.events import MISSING
from stream_doctor.values.report import CallExtra, Report

if TYPE_CHECKING:
    from stream_doctor.clients.base import Handoff
    from stream_doctor.clients.compare import CallVerdict, ClientReview

KEY = "clients"

_SAID = {
    "input": "runs it with another input",
    "early": "runs it before its last fragment",
    "abandoned": "runs it though it never completed",
    "dropped": "never runs it",
    "raised": "raises before running it",
    "identity": "uses another name or id",
    "merged": "folds it with another call",
    "split": "runs it more than once",
}


def attach(report: Report, reviews: list[tuple[int, tuple[ClientReview, ...]]]) -> Report:
    """``report`` with a ``clients`` extra on every call some profile reviewed."""
    attached: list[tuple[int, CallExtra]] = []
    for turn_index, turn_reviews in reviews:
        calls = report.turns[turn_index].stream.calls if report.turns else report.stream.calls
        per_call: dict[int, tuple[dict[str, Any], list[str]]] = {}
        for review in turn_reviews:
            for verdict in review.verdicts:
                data, lines = per_call.setdefault(verdict.call, ({}, []))
                data[review.profile.name] = _data(review, verdict)
                lines.append(_line(review, verdict))
                lines += [f"  {said}" for call, said in _model_differs(review) if call == verdict.call]
        for ordinal, (data, lines) in sorted(per_call.items()):
            attached.append((report.number(calls[ordinal]), CallExtra(KEY, data, tuple(lines))))
    return report.with_extras(attached)  # at once: a copy of the report per call would be quadratic


def _data(review: ClientReview, verdict: CallVerdict) -> dict[str, Any]:
    profile = review.profile
    handed = [_handoff(h) for h in verdict.handoffs]
    data: dict[str, Any] = {
        "version": profile.version,
        "kind": profile.kind,
        "agrees": verdict.agrees,
        "differences": [d.kind for d in verdict.differences],
        "handoffs": handed,
    }
    provenance = review.provenance
    if provenance is not None:
        data["source"] = {
            "label": review.who,
            "mode": provenance.mode,
            "library": provenance.library,
            "version": provenance.version,
            "note": provenance.note,
        }
        if provenance.model_differs is not None:  # the model was set against the run: null where they agree
            differs = [said for call, said in provenance.model_differs if call == verdict.call]
            data["source"]["model_differs"] = differs[0] if differs else None
    if review.error is not None:
        error = review.error
        data["raises"] = {
            "exception": error.exception,
            "message": error.message,
            "line": error.pos.line if error.pos is not None else None,
            "event": error.pos.number if error.pos is not None else None,
        }
    return data


def _handoff(handoff: Handoff) -> dict[str, Any]:
    return {
        "input": None if handoff.input is MISSING else handoff.input,
        "arguments": handoff.arguments,
        "runs": not handoff.invalid and handoff.input is not MISSING,
        "line": handoff.at.line if handoff.at is not None else None,
        "event": handoff.at.number if handoff.at is not None else None,
        "when": handoff.when,
        "id": handoff.call_id,
        "name": handoff.name,
    }


def model_differs(run: ClientReview, model: ClientReview) -> tuple[tuple[int, str], ...]:
    """Per reference call, where the model's verdict differs from the library's run: the one sentence
    that says both (the SD809 finding's message, the line under the call, ``source.model_differs``)."""
    ran = {v.call: v for v in run.verdicts}
    found = []
    for verdict in model.verdicts:
        other = ran.get(verdict.call)
        if other is None or _gist(verdict) != _gist(other):
            handed = _action(run, other) if other is not None else "does not review it"
            said = f"{run.who} {handed}, where the model of {model.profile.label} {_action(model, verdict)}"
            found.append((verdict.call, said))
    return tuple(found)


def _gist(verdict: CallVerdict) -> tuple[Any, ...]:
    """What a verdict says of a call: how it differs, and the first handoff's event and input."""
    first = verdict.handoffs[0] if verdict.handoffs else None
    handed = (first.at.number if first.at is not None else None, first.input, first.invalid) if first else None
    return tuple(d.kind for d in verdict.differences), handed


def _model_differs(review: ClientReview) -> tuple[tuple[int, str], ...]:
    provenance = review.provenance
    return provenance.model_differs or () if provenance is not None else ()


def _line(review: ClientReview, verdict: CallVerdict) -> str:
    said = f"{review.who}: {_action(review, verdict)}"
    note = review.provenance.note if review.provenance is not None else None
    said += f" ({note})" if note else ""
    if verdict.agrees:
        return f"{said}; as the correct client"
    return f"{said}; differs: {', '.join(_SAID[d.kind] for d in verdict.differences)}"


def _action(review: ClientReview, verdict: CallVerdict) -> str:
    """What the client does with the call: runs it (with what, where, on which event), holds it, raises."""
    if verdict.handoffs:
        first = verdict.handoffs[0]
        place = where(first.at) if first.at is not None else "the end of the stream"
        if first.invalid or first.input is MISSING:
            what = f"holds {excerpt(first.arguments) if first.arguments else 'no input'} and does not run it"
        else:
            what = f"runs it with {preview(first.input, 60)}"
        return f"{what} at {place}, on {first.when}"
    if review.error is not None and any(d.kind == "raised" for d in verdict.differences):
        return f"raises {review.error.exception} first"
    return "does not run it"
