"""The neutral events regrouped as the wire sent them, for profiles that key calls their own way.

A provider's tool call fragment arrives as one ``ToolStart`` (plus an ``ArgsDelta`` with its first
argument text, at the same event) or as one ``ArgsDelta``; ``Fragment`` puts them back together
with the wire index of the call, so a profile can merge by index, by id or by "latest" as the
library it models does.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Hashable

from stream_doctor.capture.base import Pos
from stream_doctor.clients.base import Machine
from stream_doctor.values.events import (
    ArgsDelta,
    BlockDelta,
    BlockStart,
    BlockStop,
    Event,
    Finish,
    FinishCategory,
    Malformed,
    MessageStart,
    MessageStop,
    StreamError,
    ToolStart,
    Wire,
)


@dataclass(slots=True)
class Fragment:
    pos: Pos
    call: int | None  # the reference call
    key: Hashable
    index: int | None  # the call's wire index (None: the wire sent none)
    call_id: str | None  # what this fragment carried
    name: str | None
    arguments: str | None
    first: bool  # the fragment that opened the call (a ToolStart)
    start_input: Any = None
    server_side: bool = False
    delta_type: str = ""
    block_type: str = ""  # the call's block type (ToolStart.block_type)
    without_function: bool = False  # OpenAI Chat: its ``tool_calls[]`` entry had no ``function``
    wire: Wire = ()  # its entry's fields of the wrong type (``events.Wire``)


@dataclass
class WireMachine(Machine):
    index_of: dict[Hashable, int | None] = field(default_factory=dict)
    block_type_of: dict[Hashable, str] = field(default_factory=dict)
    server: set[Hashable] = field(default_factory=set)
    finish: FinishCategory | None = None
    finish_pos: Pos | None = None
    _open: Fragment | None = None
    error_type: str | None = None

    def feed(self, event: Event, call: int | None) -> None:
        kind = type(event)
        if kind is ArgsDelta:
            assert isinstance(event, ArgsDelta)
            self._args_delta(event, call)
            return
        self._release()
        if kind is ToolStart:
            assert isinstance(event, ToolStart)
            self._tool_start(event, call)
        elif kind is BlockStart:
            self.block_start(event.key, event.pos)  # type: ignore[union-attr]
        elif kind is BlockStop:
            self.stop(event.key, call, event.pos)  # type: ignore[union-attr]
        elif isinstance(event, Malformed):
            self.malformed(event.reason, event.pos)
            if event.fragment is not None and self.error is None:
                self.unindexed_fragment(
                    Fragment(
                        event.pos, None, None, None, None, None, event.fragment, False, delta_type="input_json_delta"
                    )
                )
        elif kind is Finish:
            self.finish, self.finish_pos = event.category, event.pos  # type: ignore[union-attr]
            self.finished(event.pos)
        elif kind is StreamError:
            self.error_type = event.error_type  # type: ignore[union-attr]
            self.stream_error(event.pos)
        elif kind is BlockDelta:
            self.block_delta(event.key, event.delta_type, event.pos)  # type: ignore[union-attr]
        elif kind is MessageStart:
            self.message_start(event.pos)
        elif kind is MessageStop:
            self.message_stop(event.pos)

    def _args_delta(self, event: ArgsDelta, call: int | None) -> None:
        """An argument fragment: joined to the start event it came in (the same frame, nothing but text), else
        handed on as one."""
        pending = self._open
        if (
            pending is not None
            and pending.key == event.key
            and pending.pos == event.pos
            and event.call_id is None
            and event.name is None
            and not event.without_function
        ):
            pending.arguments = (pending.arguments or "") + event.fragment
            pending.delta_type = event.delta_type
            return
        self._release()
        self.fragment(
            Fragment(
                event.pos,
                call,
                event.key,
                self.index_of.get(event.key),
                event.call_id,
                event.name,
                event.fragment,
                False,
                None,
                event.key in self.server,
                event.delta_type,
                self.block_type_of.get(event.key, ""),
                event.without_function,
                event.wire,
            )
        )

    def _tool_start(self, event: ToolStart, call: int | None) -> None:
        """A call's start: held open, since the fragments its own frame carries join it (``_args_delta``)."""
        self.index_of[event.key] = event.index
        self.block_type_of[event.key] = event.block_type
        if event.server_side:
            self.server.add(event.key)
        self._open = Fragment(
            event.pos,
            call,
            event.key,
            event.index,
            event.call_id,
            event.name,
            None,
            True,
            event.start_input,
            event.server_side,
            block_type=event.block_type,
            wire=event.wire,
        )

    def _release(self) -> None:
        if self._open is not None:
            opened, self._open = self._open, None
            self.fragment(opened)

    def close(self, end: Pos | None) -> None:
        self._release()
        self.end(end)

    # -- what a profile decides --------------------------------------------------------------

    def fragment(self, fragment: Fragment) -> None:
        """One wire tool call fragment."""

    def stop(self, key: Hashable, call: int | None, pos: Pos) -> None:
        """The protocol's completion signal for one block (Anthropic ``content_block_stop``; for Chat
        Completions the adapter stops a choice's calls at its ``finish_reason``)."""

    def finished(self, pos: Pos) -> None:
        """The turn's stop reason arrived (``self.finish``)."""

    def stream_error(self, pos: Pos) -> None:
        """An error the provider sent inside the stream."""

    def block_start(self, key: Hashable, pos: Pos) -> None:
        """A block that is not a tool call began (text, thinking, a server tool's result …)."""

    def malformed(self, reason: str, pos: Pos) -> None:
        """A frame the adapter could not use."""

    def block_delta(self, key: Hashable, delta_type: str, pos: Pos) -> None:
        """A fragment of a block that is not a tool call's arguments (text, thinking …)."""

    def unindexed_fragment(self, fragment: Fragment) -> None:
        """Argument text the adapter could give no call (an Anthropic ``input_json_delta`` without an
        integer ``index``: ``key`` and ``index`` None); most libraries raise or drop it."""

    def message_start(self, pos: Pos) -> None:
        pass

    def message_stop(self, pos: Pos) -> None:
        pass

    def end(self, end: Pos | None) -> None:
        """The stream ended."""


def wired(wire: Wire, name: str, default: Any = None) -> Any:
    """The value a fragment's entry sent for ``name`` with the wrong type, else ``default``."""
    for field_name, value in wire:
        if field_name == name:
            return value
    return default


_DIGITS = re.compile(r"[0-9]+")


def lax_int(value: Any) -> int | None:
    """An ``index`` sent as a string of digits, as the Chat libraries read it (pydantic's lax mode turns
    ``"0"`` into 0: the OpenAI SDK's chunk models, langchain-core's ``ToolCallChunk``, LiteLLM's
    ``ChatCompletionDeltaToolCall``); None for any other value, which they refuse or keep as it is."""
    if isinstance(value, str) and _DIGITS.fullmatch(value):
        return int(value)
    return None
