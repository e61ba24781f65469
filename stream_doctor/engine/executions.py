"""Executions told after the fact: ``--executed CALL=JSON``, ``--executions FILE`` and the library's ``executions``.

A raw stream cannot say what the application ran. These options add ``execute`` records to any
capture once it is read: each is resolved to the call it names (a 1-based call number as the
report's table shows it, a call id, or a tool name) and placed at the end of that call's turn,
where the execution rules (SD1xx) see it exactly as if the capture had recorded it. A CALL that
matches nothing or more than one call is a one-line error listing the calls.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Sequence

import orjson

from stream_doctor.capture.base import Frame, Pos
from stream_doctor.capture.envelope import check_record
from stream_doctor.values.findings import Location

if TYPE_CHECKING:
    from stream_doctor.accumulate.stream import ToolCall

#: How many calls an error message lists before it says how many more there are.
_LISTED = 12


class SuppliedError(Exception):
    """A supplied execution cannot be used; the CLI prints it on one line and exits 2."""


class SuppliedRecord(dict):  # type: ignore[type-arg]
    """An ``execute`` record given after the fact; ``origin`` says where (for findings' locations)."""

    origin: Location | None = None


@dataclass(frozen=True)
class Supplied:
    """One execution given after the fact: which call it names (``selector``) or its own ids, and its input."""

    origin: Location
    record: dict[str, Any]  # call_id, name, input, t as in an envelope ``execute`` record
    selector: str | None = None  # --executed: the CALL as typed; None: a record that names its call itself
    label: str = ""  # how errors name it: "--executed 1={}" or "executions.jsonl:3"


def parse_executed(values: Sequence[str]) -> list[Supplied]:
    """``CALL=JSON`` options, in order."""
    supplied = []
    for value in values:
        label = f"--executed {_clip(value)}"
        selector, sep, text = value.partition("=")
        if not sep or not selector.strip():
            raise SuppliedError(f"{label}: expected CALL=JSON (a call number, id or tool name, then the input as JSON)")
        try:
            value_input = orjson.loads(text)
        except orjson.JSONDecodeError as error:
            raise SuppliedError(f"{label}: the input is not JSON ({error}); quote it: --executed 1='{{}}'") from None
        origin = Location(label)
        supplied.append(Supplied(origin, {"sd": "execute", "input": value_input}, selector.strip(), label))
    return supplied


def read_executions(path: str) -> list[Supplied]:
    """The ``execute`` records of a JSONL file (a ``header`` line and blank lines are skipped)."""
    from stream_doctor.util.opener import UnreadableFile, read_bytes

    try:
        data = read_bytes(path)
    except UnreadableFile as error:
        raise SuppliedError(f"{path}: cannot read the executions: {error}") from None
    supplied = []
    for number, line in enumerate(data.splitlines(), 1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        try:
            record = orjson.loads(line)
        except orjson.JSONDecodeError as error:
            raise SuppliedError(f"{where}: not JSON ({error})") from None
        if type(record) is dict and record.get("sd") == "header":
            continue
        if type(record) is dict and "sd" not in record:
            record = {"sd": "execute", **record}
        problem = check_record(record)
        if problem is None and record["sd"] != "execute":
            problem = f"a {record['sd']} record; --executions takes execute records only"
        if problem is not None:
            raise SuppliedError(f"{where}: {problem}")
        supplied.append(Supplied(Location(path, number), record, None, where))
    if not supplied:
        raise SuppliedError(f"{path}: no execute records")
    return supplied


def given_records(records: Sequence[dict[str, Any]]) -> list[Supplied]:
    """The ``execute`` records handed to the library (``replay(..., executions=[...])``), each named
    ``executions[i]`` as the caller's list holds it: placed like the records of ``--executions``, so
    that a finding about a call keeps the capture's own line and event."""
    supplied = []
    for index, record in enumerate(records):
        where = f"executions[{index}]"
        problem = check_record(record)
        if problem is not None:
            raise SuppliedError(f"{where}: {problem}")
        supplied.append(Supplied(Location(where), record, None, where))
    return supplied


def place(supplied: Sequence[Supplied], turns: Sequence[Sequence[ToolCall]]) -> dict[int, list[dict[str, Any]]]:
    """Each execution's record (its call's id and name filled in), by the 0-based turn it belongs to.

    A record that names its call by id or name and matches none goes to the last turn, where
    SD104 reports it; a CALL given with --executed must match exactly one call.
    """
    every = [(number, call) for number, calls in enumerate(turns) for call in calls]
    placed: dict[int, list[dict[str, Any]]] = {}
    for item in supplied:
        record = SuppliedRecord(item.record)
        record.origin = item.origin
        if item.selector is not None:
            turn, call = _select(item, every)
            record["call_id"], record["name"] = call.call_id, call.name
        else:
            found = _by_record(item, every)
            turn = found[0] if found is not None else len(turns) - 1
        placed.setdefault(turn, []).append(record)
    return placed


def frames_for(records: list[dict[str, Any]], after: Pos | None) -> list[Frame]:
    """Execute frames placed after the turn's last frame, so every event of the turn precedes them."""
    number = after.number if after is not None else 0
    line = after.line if after is not None else 0
    return [
        Frame(
            Pos(number + k, line, after.offset if after is not None else 0),
            b"",
            record,
            None,
            None,
            record.get("t"),
            "execute",
        )
        for k, record in enumerate(records, 1)
    ]


def _select(item: Supplied, every: list[tuple[int, ToolCall]]) -> tuple[int, ToolCall]:
    wanted = item.selector or ""
    if wanted.isdigit():
        number = int(wanted)
        if 1 <= number <= len(every):
            return every[number - 1]
        raise SuppliedError(f"{item.label}: there is no call {number}; {_calls(every)}")
    matches = [pair for pair in every if pair[1].call_id == wanted]
    kind = "id"
    if not matches:
        matches = [pair for pair in every if pair[1].name == wanted]
        kind = "tool name"
    if len(matches) == 1:
        return matches[0]
    if not matches:
        raise SuppliedError(f"{item.label}: no call has the id or tool name {wanted!r}; {_calls(every)}")
    numbers = ", ".join(f"#{n}" for n, pair in enumerate(every, 1) if pair in matches)
    raise SuppliedError(
        f"{item.label}: the {kind} {wanted!r} matches {len(matches)} calls ({numbers}); name one by number; {_calls(every)}"
    )


def _by_record(item: Supplied, every: list[tuple[int, ToolCall]]) -> tuple[int, ToolCall] | None:
    call_id, name = item.record.get("call_id"), item.record.get("name")
    if call_id is not None:
        return next((pair for pair in every if pair[1].call_id == call_id), None)
    if name is None:
        raise SuppliedError(f"{item.label}: an execute record needs a call_id or a name to say which call ran")
    matches = [pair for pair in every if pair[1].name == name]
    if len(matches) > 1:
        raise SuppliedError(
            f"{item.label}: the tool name {name!r} matches {len(matches)} calls; add the call_id; {_calls(every)}"
        )
    return matches[0] if matches else None


def _calls(every: list[tuple[int, ToolCall]]) -> str:
    if not every:
        return "the capture has no tool calls"
    listed = [f"#{n} {call.name or '?'} {call.call_id or '(no id)'}" for n, (_, call) in enumerate(every[:_LISTED], 1)]
    more = f", … {len(every) - _LISTED} more" if len(every) > _LISTED else ""
    return f"calls: {', '.join(listed)}{more}"


def _clip(text: str, limit: int = 60) -> str:
    text = text.replace("\n", "\\n")
    return text if len(text) <= limit else text[: limit - 1] + "…"
