"""The strict reference accumulator: neutral events in, an immutable AccumulatedStream out.

All stitching state (which block each index means, which calls are open, the argument buffers)
lives here and nowhere else. Completion is only ever the protocol's own signal (``BlockStop``);
"the buffer parses" and "another block started" never complete a call. Fragments are kept in a
list and joined and parsed once, when the call completes, so the cost is linear in the capture.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Hashable, Iterable, Iterator, Sequence, overload

from stream_doctor.accumulate.arguments import parse_arguments
from stream_doctor.accumulate.irregularities import (
    AfterBlockStop,
    CallWithoutIdOrName,
    DeltaTypeMismatch,
    DuplicateCallId,
    EventAfterMessageStop,
    IdChanged,
    IdLate,
    IdRepeated,
    IndexGap,
    IndexReused,
    IndexShared,
    MessageRestarted,
    NameBlank,
    NameChanged,
    NameLate,
    NameRepeated,
    NoMessageStart,
    StopReasonChanged,
    StreamProblem,
    UncorrelatedFragment,
    UnknownBlock,
)
from stream_doctor.accumulate.restatements import final_differs, helper_differs, summary_differs
from stream_doctor.accumulate.spill import NO_VALUE, ArgumentStore
from stream_doctor.accumulate.state import BlockState, CallState, MessageState, fragments_of
from stream_doctor.accumulate.stream import (
    AccumulatedStream,
    Block,
    CaptureInfo,
    Message,
    ToolCall,
)
from stream_doctor.capture.base import InputProblem, Pos
from stream_doctor.capture.runs import Positions
from stream_doctor.values.events import (
    MISSING,
    ArgsDelta,
    ArgsRun,
    BlockDelta,
    BlockStart,
    BlockStop,
    CallSummary,
    Event,
    Execution,
    Finish,
    HelperSnapshot,
    KeepAlive,
    Malformed,
    MessageStart,
    MessageStop,
    Problem,
    Request,
    StreamError,
    ToolStart,
    Unknown,
)

if TYPE_CHECKING:
    from stream_doctor.accumulate.executions import ExecutionRecord

# ``feed_all``'s positions before a fragment names a call: never written (no key matches ``no_key``), so not
# made anew for each of the two feeds of every turn (a Positions costs about 2 us).
_NO_CALL = Positions()


class Accumulator:
    """Feed it events in capture order with ``feed``; ``result`` builds the AccumulatedStream."""

    def __init__(self, positional_indices: bool = True, store: ArgumentStore | None = None) -> None:
        self.positional_indices = positional_indices
        self.store = store if store is not None else ArgumentStore()  # the finished calls' argument text
        self._shared: dict[str, str] = {}
        self.messages: list[MessageState] = []
        self.current: MessageState | None = None
        self.calls: list[CallState] = []
        self.finished_calls: dict[int, ToolCall] = {}
        self.calls_by_id: dict[str, CallState] = {}
        self.executions: list[tuple[Execution, CallState | None, str, Pos | None]] = []
        self.executed: dict[int, Pos] = {}
        self.requests: list[Any] = []
        self.request_pos: Pos | None = None
        self.stream_problems: list[StreamProblem] = []
        self.problems: list[InputProblem] = []
        self.unknown: dict[str, int] = {}
        self.last_pos: Pos | None = None
        self.snapshot_differs: set[int] = set()  # calls whose helper snapshot already disagreed
        self.released = False  # ``result`` was given (see ``_release``)

    # -- feeding -----------------------------------------------------------------------------

    def feed(self, event: Event) -> None:
        """Feed one event: ``feed_all`` of that event, so there is one definition of what each event does."""
        self.feed_all((event,))

    def feed_all(self, events: Iterable[Event]) -> None:
        """Feed every event, in capture order.

        The one shortcut: consecutive argument fragments nearly always continue the same call, so
        once ``_args`` has appended a fragment to a call, the next fragments for the same key (with
        no id or name of their own) go to the same buffers without a lookup or a call. Any other
        event goes to its handler (``_HANDLERS``) and may change a block's state, so it clears that memory.
        """
        args = self._args
        handlers = _HANDLERS
        no_key = cached_key = object()
        texts: list[str] = []
        positions = _NO_CALL  # the cached call's (see CallState.positions), once a fragment sets cached_key
        event = None
        for event in events:
            if type(event) is ArgsDelta:
                if event.key == cached_key and event.call_id is None and event.name is None:
                    texts.append(event.fragment)
                    positions.extend(event.pos)
                    continue
                call = args(event)
                if call is None:
                    cached_key = no_key
                else:
                    cached_key, texts, positions = event.key, call.texts, call.positions
                continue
            if type(event) is ArgsRun:
                if event.key == cached_key:
                    texts += event.fragments
                    positions.add(event.positions)
                    continue
                call = self._open_call(event.key)
                if call is None:  # not an open call: each fragment as the ArgsDelta it stands for
                    self.feed_all(event.deltas())
                    cached_key = no_key
                    continue
                if not call.texts:
                    call.delta_type = event.delta_type
                cached_key, texts, positions = event.key, call.texts, call.positions
                texts += event.fragments
                positions.add(event.positions)
                continue
            cached_key = no_key
            handlers[type(event)](self, event)
        if event is not None:
            self.last_pos = event.pos

    def _open_call(self, key: Hashable) -> CallState | None:
        """The call on ``key`` while it takes fragments: its block open, its message not stopped."""
        message = self.current
        block = message.blocks.get(key) if message is not None else None
        if block is not None and block.call is not None and block.ended is None and message.stopped is None:  # type: ignore[union-attr]
            return block.call
        return None

    def _args(self, event: ArgsDelta) -> CallState | None:
        """An argument fragment: the call it was appended to while that call is open, else None."""
        call = self._open_call(event.key)
        if call is not None:
            texts = call.texts
            if not texts:
                call.delta_type = event.delta_type
            texts.append(event.fragment)
            call.positions.extend(event.pos)
            if event.call_id is not None or event.name is not None:
                self._identity(call, event)
            return call
        self._stray_args(event)
        return None

    # Every event but an argument fragment goes to its handler (``_HANDLERS``, by the event's type).

    def _finish(self, event: Finish) -> None:
        message = self._message(event.pos)
        if message.stop_reason is not None and message.stop_reason != event.reason:
            self._note(StopReasonChanged(event.pos, self._at(), message.stop_reason, event.reason))
        message.stop_reason = event.reason
        message.stop_category = event.category
        message.stop_reason_pos = event.pos

    def _stream_error(self, event: StreamError) -> None:
        from stream_doctor.accumulate.stream_error import ErrorInfo  # a stream that reports an error only

        message = self._message(event.pos, implicit_ok=True)
        message.error = ErrorInfo(event.pos, event.error_type, event.message)

    def _summary(self, event: CallSummary) -> None:
        self._note(summary_differs(event, self.current, self.calls_by_id, self.finished_calls))

    def _snapshot(self, event: HelperSnapshot) -> None:
        self._note(helper_differs(event, self.current, self.snapshot_differs))

    def _request(self, event: Request) -> None:
        self.requests.append(event.body)
        self.request_pos = event.pos

    def _unknown(self, event: Unknown) -> None:
        self.unknown[event.event_type] = self.unknown.get(event.event_type, 0) + 1
        self.problems.append(InputProblem("unknown-event", event.event_type, event.pos))

    def _malformed(self, event: Malformed) -> None:
        self.problems.append(InputProblem("malformed-frame", event.reason, event.pos))

    def _problem(self, event: Problem) -> None:
        self.problems.append(InputProblem(event.kind, event.message, event.pos, facts=event.facts))

    def _keep_alive(self, event: KeepAlive) -> None:
        pass

    # -- messages ----------------------------------------------------------------------------

    def _message(self, pos: Pos, implicit_ok: bool = False) -> MessageState:
        """The message content belongs to, creating an implicit one when none was started."""
        message = self.current
        if message is None:
            message = self._open_message(None, None, None)
            if not implicit_ok:
                self._note(NoMessageStart(pos, self._at()))
        elif message.stopped is not None:
            self._note(EventAfterMessageStop(pos, self._at(), message.stopped))
        return message

    def _open_message(self, message_id: str | None, model: str | None, pos: Pos | None) -> MessageState:
        message = MessageState(len(self.messages), message_id, model, pos)
        self.messages.append(message)
        self.current = message
        return message

    def _message_start(self, event: MessageStart) -> None:
        previous = self.current
        if previous is not None and previous.stopped is None:
            self._note(MessageRestarted(event.pos, self._at(), previous.started, previous.index))
            self._close_message(previous, event.pos, "new-message")
        self._open_message(event.message_id, event.model, event.pos)

    def _message_stop(self, event: MessageStop) -> None:
        message = self.current
        if message is None:
            self._note(NoMessageStart(event.pos, self._at()))
            message = self._open_message(None, None, None)
        elif message.stopped is not None:
            self._note(EventAfterMessageStop(event.pos, self._at(), message.stopped))
            return
        message.stopped = event.pos
        self._close_message(message, event.pos, event.cause or "message-stop")

    def _close_message(self, message: MessageState, pos: Pos | None, cause: str) -> None:
        """Every call still open when its message ends was abandoned."""
        for block in message.order:
            call = block.call
            if call is not None and block.ended is None and call.abandon_cause is None:
                if message.error is not None:
                    call.abandon_cause, call.abandon_pos = "error-event", message.error.pos
                elif message.stop_category == "length":
                    call.abandon_cause = "max-tokens"  # the provider's own word is in the message's stop_reason
                    call.abandon_pos = message.stop_reason_pos
                elif message.stop_category in ("filter", "error"):
                    call.abandon_cause = message.stop_category
                    call.abandon_pos = message.stop_reason_pos
                else:
                    call.abandon_cause, call.abandon_pos = cause, pos
                self._finish_call(call)

    # -- blocks ------------------------------------------------------------------------------

    def _start(self, event: ToolStart | BlockStart) -> None:
        message = self._message(event.pos)
        key = event.key
        previous = message.blocks.get(key)
        if previous is not None:
            self._note(IndexReused(event.pos, self._at(), key, previous.started))
            if previous.call is not None and previous.ended is None:
                previous.call.abandon_cause, previous.call.abandon_pos = "index-reused", event.pos
                self._finish_call(previous.call)
        elif self.positional_indices and event.index is not None:
            # Indices are positions: each new block takes the one after the last block started.
            last = message.order[-1].index if message.order else -1
            expected = last + 1 if last is not None else None
            if expected is not None and event.index != expected:
                self._note(IndexGap(event.pos, self._at(), key, event.index, expected))
        elif not self.positional_indices and event.index is not None and type(event) is ToolStart:
            # Two calls open on one index: index-keyed clients merge them into `{…}{…}`.
            twin = next(
                (b.call for b in message.order if b.call is not None and b.index == event.index and b.ended is None),
                None,
            )
            if twin is not None:
                self._note(IndexShared(event.pos, self._at(), event.index, twin.ordinal, twin.call_id, event.call_id))
        block = BlockState(message.index, key, event.index, event.block_type, event.pos)
        message.blocks[key] = block
        message.order.append(block)
        if type(event) is BlockStart:
            block.result_for = event.result_for
            return
        assert isinstance(event, ToolStart)
        call = block.call = CallState(block, len(self.calls), event)
        self.calls.append(call)
        if event.call_id is not None:
            # With n > 1 each choice is its own message: calls in two choices may share an id.
            scoped = event.call_id if event.choice is None else (event.choice, event.call_id)
            same_id = message.ids.get(scoped)
            if same_id is not None:
                self._note(DuplicateCallId(event.pos, self._at(), event.call_id, same_id.block.started))
            else:
                message.ids[scoped] = call
            self.calls_by_id.setdefault(event.call_id, call)

    def _stop(self, event: BlockStop) -> None:
        message = self._message(event.pos)
        block = message.blocks.get(event.key)
        if block is None:
            self._note(UnknownBlock(event.pos, self._at(), event.key, "stop", 0, ""))
            return
        if block.ended is not None:
            self._note(
                AfterBlockStop(
                    event.pos,
                    self._at(),
                    event.key,
                    "stop",
                    0,
                    "",
                    block.ended,
                    block.block_type,
                    block.call is not None,
                )
            )
            return
        call = block.call
        if call is not None and call.ordinal in self.finished_calls:
            return  # already closed as abandoned when its message ended; a late stop changes nothing
        block.ended = event.pos
        if call is not None:
            if event.final_arguments is not None or event.final_input is not MISSING:
                call.final_arguments, call.final_input = event.final_arguments, event.final_input
                call.final_pos = event.pos
            self._finish_call(call)

    def _stray_args(self, event: ArgsDelta) -> None:
        message = self._message(event.pos)
        at = event.pos, self._at(), event.key, event.delta_type, len(event.fragment), event.fragment
        block = message.blocks.get(event.key)
        if block is None and event.key is None:
            # No index, no id: attribute it to the latest open call, as robust clients do, and say so.
            open_call = next((b.call for b in reversed(message.order) if b.call is not None and b.ended is None), None)
            self._note(UncorrelatedFragment(*at, None if open_call is None else open_call.ordinal))
            if open_call is not None:
                open_call.texts.append(event.fragment)
                open_call.positions.extend(event.pos)
                if event.call_id is not None or event.name is not None:
                    self._identity(open_call, event)
            return
        if block is None:
            self._note(UnknownBlock(*at))
        elif block.ended is not None:
            self._note(AfterBlockStop(*at, block.ended, block.block_type, block.call is not None))
        elif block.call is None:
            self._note(DeltaTypeMismatch(*at, block.block_type))
        else:  # the message was stopped but this block was not: keep it, it was reported already
            block.call.texts.append(event.fragment)
            block.call.positions.extend(event.pos)

    def _identity(self, call: CallState, event: ArgsDelta) -> None:
        """A fragment that carries an id or a name again: repeated, late, blank or changed."""
        if event.call_id:
            if call.call_id is None:
                call.call_id = event.call_id
                self._note(IdLate(event.pos, self._at(), call.ordinal, event.call_id))
            elif event.call_id == call.call_id:
                call.id_repeats += 1
            else:
                self._note(IdChanged(event.pos, self._at(), call.ordinal, call.call_id, event.call_id))
        if event.name is not None:
            if event.name == "":
                if call.name and not call.name_blanked:
                    call.name_blanked = True
                    self._note(NameBlank(event.pos, self._at(), call.ordinal, call.name))
            elif not call.name:
                call.name = event.name
                self._note(NameLate(event.pos, self._at(), call.ordinal, event.name))
            elif event.name == call.name:
                call.name_repeats += 1
            else:
                self._note(NameChanged(event.pos, self._at(), call.ordinal, call.name, event.name))

    def _block_delta(self, event: BlockDelta) -> None:
        message = self._message(event.pos)
        block = message.blocks.get(event.key)
        at = event.pos, self._at(), event.key, event.delta_type, event.size, ""
        if block is None:
            self._note(UnknownBlock(*at))
        elif block.ended is not None:
            self._note(AfterBlockStop(*at, block.ended, block.block_type, block.call is not None))
        elif block.call is not None:
            self._note(DeltaTypeMismatch(*at, block.block_type))
        else:
            block.deltas += 1
            block.size += event.size

    # -- executions --------------------------------------------------------------------------

    def _execution(self, event: Execution) -> None:
        call: CallState | None = None
        if event.call_id is not None:
            call = self.calls_by_id.get(event.call_id)
        elif event.name is not None:  # no id recorded: the latest call of that name
            call = next((c for c in reversed(self.calls) if c.name == event.name), None)
        if call is None:
            state = "unknown"
        elif call.block.ended is not None:
            state = "complete"
        else:
            state = "open"
        previous = None
        if call is not None:
            previous = self.executed.get(call.ordinal)
            self.executed.setdefault(call.ordinal, event.pos)
        self.executions.append((event, call, state, previous))

    # -- results -----------------------------------------------------------------------------

    def _at(self) -> int | None:
        """The message a stream problem is recorded in."""
        return self.current.index if self.current is not None else None

    def _note(self, problem: StreamProblem | None) -> None:
        if problem is not None:
            self.stream_problems.append(problem)

    def _finish_call(self, call: CallState) -> None:
        block = call.block
        texts, positions = fragments_of(call)
        raw = "".join(texts)
        whole = not texts  # no fragment: the input, if any, came whole in a start or completion event
        if whole and call.final_arguments is not None:
            raw = call.final_arguments
        given: Any = NO_VALUE  # a value that did not come from the text (kept; the text's is parsed when asked)
        if call.input_format == "text":  # free text (a custom tool's input, a diff): kept, never parsed
            value, failure, complete_at = raw, None, None
        else:
            value, failure, complete_at = parse_arguments(raw, _Lengths(texts) if texts else [len(raw)])
        if whole and call.final_input is not MISSING:
            value, failure, source = call.final_input, None, "input given whole in the completion event, no deltas"
            given = value
        elif whole and call.final_arguments is not None:
            source = "arguments given whole in the completion event, no deltas"
        elif whole and call.start_input not in (None, {}, ""):
            value, failure, source = call.start_input, None, "input given whole in the start event, no deltas"
            given = value
        else:
            source = _input_source(call, raw, len(texts))
        if not whole and call.final_pos is not None:
            self._note(final_differs(call, raw, value, failure is None, self._at()))
        if (call.call_id is None and not call.id_optional) or not call.name:  # both may arrive late
            self._note(CallWithoutIdOrName(block.started, self._at(), call.ordinal, call.call_id, call.name))
        if call.id_repeats:
            self._note(IdRepeated(block.started, self._at(), call.ordinal, call.call_id, call.id_repeats + 1))
        if call.name_repeats:
            self._note(NameRepeated(block.started, self._at(), call.ordinal, call.name, call.name_repeats + 1))
        shared = self._shared  # names and sources repeat from call to call: one string each
        self.finished_calls[call.ordinal] = call.done = ToolCall(
            ordinal=call.ordinal,
            message=block.message,
            key=block.key,
            index=block.index,
            block_type=block.block_type,
            call_id=call.call_id,
            name=call.name if call.name is None else shared.setdefault(call.name, call.name),
            server_side=call.server_side,
            caller=call.caller,
            started=block.started,
            ended=block.ended,
            status="complete" if block.ended is not None else "abandoned",
            abandon_cause=call.abandon_cause if block.ended is None else None,
            abandon_pos=call.abandon_pos if block.ended is None else None,
            stored=self.store.keep(raw, texts, positions, given),
            parse_failure=failure,
            start_input=call.start_input,
            complete_value_at=complete_at if not whole else None,
            input_source=shared.setdefault(source, source),
            input_format=call.input_format,
            item_id=call.item_id,
            signed=call.signed,
        )
        # The completed call holds its fragments now; fragments that still come (after the call was
        # abandoned) go to fresh lists, and ``_fragments`` puts both together.
        call.texts, call.positions = [], Positions()

    def result(
        self,
        info: CaptureInfo,
        ended_cleanly: bool,
        problems: Iterable[InputProblem],
        event_counts: dict[str, int],
    ) -> AccumulatedStream:
        """The accumulated stream: the accumulator's last act (it lets go of its state, see ``_release``)."""
        if self.current is not None and self.current.stopped is None:
            self._close_message(self.current, self.last_pos, "stream-cut")
        for open_call in self.calls:  # calls of earlier messages left open (already reported by stream problems)
            if open_call.ordinal not in self.finished_calls:
                open_call.abandon_cause = open_call.abandon_cause or "stream-cut"
                self._finish_call(open_call)
        calls = tuple(self.finished_calls[i] for i in range(len(self.calls)))
        executions: tuple[ExecutionRecord, ...] = ()
        if self.executions:  # a turn with executions only
            from stream_doctor.accumulate.executions import ExecutionRecord

            executions = tuple(
                ExecutionRecord(
                    pos=event.pos,
                    call_id=event.call_id,
                    name=event.name,
                    input=event.input,
                    call=call.ordinal if call is not None else None,
                    call_state="never-completed"
                    if state == "open" and call is not None and call.block.ended is None
                    else state,  # type: ignore[arg-type]
                    previous=previous,
                    origin=event.origin,
                )
                for event, call, state, previous in self.executions
            )
        messages = tuple(
            Message(
                index=m.index,
                message_id=m.message_id,
                model=m.model,
                started=m.started,
                stopped=m.stopped,
                stop_reason=m.stop_reason,
                stop_category=m.stop_category,
                stop_reason_pos=m.stop_reason_pos,
                error=m.error,
                calls=tuple(b.call.ordinal for b in m.order if b.call is not None),
                blocks=tuple(
                    Block(m.index, b.key, b.index, b.block_type, b.started, b.ended, b.deltas, b.size, b.result_for)
                    for b in m.order
                    if b.call is None
                ),
            )
            for m in self.messages
        )
        self._release()
        return AccumulatedStream(
            capture=info,
            messages=messages,
            calls=calls,
            executions=executions,
            requests=tuple(self.requests),
            stream_problems=tuple(self.stream_problems),
            problems=tuple(problems) + tuple(self.problems),
            event_counts=dict(event_counts),
            unknown_events=dict(self.unknown),
            last_pos=self.last_pos,
            ended_cleanly=ended_cleanly,
            request_pos=self.request_pos,
        )

    def _release(self) -> None:
        """Break each block's link to its call, the one cycle of the accumulator's state, so that the
        state goes when the accumulator does, by reference counting. Left to the cyclic collector,
        a replay's calls and blocks (about 4,500 objects for a 300-turn session) waited for a full
        collection: in a process replaying capture after capture, about 5% of its time. Nothing reads
        the blocks' calls once the result is made; a second ``result`` would, so it is refused."""
        if self.released:
            raise RuntimeError("an accumulator gives its result once")
        self.released = True
        for call in self.calls:
            call.block.call = None


