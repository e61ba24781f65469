"""Vercel AI SDK data stream protocol (AI SDK 4 and earlier: ``toDataStreamResponse``, read by ``useChat``).

Wire format: ../shared/reference/wire-formats.md §8.2 (vercel/ai
``content/docs/04-ai-sdk-ui/50-stream-protocol.mdx`` at 0bd5bc6). One part per line,
``TYPE_ID:JSON`` (read by the ``prefixed`` container, which puts the type id in the frame's
``event``), no ``[DONE]``. A message is one step: ``f:`` starts it, ``e:`` ends it with its
``finishReason``, ``d:`` ends the whole response (and the step, when no ``e:`` came).

Calls are keyed by ``toolCallId``: ``b:`` starts a streamed call, ``c:`` carries its
``argsTextDelta`` fragments, ``9:`` completes it and restates ``args`` as a parsed object (and is
a whole call when no ``b:`` came). ``a:`` is the tool's result, so the server ran the tool: it is
recorded as an execution, and must come after its call's ``9:``.
"""

from __future__ import annotations

from typing import Any, Sequence

from stream_doctor.capture.base import NOT_JSON, Frame, Pos
from stream_doctor.providers import vercel_ai
from stream_doctor.providers.base import Batching
from stream_doctor.providers.fields import FieldCheck, Shape
from stream_doctor.providers.sniffing import score
from stream_doctor.providers.vercel_ai_protocol import DATA_PARTS, DATA_STRONG, DATA_WORDS
from stream_doctor.values.events import (
    MISSING,
    ArgsDelta,
    BlockDelta,
    BlockStart,
    BlockStop,
    Event,
    Execution,
    Finish,
    Malformed,
    MessageStart,
    MessageStop,
    StreamError,
    ToolStart,
    Unknown,
)
from stream_doctor.values.protocol import EventWords, ProtocolFacts, StreamEnd

name = "vercel-ai-data"
title = "Vercel AI SDK data stream (v4)"
#: Its finish is a ``d:`` part of prefixed lines, no event a reader of SSE or JSON lines sees: only
#: the body's end ends it for the recorder.
protocol = ProtocolFacts(
    EventWords(
        message_start="f: (start_step)",
        call_start="b: (tool_call_streaming_start)",
        fragment="c: (tool_call_delta)",
        call_end="9: (tool_call)",
        stream_end="d: (finish_message)",
        stop_reason="finishReason",
    ),
    positional_indices=False,
    stream_end=StreamEnd(),
)

#: Both protocols report the AI SDK's one FinishReason union.
FINISH_CATEGORIES = vercel_ai.FINISH_CATEGORIES

#: The documented fields of the object parts a replay reads (SD006 lists any other): the v4 stream
#: protocol page (ai-sdk.dev/v4/docs/ai-sdk-ui/stream-protocol). Text, data and annotation parts
#: hold arbitrary values and are not checked.
SHAPES: dict[str, Shape] = {
    "b": Shape("toolCallId toolName"),
    "c": Shape("toolCallId argsTextDelta"),
    "9": Shape("toolCallId toolName args"),
    "a": Shape("toolCallId result"),
    "f": Shape("messageId"),
    "e": Shape("finishReason usage isContinued"),
    "d": Shape("finishReason usage"),
}


def sniff(frames: Sequence[Frame]) -> int:
    """Parts named by a data stream type id (the ``prefixed`` container, or envelope ``event`` names)."""
    return score(
        frames,
        DATA_WORDS,
        lambda frame: 2 if frame.event in DATA_STRONG else 1 if frame.event in DATA_PARTS else 0,
        objects_only=False,
    )


def translator() -> DataStreamTranslator:
    return DataStreamTranslator()


