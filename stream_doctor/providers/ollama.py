"""Ollama's native chat streaming (``POST /api/chat``, ``application/x-ndjson``).

Wire format: ../shared/reference/wire-formats.md §7.2, ollama/ollama ``api/types.go``
(``ChatResponse``, ``Message``, ``ToolCall``, ``ToolCallFunction``), ``server/routes.go`` and
``openai/openai.go``. One JSON object per line, no SSE and no ``[DONE]``:
``{"model","created_at","message":{"role","content","thinking"?,"tool_calls"?},"done":false}``,
and a last line with ``"done": true``, ``done_reason`` and the counters.

* Tool calls come whole: the server's parser emits a call once it has recognised all of it, with
  ``arguments`` as an object and ``index`` inside ``function``. Each call is complete in its line
  (a ``ToolStart`` and a ``BlockStop`` carrying the input there). Older servers' ``ToolCallFunction``
  has ``Index int `json:"index,omitempty"``` so index 0 is left out; the ollama.com streaming-tool
  post (May 2025) shows calls with neither index nor id. A missing index is read as 0 and the id is
  optional: current servers add ``"id": "call_…"`` (routes.go ``toolCallId()``), but the next request
  answers a call by ``tool_name``, so a call without an id is not a stream problem.
* ``done_reason`` stays ``"stop"`` when the model called tools: only the ``/v1`` layer rewrites it
  (openai.go ``ToChunk``: ``if toolCallSent … finishReasonToolCalls``). For this API ``stop`` after
  calls is the normal tool turn, so it is given the category ``tool_calls`` (the reason shown stays
  ``stop``) and SD304 does not fire on every Ollama tool turn.
* An error after the stream started is a line ``{"error": "…"}``, sometimes with ``"status"``
  (routes.go ``ChatHandler``: ``ch <- gin.H{"error": serr.ErrorMessage, "status": serr.StatusCode}``);
  the stream then ends without a ``done`` line.
"""

from __future__ import annotations

from typing import Any, Sequence

from stream_doctor.capture.base import NOT_JSON, Frame, Pos
from stream_doctor.providers.base import FeedByFeed
from stream_doctor.providers.fields import FieldCheck, Shape
from stream_doctor.providers.ollama_protocol import WORDS
from stream_doctor.util import jsontext
from stream_doctor.values.events import (
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
    Unknown,
)
from stream_doctor.values.protocol import EventWords, ProtocolFacts, StreamEnd

name = "ollama"
title = "Ollama native chat (/api/chat NDJSON)"

FINISH_CATEGORIES: dict[str, FinishCategory] = {"stop": "end", "length": "length"}

#: The documented fields of a line (SD006 lists any other): ollama/ollama ``api/types.go``
#: ``ChatResponse`` (model, remote_model, remote_host, created_at, message, done, done_reason,
#: _debug_info, logprobs and the ``Metrics`` counters), ``Message``, ``ToolCall`` and ``ToolCallFunction``.
LINE = Shape(
    "model remote_model remote_host created_at message done done_reason _debug_info logprobs"
    " total_duration load_duration prompt_eval_count prompt_eval_duration eval_count eval_duration",
    {
        "message": Shape(
            "role content thinking images tool_calls tool_name tool_call_id",
            {"tool_calls": Shape("id type function", {"function": Shape("index name arguments")})},
        )
    },
)

#: Calls come whole and clients collect them into a list: ``function.index`` is informational.
#: The last line has ``"done": true``; an error comes as an ``{"error": …}`` line (wire-formats §7.2).
protocol = ProtocolFacts(
    EventWords(
        message_start="the first line",
        call_start="a message.tool_calls entry",
        fragment="message.tool_calls[].function.arguments",
        call_end="the line that carries the call",
        stream_end='a line with "done": true',
        stop_reason="done_reason",
    ),
    positional_indices=False,
    dense_call_indices=False,
    stream_end=StreamEnd(keys=frozenset({"done", "error"})),
)

CONTENT_FIELDS = {"content": ("text", "content"), "thinking": ("thinking", "thinking")}


def sniff(frames: Sequence[Frame]) -> int:
    """Lines are objects with a ``message`` object and a boolean ``done``."""
    if not WORDS.heard(frames):
        return 0  # no frame holds a word of this protocol (what detection's ranking reads)
    seen = hits = 0
    for frame in frames:
        value = frame.value
        if not isinstance(value, dict):
            continue
        seen += 1
        if isinstance(value.get("message"), dict) and isinstance(value.get("done"), bool):
            hits += 2 if "created_at" in value else 1
    if not seen or not hits:
        return 0
    return min(95, int(85 * hits / (2 * seen)) + 10)


