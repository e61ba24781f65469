"""What a rule is: stable metadata plus a pure check over the accumulated stream (or, for the pairing and
schema families, over the whole conversation: every turn's request and stream)."""

from __future__ import annotations

import inspect
import re
import sys
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Iterator, Literal

from stream_doctor.accumulate.irregularities import StreamProblem
from stream_doctor.accumulate.stream import AccumulatedStream, ToolCall
from stream_doctor.capture.base import Pos
from stream_doctor.values.findings import Finding, Location, Related, Severity

Family = Literal[
    "capture",
    "execution",
    "arguments",
    "termination",
    "structure",
    "correlation",
    "pairing",
    "schema",
    "clients",
    "check",
]
#: What a rule's check reads: each turn's accumulated stream, the whole conversation, a ``--client``
#: review, or (``"check"``) what ``stream-doctor check`` saw of a capture as a file (the replay engine
#: never runs these: a capture it cannot read, an expectation it no longer shows).
Scope = Literal["stream", "conversation", "client", "check"]

#: The folders of ``stream_doctor.rules`` that hold rules, each with the scope its rules run in. A rule
#: module's path is its whole registration: ``<folder>/sd201_unparseable_arguments.py`` is rule SD201,
#: named ``unparseable-arguments``, of this folder's scope (``rules.RULES`` lists the folders' files).
FOLDERS: dict[str, Scope] = {
    "capture": "stream",
    "execution": "stream",
    "arguments": "stream",
    "termination": "stream",
    "structure": "stream",
    "correlation": "stream",
    "pairing": "conversation",
    "schema": "conversation",
    "clients": "client",
    "check": "check",
}

#: A rule module's name: ``sd`` and the code's three digits, then the rule's name in snake case.
MODULE_NAME = re.compile(r"sd(\d{3})_([a-z0-9]+(?:_[a-z0-9]+)*)")


FAMILIES: dict[str, str] = {
    "SD0": "capture: problems with the capture file itself",
    "SD1": "execution: what the application ran, against what the stream said",
    "SD2": "arguments: the reassembled argument text of each call",
    "SD3": "termination: how calls and turns ended",
    "SD4": "structure: the provider's event protocol",
    "SD5": "correlation: how a provider's events identify, restate and order each call",
    "SD6": "pairing: tool calls and their results across the turns of a conversation",
    "SD7": "schema: each call's arguments against the tool schema the request declared",
    "SD8": "clients: what a named client (``--client``) would hand the tool, against the correct call",
    "SD9": "check: what `stream-doctor check` found about a capture and its expectations",
}

DOC_SECTIONS = ("What it checks", "Why it matters", "Severity", "Example", "How to fix")

#: What a stream rule's findings may come from when they all come from some (``Rule.reads``): the
#: capture's input problems of a kind (``InputProblem.kind``) or the accumulator's stream problems of
#: a type (``accumulate/irregularities.py``).
Fact = str | type[StreamProblem]
#: What a stream rule that reads the stream itself may need of it to find anything (``Rule.needs``),
#: each told in one pass over a turn's calls, messages and executions (``rules.dispatch.present``): a
#: clean turn of a long session has none of them.
Need = Literal[
    "incomplete-call",  # a call whose status is not complete
    "unparsed-call",  # a call whose arguments did not parse
    "server-call",  # a call the provider runs itself
    "message-error",  # a message that ended with an error event
    "unstopped-message",  # a message with neither its stop event nor an error
    "paused-message",  # a message whose stop reason pauses the turn
    "unknown-execution",  # an execution of no call in the stream
    "early-execution",  # an execution of a call that was not complete when it ran
    "repeated-execution",  # an execution of a call that had already run
]