class DataStreamTranslator(Batching):
    __slots__ = ("counts", "opened", "open", "step", "started", "inputs", "content", "fields")

    fragment_event = "tool_call_delta"
    delta_type = "tool_call_delta"

    def __init__(self) -> None:
        self.counts: dict[str, int] = {"tool_call_delta": 0}
        self.fields = FieldCheck()
        self.opened = False
        self.open = False
        self.step = 0
        self.started: set[str] = set()
        self.inputs: dict[str, Any] = {}  # toolCallId -> the args its `9:` part gave
        self.content: dict[str, str] = {}  # "text"/"reasoning" -> the key of the step's open block

    def close(self) -> list[Event]:
        return []

    def fast_fragment(self, frame: Frame) -> tuple[str, str] | None:
        """A ``c:`` part with its two fields only, in an open message (see ``base.Batching``)."""
        if frame.event != "c" or not self.open:
            return None
        value = frame.value
        try:
            fragment = value["argsTextDelta"]
            key = value["toolCallId"]
            if type(fragment) is str and type(key) is str and len(value) == 2:
                return key, fragment
        except (KeyError, TypeError):
            pass
        return None

    def _feed(self, frame: Frame) -> list[Event]:
        pos = frame.pos
        type_id = frame.event
        part = DATA_PARTS.get(type_id or "")
        if type_id is None:
            return [Malformed(pos, frame.error or "a line without a TYPE_ID: prefix")]
        self.counts[part or type_id] = self.counts.get(part or type_id, 0) + 1
        if part is None:
            return [Unknown(pos, f"{type_id}:")]
        value = frame.value
        if value is NOT_JSON:
            return [Malformed(pos, f"{type_id}: part whose payload is {frame.error or 'not JSON'}")]
        out: list[Event] = []
        shape = SHAPES.get(type_id)
        if shape is not None and isinstance(value, dict):
            out.extend(self.fields.check(pos, value, shape, f"{type_id}:"))
        if type_id == "f":
            if self.open:
                self._stop(pos, out)
            message_id = value.get("messageId") if isinstance(value, dict) else None
            self._open(pos, message_id if isinstance(message_id, str) else None, out)
            return out
        if not self.opened:  # start-step parts came with AI SDK 4.1; older streams have none
            self._open(pos, None, out)
        if type_id in ("0", "g"):
            self._content(pos, part, value, out)
        elif type_id in ("b", "c", "9", "a"):
            if not isinstance(value, dict) or not isinstance(value.get("toolCallId"), str):
                out.append(Malformed(pos, f"{type_id}: part without a string 'toolCallId'"))
            else:
                self._tool(pos, type_id, value["toolCallId"], value, out)
        elif type_id in ("e", "d"):
            if not self.open:
                return out  # `d:` after the last step's `e:` restates its finish reason
            reason = value.get("finishReason") if isinstance(value, dict) else None
            if isinstance(reason, str):
                out.append(Finish(pos, reason, FINISH_CATEGORIES.get(reason, "other")))
            self._stop(pos, out)
        elif type_id == "3":
            out.append(StreamError(pos, None, value if isinstance(value, str) else None))
        return out  # DATA_QUIET parts: sources, files, data, annotations, redacted reasoning

    def _open(self, pos: Pos, message_id: str | None, out: list[Event]) -> None:
        out.append(MessageStart(pos, message_id))
        self.opened = self.open = True
        self.step += 1
        self.content = {}

    def _stop(self, pos: Pos, out: list[Event]) -> None:
        for key in self.content.values():
            out.append(BlockStop(pos, key))
        self.content = {}
        out.append(MessageStop(pos))
        self.open = False

    def _content(self, pos: Pos, part: str, value: Any, out: list[Event]) -> None:
        if not isinstance(value, str):
            out.append(Malformed(pos, f"{part} part whose payload is not a string"))
            return
        key = self.content.get(part)
        if key is None:
            key = self.content[part] = f"{part} (step {self.step})"
            out.append(BlockStart(pos, key, None, part))
        out.append(BlockDelta(pos, key, part, len(value)))

    def _tool(self, pos: Pos, type_id: str, call_id: str, value: dict[str, Any], out: list[Event]) -> None:
        if type_id == "c":
            fragment = value.get("argsTextDelta")
            if not isinstance(fragment, str):
                out.append(Malformed(pos, "c: part whose 'argsTextDelta' is not a string"))
                return
            out.append(ArgsDelta(pos, call_id, fragment, "tool_call_delta"))
        elif type_id == "b" or (type_id == "9" and call_id not in self.started):
            self.started.add(call_id)
            tool = value.get("toolName")
            out.append(ToolStart(pos, call_id, None, "tool_call", call_id, tool if isinstance(tool, str) else None))
        if type_id == "9":
            args = value.get("args", MISSING)
            if args is not MISSING:
                self.inputs[call_id] = args
            out.append(BlockStop(pos, call_id, final_input=args))
        elif type_id == "a":
            out.append(Execution(pos, call_id, None, self.inputs.get(call_id)))
