"""What the OpenAI SDKs' Chat Completions stream helpers share: a snapshot of each choice's tool
calls, and ``tool_calls.function.arguments.done`` events (openai-python
``ChoiceEventState.get_done_events``; openai-node ``ChatCompletionStream#addChunk``).

Per chunk, after merging it into the snapshot, for each choice the chunk carries: once the choice
has a ``finish_reason`` (it stays set), the call at the index current *before* this chunk gets its
done event; then each tool call fragment of the chunk whose index differs from the current one
gives the current call its done event. So a call's done event comes with the next index, or with
the first chunk of its choice after the finish (a call that arrives in the finishing chunk itself
waits for another chunk of its choice). Each SDK module says how it merges a fragment.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, Hashable, NamedTuple

from stream_doctor.capture.base import Pos
from stream_doctor.clients._wire import lax_int, wired
from stream_doctor.clients.base import Machine, choice_of, parse_json
from stream_doctor.clients.framing import SENTINEL_READERS, Sentinel
from stream_doctor.values.events import (
    MISSING,
    ArgsDelta,
    BlockDelta,
    BlockStart,
    BlockStop,
    Event,
    Finish,
    KeepAlive,
    Malformed,
    MessageStop,
    StreamError,
    ToolStart,
    Wire,
)


@dataclass
class Entry:
    """One element of a choice's ``message.tool_calls`` snapshot (argument text kept in parts, so
    appending stays linear; the SDKs' own ``+=`` is theirs to pay)."""

    calls: list[int]
    call_id: str | None = None
    name: str | None = None
    parts: list[str] | None = None  # None: the snapshot has no ``arguments`` yet
    wire_type: str | None = None  # the ``type`` the snapshot holds (None: no wire entry carried one)
    #: the snapshot's ``arguments`` when they are not text (openai-python keeps a null, or an object, as
    #: sent until a string replaces the null); MISSING: they are ``parts``
    value: Any = MISSING

    @classmethod
    def new(cls, call: int | None, call_id: str | None, name: str | None, arguments: str | None) -> Entry:
        return cls([call] if call is not None else [], call_id, name, None if arguments is None else [arguments])

    @property
    def arguments(self) -> str | None:
        return None if self.parts is None else "".join(self.parts)

    def add(self, text: str | None) -> None:
        if text is None:
            return
        if self.parts is None:
            self.parts = [text]
        else:
            self.parts.append(text)

    def add_call(self, call: int | None) -> None:
        if call is not None and call not in self.calls:
            self.calls.append(call)


class WireEntry(NamedTuple):
    """One ``tool_calls[]`` entry of a chunk, as the SDK merges it: a ToolStart's (``start``), or the
    arguments that follow it at its event, or a fragment of its own."""

    key: Hashable
    sent_index: int | None  # the wire index (None: none sent, or of the wrong type: see ``wire``)
    call_id: str | None
    name: str | None
    arguments: str | None
    call: int | None  # the reference call
    pos: Pos
    start: bool
    wire_type: str | None = None
    wire: Wire = ()


@dataclass
class Choice:
    entries: Any  # list[Entry] (Python) or dict[Hashable, Entry] (Node's sparse array)
    current: Hashable = None
    before: Hashable = None  # the current index when the chunk began
    done: set[Hashable] = field(default_factory=set)
    finished: bool = False


