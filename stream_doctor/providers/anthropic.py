"""Anthropic Messages streaming (``POST /v1/messages`` with ``"stream": true``).

Wire format: ../shared/reference/wire-formats.md §1 and
https://platform.claude.com/docs/en/build-with-claude/streaming. Blocks are keyed by ``index``,
which is the block's position in the final ``message.content``; a tool call is complete at
``content_block_stop`` for its index, never when its buffer happens to parse.
"""

from __future__ import annotations

from typing import Any, Sequence

from stream_doctor.capture.base import NOT_JSON, Frame, Pos
from stream_doctor.capture.problem_facts import EventNameMismatch
from stream_doctor.capture.runs import FRAGMENT, RunForm
from stream_doctor.providers.anthropic_protocol import STRONG, WORDS
from stream_doctor.providers.base import Batching
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
from stream_doctor.values.protocol import EventWords, ProtocolFacts

name = "anthropic"
title = "Anthropic Messages"
protocol = ProtocolFacts(
    EventWords(
        message_start="message_start",
        call_start="content_block_start",
        fragment="input_json_delta",
        call_end="content_block_stop",
        stream_end="message_stop",
        stop_reason="stop_reason",
    ),
    positional_indices=True,
)

#: Content blocks whose input streams as ``input_json_delta``. The server runs ``server_tool_use``
#: and ``mcp_tool_use`` itself; only ``tool_use`` is the client's to execute.
TOOL_BLOCKS = {"tool_use": False, "server_tool_use": True, "mcp_tool_use": True}

#: Delta types whose payload field we measure (only input_json_delta is accumulated as text).
CONTENT_DELTAS = {
    "text_delta": "text",
    "thinking_delta": "thinking",
    "signature_delta": "signature",
    "citations_delta": "citation",
}

#: stop_reason -> neutral category (wire-formats §1.2; unknown future reasons are "other").
FINISH_CATEGORIES: dict[str, FinishCategory] = {
    "tool_use": "tool_calls",
    "end_turn": "end",
    "stop_sequence": "end",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "pause_turn": "pause",
    "refusal": "refusal",
}

#: The documented fields of each event (SD006 lists any other), from anthropic-sdk-python 2.12's
#: ``RawMessageStreamEvent`` and ``BetaRawMessageStreamEvent`` members (their content block and delta
#: unions included), and the ``error`` event of the streaming docs (``ErrorResponse``: error, request_id).
#: ``usage`` and the content of result blocks are not checked: they grow with every server tool.
BLOCK = Shape(
    "type",
    variants={
        "text": "text citations",
        "thinking": "thinking signature",
        "redacted_thinking": "data",
        "tool_use": "id name input caller toolset_name",
        "server_tool_use": "id name input caller",
        "web_search_tool_result": "tool_use_id content caller",
        "web_fetch_tool_result": "tool_use_id content caller",
        "advisor_tool_result": "tool_use_id content",
        "code_execution_tool_result": "tool_use_id content",
        "bash_code_execution_tool_result": "tool_use_id content",
        "text_editor_code_execution_tool_result": "tool_use_id content",
        "tool_search_tool_result": "tool_use_id content",
        "mcp_tool_use": "id name input server_name",
        "mcp_tool_result": "tool_use_id content is_error",
        "container_upload": "file_id",
        "compaction": "content encrypted_content signature tool_changes",
        "fallback": "from to trigger",
        "mcp_tool_listing": "mcp_server_name tools",
    },
)
DELTA = Shape(
    "type",
    variants={
        "text_delta": "text",
        "input_json_delta": "partial_json",
        "citations_delta": "citation",
        "thinking_delta": "thinking estimated_tokens",
        "signature_delta": "signature",
        "compaction_delta": "content encrypted_content",
    },
)
MESSAGE = Shape(
    "id type role model content stop_reason stop_sequence stop_details usage container context_management"
    " diagnostics input_transformations",
    {"content": BLOCK},
)
SHAPES: dict[str, Shape] = {
    "message_start": Shape("type message", {"message": MESSAGE}),
    "content_block_start": Shape("type index content_block", {"content_block": BLOCK}),
    "content_block_delta": Shape("type index delta", {"delta": DELTA}),
    "content_block_stop": Shape("type index"),
    "message_delta": Shape(
        "type delta usage context_management input_transformations",
        {"delta": Shape("stop_reason stop_sequence stop_details container")},
    ),
    "message_stop": Shape("type"),
    "ping": Shape("type"),
    "error": Shape("type error request_id", {"error": Shape("type message")}),
}


