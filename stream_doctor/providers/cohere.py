"""Cohere v2 Chat streaming (``POST /v2/chat`` with ``"stream": true``).

Wire format: ../shared/reference/wire-formats.md §5 and cohere-python
``src/cohere/v2/types/v2chat_stream_response.py`` (the event union, discriminated by ``type``):
``message-start``, ``tool-plan-delta``, ``tool-call-start`` (whose ``tool_calls`` is ONE object,
not a list), ``tool-call-delta``, ``tool-call-end``, ``content-start/delta/end``,
``citation-start/end``, ``debug`` and ``message-end``. A call is keyed by its ``index`` and complete
at ``tool-call-end``; a call with no delta at all has no arguments (``{}``).

Whether tool-call and content indexes share one numbering is not documented, so they are kept
apart (content blocks are keyed ``("content", index)``). Third-party mocks put an ``event:`` line
naming the type before each ``data:`` line; the official docs do not show raw frames, so both
forms are read, and an ``event:`` that disagrees with ``type`` is reported. The SDK stops at a
``data: [DONE]`` line (generic Fern code), so one is accepted as the end of the stream.
"""

from __future__ import annotations

from typing import Any, Sequence

from stream_doctor.capture.base import NOT_JSON, Frame, Pos
from stream_doctor.capture.problem_facts import EventNameMismatch
from stream_doctor.capture.runs import FRAGMENT, RunForm
from stream_doctor.providers.base import Batching
from stream_doctor.providers.cohere_protocol import KNOWN_TYPES, STRONG, WORDS
from stream_doctor.providers.fields import FieldCheck, Shape
from stream_doctor.providers.sniffing import by_type, score
from stream_doctor.values.events import (
    ArgsDelta,
    BlockDelta,
    BlockStart,
    BlockStop,
    Event,
    Finish,
    FinishCategory,
    KeepAlive,
    Malformed,
    MessageStart,
    MessageStop,
    Problem,
    StreamError,
    ToolStart,
    Unknown,
)
from stream_doctor.values.protocol import EventWords, ProtocolFacts, StreamEnd

name = "cohere"
title = "Cohere v2 Chat"
protocol = ProtocolFacts(
    EventWords(
        message_start="message-start",
        call_start="tool-call-start",
        fragment="tool-call-delta",
        call_end="tool-call-end",
        stream_end="message-end",
        stop_reason="finish_reason",
    ),
    positional_indices=False,
    stream_end=StreamEnd(events=frozenset({"message-end"})),
)

DELTA_TYPE = "tool-call-delta"
PLAN_KEY = "tool_plan"

#: finish_reason -> neutral category (cohere-python ``ChatFinishReason``).
FINISH_CATEGORIES: dict[str, FinishCategory] = {
    "TOOL_CALL": "tool_calls",
    "COMPLETE": "end",
    "STOP_SEQUENCE": "end",
    "MAX_TOKENS": "length",
    "ERROR": "error",
    "TIMEOUT": "error",
}

#: The documented fields of an event (SD006 lists any other), one shape for the whole union:
#: cohere-python v2 ``StreamedChatResponseV2`` members (``ChatMessageStartEvent`` id, ``ChatContentDeltaEvent``
#: logprobs, ``ChatDebugEvent`` prompt; ``ChatToolCallDeltaEventDelta`` has ``tool_call`` beside
#: ``message``, ``ChatToolPlanDeltaEventDelta`` ``tool_plan``; ``ChatMessageEndEventDelta``
#: finish_reason, usage, error) and ``AssistantMessageResponse`` for the message.
EVENT = Shape(
    "type id index delta logprobs prompt",
    {
        "delta": Shape(
            "message tool_call tool_plan finish_reason usage error",
            {
                "message": Shape(
                    "role content tool_plan tool_calls citations",
                    {
                        "content": Shape("type text thinking"),
                        "tool_calls": Shape("id type function", {"function": Shape("name arguments")}),
                    },
                )
            },
        )
    },
)

#: Event types whose own fields cohere-python checks narrower than the union (``ChatToolCallEndEvent``:
#: index; ``ChatContentDeltaEvent``: index, delta, logprobs); every other known type keeps ``EVENT``.
EVENT_SHAPES: dict[str, Shape] = {
    "tool-call-end": Shape("type index"),
    "content-delta": Shape("type index delta logprobs", EVENT.nested),
}