@dataclass(frozen=True, eq=False)
class Rule:
    code: str  # SD201: stable forever; a retired code stays reserved
    name: str  # kebab-case slug
    summary: str
    severity: Severity
    check: Callable[[Any, Rule], Iterable[Finding]]  # (AccumulatedStream | Conversation | …, rule) per ``scope``
    doc: str
    scope: Scope = "stream"  # "conversation": checked once over every turn (conversation.model.Conversation)
    #: How many turns before its own a finding of this rule reads: 0 its own turn only (a stream rule,
    #: a schema rule), 1 the turn before too (a call sent back, answered), None every earlier turn (an id
    #: streamed anywhere before). No finding reads a later turn. ``minimize`` replays a window this wide.
    reach: int | None = 0
    #: A stream rule whose every finding is one of the stream's problems of these kinds or types: a turn
    #: with none of them is not handed to it (``rules.dispatch``), and its check reads them from here
    #: (``problems``), so they are written once. None: the rule reads the stream itself, every turn.
    reads: tuple[Fact, ...] | None = None
    #: A stream rule (of ``reads`` None) that finds nothing in a turn without this: such a turn is not
    #: handed to it (``rules.dispatch``). None: every turn is.
    needs: Need | None = None

    @property
    def family(self) -> str:
        return FAMILIES[self.code[:3]].split(":")[0]

    def sections(self) -> dict[str, str]:
        """The rule's docstring split into its fixed sections (What it checks / … / How to fix)."""
        text = inspect.cleandoc(self.doc)
        found: dict[str, str] = {}
        current: str | None = None
        for line in text.splitlines():
            heading = line.rstrip(":").strip()
            if line.endswith(":") and heading in DOC_SECTIONS:
                current = heading
                found[current] = ""
            elif current is not None:
                found[current] += line + "\n"
        return {k: v.strip("\n") for k, v in found.items()}

    def finding(
        self,
        stream: AccumulatedStream,
        pos: Pos | None,
        message: str,
        hint: str,
        related: Iterable[tuple[str, Pos | None]] = (),
        call: ToolCall | None = None,
        severity: Severity | None = None,
        at: Location | None = None,
        kind: str | None = None,
    ) -> Finding:
        """A finding at ``pos`` in the stream's capture, or ``at`` a place outside it (an execution
        given with --executed or --executions)."""
        path = stream.capture.path
        turn = stream.capture.interaction
        # Positional, and a list made whole: a frozen dataclass's keywords cost more than its fields.
        return Finding(
            self.code,
            self.name,
            severity or self.severity,
            message,
            hint,
            at or Location.at(path, pos, turn),
            tuple([Related(label, Location.at(path, p, turn)) for label, p in related if p is not None]),
            call.call_id if call is not None else None,
            kind,
        )

    def finding_at(
        self,
        location: Location,
        message: str,
        hint: str,
        related: Iterable[tuple[str, Location | None]] = (),
        call_id: str | None = None,
        severity: Severity | None = None,
        kind: str | None = None,
    ) -> Finding:
        """A finding at a location built by the caller (conversation rules: a place in a request body)."""
        return Finding(  # positional, as in ``finding``
            self.code,
            self.name,
            severity or self.severity,
            message,
            hint,
            location,
            tuple([Related(label, where) for label, where in related if where is not None]),
            call_id,
            kind,
        )


def rule(
    summary: str,
    severity: Severity,
    reach: int | None = 0,
    reads: tuple[Fact, ...] | None = None,
    needs: Need | None = None,
) -> Callable[[Callable[..., Iterable[Finding]]], Rule]:
    """Declare a rule from its check function: its code, name and scope come from the module's path
    (see ``FOLDERS``), its documentation from the module docstring; ``reach``, ``reads`` and ``needs``:
    see ``Rule``."""

    def wrap(check: Callable[..., Iterable[Finding]]) -> Rule:
        *_, folder, module_name = check.__module__.split(".")
        named = MODULE_NAME.fullmatch(module_name)
        if named is None or folder not in FOLDERS:
            raise ValueError(f"{check.__module__}: a rule lives in rules/<folder>/sdNNN_<name>.py")
        module = sys.modules.get(check.__module__)
        doc = (module.__doc__ if module else None) or ""
        code, name = f"SD{named[1]}", named[2].replace("_", "-")
        if reads is not None and FOLDERS[folder] != "stream":
            raise ValueError(f"{check.__module__}: only a stream rule reads the stream's problems (reads=)")
        if needs is not None and (FOLDERS[folder] != "stream" or reads is not None):
            raise ValueError(f"{check.__module__}: only a stream rule that reads the stream itself needs= a part of it")
        return Rule(code, name, summary, severity, check, doc, FOLDERS[folder], reach, reads, needs)

    return wrap


def problems(stream: AccumulatedStream, rule: Rule) -> Iterator[Any]:
    """The stream's problems the rule reads (``Rule.reads``): input problems of its kinds, then stream
    problems of its types, each in order."""
    reads = rule.reads or ()
    for problem in stream.problems:
        if problem.kind in reads:
            yield problem
    for stream_problem in stream.stream_problems:
        if type(stream_problem) in reads:
            yield stream_problem