#: The input_json_delta as the API sends it (``capture/runs.py``): its fields in this order, no
#: whitespace but the 0 to 15 spaces of padding the API puts before the closing brace
#: (fixtures/anthropic/README.md). A run of them, differing only in fragment and padding, is read
#: without a Frame per event.
run_form = RunForm(
    "anthropic input_json_delta",
    rb'event: content_block_delta\ndata: \{"type":"content_block_delta","index":(?:0|[1-9][0-9]{0,8}),'
    rb'"delta":\{"type":"input_json_delta","partial_json":"(?P<fragment>' + FRAGMENT + rb')"\}(?P<free>[ ]*+)\}\n\n',
    {"free": rb"[ ]*+"},
)


def with_fields(shapes: dict[str, Shape], extra: str, only: dict[str, Shape] | None = None) -> dict[str, Shape]:
    """``shapes`` with ``extra`` fields documented on every event (or ``only`` replacing some events)."""
    wider = {kind: Shape(shape.fields | frozenset(extra.split()), shape.nested) for kind, shape in shapes.items()}
    return wider | (only or {})


def sniff(frames: Sequence[Frame]) -> int:
    """Anthropic events are objects whose ``type`` is one of the Messages stream event names."""
    return score(frames, WORDS, by_type("type", WORDS.names, STRONG))


def translator() -> AnthropicTranslator:
    return AnthropicTranslator()


class AnthropicTranslator(Batching):
    __slots__ = ("counts", "fields", "shapes")

    fragment_event = "content_block_delta"
    delta_type = "input_json_delta"

    def __init__(self, shapes: dict[str, Shape] = SHAPES) -> None:
        self.counts: dict[str, int] = {"content_block_delta": 0}
        self.fields = FieldCheck()
        self.shapes = shapes  # the documented fields of each event (wider in Bedrock and SDK helper logs)

    def close(self) -> list[Event]:
        return []

    def fast_fragment(self, frame: Frame) -> tuple[int, str] | None:
        """An input_json_delta in the shape the API always sends (see ``base.Batching``); the key
        counts say it has no other field. Anything else (and any surprise here) takes ``_feed``."""
        value = frame.value
        try:
            if value["type"] == "content_block_delta":
                delta = value["delta"]
                index = value["index"]
                if (
                    delta["type"] == "input_json_delta"
                    and type(index) is int
                    and len(value) == 3  # type, index, delta: no other field to check (SD006)
                    and len(delta) == 2
                    and (frame.event is None or frame.event == "content_block_delta")
                ):
                    fragment = delta["partial_json"]
                    if type(fragment) is str:
                        return index, fragment
        except (KeyError, TypeError):
            pass
        return None

    def _feed(self, frame: Frame) -> list[Event]:
        pos = frame.pos
        value = frame.value
        if value is NOT_JSON:
            return [Malformed(pos, frame.error or "not JSON")]
        if not isinstance(value, dict):
            return [Malformed(pos, f"expected a JSON object, got {type(value).__name__}")]
        kind = value.get("type")
        if not isinstance(kind, str):
            return self._event(frame, value, kind)
        self.counts[kind] = self.counts.get(kind, 0) + 1
        found = self.fields.check(pos, value, self.shapes.get(kind), kind)
        out = self._event(frame, value, kind)
        return out + found if found else out

    def _event(self, frame: Frame, value: dict[str, Any], kind: Any) -> list[Event]:
        pos = frame.pos
        out: list[Event]
        if kind == "content_block_delta":
            out = self._delta(frame, value)
        elif kind == "content_block_start":
            out = self._block_start(frame, value)
        elif kind == "content_block_stop":
            index = value.get("index")
            out = [BlockStop(pos, index)] if type(index) is int else [_no_index(frame, kind, value)]
        elif kind == "ping":
            out = [KeepAlive(pos, "ping")]
        elif kind == "message_start":
            out = self._message_start(frame, value)
        elif kind == "message_delta":
            delta = value.get("delta")
            if not isinstance(delta, dict):
                return [Malformed(pos, "message_delta without a delta object")]
            if "stop_reason" not in delta:
                out = []
            else:
                finish = _finish(pos, delta.get("stop_reason"))
                # langchain-anthropic raises on a beta response's context_management (clients/langchain.py)
                finish.context_management = bool(value.get("context_management"))
                out = [finish]
        elif kind == "message_stop":
            out = [MessageStop(pos)]
        elif kind == "error":
            error = value.get("error")
            error = error if isinstance(error, dict) else {}
            out = [StreamError(pos, _str(error.get("type")), _str(error.get("message")))]
        elif isinstance(kind, str):
            out = [Unknown(pos, kind)]
        else:
            return [Malformed(pos, "event object without a string 'type'")]
        if frame.event is not None and frame.event != kind:
            out.append(Problem(pos, "event-name-mismatch", "", EventNameMismatch(frame.event, kind)))
        return out

    @staticmethod
    def _delta(frame: Frame, value: dict[str, Any]) -> list[Event]:
        index = value.get("index")
        delta = value.get("delta")
        if type(index) is not int:
            malformed = _no_index(frame, "content_block_delta", value)
            if isinstance(delta, dict) and delta.get("type") == "input_json_delta":
                fragment = delta.get("partial_json")
                # no call to give it to, but langchain-anthropic and pydantic-ai still append it (clients/)
                if type(fragment) is str:
                    malformed.fragment = fragment
                elif "partial_json" in delta:
                    malformed.wire += (("partial_json", fragment),)
            elif malformed.wire and isinstance(delta, dict) and delta.get("type") in CONTENT_DELTAS:
                malformed.wire += (("delta_type", delta["type"]),)  # a text or thinking delta at a string index
            return [malformed]
        if not isinstance(delta, dict):
            return [Malformed(frame.pos, "content_block_delta without a delta object")]
        delta_type = delta.get("type")
        if not isinstance(delta_type, str):  # a dict or list here is unhashable: no lookup may see it
            return [Malformed(frame.pos, "content_block_delta whose delta has no string type")]
        if delta_type == "input_json_delta":
            fragment = delta.get("partial_json")
            if type(fragment) is not str:
                # the libraries act on the value and on the block the index names (clients/)
                wire = (("index", index), ("partial_json", fragment))
                return [Malformed(frame.pos, "input_json_delta whose partial_json is not a string", wire=wire)]
            return [ArgsDelta(frame.pos, index, fragment, delta_type)]
        field = CONTENT_DELTAS.get(delta_type)
        if field is None:
            return [Unknown(frame.pos, f"content_block_delta/{delta_type}")]
        payload = delta.get(field)
        size = len(payload) if isinstance(payload, str) else 1
        return [BlockDelta(frame.pos, index, delta_type, size)]

    @staticmethod
    def _block_start(frame: Frame, value: dict[str, Any]) -> list[Event]:
        index = value.get("index")
        block = value.get("content_block")
        if type(index) is not int:
            malformed = _no_index(frame, "content_block_start", value)
            if malformed.wire and isinstance(block, dict) and isinstance(block.get("type"), str):
                # no ToolStart is made of it, but the libraries append the block whatever its index: the
                # profiles read it here (``start_event``)
                malformed.wire += (("content_block", block),)
            return [malformed]
        if not isinstance(block, dict) or not isinstance(block.get("type"), str):
            return [Malformed(frame.pos, "content_block_start without a typed content_block")]
        return [start_event(frame.pos, index, block)]

    @staticmethod
    def _message_start(frame: Frame, value: dict[str, Any]) -> list[Event]:
        message = value.get("message")
        if not isinstance(message, dict):
            return [Malformed(frame.pos, "message_start without a message object")]
        pos = frame.pos
        out: list[Event] = [MessageStart(pos, _str(message.get("id")), _str(message.get("model")))]
        # Captured (AI SDK programmatic-tool-calling fixture): a message_start whose content already
        # holds whole blocks and whose stop_reason is set, followed directly by message_stop.
        content = message.get("content")
        if isinstance(content, list):
            for index, block in enumerate(content):
                if isinstance(block, dict) and isinstance(block.get("type"), str):
                    out.append(start_event(pos, index, block))
                    out.append(BlockStop(pos, index))
        if message.get("stop_reason") is not None:
            out.append(_finish(pos, message.get("stop_reason")))
        return out


