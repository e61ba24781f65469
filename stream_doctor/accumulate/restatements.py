"""What a provider or an SDK helper restates about a call, checked against what streamed.

A completion event may restate the arguments (``final_differs``), a terminal event may restate the
whole call (``summary_differs``), and an SDK helper's log restates each call or text block so far
at every delta (``helper_differs``). Each check reads the accumulator's state (``message``: the
message being read, where a stream problem is recorded) and returns the problem it finds, or None; only
the accumulator records it.
"""

from __future__ import annotations

from typing import Any

import orjson

from stream_doctor.accumulate.irregularities import (
    FinalDiffers,
    HelperSnapshotDiffers,
    StreamProblem,
    SummaryBeforeComplete,
    SummaryDiffers,
    SummaryDuplicate,
    SummaryOnlyCall,
)
from stream_doctor.accumulate.partial_json import PartialJson
from stream_doctor.accumulate.spill import NO_VALUE
from stream_doctor.accumulate.state import BlockState, CallState, MessageState, fragments_of
from stream_doctor.accumulate.stream import ToolCall
from stream_doctor.util.jsontext import equal
from stream_doctor.values.events import MISSING, CallSummary, HelperSnapshot


def final_differs(call: CallState, raw: str, value: Any, parsed: bool, at_message: int | None) -> StreamProblem | None:
    """The provider restated the arguments at completion: do they match what streamed?"""
    if call.final_pos is None:
        return None
    at = call.final_pos, at_message, call.ordinal, raw
    if call.final_arguments is not None and call.final_arguments != raw:
        return FinalDiffers(*at, call.final_arguments)
    if call.final_input is not MISSING and (not parsed or not equal(call.final_input, value)):
        return FinalDiffers(*at, call.final_input)
    return None


def summary_differs(
    event: CallSummary,
    message: MessageState | None,
    calls_by_id: dict[str, CallState],
    finished_calls: dict[int, ToolCall],
) -> StreamProblem | None:
    """A terminal event restating a call: match it, and record what does not match."""
    block = message.blocks.get(event.key) if message is not None and event.key is not None else None
    state = block.call if block is not None else None
    if state is None and event.call_id:
        state = calls_by_id.get(event.call_id)
    call = finished_calls.get(state.ordinal) if state is not None else None
    if (
        call is not None
        and (not event.call_id or not call.call_id or event.call_id == call.call_id)
        and (not event.name or not call.name or event.name == call.name)
        and _streamed_again(event, call)
    ):
        return None  # the very text that streamed, which parsed: the same value, read without parsing it again
    restated = event.input if event.input is not MISSING else loads_restated(event.arguments)
    at = event.pos, message.index if message is not None else None, event.call_id, event.name, restated
    if state is None:
        scope = message.order if message is not None else []
        twin = next(
            (
                b.call
                for b in scope
                if b.call is not None
                and b.call.name == event.name
                and b.call.ordinal in finished_calls
                and equal(finished_calls[b.call.ordinal].arguments, restated)
            ),
            None,
        )
        if twin is not None:
            return SummaryDuplicate(*at, twin.ordinal)
        return SummaryOnlyCall(*at)
    if call is None:
        return SummaryBeforeComplete(*at, state.ordinal)
    if event.call_id and call.call_id and event.call_id != call.call_id:
        return SummaryDiffers(*at, state.ordinal, "id", call.call_id)
    if event.name and call.name and event.name != call.name:
        return SummaryDiffers(*at, state.ordinal, "name", call.name)
    if restated is not MISSING and not equal(restated, call.arguments) and not equal(restated, final_value(state)):
        # (a summary that repeats the completion event's restatement was reported as final-differs)
        return SummaryDiffers(*at, state.ordinal, "arguments", call.arguments)
    return None


def _streamed_again(event: CallSummary, call: ToolCall) -> bool:
    """Whether a summary restates a call's arguments as the very text that streamed, and that text
    parsed as JSON: then its value is the call's (``ToolCall.arguments`` parses that text), and the
    restatement (Responses sends it twice, in ``….done`` and ``output_item.done``) needs no parse."""
    if event.input is not MISSING or event.arguments is None or call.parse_failure is not None:
        return False
    stored = call.stored
    return (
        call.input_format == "json"
        and stored.store.value(stored.record) is NO_VALUE
        and event.arguments == stored.store.raw(stored.record)
    )


