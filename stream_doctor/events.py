"""The neutral events every provider adapter emits, whatever the provider's own vocabulary.

Events are small slotted classes built once per frame on the hot path; treat them as immutable.
Each carries the ``Pos`` of the frame it came from, so positions flow to every finding.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Hashable

from stream_doctor.capture.base import Pos


@dataclass(slots=True)
class MessageStart:
    pos: Pos
    message_id: str | None
    model: str | None = None


@dataclass(slots=True)
class BlockStart:
    """A content block that is not a tool call (text, thinking, a server tool's result …)."""

    pos: Pos
    key: Hashable
    index: int | None
    block_type: str
    result_for: str | None = None  # the tool_use_id a server-side result block answers


@dataclass(slots=True)
class ToolStart:
    """A tool call begins. ``start_input`` is what the start event carried (Anthropic: ``{}``)."""

    pos: Pos
    key: Hashable
    index: int | None
    block_type: str
    call_id: str | None
    name: str | None
    start_input: Any = None
    server_side: bool = False
    caller: str | None = None  # programmatic tool calling: the server tool that made this call


@dataclass(slots=True)
class ArgsDelta:
    """A fragment of a tool call's argument text."""

    pos: Pos
    key: Hashable
    fragment: str
    delta_type: str


@dataclass(slots=True)
class BlockDelta:
    """A fragment of a non-tool block (text, thinking, signature, citation); only its size is kept."""

    pos: Pos
    key: Hashable
    delta_type: str
    size: int


@dataclass(slots=True)
class BlockStop:
    """The protocol's own completion signal for one block (Anthropic ``content_block_stop``)."""

    pos: Pos
    key: Hashable


@dataclass(slots=True)
class Finish:
    """The turn's stop reason (Anthropic ``message_delta.delta.stop_reason``)."""

    pos: Pos
    reason: str | None


@dataclass(slots=True)
class MessageStop:
    pos: Pos


@dataclass(slots=True)
class StreamError:
    """An error the provider sent inside the stream, after the HTTP status was already 200."""

    pos: Pos
    error_type: str | None
    message: str | None


@dataclass(slots=True)
class KeepAlive:
    """A frame that carries nothing but liveness (Anthropic ``ping``)."""

    pos: Pos
    what: str


@dataclass(slots=True)
class Unknown:
    """A well-formed event the adapter does not know. Counted and reported, never dropped."""

    pos: Pos
    event_type: str


@dataclass(slots=True)
class Malformed:
    """A frame the adapter could not use at all (not JSON, not an object, no type)."""

    pos: Pos
    reason: str


@dataclass(slots=True)
class Problem:
    """Something wrong with a frame that the adapter noticed but could still use."""

    pos: Pos
    kind: str
    message: str


@dataclass(slots=True)
class Execution:
    """What the application did: it ran a tool with this input (an envelope ``execute`` record)."""

    pos: Pos
    call_id: str | None
    name: str | None
    input: Any


@dataclass(slots=True)
class Request:
    """The request body that was sent (an envelope ``request`` record)."""

    pos: Pos
    body: Any


Event = (
    MessageStart
    | BlockStart
    | ToolStart
    | ArgsDelta
    | BlockDelta
    | BlockStop
    | Finish
    | MessageStop
    | StreamError
    | KeepAlive
    | Unknown
    | Malformed
    | Problem
    | Execution
    | Request
)