def start_event(pos: Pos, index: int, block: dict[str, Any]) -> Event:
    """The event of a content block's start (``block`` has a string ``type``)."""
    block_type: str = block["type"]
    server_side = TOOL_BLOCKS.get(block_type)
    if server_side is None:
        result_for = block.get("tool_use_id")
        return BlockStart(pos, index, index, block_type, _str(result_for))
    caller = block.get("caller")
    caller_type = caller.get("type") if isinstance(caller, dict) else None
    start_input = block.get("input")
    return ToolStart(
        pos,
        index,
        index,
        block_type,
        _str(block.get("id")),
        _str(block.get("name")),
        start_input,
        server_side,
        _str(caller_type) if caller_type != "direct" else None,
        # an input that is not an object (the SDKs keep a list; the AI SDK's schema refuses the chunk)
        wire=(("input", start_input),) if "input" in block and type(start_input) is not dict else (),
    )


def _finish(pos: Pos, reason: Any) -> Finish:
    text = _str(reason)
    return Finish(pos, text, FINISH_CATEGORIES.get(text or "", "other"))


def _no_index(frame: Frame, kind: str, value: dict[str, Any] | None = None) -> Malformed:
    """An event without an integer ``index``; one sent of another type carries it as ``wire`` (the
    SDKs read ``"0"`` as the index 0: pydantic's lax int, JavaScript's property keys)."""
    malformed = Malformed(frame.pos, f"{kind} without an integer 'index'")
    if value is not None and "index" in value:
        malformed.wire = (("index", value["index"]),)
    return malformed


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None
