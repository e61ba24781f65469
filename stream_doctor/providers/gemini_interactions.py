"""Google Gemini Interactions API streaming (``POST /v1beta/interactions`` with ``"stream": true``).

Not ``streamGenerateContent``: every event has an ``event_type`` (python-genai
``_interactions/types/interaction_sse_event.py``: ``interaction.created``, ``interaction.status_update``,
``step.start``, ``step.delta``, ``step.stop``, ``interaction.completed``, ``error``; the SSE ``event:``
line repeats it). A response is a list of steps keyed by ``index``, their position in the
interaction: a ``function_call`` step starts with ``arguments: {}`` (a placeholder) and streams
``arguments_delta`` text, and ``step.stop`` completes it. The turn waits for tool results when the
final interaction's ``status`` is ``requires_action``.

Earlier API revisions named the events ``interaction.start``/``interaction.complete`` and
``content.start``/``content.delta``/``content.stop``; they are read the same way. The delta's
argument text is ``partial_arguments`` in the SDK types and ``arguments`` in the recorded AI SDK
captures (vercel/ai ``packages/google/src/interactions/__fixtures__``); both are accepted.
"""

from __future__ import annotations

from typing import Any, Sequence

from stream_doctor.capture.base import NOT_JSON, Frame, Pos
from stream_doctor.capture.problem_facts import EventNameMismatch
from stream_doctor.providers.base import FeedByFeed
from stream_doctor.providers.fields import FieldCheck, Shape
from stream_doctor.providers.gemini_protocol import (
    INTERACTION_COMPLETES,
    INTERACTION_STARTS,
    INTERACTION_TYPES,
    INTERACTIONS_WORDS,
)
from stream_doctor.providers.sniffing import by_type, score
from stream_doctor.util import jsontext
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

name = "gemini-interactions"
title = "Google Gemini Interactions API"
protocol = ProtocolFacts(
    EventWords(
        message_start="interaction.created",
        call_start="step.start",
        fragment="step.delta",
        call_end="step.stop",
        stream_end="interaction.completed",
        stop_reason="status",
    ),
    positional_indices=True,
    stream_end=StreamEnd(events=frozenset({"interaction.completed", "interaction.complete"})),  # INTERACTION_COMPLETES
)

#: Step types that are tool calls: the client's function calls, and the tools the server runs itself.
CALL_STEPS = {
    "function_call": False,
    "mcp_server_tool_call": True,
    "google_search_call": True,
    "code_execution_call": True,
    "url_context_call": True,
    "file_search_call": True,
    "google_maps_call": True,
}

#: Delta types that carry a server tool call's whole arguments object.
CALL_DELTAS = frozenset(t for t, server in CALL_STEPS.items() if server)

#: Delta types of non-call content, with the field whose size is kept.
CONTENT_DELTAS = {
    "text": "text",
    "thought_signature": "signature",
    "thought_summary": "content",
    "text_annotation_delta": "annotations",
    "image": "data",
    "audio": "data",
    "document": "data",
    "video": "data",
    "code_execution_result": "result",
    "url_context_result": "result",
    "google_search_result": "result",
    "mcp_server_tool_result": "result",
    "file_search_result": "result",
    "google_maps_result": "result",
}

#: interaction.status -> neutral category (``Interaction.status`` in the SDK types).
FINISH_CATEGORIES: dict[str, FinishCategory] = {
    "requires_action": "tool_calls",
    "completed": "end",
    "incomplete": "length",
    "failed": "error",
    "cancelled": "other",
    "in_progress": "other",
}


def sniff(frames: Sequence[Frame]) -> int:
    """Interactions events are objects whose ``event_type`` is one of ``gemini_protocol.INTERACTION_TYPES``."""
    return score(frames, INTERACTIONS_WORDS, by_type(INTERACTIONS_WORDS.field, INTERACTIONS_WORDS.names))


def translator() -> InteractionsTranslator:
    return InteractionsTranslator()


#: The documented fields of an event, one shape for the union (SD006 lists any other): python-genai
#: ``_interactions/types``: every event has ``event_type`` and ``event_id`` (the token to resume the
#: stream from); ``InteractionEvent`` interaction; ``InteractionStatusUpdate`` interaction_id, status;
#: ``StepStart``/``ContentStart`` index and step/content; ``StepDelta``/``ContentDelta`` index, delta;
#: ``StepStop``/``ContentStop`` index; ``ErrorEvent`` error. Steps and deltas are unions of many types
#: and are not checked here.
EVENT = Shape("event_type event_id interaction interaction_id status index step content delta error")