#: The tool-call-delta as the API sends it (``capture/runs.py``): its fields in this order, no
#: whitespace, with or without its ``event:`` line (cohere-python reads the data; the corpus's raw
#: captures carry the line, SDK logs do not). A run of them differing only in the fragment is read
#: without a Frame per event.
run_form = RunForm(
    "cohere tool-call-delta",
    rb'(?:event: tool-call-delta\n)?data: \{"type":"tool-call-delta","index":(?:0|[1-9][0-9]{0,8}),'
    rb'"delta":\{"message":\{"tool_calls":\{"function":\{"arguments":"(?P<fragment>' + FRAGMENT + rb')"\}\}\}\}\}\n\n',
)


def sniff(frames: Sequence[Frame]) -> int:
    """Cohere events are objects whose ``type`` is one of the hyphenated v2 stream event names."""
    return score(frames, WORDS, by_type("type", WORDS.names, STRONG))


def translator() -> CohereTranslator:
    return CohereTranslator()


class CohereTranslator(Batching):
    __slots__ = ("counts", "plan_open", "fields")

    fragment_event = "tool-call-delta"
    delta_type = DELTA_TYPE

    def __init__(self) -> None:
        self.counts: dict[str, int] = {"tool-call-delta": 0}
        self.fields = FieldCheck()
        self.plan_open = False  # the tool plan has no start event: its first delta starts it

    def close(self) -> list[Event]:
        return []

    def fast_fragment(self, frame: Frame) -> tuple[int, str] | None:
        """The common tool-call-delta, read with plain subscripts (see ``base.Batching``)."""
        value = frame.value
        try:
            if value["type"] == "tool-call-delta":
                fragment = value["delta"]["message"]["tool_calls"]["function"]["arguments"]
                index = value["index"]
                if (
                    type(fragment) is str
                    and type(index) is int
                    and len(value) == 3  # type, index, delta: no other field to check (SD006)
                    and frame.event in (None, "tool-call-delta")
                ):
                    return index, fragment
        except (KeyError, TypeError):
            pass
        return None

    def _feed(self, frame: Frame) -> list[Event]:
        pos = frame.pos
        value = frame.value
        if value is NOT_JSON:
            if frame.data.strip() == b"[DONE]":
                return [KeepAlive(pos, "[DONE]")]
            return [Malformed(pos, frame.error or "not JSON")]
        if not isinstance(value, dict):
            return [Malformed(pos, f"expected a JSON object, got {type(value).__name__}")]
        kind = value.get("type")
        if not isinstance(kind, str):
            return [Malformed(pos, "event object without a string 'type'")]
        self.counts[kind] = self.counts.get(kind, 0) + 1
        found = self.fields.check(pos, value, EVENT_SHAPES.get(kind, EVENT) if kind in KNOWN_TYPES else None, "")
        out = self._event(pos, value, kind)
        if frame.event is not None and frame.event != kind:
            out.append(Problem(pos, "event-name-mismatch", "", EventNameMismatch(frame.event, kind)))
        return out + found if found else out

    def _event(self, pos: Pos, value: dict[str, Any], kind: str) -> list[Event]:
        out: list[Event]
        if kind == "tool-call-delta":
            out = self._tool_delta(pos, value)
        elif kind == "tool-call-start":
            out = self._close_plan(pos) + self._tool_start(pos, value)
        elif kind == "tool-call-end":
            index = value.get("index")
            out = [BlockStop(pos, index)] if type(index) is int else [_no_index(pos, kind)]
        elif kind == "tool-plan-delta":
            plan = _dig(value, "delta", "message", "tool_plan")
            out = []
            if not self.plan_open:
                self.plan_open = True
                out.append(BlockStart(pos, PLAN_KEY, None, "tool_plan"))
            out.append(BlockDelta(pos, PLAN_KEY, "tool_plan", len(plan) if isinstance(plan, str) else 0))
        elif kind == "content-start":
            out = self._close_plan(pos) + self._content_start(pos, value)
        elif kind == "content-delta":
            out = self._content_delta(pos, value)
        elif kind == "content-end":
            index = value.get("index")
            out = [BlockStop(pos, ("content", index))] if type(index) is int else [_no_index(pos, kind)]
        elif kind == "message-start":
            self.plan_open = False
            out = [MessageStart(pos, _str(value.get("id")), None)]
        elif kind == "message-end":
            out = self._close_plan(pos) + self._message_end(pos, value)
        elif kind in ("citation-start", "citation-end", "debug"):
            out = [KeepAlive(pos, kind)]  # citations annotate text already received; debug is the prompt
        else:
            out = [Unknown(pos, kind)]
        return out

    def _close_plan(self, pos: Pos) -> list[Event]:
        if not self.plan_open:
            return []
        self.plan_open = False
        return [BlockStop(pos, PLAN_KEY)]

    @staticmethod
    def _tool_start(pos: Pos, value: dict[str, Any]) -> list[Event]:
        index = value.get("index")
        if type(index) is not int:
            return [_no_index(pos, "tool-call-start")]
        call = _dig(value, "delta", "message", "tool_calls")
        if isinstance(call, list):
            # The v2 API sends one object here; a list is what an OpenAI-minded proxy would send.
            return [Malformed(pos, "tool-call-start whose tool_calls is a list; Cohere v2 sends one object")]
        if not isinstance(call, dict):
            return [Malformed(pos, "tool-call-start without a tool_calls object")]
        function = call.get("function")
        function = function if isinstance(function, dict) else {}
        out: list[Event] = [
            ToolStart(
                pos,
                index,
                index,
                _str(call.get("type")) or "function",
                _str(call.get("id")),
                _str(function.get("name")),
            )
        ]
        arguments = function.get("arguments")
        if isinstance(arguments, str) and arguments:
            # Captured starts carry "" here; text in it is the start of the arguments.
            out.append(ArgsDelta(pos, index, arguments, "tool-call-start"))
        return out

    @staticmethod
    def _tool_delta(pos: Pos, value: dict[str, Any]) -> list[Event]:
        index = value.get("index")
        if type(index) is not int:
            return [_no_index(pos, "tool-call-delta")]
        call = _dig(value, "delta", "message", "tool_calls")
        if not isinstance(call, dict):
            return [Malformed(pos, "tool-call-delta without a tool_calls object")]
        function = call.get("function")
        fragment = function.get("arguments") if isinstance(function, dict) else None
        if not isinstance(fragment, str):
            return [Malformed(pos, "tool-call-delta whose function.arguments is not a string")]
        name_seen = function.get("name") if isinstance(function, dict) else None
        return [ArgsDelta(pos, index, fragment, DELTA_TYPE, _str(call.get("id")), _str(name_seen))]

    @staticmethod
    def _content_start(pos: Pos, value: dict[str, Any]) -> list[Event]:
        index = value.get("index")
        if type(index) is not int:
            return [_no_index(pos, "content-start")]
        content = _dig(value, "delta", "message", "content")
        kind = content.get("type") if isinstance(content, dict) else None
        return [BlockStart(pos, ("content", index), index, kind if isinstance(kind, str) else "text")]

    @staticmethod
    def _content_delta(pos: Pos, value: dict[str, Any]) -> list[Event]:
        index = value.get("index")
        if type(index) is not int:
            return [_no_index(pos, "content-delta")]
        content = _dig(value, "delta", "message", "content")
        if not isinstance(content, dict):
            return [Malformed(pos, "content-delta without a content object")]
        field = "thinking" if "thinking" in content else "text"
        text = content.get(field)
        return [BlockDelta(pos, ("content", index), field, len(text) if isinstance(text, str) else 0)]

    @staticmethod
    def _message_end(pos: Pos, value: dict[str, Any]) -> list[Event]:
        delta = value.get("delta")
        if not isinstance(delta, dict):
            return [Malformed(pos, "message-end without a delta object")]
        out: list[Event] = []
        reason = _str(delta.get("finish_reason"))
        category = FINISH_CATEGORIES.get(reason or "", "other")
        error = delta.get("error")
        if error or category == "error":
            # A failed generation still ends with message-end; its error text is in delta.error.
            out.append(StreamError(pos, reason, error if isinstance(error, str) else None))
        if reason is not None:
            out.append(Finish(pos, reason, category))
        out.append(MessageStop(pos))
        return out


def _dig(value: Any, *path: str) -> Any:
    for key in path:
        if not isinstance(value, dict):
            return None
        value = value.get(key)
    return value


def _no_index(pos: Pos, kind: str) -> Malformed:
    return Malformed(pos, f"{kind} without an integer 'index'")


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None
