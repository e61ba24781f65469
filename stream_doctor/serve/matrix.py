"""``serve --matrix -- COMMAND...``: the application run once per variant against a fresh server, and what it
did with each call the capture served, read from the judge's verdicts.

Each run gets a server of its own on a free loopback port (``running.RunningServer``) playing the capture under
one variant, the SDKs' environment lines (``endpoints.ENVIRONMENT``) pointing at it, a time bound, and a file for
its output. What the application did with a call is the outcome its verdict's rule says (``BY_RULE``: the one
mapping from rule codes to outcomes); a call no verdict names was run as the stream says when the application's
conversation went on past its turn, else never run (or the application crashed). A meaning-keeping variant fails
the matrix for any call run otherwise than the stream says; a fault or a quirk changes what the stream says, and its
row fails only for a call run before it was complete (``ALWAYS_WRONG``): a call the stream never completed is never
to be run, whatever the stream says.
"""

from __future__ import annotations

import os
import signal
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Literal, Sequence

from stream_doctor.serve.judge import RAN_UNFINISHED, Judged, stream_calls
from stream_doctor.serve.load import Script, load_scripts
from stream_doctor.serve.running import RunningServer
from stream_doctor.serve.variants import VARIANTS, Kind, NotApplicable, Variant
from stream_doctor.serve.wire import MATRIX_TIMEOUT, Plan, Recorded, as_recorded

Outcome = Literal["right-input", "another-input", "too-early", "twice", "never", "crashed"]

#: Each outcome's words in the table. The server sees only what the application sends back: a call it
#: never sent back may still have run (a tool run at the start placeholder, then a crash), so those two
#: say what was not sent, never that nothing ran.
OUTCOMES: dict[Outcome, str] = {
    "right-input": "ran it with the right input",
    "another-input": "ran it with another input",
    "too-early": "ran it before it was complete",
    "twice": "ran it twice",
    "never": "never sent it back",
    "crashed": "crashed without sending it back",
}

#: What a finding of each rule says the application did with the call it names: the one mapping.
BY_RULE: dict[str, Outcome] = {
    "SD101": "too-early",  # premature-execution
    "SD102": "another-input",  # empty-input-execution
    "SD103": "another-input",  # executed-input-differs
    "SD104": "another-input",  # executed-unknown-call
    "SD105": "twice",  # executed-twice
    "SD106": "another-input",  # executed-server-tool
    "SD601": "another-input",  # result-without-call: answered an id the stream never gave
    "SD602": "never",  # call-without-result
    "SD603": "twice",  # duplicate-result
    "SD605": "another-input",  # item-id-as-call-id
    "SD606": "another-input",  # call-id-rewritten
    "SD607": "another-input",  # call-id-reused
    "SD608": "another-input",  # echoed-empty-input
    "SD609": "another-input",  # echoed-input-differs
    RAN_UNFINISHED: "too-early",  # the judge's own: sent back a call the stream as served never completed
}

#: Outcomes that fail the matrix under any variant, a fault or a quirk too: no stream makes them right.
ALWAYS_WRONG: frozenset[Outcome] = frozenset({"too-early"})


@dataclass(frozen=True)
class CallRun:
    """One call the capture served, and what the application did with it under one variant."""

    turn: int | None  # None: an id the application sent back that no turn's stream carried
    call_id: str | None
    name: str | None
    outcome: Outcome
    code: str | None  # the rule whose verdict says so; None: what the server saw


@dataclass(frozen=True)
class Row:
    """One variant's run of the application."""

    variant: str
    kind: Kind
    description: str
    skipped: str | None = None  # why the variant applies to no turn of the capture: not run
    exit: int | None = None  # the application's exit code; None: killed at the time bound (or not run)
    timed_out: bool = False
    calls: tuple[CallRun, ...] = ()
    seen: tuple[str, ...] = ()  # every verdict, one line each (the judge's words)
    endings: tuple[str, ...] = ()  # each turn whose stream did not end as served: how far it went
    output: str | None = None  # the file holding what the application wrote

    @property
    def failing(self) -> bool:
        """Under a meaning-keeping variant, a call run otherwise than the stream says; under any, one run too early."""
        return any(self.fails(call) for call in self.calls)

    def fails(self, call: CallRun) -> bool:
        """Whether this call's outcome fails the row (``failing``): the one place that decides it."""
        return call.outcome != "right-input" and (self.kind == "meaning" or call.outcome in ALWAYS_WRONG)