class InteractionsTranslator(FeedByFeed):
    __slots__ = ("counts", "fields")

    def __init__(self) -> None:
        self.counts: dict[str, int] = {}
        self.fields = FieldCheck()

    def close(self) -> list[Event]:
        return []

    def feed(self, frame: Frame) -> list[Event]:
        pos = frame.pos
        value = frame.value
        if value is NOT_JSON:
            return [Malformed(pos, frame.error or "not JSON")]
        if not isinstance(value, dict):
            return [Malformed(pos, f"expected a JSON object, got {type(value).__name__}")]
        kind = value.get("event_type")
        if not isinstance(kind, str):
            return [Malformed(pos, "event object without a string 'event_type'")]
        self.counts[kind] = self.counts.get(kind, 0) + 1
        out = self._event(frame, value, kind)
        if kind in INTERACTION_TYPES:
            out.extend(self.fields.check(pos, value, EVENT, ""))
        return out

    def _event(self, frame: Frame, value: dict[str, Any], kind: str) -> list[Event]:
        pos = frame.pos
        out: list[Event]
        if kind in ("step.delta", "content.delta"):
            out = self._delta(pos, value)
        elif kind in ("step.start", "content.start"):
            out = self._start(pos, value, "step" if kind == "step.start" else "content")
        elif kind in ("step.stop", "content.stop"):
            index = value.get("index")
            out = [BlockStop(pos, index)] if type(index) is int else [_no_index(pos, kind)]
        elif kind in INTERACTION_STARTS:
            interaction = value.get("interaction")
            interaction = interaction if isinstance(interaction, dict) else {}
            out = [MessageStart(pos, _str(interaction.get("id")), _str(interaction.get("model")))]
        elif kind in INTERACTION_COMPLETES:
            interaction = value.get("interaction")
            if not isinstance(interaction, dict):
                return [Malformed(pos, f"{kind} without an interaction object")]
            status = _str(interaction.get("status"))
            out = [Finish(pos, status, FINISH_CATEGORIES.get(status or "", "other")), MessageStop(pos)]
        elif kind == "interaction.status_update":
            out = [KeepAlive(pos, f"status {value.get('status')}")]
        elif kind == "error":
            error = value.get("error")
            error = error if isinstance(error, dict) else {}
            code = error.get("code")
            out = [
                StreamError(
                    pos,
                    None if code is None else jsontext.brief(code) if isinstance(code, (dict, list)) else str(code),
                    _str(error.get("message")),
                )
            ]
        else:
            out = [Unknown(pos, kind)]
        if frame.event is not None and frame.event != kind:
            out.append(Problem(pos, "event-name-mismatch", "", EventNameMismatch(frame.event, kind, "event_type")))
        return out

    @staticmethod
    def _start(pos: Pos, value: dict[str, Any], field: str) -> list[Event]:
        index = value.get("index")
        step = value.get(field)
        if type(index) is not int:
            return [_no_index(pos, f"{field}.start")]
        if not isinstance(step, dict) or not isinstance(step.get("type"), str):
            return [Malformed(pos, f"{field}.start without a typed {field}")]
        step_type: str = step["type"]
        server_side = CALL_STEPS.get(step_type)
        if server_side is None:
            return [BlockStart(pos, index, index, step_type, _str(step.get("call_id")))]
        return [
            ToolStart(
                pos,
                index,
                index,
                step_type,
                _str(step.get("id")),
                _str(step.get("name")),
                step.get("arguments"),
                server_side,
            )
        ]

    @staticmethod
    def _delta(pos: Pos, value: dict[str, Any]) -> list[Event]:
        index = value.get("index")
        delta = value.get("delta")
        if type(index) is not int:
            return [_no_index(pos, "step.delta")]
        if not isinstance(delta, dict):
            return [Malformed(pos, "step.delta without a delta object")]
        delta_type = delta.get("type")
        if not isinstance(delta_type, str):
            return [Malformed(pos, "step.delta whose delta has no string 'type'")]
        if delta_type == "arguments_delta":
            text = delta.get("partial_arguments", delta.get("arguments"))
            if type(text) is not str:
                return [Malformed(pos, "arguments_delta whose arguments are not a string")]
            return [ArgsDelta(pos, index, text, "arguments_delta")]
        if delta_type in CALL_DELTAS:
            arguments = delta.get("arguments", {})
            try:
                text = jsontext.dumps(arguments).decode()
            except TypeError:
                return [Malformed(pos, f"{delta_type} delta whose arguments are not JSON")]
            return [ArgsDelta(pos, index, text, delta_type)]
        field = CONTENT_DELTAS.get(delta_type)
        if field is None:
            return [Unknown(pos, f"step.delta/{delta_type}")]
        payload = delta.get(field)
        size = len(payload) if isinstance(payload, (str, list)) else 1
        return [BlockDelta(pos, index, delta_type, size)]


def _no_index(pos: Pos, kind: str) -> Malformed:
    return Malformed(pos, f"{kind} without an integer 'index'")


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None
