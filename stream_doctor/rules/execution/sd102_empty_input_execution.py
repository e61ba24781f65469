"""A tool was executed with ``{}`` (or with fewer keys) while the stream carried its real input.

What it checks:
    An ``execute`` record whose input is ``{}``, equals the start event's placeholder, or lacks keys
    that the call's reassembled arguments have, while the call's fragments carried a non-empty input.
    When the fragments' text does not parse (SD201), a run with ``{}`` or the placeholder is this bug
    too: the fragments carried an input, and the application swallowed the parse error and ran the
    tool without it (a run with some other input is SD103's: a repair).

Why it matters:
    This is the empty-input bug: the client read ``content_block_start.input`` (always ``{}`` for a
    streamed call) and never accumulated the ``input_json_delta`` fragments, or parsed each fragment
    alone and swallowed the errors. The tool then runs without its arguments, fails validation, or
    worse, does something with defaults (crustly PR #38, langchain #38679, humux #77).

Severity:
    error. The recorded execution had ``{}`` or missing keys while the stream carried the input (or
    argument text that does not parse, which no correct client runs as ``{}``): a tool ran wrongly,
    proven by the bytes.

Example:
    content_block_start  {"type":"tool_use","id":"toolu_01…","name":"write_file","input":{}}
    input_json_delta ×6  {"path": "notes/todo.md", "content": "…"}
    execute              {"call_id":"toolu_01…","input":{}}

How to fix:
    Build the input by concatenating every ``input_json_delta.partial_json`` for the block's index
    and parse it once at ``content_block_stop``; never use the start event's ``input`` unless no
    deltas follow (programmatic tool calling sends the whole input there). A capture without
    executions (the recording proxy's, which cannot see what the application runs) shows the same
    bug one turn later, when the call goes back with ``{}`` in the next request: SD608.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from stream_doctor.accumulate.stream import AccumulatedStream, ToolCall
from stream_doctor.rules.base import Rule, rule
from stream_doctor.util.jsontext import equal
from stream_doctor.util.wording import preview
from stream_doctor.values.findings import Finding, Severity

if TYPE_CHECKING:
    from stream_doctor.accumulate.executions import ExecutionRecord


def ran_empty(executed: object, placeholder: object) -> bool:
    """Whether a run's input is nothing: ``{}``, none, or the start event's placeholder."""
    return executed == {} or executed is None or (placeholder not in (None, {}) and equal(executed, placeholder))


def is_empty_input_bug(executed: object, real: object, placeholder: object) -> bool:
    if not isinstance(real, dict) or not real:
        return False
    if ran_empty(executed, placeholder) and not equal(executed, real):
        return True
    return isinstance(executed, dict) and executed.keys() < real.keys()  # (views compare as sets, none built)


@rule("A tool ran with {} or missing keys while its fragments carried the input", Severity.ERROR)
def check(stream: AccumulatedStream, self: Rule) -> Iterator[Finding]:
    for execution in stream.executions:
        if execution.call is None or execution.call_state != "complete":
            continue  # premature executions are SD101's
        call = stream.calls[execution.call]
        if call.parse_failure is not None:
            if ran_empty(execution.input, call.start_input) and call.raw_arguments.strip():
                yield _unparsed(stream, self, execution, call)
            continue
        if not is_empty_input_bug(execution.input, call.arguments, call.start_input):
            continue
        given = execution.input if isinstance(execution.input, dict) else {}  # a placeholder `true` ran as sent
        missing = sorted(set(call.arguments) - set(given))
        words = stream.capture.protocol.words
        # Only protocols whose start event carries an input (Anthropic, Bedrock, Responses …) have a placeholder.
        placeholder = f"; do not read {words.call_start}'s placeholder input" if call.start_input is not None else ""
        yield self.finding(
            stream,
            execution.pos,
            f"{call.label} was executed with {preview(execution.input)}, but its "
            f"{call.fragment_count} fragments carried {preview(call.arguments)} "
            f"(missing {', '.join(missing)})",
            f"Accumulate every {words.fragment} fragment of the call and parse once at {words.call_end}{placeholder}",
            [("call started (placeholder input)", call.started), ("call completed", call.ended)],
            call,
            at=execution.origin,
        )


def _unparsed(stream: AccumulatedStream, self: Rule, execution: ExecutionRecord, call: ToolCall) -> Finding:
    """A run with nothing for a call whose argument text does not parse: the parse error was swallowed."""
    failure = call.parse_failure
    assert failure is not None
    words = stream.capture.protocol.words
    size = len(call.raw_arguments.encode())
    return self.finding(
        stream,
        execution.pos,
        f"{call.label} was executed with {preview(execution.input)}, but its {call.fragment_count} fragments "
        f"carried {size:,} bytes of arguments that do not parse ({failure.kind}, SD201): the parse error "
        "was swallowed and the tool ran without its input",
        f"Parse the {words.fragment} fragments once at {words.call_end}; when they do not parse, do not run "
        "the tool with {}: report the error (to the model, as the tool's result) instead",
        [("call started (placeholder input)", call.started), ("call completed", call.ended)],
        call,
        at=execution.origin,
    )
