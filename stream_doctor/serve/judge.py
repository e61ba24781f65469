"""What the application did with what it was served: the verdicts printed when the server stops.

Each conversation is diagnosed as it is recorded (``Watching``), which keeps what its verdicts need once it is
closed (``Held``); a conversation it did not read whole (it fell behind, or broke) is replayed from its envelope
like any capture. The pairing and execution rules'
findings (SD6xx: the inputs it sent back against the stream, results for ids never served, calls
never answered, a result sent twice; SD1xx) are the application's; the other families judge the
capture, not the application, and are left to ``replay``. What only the server saw is said beside them: a request
refused, a connection the application closed before the stream's end, a follow-up that never came, and a call sent
back (its result, or the call echoed) that the stream as served never completed (``RAN_UNFINISHED``).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Callable, Iterable, Iterator, Mapping

from stream_doctor.record.live import Live, LiveConversation
from stream_doctor.serve.load import Script
from stream_doctor.serve.server import Served, ServedTurn
from stream_doctor.values.findings import Finding, Severity

if TYPE_CHECKING:
    from stream_doctor.conversation.model import Turn

#: The rule families whose findings are about what the application did (the others judge the capture).
_THE_APPLICATIONS = frozenset({"pairing", "execution"})

#: The judge's own finding: the application sent back a call (its result, or the call echoed) whose stream, as
#: served, never completed it. Only the server knows what it served: the rules see an abandoned call and a
#: result for its id, each allowed alone; together they prove the call ran on input that was never complete.
RAN_UNFINISHED = "ran-unfinished"
#: call-id-reused: said of a retried turn's calls, it is the server answering the retry with the same stream
_ID_REUSED = "SD607"


@dataclass(frozen=True)
class Verdict:
    """One thing the run proves (or notes) about the application, in one conversation."""

    severity: Severity
    code: str | None  # the rule's code; None for what the server itself saw
    message: str
    call_id: str | None = None  # the call the rule's finding is about, where it names one


@dataclass(frozen=True)
class Judged:
    served: Served
    verdicts: tuple[Verdict, ...]


@dataclass(frozen=True)
class Held:
    """What a conversation's findings give its verdicts: the application's findings as the replay's report gives
    them (in its order, the capture's secrets masked) and the calls it ran before their stream completed them."""

    findings: tuple[Verdict, ...]
    unfinished: tuple[Verdict, ...]


def judge(served: list[Served], held: Mapping[str, Held] | None = None) -> list[Judged]:
    """The verdicts of each conversation the application had with the server; a conversation the live diagnosis
    read whole (``held``, by envelope) is judged on what it holds, any other on its envelope replayed."""
    return [Judged(one, (*_seen(one), *_findings(one, held or {}))) for one in served]


def worst(judged: list[Judged]) -> Severity | None:
    severities = [v.severity for j in judged for v in j.verdicts]
    return max(severities) if severities else None


def _findings(served: Served, held: Mapping[str, Held]) -> Iterator[Verdict]:
    if not served.turns:  # every request refused: no stream to judge what was sent back against
        return
    kept = held.get(served.envelope) or _replayed(served)
    if isinstance(kept, Verdict):
        yield kept
        return
    repeated = {call_id for attempt in served.retried for call_id, _ in stream_calls(served.script, attempt.number)}
    for verdict in kept.findings:
        # a retry is answered with its turn again, the same call ids: their reuse is the server's, not the capture's
        if not (verdict.code == _ID_REUSED and verdict.call_id in repeated):
            yield verdict
    yield from kept.unfinished


def _replayed(served: Served) -> Held | Verdict:
    """What the conversation's envelope, replayed, gives its verdicts (or the one that says it could not be)."""
    from stream_doctor.api import replay
    from stream_doctor.engine.redaction import redacted
    from stream_doctor.engine.stages import RunError

    try:
        report = redacted(replay(served.envelope))
    except RunError as error:
        return Verdict(Severity.ERROR, None, f"the recorded conversation could not be replayed: {error}")
    return Held(_verdicts(f for f in report.findings if about_the_application(f)), tuple(_ran_unfinished(report.turns)))


def _verdicts(findings: Iterable[Finding]) -> tuple[Verdict, ...]:
    return tuple(Verdict(finding.severity, finding.code, finding.message, finding.call_id) for finding in findings)


def stream_calls(script: Script, number: int) -> list[tuple[str | None, str | None]]:
    """The id and name of each call turn ``number``'s recorded body carries, as the reference accumulator reads it."""
    from stream_doctor.api import replay

    recorded = script.turns[number - 1].recorded
    return [(call.call_id, call.name) for call in replay(recorded.body, provider=recorded.provider).stream.calls]


def _ran_unfinished(turns: Iterable[Turn]) -> Iterator[Verdict]:
    """Each call a turn's stream left incomplete that a later request sends back (a result, or the call echoed)."""
    unfinished: dict[str, tuple[int, str]] = {}  # call id -> the turn that served it, how its stream ended
    said: set[str] = set()
    for turn in turns:
        for sent, what in [
            *((r.call_id, "a result for") for r in turn.facts.results),
            *((c.call_id, "the call") for c in turn.facts.calls),
        ]:
            if sent is not None and sent in unfinished and sent not in said:
                said.add(sent)
                served, cause = unfinished[sent]
                yield Verdict(
                    Severity.ERROR,
                    RAN_UNFINISHED,
                    f"turn {turn.number}'s request sends back {what} {sent}, a call turn {served}'s stream never "
                    f"completed as it was served ({cause}): the application ran it before it was complete",
                    sent,
                )
        for call in turn.stream.calls:
            if call.status == "abandoned" and call.call_id is not None:
                unfinished[call.call_id] = (turn.number, call.abandon_cause or "the stream ended")
            elif call.call_id is not None:  # completed by a later answer (a retry of the turn): sent back whole
                unfinished.pop(call.call_id, None)


def about_the_application(finding: Finding) -> bool:
    """Whether the finding judges what the application did (its rule's family), not the capture."""
    from stream_doctor.rules import RULES

    rule = RULES.get(finding.code)
    return rule is not None and rule.family in _THE_APPLICATIONS


class Watching(Live):
    """The recorder's live findings on each conversation as it is written, kept to the application's:
    a finding is said the moment the request that proves it arrives (SD608 at the follow-up that sends
    ``{}`` back). Its listeners also tell the grouping which call and response ids each answer held, so
    a request that continues by them (a result, Responses' ``previous_response_id``) joins its conversation."""

    @cached_property
    def held(self) -> dict[str, Held]:
        """What the verdicts of each conversation closed after it was read whole need (by envelope path, written
        by the live thread): the judge replays only the others' envelopes."""
        return {}

    def found(self, conversation: LiveConversation, findings: Iterable[Finding]) -> None:
        super().found(conversation, [finding for finding in findings if about_the_application(finding)])

    def closed(self, conversation: LiveConversation) -> None:
        self.held[conversation.path] = self._what_verdicts_need(conversation)

    def _what_verdicts_need(self, conversation: LiveConversation) -> Held:
        """The conversation closed, read whole: what its verdicts need, so that the stop replays nothing. Its
        findings sorted and masked as the replay's report has them (``Report``'s order, ``redacted``'s secrets:
        those of its requests and its calls). (A finding's places may differ: turn 1's name no interaction while
        no turn 2 is known; a verdict says none.)"""
        from stream_doctor.engine.redaction import SecretRedactor

        findings = sorted(conversation.findings, key=lambda f: f.sort_key)
        # the secrets are looked for only when there is a message to mask: it reads every call's arguments
        if findings and conversation.turns:
            redactor = SecretRedactor.of_turns(conversation.turns)  # no events kept, as the judge's replay keeps none
            findings = [redactor.walk(finding) for finding in findings] if redactor else findings
        return Held(_verdicts(findings), tuple(_ran_unfinished(conversation.turns)))


def watching(emit: Callable[[str], None] | None = None, log: Callable[[str], None] | None = None) -> Watching:
    """What watches the conversations as they are recorded, with the options the server judges by."""
    from stream_doctor.values.options import Options

    return Watching(Options(), emit, log)


def _seen(served: Served) -> Iterator[Verdict]:
    script = served.script
    for number, differences in served.refused:
        yield Verdict(
            Severity.ERROR,
            None,
            f"request {number} differs from the capture's turn {number} in what the answer depends on, so it was "
            f"refused (400): {'; '.join(differences)}",
        )
    for number, differences in served.noted:
        yield Verdict(
            Severity.INFO,
            None,
            f"request {number} differs in what the answer does not depend on (served): {'; '.join(differences)}",
        )
    for attempt in served.retried:
        yield Verdict(
            Severity.INFO,
            None,
            f"request {attempt.number} was sent again (a retry) after its answer {_failure(attempt)}; the retry was "
            f"answered as turn {attempt.number} again, as recorded",
        )
    for number in served.beyond:
        yield Verdict(
            Severity.INFO,
            None,
            f"request {number} goes on past the capture's last turn ({len(script.turns)}): recorded and judged, answered 400",
        )
    for turn in served.turns:
        if turn.ending == "disconnected":
            yield Verdict(
                Severity.ERROR,
                None,
                f"the application closed the connection of turn {turn.number} after {turn.written} of its {turn.reads} "
                "reads: it stopped, or crashed, before the stream's end",
            )
        elif turn.ending == "stalled":
            yield Verdict(
                Severity.ERROR,
                None,
                f"the application stopped reading turn {turn.number} after {turn.written} of its {turn.reads} reads "
                "and was dropped after the server's idle timeout: it hung before the stream's end",
            )
    yield from _no_follow_up(served)


def _failure(turn: ServedTurn) -> str:
    """How an answer failed, as the application saw it."""
    if turn.status >= 400:
        return f"was a {turn.status} error"
    if turn.ending == "served":
        return "was written whole (the application gave up on it before its end, or never saw it end)"
    if turn.ending == "cut":
        return f"was cut by the server after {turn.written} of its {turn.reads} reads"
    if turn.ending == "stalled":
        return f"stalled after {turn.written} of its {turn.reads} reads (the application read nothing more)"
    return f"was closed by the application after {turn.written} of its {turn.reads} reads"


def _no_follow_up(served: Served) -> Iterator[Verdict]:
    """The capture's conversation goes on after the last turn served, and the application's did not."""
    if not served.turns or served.refused or served.beyond:
        return
    last = served.turns[-1]
    script = served.script
    if last.ending != "served" or last.number >= len(script.turns):
        return
    yield Verdict(
        Severity.ERROR,
        None,
        f"turn {last.number}'s stream was read to its end and no follow-up came; the capture's conversation goes on "
        f"to turn {last.number + 1} ({len(script.turns)} turns): the application dropped what that turn answered",
    )


def render(judged: list[Judged]) -> str:
    """The verdicts as the CLI prints them when the server stops: one line each, capture text escaped."""
    from stream_doctor.reporters._neutral import one_line

    count = len(judged)
    lines = [f"stream-doctor serve: {count} conversation{'' if count == 1 else 's'} with the application"]
    if not judged:
        lines.append("  no request reached a provider endpoint: nothing to judge")
    for number, one in enumerate(judged, 1):
        served = one.served
        shown = len(served.turns)
        lines.append(
            one_line(
                f"  conversation {number}: {served.script.name}, {shown} of {len(served.script.turns)} turns served; "
                f"recorded in {served.envelope}"
            )
        )
        for verdict in sorted(one.verdicts, key=lambda v: -v.severity):
            code = f" {verdict.code}" if verdict.code else ""
            lines.append(one_line(f"    {verdict.severity.label}{code}: {verdict.message}"))
        if not one.verdicts:
            lines.append("    clean: the application sent back what it was served")
    return "\n".join(lines) + "\n"
