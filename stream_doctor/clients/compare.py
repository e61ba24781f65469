"""A client's handoffs set against the reference calls: per call, what differs.

The correct call is the reference accumulator's: a complete call whose arguments parse is run
once, with that value, at its completion event; an abandoned call, or one whose arguments do not
parse, is not run. Server-side calls (the provider runs them) are left out on both sides.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from stream_doctor.clients.base import ClientError, Handoff, Profile, Provenance
from stream_doctor.util.jsontext import equal
from stream_doctor.values.events import MISSING

if TYPE_CHECKING:
    from stream_doctor.accumulate.stream import AccumulatedStream, ToolCall

DifferenceKind = Literal["input", "early", "abandoned", "dropped", "raised", "identity", "merged", "split"]


@dataclass(frozen=True, slots=True)
class Difference:
    kind: DifferenceKind
    call: int  # the reference call's ordinal
    handoff: Handoff | None  # the client's handoff it is about (None: the client handed nothing)


@dataclass(frozen=True, slots=True)
class CallVerdict:
    """One reference call, as this client would treat it."""

    call: int
    handoffs: tuple[Handoff, ...]  # the handoffs standing for this call (usually one, or none)
    differences: tuple[Difference, ...]
    expected: Literal["run", "not-run"]

    @property
    def agrees(self) -> bool:
        return not self.differences


@dataclass(frozen=True)
class ClientReview:
    """One profile over one stream: the subject of the SD8xx rules."""

    stream: AccumulatedStream
    profile: Profile
    handoffs: tuple[Handoff, ...]
    error: ClientError | None
    verdicts: tuple[CallVerdict, ...]
    provenance: Provenance | None = None  # a library's: run or model (None: a naive pattern)

    @property
    def who(self) -> str:
        """The client as findings name it: "installed anthropic 2.12.0 (run)", "model of anthropic-python
        2.12.0", or a naive pattern's name."""
        provenance = self.provenance
        if provenance is None:
            return self.profile.label
        if provenance.mode == "run":
            return f"installed {provenance.library} {provenance.version} (run)"
        return f"model of {self.profile.label}"

    @property
    def differences(self) -> tuple[Difference, ...]:
        return tuple(d for v in self.verdicts for d in v.differences)

    def call(self, ordinal: int) -> ToolCall:
        return self.stream.calls[ordinal]


def expected_run(call: ToolCall) -> bool:
    """Whether a correct client runs this call: complete, and its arguments parse."""
    if call.status != "complete":
        return False
    return call.input_format == "text" or call.parse_failure is None


def review(
    stream: AccumulatedStream,
    profile: Profile,
    handoffs: tuple[Handoff, ...],
    error: ClientError | None,
    provenance: Provenance | None = None,
) -> ClientReview:
    by_call: dict[int, list[Handoff]] = {}
    folded: dict[int, Handoff] = {}  # a call whose fragments went into another call's handoff
    for handoff in handoffs:
        if handoff.calls:
            by_call.setdefault(handoff.calls[0], []).append(handoff)
            for other in handoff.calls[1:]:
                folded.setdefault(other, handoff)
    verdicts = []
    for call in stream.calls:
        if call.server_side:
            continue
        mine = tuple(by_call.get(call.ordinal, ()))
        if call.parse_failure is not None and call.parse_failure.kind == "too-deep":
            # Valid or not, the reference could not read it (SD201 says so, info): nothing to compare with.
            verdicts.append(CallVerdict(call.ordinal, mine, (), "run"))
            continue
        if not mine and call.ordinal in folded and expected_run(call):
            difference = Difference("merged", call.ordinal, folded[call.ordinal])
            verdicts.append(CallVerdict(call.ordinal, (), (difference,), "run"))
            continue
        verdicts.append(_verdict(call, mine, error))
    return ClientReview(stream, profile, handoffs, error, tuple(verdicts), provenance)


def _verdict(call: ToolCall, mine: tuple[Handoff, ...], error: ClientError | None) -> CallVerdict:
    run = expected_run(call)
    found: list[Difference] = []
    ran = [h for h in mine if not h.invalid]
    if run:
        if not ran and any(len(h.calls) > 1 for h in mine):
            found.append(Difference("merged", call.ordinal, mine[0]))
        elif not ran:
            stopped = error is not None and (
                error.pos is None or call.ended is None or error.pos.number <= call.ended.number
            )
            found.append(Difference("raised" if stopped else "dropped", call.ordinal, mine[0] if mine else None))
        else:
            first = ran[0]
            last_fragment = call.fragment_positions[-1] if call.fragment_positions else None
            if len(first.calls) > 1:
                found.append(Difference("merged", call.ordinal, first))
            elif first.at is not None and last_fragment is not None and first.at.number < last_fragment.number:
                found.append(Difference("early", call.ordinal, first))
            elif not equal(first.input, call.arguments):
                found.append(Difference("input", call.ordinal, first))
            if (
                len(first.calls) == 1
                and (first.name or None) != (call.name or None)
                or (len(first.calls) == 1 and call.call_id is not None and (first.call_id or None) != call.call_id)
            ):
                found.append(Difference("identity", call.ordinal, first))
            if len(ran) > 1:
                found.append(Difference("split", call.ordinal, ran[1]))
    else:
        for handoff in ran:
            if handoff.input is MISSING:
                continue  # handed as text that does not parse: the application's own json.loads refuses it
            kind: Literal["abandoned", "input"] = "abandoned" if call.status != "complete" else "input"
            found.append(Difference(kind, call.ordinal, handoff))
            break
    return CallVerdict(call.ordinal, mine, tuple(found), "run" if run else "not-run")