@dataclass
class ChatSnapshot(Machine):
    choices: dict[int, Choice] = field(default_factory=dict)
    index_of: dict[Hashable, int | None] = field(default_factory=dict)  # call key -> wire tool call index
    ended: bool = False
    frame: Pos | None = None
    first: Pos | None = None  # the first chunk, which the Python SDK turns into the snapshot as it is
    touched: list[int] = field(default_factory=list)  # the choices this chunk carries, in order
    pending: list[tuple[int, Hashable]] = field(default_factory=list)  # index-change done events of this chunk
    finishing: set[int] = field(default_factory=set)  # choices whose finish_reason this chunk carries
    legacy: dict[int, Entry] = field(default_factory=dict)
    _last_start: tuple[Hashable, Pos] | None = None
    _last_target: Hashable | None = None

    missing_entry_error = "IndexError"
    #: a call's done event fires again on each later switch to another index until its choice has a
    #: finish_reason (openai-node); otherwise once
    done_again_until_finish = False
    #: the done event is fired only for an entry whose ``type`` is "function" (openai-python)
    done_needs_function_type = False
    #: the done event throws for an entry that never had a ``type`` (openai-node)
    done_throws_without_type = False
    #: the exception an event whose data is not JSON raises
    malformed_error = "JSONDecodeError"
    #: the wrong-typed fields of an entry are read as sent (openai-python): an ``index`` of digits as the
    #: integer (the chunk model reads "0" as 0), any other raises TypeError (accumulate_delta); ``merge``
    #: takes the ``id``, ``name`` and ``arguments`` values from ``wire``
    reads_wire = False
    #: a later fragment's null ``type`` replaces the entry's, and a call that was "function" before the chunk
    #: raises AssertionError (openai-python ``ChatCompletionStreamState._accumulate_chunk``: ``assert
    #: new_tool.type == "function"`` for each previous tool call)
    asserts_function_type = False
    done_sentinel: ClassVar[Sentinel | None] = SENTINEL_READERS["openai-python"]
    #: a chunk that carries a finished choice with nothing else (``KeepAlive.choices``) is one more chunk of
    #: that choice, so the pending done event fires there (openai-node). openai-python never sees the one such
    #: chunk known, Azure's asynchronous filter event: ``ChatCompletionStream.__stream__`` skips a chunk whose
    #: ``object`` is not "chat.completion.chunk" (``_is_valid_chat_completion_chunk_weak``), and Azure's is ""
    visits_finished_choices = False

    # -- what each SDK decides --------------------------------------------------------------

    def new_choice(self) -> Choice:  # pragma: no cover - overridden
        raise NotImplementedError

    def merge(
        self,
        choice: Choice,
        index: int | None,
        call_id: str | None,
        name: str | None,
        arguments: str | None,
        call: int | None,
        pos: Pos,
        wire: Wire = (),
    ) -> Hashable | None:  # pragma: no cover
        """Merge one wire ``tool_calls[]`` entry (``wire``: its fields of the wrong type, as sent); the
        key of the snapshot entry it went to."""
        raise NotImplementedError

    def entry(self, choice: Choice, key: Hashable) -> Entry | None:  # pragma: no cover
        raise NotImplementedError

    def wire_index(self, sent: Any) -> int | None:
        """The integer an ``index`` sent with the wrong type is read as (``reads_wire``); None: not one."""
        return lax_int(sent)

    # -- the shared event logic -------------------------------------------------------------

    def _choice(self, number: int) -> Choice:
        choice = self.choices.get(number)
        if choice is None:
            choice = self.choices[number] = self.new_choice()
        if number not in self.touched:
            self.touched.append(number)
        return choice

    def feed(self, event: Event, call: int | None) -> None:
        if self.ended:
            return
        if self.first is None:
            self.first = event.pos
        if event.pos != self.frame:
            self._flush()
            self.frame = event.pos
            for choice in self.choices.values():
                choice.before = choice.current
        kind = type(event)
        if kind is ToolStart:
            assert isinstance(event, ToolStart)
            self.index_of[event.key] = event.index
            if event.block_type == "function_call":
                self.legacy[choice_of(event.key)] = Entry.new(call, None, event.name, "")
                return
            self._entry(
                WireEntry(
                    event.key,
                    event.index,
                    event.call_id,
                    event.name,
                    None,
                    call,
                    event.pos,
                    True,
                    event.wire_type,
                    event.wire,
                )
            )
        elif kind is ArgsDelta:
            assert isinstance(event, ArgsDelta)
            if event.key is None and not event.delta_type.startswith("function_call"):
                # a fragment with neither index nor id nor name: the SDK merges it by its (missing) index
                self._entry(
                    WireEntry(
                        None, None, event.call_id, event.name, event.fragment, call, event.pos, False, wire=event.wire
                    )
                )
                return
            if event.delta_type.startswith("function_call") or event.key not in self.index_of:
                legacy = self.legacy.get(choice_of(event.key))
                if legacy is not None:
                    legacy.add(event.fragment)
                return
            index = self.index_of[event.key]
            self._entry(
                WireEntry(
                    event.key, index, event.call_id, event.name, event.fragment, call, event.pos, False, wire=event.wire
                )
            )
        elif kind is BlockStart or kind is BlockDelta:
            self._choice(choice_of(event.key))  # type: ignore[union-attr]
        elif kind is BlockStop:
            number = choice_of(event.key)  # type: ignore[union-attr]
            self._choice(number)
            self.finishing.add(number)  # the adapter stops a choice's blocks at its finish_reason
        elif kind is Finish:
            for number in self.choices:
                self._choice(number)
                self.finishing.add(number)
        elif kind is KeepAlive and self.visits_finished_choices:
            for number in event.choices:  # type: ignore[union-attr]
                self._choice(number)
        elif kind is StreamError:
            self.fail(event.pos, "APIError", "the stream sent an error object", provider_error=True)
        elif kind is Malformed:
            self.fail(event.pos, self.malformed_error, "an event's data is not JSON")
        elif kind is MessageStop:
            # [DONE]: the SDK stops reading. A [DONE] frame carries no finish_reason, whatever
            # the adapter closed at it.
            self.finishing.clear()
            self._flush()
            self.ended = True

    def _entry(self, entry: WireEntry) -> None:
        key, index, call_id, name, arguments, call, pos, start, wire_type, wire = entry
        number = choice_of(key)
        choice = self._choice(number)
        if not start and self._last_start == (key, pos) and call_id is None and name is None:
            # the arguments of the wire entry whose id and name the ToolStart just carried (and its
            # wrong-typed arguments, which the ToolStart's wire carried to ``merge``)
            target = self._last_target
            found = self.entry(choice, target) if target is not None else None
            if found is None or _has(wire, "arguments"):
                return  # arguments of the wrong type: ``merge`` took them as sent, at the ToolStart
            if arguments or (self.reads_wire and arguments is not None):  # openai-python holds "" too
                found.add(arguments)
            return
        if index is None and self.reads_wire and _has(wire, "index"):
            index = self.wire_index(wired(wire, "index"))
            if index is None:
                self.fail(pos, "TypeError", "Unexpected, list delta entry `index` value is not an integer", call)
                return
        target = self.merge(choice, index, call_id, name, arguments, call, pos, wire)
        if self.error is not None:
            return
        if self.asserts_function_type and not start and target is not None and _has(wire, "type"):
            merged = self.entry(choice, target)
            if merged is not None:
                # accumulate_delta copies a null ``type`` over the entry's (the key is "index" or "type"
                # branch); _accumulate_chunk then asserts that a call that was a function still is one
                was, merged.wire_type = merged.wire_type, None
                if was == "function":
                    self.fail(pos, "AssertionError", "a fragment's null `type` replaced the call's \"function\"", call)
                    return
        if wire_type is not None and target is not None:
            # accumulate_delta replaces ``type`` with the one a later entry carries, keeps it otherwise
            merged = self.entry(choice, target)
            if merged is not None:
                merged.wire_type = wire_type
        self._last_start, self._last_target = ((key, pos), target) if start else (None, None)
        if choice.current != index:
            if choice.current is not None:
                self.pending.append((number, choice.current))
            choice.current = index

    def _flush(self) -> None:
        """The end of a chunk: its done events, on the snapshot with the whole chunk merged."""
        at = self.frame
        for number in self.touched:
            choice = self.choices[number]
            if number in self.finishing:
                choice.finished = True
            if choice.finished and choice.before is not None:
                self._done(choice, choice.before, at, "finish_reason")
        for number, index in self.pending:
            self._done(self.choices[number], index, at, "next tool call index")
        self.touched.clear()
        self.pending.clear()
        self.finishing.clear()

    def _done(self, choice: Choice, index: Hashable, at: Pos | None, when: str) -> None:
        if index in choice.done or self.error is not None:
            return
        entry = self.entry(choice, index)
        if entry is None:
            self.fail(at, self.missing_entry_error, f"no tool call snapshot at index {index!r}")
            return
        if self.done_throws_without_type and entry.wire_type is None:
            self.fail(at, "OpenAIError", "tool call snapshot missing `type`", entry.calls[0] if entry.calls else None)
            return
        if choice.finished or not self.done_again_until_finish:
            choice.done.add(index)
        if self.done_needs_function_type and entry.wire_type != "function":
            return  # marked done all the same, as _add_tool_done_event adds the index before its type test
        if entry.value is not MISSING:  # what openai-python's done event carries: None, or the object sent
            self.hand(tuple(entry.calls), entry.call_id, entry.name, entry.value, entry.value, at, when)
            return
        text = entry.arguments if entry.arguments is not None else ""
        self.hand(tuple(entry.calls), entry.call_id, entry.name, text, parse_json(text), at, when)

    def close(self, end: Pos | None) -> None:
        self._flush()
        for legacy in self.legacy.values():  # no done event for the legacy function_call: the final completion has it
            text = legacy.arguments
            value = parse_json(text or "")
            self.hand(
                tuple(legacy.calls), None, legacy.name, text, value, None, "final completion (legacy function_call)"
            )


def _has(wire: Wire, name: str) -> bool:
    return any(field_name == name for field_name, _ in wire)