def translator() -> OllamaTranslator:
    return OllamaTranslator()


class OllamaTranslator(FeedByFeed):
    __slots__ = ("counts", "open", "calls", "message_calls", "blocks", "fields")

    def __init__(self) -> None:
        self.counts: dict[str, int] = {}
        self.fields = FieldCheck()
        self.open = False
        self.calls = 0  # calls across the capture, for unique keys
        self.message_calls = 0  # calls in the open message
        self.blocks: list[str] = []  # content blocks the open message started

    def close(self) -> list[Event]:
        return []

    def feed(self, frame: Frame) -> list[Event]:
        pos = frame.pos
        value = frame.value
        if value is NOT_JSON:
            return [Malformed(pos, frame.error or "not JSON")]
        if not isinstance(value, dict):
            return [Malformed(pos, f"expected a JSON object, got {type(value).__name__}")]
        error = value.get("error")
        if error is not None:
            self._count("error")
            status = value.get("status")
            said = jsontext.brief(error, 200) if isinstance(error, (dict, list)) else str(error)
            return [StreamError(pos, f"status {status}" if status is not None else None, said)]
        message = value.get("message")
        done = value.get("done")
        if not isinstance(done, bool) or not isinstance(message, (dict, type(None))):
            self._count("other")
            return [Unknown(pos, "line without message and done")]
        self._count("done" if done else "message")
        out: list[Event] = []
        if not self.open:
            self.open = True
            self.blocks = []
            model = value.get("model")
            out.append(MessageStart(pos, None, model if isinstance(model, str) else None))
            self.message_calls = 0
        if message:
            out.extend(self._message(pos, message))
        out.extend(self.fields.check(pos, value, LINE, ""))
        if done:
            out.extend(self._done(pos, value))
        return out

    def _message(self, pos: Pos, message: dict[str, Any]) -> list[Event]:
        out: list[Event] = []
        for field, payload in message.items():
            if field in CONTENT_FIELDS:
                if isinstance(payload, str) and payload:
                    block_type, delta_type = CONTENT_FIELDS[field]
                    key = ("block", block_type)
                    if block_type not in self.blocks:
                        self.blocks.append(block_type)
                        out.append(BlockStart(pos, key, None, block_type))
                    out.append(BlockDelta(pos, key, delta_type, len(payload)))
            elif field == "tool_calls":
                if isinstance(payload, list):
                    for call in payload:
                        out.extend(self._tool_call(pos, call))
                elif payload is not None:
                    out.append(Malformed(pos, "message.tool_calls is not a list"))
        return out

    def _tool_call(self, pos: Pos, call: Any) -> list[Event]:
        if not isinstance(call, dict) or not isinstance(call.get("function"), dict):
            return [Malformed(pos, "a message.tool_calls[] entry without a function object")]
        function: dict[str, Any] = call["function"]
        index = function.get("index", 0)
        index = index if type(index) is int else None
        call_id = call.get("id")
        tool = function.get("name")
        key = ("call", self.calls)
        self.calls += 1
        self.message_calls += 1
        start = ToolStart(
            pos,
            key,
            index,
            "function",
            call_id if isinstance(call_id, str) and call_id else None,
            tool if isinstance(tool, str) and tool else None,
            None,
            id_optional=True,
        )
        arguments = function.get("arguments")
        if isinstance(arguments, str):  # not what the API sends, but a proxy might: keep the text
            return [start, BlockStop(pos, key, final_arguments=arguments)]
        if arguments is None:
            return [start, BlockStop(pos, key)]
        # The object is the input; its JSON text is what the call's size and raw arguments show.
        text = jsontext.dumps(arguments).decode() if isinstance(arguments, (dict, list)) else str(arguments)
        return [start, BlockStop(pos, key, final_arguments=text, final_input=arguments)]

    def _done(self, pos: Pos, value: dict[str, Any]) -> list[Event]:
        out: list[Event] = [BlockStop(pos, ("block", block_type)) for block_type in self.blocks]
        reason = value.get("done_reason")
        if isinstance(reason, str) and reason:
            category = FINISH_CATEGORIES.get(reason, "other")
            if reason == "stop" and self.message_calls:
                category = "tool_calls"
            out.append(Finish(pos, reason, category))
        out.append(MessageStop(pos))
        self.open = False
        return out

    def _count(self, kind: str) -> None:
        self.counts[kind] = self.counts.get(kind, 0) + 1
