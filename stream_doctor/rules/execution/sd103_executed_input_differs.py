"""A tool was executed with an input that differs from the reassembled arguments.

What it checks:
    For a completed call, the ``execute`` record's input must equal the arguments reassembled from
    the stream, as JSON values: ``1`` for ``true`` differs, ``1.0`` for ``1`` does not (one JSON number,
    which the JavaScript SDKs read as the same 1). Differences that are the empty-input bug are SD102's; every other difference
    (a changed value, an extra key, a repaired truncated buffer) is reported here with the keys that differ.
    A call whose argument text does not parse (SD201) has no input the tool could rightly run with:
    a run with anything but nothing (SD102's) is a repair or a replacement, reported here.

Why it matters:
    Something between the stream and the tool changed the model's arguments: a lossy parser,
    a "repair" of broken JSON, a merge with defaults, or fragments of another call mixed in.

Severity:
    error. The recorded execution and the reassembled arguments differ: the tool ran with input the
    model did not send.

Example:
    reassembled {"path": "src/app.py", "line": 42}
    executed    {"path": "src/app.py", "line": 4}

How to fix:
    Pass the parsed arguments to the tool unchanged; if you must repair or default values,
    log the original and make the repair visible.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from stream_doctor.accumulate.stream import AccumulatedStream, ToolCall
from stream_doctor.rules.base import Rule, rule
from stream_doctor.rules.execution.sd102_empty_input_execution import is_empty_input_bug, ran_empty
from stream_doctor.util.jsontext import equal
from stream_doctor.util.wording import excerpt, preview
from stream_doctor.values.findings import Finding, Severity

if TYPE_CHECKING:
    from stream_doctor.accumulate.executions import ExecutionRecord


@rule("A tool ran with an input that differs from the reassembled arguments", Severity.ERROR)
def check(stream: AccumulatedStream, self: Rule) -> Iterator[Finding]:
    for execution in stream.executions:
        if execution.call is None or execution.call_state != "complete":
            continue
        call = stream.calls[execution.call]
        said = _difference(execution, call)
        if said is not None:
            message, hint = said
            yield self.finding(
                stream, execution.pos, message, hint, [("call completed", call.ended)], call, at=execution.origin
            )


def _difference(execution: ExecutionRecord, call: ToolCall) -> tuple[str, str] | None:
    """What the run changed of the call's input, and what to do (None: it ran as streamed, or SD102's)."""
    failure = call.parse_failure
    if failure is not None:
        # a run with some input of a call whose argument text does not parse: the model sent no such input
        if ran_empty(execution.input, call.start_input):
            return None
        return (
            f"{call.label} was executed with {preview(execution.input)} but the stream's arguments do not parse "
            f"({failure.kind}, SD201): {excerpt(call.raw_arguments)}; the application repaired or replaced them",
            "Do not run a call whose arguments do not parse; if you must repair them, log the original and make "
            "the repair visible",
        )
    if equal(execution.input, call.arguments) or is_empty_input_bug(execution.input, call.arguments, call.start_input):
        return None
    if isinstance(execution.input, dict) and isinstance(call.arguments, dict):
        keys = sorted(
            k
            for k in set(execution.input) | set(call.arguments)
            if not equal(execution.input.get(k, ...), call.arguments.get(k, ...))
        )
        what = f"keys differing: {', '.join(keys)}"
    else:
        what = "different values"
    return (
        f"{call.label} was executed with {preview(execution.input)} but the stream carried "
        f"{preview(call.arguments)} ({what})",
        "Pass the parsed arguments to the tool unchanged",
    )