def helper_differs(event: HelperSnapshot, message: MessageState | None, differed: set[int]) -> StreamProblem | None:
    """An SDK helper restated a call or a text block so far: does it match the stream up to here?

    Linear in the capture: a helper restates the whole text at every delta, so comparing each
    snapshot whole would cost the square of the text. A text snapshot is checked for its
    length and for ending with what arrived since the previous snapshot (the fragments not yet
    checked, joined once each); its older part is what the previous snapshot was checked
    against, since the helper only appends. The completed call's restatement (``….done``) is
    compared whole, once. A parsed snapshot mid-call is compared with the SDKs' partial parse
    of the fragments so far (``partial_json.PartialJson``: each fragment read once, each
    completed value compared once); the completed call's parsed restatement with the whole
    text parsed once.
    """
    block = message.blocks.get(event.key) if message is not None else None
    if message is None or block is None:
        return None
    call = block.call
    if call is None:
        return _block_snapshot_differs(event, block, message.index)
    if call.ordinal in differed:
        return None
    texts = call.texts if call.done is None else fragments_of(call)[0]
    new = "".join(texts[call.snapshot_texts :]) if len(texts) > call.snapshot_texts else ""
    call.snapshot_texts = len(texts)
    if new:
        call.snapshot_length += len(new)
        call.snapshot_tail = new
        if call.snapshot_blank and new.strip():
            call.snapshot_blank = False
    else:  # another snapshot at the same point (a chunk's, then its event's): the same end
        new = call.snapshot_tail
    reported: Any = MISSING
    arguments = event.arguments
    if arguments is not None:
        if len(arguments) != call.snapshot_length or not arguments.endswith(new):
            reported = arguments
        elif event.final and arguments != "".join(texts):
            reported = arguments
    if reported is MISSING and event.input is not MISSING and not parsed_matches(call, event):
        reported = event.input
    if reported is MISSING:
        return None
    differed.add(call.ordinal)
    accumulated = "".join(texts)
    return HelperSnapshotDiffers(event.pos, message.index, call.ordinal, event.field, reported, accumulated)


def _block_snapshot_differs(event: HelperSnapshot, block: BlockState, at_message: int | None) -> StreamProblem | None:
    """A text snapshot of a block that is not a call: its length and its end against the wire's."""
    snapshot, length, tail = event.arguments, event.length, event.tail or ""
    if snapshot is None or length is None or block.snapshot_differs:
        return None
    if len(snapshot) == length and snapshot.endswith(tail):
        return None
    block.snapshot_differs = True
    return HelperSnapshotDiffers(
            event.pos,
            at_message,
            None,
            event.field,
            snapshot,
            tail,
            block.block_type,
            block.index,
            block.started,
            length,
        )  # fmt: skip


def parsed_matches(call: CallState, event: HelperSnapshot) -> bool:
    """Whether a parsed snapshot is what the SDK's parse of the fragments so far gives (True when
    that cannot be told)."""
    texts = call.texts if call.done is None else fragments_of(call)[0]
    if call.snapshot_blank:  # the SDKs parse nothing yet: the start event's input stands
        expected = call.start_input if call.start_input is not None else MISSING
    elif event.final:  # the completed call: its whole text, parsed once
        expected = loads_restated("".join(texts))
    else:  # mid-call: the SDKs' partial parse, kept up to date fragment by fragment
        partial = call.partial
        if partial is None:
            partial = call.partial = PartialJson()
        for fragment in texts[call.partial_fed :]:
            partial.feed(fragment)
        call.partial_fed = len(texts)
        return partial.matches(event.input) is not False
    return expected is MISSING or equal(expected, event.input)


def loads_restated(text: str | None) -> Any:
    """A restated argument string, parsed; MISSING when absent or not JSON."""
    if text is None:
        return MISSING
    if not text.strip():
        return {}
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return MISSING


def final_value(call: CallState) -> Any:
    """The input the completion event restated, as a value (MISSING when it restated none)."""
    if call.final_input is not MISSING:
        return call.final_input
    if call.final_arguments is None:
        return MISSING
    return call.final_arguments if call.input_format == "text" else loads_restated(call.final_arguments)