#: The handler of each event type but the argument fragments (``feed_all`` takes those itself): one
#: lookup per event, where a chain of type tests cost a test per type before the event's own.
_HANDLERS: dict[type, Callable[[Accumulator, Any], None]] = {
    BlockDelta: Accumulator._block_delta,
    ToolStart: Accumulator._start,
    BlockStart: Accumulator._start,
    BlockStop: Accumulator._stop,
    KeepAlive: Accumulator._keep_alive,
    MessageStart: Accumulator._message_start,
    Finish: Accumulator._finish,
    MessageStop: Accumulator._message_stop,
    StreamError: Accumulator._stream_error,
    CallSummary: Accumulator._summary,
    HelperSnapshot: Accumulator._snapshot,
    Execution: Accumulator._execution,
    Request: Accumulator._request,
    Unknown: Accumulator._unknown,
    Malformed: Accumulator._malformed,
    Problem: Accumulator._problem,
}


class _Lengths(Sequence[int]):
    """The lengths of a call's fragments, each measured when asked (parsing a valid buffer asks
    only about the last few; a list of 100,000 lengths would be built for nothing)."""

    __slots__ = ("texts",)

    def __init__(self, texts: list[str]) -> None:
        self.texts = texts

    def __len__(self) -> int:
        return len(self.texts)

    @overload
    def __getitem__(self, index: int) -> int: ...
    @overload
    def __getitem__(self, index: slice) -> list[int]: ...
    def __getitem__(self, index: int | slice) -> int | list[int]:
        if isinstance(index, slice):
            return list(map(len, self.texts[index]))
        return len(self.texts[index])

    def __iter__(self) -> Iterator[int]:
        return map(len, self.texts)


def _input_source(call: CallState, raw: str, count: int) -> str:
    start = "start placeholder {}" if call.start_input in (None, {}) else "start input (ignored)"
    if call.start_input == "":  # Responses items start with `"arguments": ""` (or `"input": ""`)
        start = 'start placeholder ""'
    if call.start_input is None:  # the start carried no input at all (OpenAI Chat: the first fragment is the start)
        start = ""
    if count == 0:
        return (
            (f"{start}, " if start else "")
            + "no deltas: empty "
            + ('text ""' if call.input_format == "text" else "input {}")
        )
    plural = f"{call.delta_type} fragment" + ("" if count == 1 else "s")
    start = f"{start} → " if start else ""
    if call.input_format == "text":
        return f"{start}{count} {plural} (free text, not JSON)"
    if not raw.strip():
        return f"{start}{count} empty {plural}: no-argument call {{}}"
    return f"{start}{count} {plural}"