def played(variant: Variant, seed: int) -> Callable[[Recorded], Plan]:
    """The variant's plan where it applies to a turn (a fault inside a call: the turns with calls), else as recorded."""

    def plan(recorded: Recorded) -> Plan:
        try:
            return variant.plan(recorded, seed)
        except NotApplicable:
            return as_recorded(recorded)

    return plan


def _skipped(variant: Variant, scripts: Sequence[Script]) -> str | None:
    reasons = [variant.skipped(turn.recorded) for script in scripts for turn in script.turns]
    return reasons[0] if all(reasons) else None


def run_matrix(
    captures: Sequence[str],
    command: Sequence[str],
    names: Sequence[str],
    seed: int,
    out: str,
    timeout: float = MATRIX_TIMEOUT,
) -> list[Row]:
    """Run ``command`` once per variant in ``names`` (in order) against a fresh server; a row each."""
    scripts = [script for path in captures for script in load_scripts(path)]
    rows = []
    for name in names:
        variant = VARIANTS[name]
        reason = _skipped(variant, scripts)
        if reason is not None:
            rows.append(Row(name, variant.kind, variant.description, skipped=reason))
            continue
        rows.append(_run(captures, command, variant, seed, Path(out) / name, timeout))
    return rows


def _run(
    captures: Sequence[str], command: Sequence[str], variant: Variant, seed: int, folder: Path, timeout: float
) -> Row:
    folder.mkdir(parents=True, exist_ok=True)
    server = RunningServer(*captures, out=str(folder), plan=played(variant, seed))
    output = folder / "output.txt"
    timed_out = False
    try:
        with output.open("wb") as sink:
            process = subprocess.Popen(  # noqa: S603 - the user's own command, as they typed it
                list(command),
                stdin=subprocess.DEVNULL,
                stdout=sink,
                stderr=subprocess.STDOUT,
                env={**os.environ, **server.environment()},  # every SDK pointed at the server
                start_new_session=True,  # its children too are ended at the time bound
            )
            try:
                code: int | None = process.wait(timeout)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
                code, timed_out = None, True
    finally:
        judged = server.stop()
    calls = tuple(call for one in judged for call in _calls(one, code))
    if not judged:
        calls = tuple(_unreached(server.config.scripts, code))
    seen = tuple(
        f"{v.severity.label}{f' {v.code}' if v.code else ''}: {v.message}" for one in judged for v in one.verdicts
    )
    endings = tuple(
        f"turn {turn.number}: {_ENDINGS[turn.ending]} after read {turn.written} of {turn.reads}"
        for one in judged
        for turn in one.served.turns
        if turn.ending in _ENDINGS
    )
    return Row(
        variant.name, variant.kind, variant.description, None, code, timed_out, calls, seen, endings, str(output)
    )


#: How a turn's stream ended when not as served (``server.ServedTurn.ending``), in the table's words.
_ENDINGS = {
    "cut": "the server closed the connection, as the variant says,",
    "disconnected": "the application closed the connection",
    "stalled": "the application stopped reading (dropped after the idle timeout)",
    "stopped": "the server stopped",
}


def _calls(judged: Judged, code: int | None) -> list[CallRun]:
    """Each call of each turn served, with the outcome its verdict names (else what the conversation shows)."""
    served = judged.served
    by_call: dict[str | None, str] = {
        v.call_id: v.code for v in judged.verdicts if v.code is not None and v.code in BY_RULE and v.call_id is not None
    }
    went_on = len(served.turns) + len(served.beyond)  # the last turn the application's requests reached
    calls = []
    for turn in served.turns:
        answered = went_on > turn.number and turn.ending == "served"
        for call in stream_calls(served.script, turn.number):
            rule = by_call.get(call[0])
            outcome: Outcome = BY_RULE[rule] if rule is not None else "right-input" if answered else _not_run(code)
            calls.append(CallRun(turn.number, *call, outcome, rule))
    carried = {call.call_id for call in calls}
    # a verdict about an id the stream never carried (a rewritten id, a result for an id of the application's
    # own) is a call run otherwise than the stream says too: its own entry, so it is never lost
    calls += [CallRun(None, i, None, BY_RULE[rule], rule) for i, rule in by_call.items() if i not in carried]
    return calls


def _unreached(scripts: Sequence[Script], code: int | None) -> list[CallRun]:
    """No request reached the server: the calls of the capture's first turn were never run."""
    first = scripts[0].turns[0]
    return [CallRun(first.number, *call, _not_run(code), None) for call in stream_calls(scripts[0], first.number)]


def _not_run(code: int | None) -> Outcome:
    return "never" if code == 0 else "crashed"
