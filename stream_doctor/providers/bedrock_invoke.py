"""Bedrock InvokeModelWithResponseStream: each ``chunk``'s decoded bytes routed to its model family.

InvokeModel streams carry the model's own native payload (Bedrock user guide, "Inference request
parameters and response fields for foundation models"), one JSON object per ``chunk``; Bedrock adds
``amazon-bedrock-invocationMetrics`` to the last one. The family is read from the shape, chunk by
chunk:

- Anthropic Claude 3+: Messages stream events (``type``: ``message_start`` …) -> the Anthropic adapter.
- Amazon Nova: the Converse events as single-key objects (``{"contentBlockDelta": {…}}``) -> the
  Converse translation of ``bedrock.py`` (Nova user guide, "Streaming responses").
- OpenAI-shaped chunks (``choices[].delta``): OpenAI gpt-oss, Mistral Large 2, AI21 Jamba,
  DeepSeek V3 -> the OpenAI Chat adapter (``tool_calls`` fragments included). Mistral Large
  (2402) sends the chat-completion shape with ``choices[].message`` and ``stop_reason``; it is read
  as one delta each. No recorded 2402 stream exists in any public source we could search (AWS docs,
  boto3/botocore, LangChain-AWS, LiteLLM, issue threads): the shape rests on the Bedrock user
  guide's "Mistral AI chat completion" page (response ``choices[{index, message{role, content,
  tool_calls[{id, function{name, arguments}}]}, stop_reason}]``, stop reasons stop, length,
  tool_calls) and on the one client we found that parses the stream, bedrock_llm's
  ``MistralChatImplementation.parse_stream_response`` (``chunk["choices"][0]["message"]["content"]``,
  ``message["tool_calls"]`` whole with id/type/function, ``choices[0]["stop_reason"]``).
- Text-only families (no tool calls in their invoke stream), replayed as one text block and a
  finish: Meta Llama (``generation``, ``stop_reason``), Amazon Titan Text (``outputText``,
  ``completionReason``), Mistral 7B/Mixtral (``outputs[].text``, ``outputs[].stop_reason``),
  DeepSeek-R1 (``choices[].text``, ``choices[].stop_reason``), Cohere Command
  (``generations[]``) and Claude 2 Text Completions (``completion``, ``stop_reason``).
- Cohere Command R (``event_type``, the v1 chat stream): ``text-generation`` text,
  ``tool-calls-generation`` with the complete ``tool_calls`` (name, ``parameters`` object; v1
  calls have no id), ``stream-end`` with ``finish_reason``. ``tool-calls-chunk`` only previews
  the calls that ``tool-calls-generation`` then states whole (cohere-python v1
  ``StreamedChatResponse_ToolCallsChunk``), so it is progress, not a second copy. Its one field is
  ``tool_call_delta`` (cohere-python ``types/tool_call_delta.py`` ``ToolCallDelta``: ``index``,
  ``name``, ``parameters`` as a piece of the arguments' JSON text, ``text`` as a piece of the tool
  plan); ortus-boxlang/bx-ai PR #281 accumulates those per index the same way. No recorded Bedrock
  Command R tool stream exists in the public sources we searched; the shape is the SDK's.
"""

from __future__ import annotations

from typing import Any, Callable

from stream_doctor.capture.base import Frame, Pos
from stream_doctor.providers import anthropic_protocol
from stream_doctor.providers.anthropic import SHAPES, AnthropicTranslator, with_fields
from stream_doctor.providers.fields import FieldCheck, Shape
from stream_doctor.providers.openai_chat import OpenAIChatTranslator
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
    ToolStart,
    Unknown,
)

METRICS = "amazon-bedrock-invocationMetrics"

#: Anthropic's events as Bedrock relays them: the last one also carries the invocation metrics.
ANTHROPIC_SHAPES = with_fields(SHAPES, METRICS)

#: The documented fields of Command R's v1 chat events (SD006 lists any other; the invocation metrics
#: are set aside before): cohere-python v1 ``StreamedChatResponse`` members and ``ToolCallDelta``, and
#: ``is_finished``, which every raw v1 event carries (Discourse AI's Cohere endpoint spec holds a v1
#: stream with it on each line).
COHERE_V1: dict[str, Shape] = {
    kind: Shape("event_type is_finished " + fields, nested)
    for kind, fields, nested in (
        ("stream-start", "generation_id", None),
        ("search-queries-generation", "search_queries", None),
        ("search-results", "search_results documents", None),
        ("text-generation", "text", None),
        ("citation-generation", "citations", None),
        ("tool-calls-generation", "text tool_calls", None),
        ("tool-calls-chunk", "tool_call_delta", {"tool_call_delta": Shape("index name parameters text")}),
        ("stream-end", "finish_reason response", None),
    )
}

#: Stop reasons of the text-only families -> neutral category.
TEXT_FINISHES: dict[str, FinishCategory] = {
    "stop": "end",
    "end_turn": "end",
    "stop_sequence": "end",
    "FINISH": "end",
    "FINISHED": "end",
    "COMPLETE": "end",
    "length": "length",
    "max_tokens": "length",
    "LENGTH": "length",
    "MAX_TOKENS": "length",
    "CONTENT_FILTERED": "filter",
    "content_filter": "filter",
    "ERROR": "error",
    "ERROR_TOXIC": "filter",
    "ERROR_LIMIT": "length",
    "USER_CANCEL": "error",
    "tool_calls": "tool_calls",
}


def family(inner: dict[str, Any]) -> str | None:
    """The model family a decoded chunk belongs to, from its shape."""
    kind = inner.get("type")
    if isinstance(kind, str) and kind in anthropic_protocol.KNOWN_TYPES:
        return "anthropic"
    if "event_type" in inner:
        return "cohere-command-r"
    choices = inner.get("choices")
    if isinstance(choices, list):
        first = choices[0] if choices and isinstance(choices[0], dict) else {}
        if "delta" in first or not choices:
            return "openai-chat"
        if "message" in first:
            return "mistral-chat"
        return "text-choices"
    keys = inner.keys() - {METRICS}
    if not keys and inner:
        return "metrics"
    if len(keys) == 1 and next(iter(keys)) in CONVERSE_SHAPED:
        return "nova"
    for field, name in TEXT_FIELDS:
        if field in inner:
            return name
    return None


CONVERSE_SHAPED = frozenset(
    {"messageStart", "contentBlockStart", "contentBlockDelta", "contentBlockStop", "messageStop", "metadata"}
)
TEXT_FIELDS = (
    ("generation", "meta-llama"),
    ("outputText", "amazon-titan"),
    ("outputs", "mistral-text"),
    ("generations", "cohere-command"),
    ("completion", "anthropic-text"),
)


class InvokeChunks:
    """The decoded chunks of one InvokeModel stream to neutral events; ``converse`` translates the
    Nova (Converse-shaped) objects with the enclosing Bedrock translator."""

    __slots__ = ("converse", "counts", "inner", "message_open", "text_open", "calls", "fields")

    def __init__(self, converse: Callable[[Frame], list[Event]], counts: dict[str, int]) -> None:
        self.converse = converse
        self.counts = counts
        self.inner: AnthropicTranslator | BedrockChatTranslator | None = None
        self.message_open = False
        self.text_open = False
        self.calls = 0
        self.fields = FieldCheck()

    def feed(self, frame: Frame, raw: bytes, inner: Any) -> list[Event]:
        pos = frame.pos
        if not isinstance(inner, dict):
            return [Malformed(pos, f"chunk bytes are not a JSON object but {type(inner).__name__}")]
        kind = family(inner)
        if kind is None:
            if not inner:
                return [Malformed(pos, "chunk bytes are an empty object")]
            return [Unknown(pos, "chunk of no known model family (" + ", ".join(sorted(inner)[:3]) + ")")]
        label = f"chunk/{inner['type']}" if kind == "anthropic" else f"chunk/{kind}"
        self.counts[label] = self.counts.get(label, 0) + 1
        if kind == "anthropic":
            return self._delegate("anthropic", Frame(pos, raw, inner, None, None, frame.t))
        if METRICS in inner:
            inner = {k: v for k, v in inner.items() if k != METRICS}
        if kind == "metrics":
            return [KeepAlive(pos, METRICS)]
        if kind == "nova":
            return self.converse(Frame(pos, raw, inner, None, None, frame.t))
        if kind == "openai-chat":
            return self._delegate("openai", Frame(pos, raw, inner, None, None, frame.t))
        if kind == "mistral-chat":
            return self._delegate("openai", Frame(pos, raw, _as_delta_chunk(inner), None, None, frame.t))
        if kind == "cohere-command-r":
            event = inner.get("event_type")
            shape = COHERE_V1.get(event) if isinstance(event, str) else None
            return self._cohere(pos, inner) + self.fields.check(pos, inner, shape, f"chunk/{event}")
        text, reason = _text_and_reason(kind, inner)
        return self._text(pos, text, reason)

    def close(self) -> list[Event]:
        return self.inner.close() if self.inner is not None else []

    def _delegate(self, which: str, frame: Frame) -> list[Event]:
        if self.inner is None:
            self.inner = AnthropicTranslator(ANTHROPIC_SHAPES) if which == "anthropic" else BedrockChatTranslator()
        return self.inner.feed(frame)

    def _start(self, pos: Pos) -> list[Event]:
        if self.message_open:
            return []
        self.message_open = True
        self.calls = 0
        return [MessageStart(pos, None, None)]

    def _text(self, pos: Pos, text: Any, reason: Any, category: FinishCategory | None = None) -> list[Event]:
        out = self._start(pos)
        if isinstance(text, str) and text:
            if not self.text_open:
                self.text_open = True
                out.append(BlockStart(pos, "text", 0, "text"))
            out.append(BlockDelta(pos, "text", "text", len(text)))
        if isinstance(reason, str) and reason:
            out += self._end(pos, reason, category or TEXT_FINISHES.get(reason, "other"))
        return out

    def _end(self, pos: Pos, reason: str, category: FinishCategory) -> list[Event]:
        out: list[Event] = []
        if self.text_open:
            out.append(BlockStop(pos, "text"))
            self.text_open = False
        self.message_open = False
        return out + [Finish(pos, reason, category), MessageStop(pos)]

    def _cohere(self, pos: Pos, inner: dict[str, Any]) -> list[Event]:
        event = inner.get("event_type")
        if event == "stream-start":
            return self._start(pos)
        if event == "text-generation":
            return self._text(pos, inner.get("text"), None)
        if event in ("tool-calls-chunk", "search-queries-generation", "search-results", "citation-generation"):
            return self._start(pos) + [KeepAlive(pos, str(event))]
        if event == "tool-calls-generation":
            return self._cohere_calls(pos, inner.get("tool_calls"))
        if event == "stream-end":
            reason = inner.get("finish_reason")
            if not isinstance(reason, str) or not reason:
                return [Malformed(pos, "stream-end without a finish_reason")]
            # v1 chat ends a turn that made calls with COMPLETE (there is no tool-call finish).
            category = "tool_calls" if reason == "COMPLETE" and self.calls else TEXT_FINISHES.get(reason, "other")
            return self._start(pos) + self._end(pos, reason, category)
        return [Unknown(pos, f"event_type {event}")]

    def _cohere_calls(self, pos: Pos, calls: Any) -> list[Event]:
        out = self._start(pos)
        if not isinstance(calls, list):
            return out + [Malformed(pos, "tool-calls-generation without a tool_calls list")]
        if self.text_open:
            out.append(BlockStop(pos, "text"))
            self.text_open = False
        for call in calls:
            if not isinstance(call, dict):
                out.append(Malformed(pos, "a tool_calls[] entry is not an object"))
                continue
            key = ("call", self.calls)
            name = call.get("name")
            # v1 tool calls have no id: a tool result repeats the call itself (cohere-python v1 ToolResult).
            named = name if isinstance(name, str) else None
            out.append(ToolStart(pos, key, self.calls, "tool_call", None, named, None, False, id_optional=True))
            parameters = call.get("parameters")
            if parameters is not None:
                out.append(ArgsDelta(pos, key, jsontext.dumps(parameters).decode(), "tool_calls.parameters"))
            out.append(BlockStop(pos, key))
            self.calls += 1
        return out


def _text_and_reason(kind: str, inner: dict[str, Any]) -> tuple[Any, Any]:
    if kind == "meta-llama":
        return inner.get("generation"), inner.get("stop_reason")
    if kind == "amazon-titan":
        return inner.get("outputText"), inner.get("completionReason")
    if kind == "anthropic-text":
        return inner.get("completion"), inner.get("stop_reason")
    field = {"mistral-text": "outputs", "cohere-command": "generations", "text-choices": "choices"}[kind]
    entries = inner.get(field)
    first = entries[0] if isinstance(entries, list) and entries and isinstance(entries[0], dict) else {}
    reason = first.get("stop_reason", first.get("finish_reason"))
    return first.get("text"), reason


def _as_delta_chunk(inner: dict[str, Any]) -> dict[str, Any]:
    """Mistral Large (2402) on Bedrock streams ``choices[].message`` pieces with ``stop_reason``:
    the same content as an OpenAI delta; its ``tool_calls`` carry no ``index``, so their position is."""
    choices = []
    for number, choice in enumerate(inner.get("choices") or []):
        if not isinstance(choice, dict):
            choices.append(choice)
            continue
        message = choice.get("message")
        delta = dict(message) if isinstance(message, dict) else {}
        calls = delta.get("tool_calls")
        if isinstance(calls, list):
            delta["tool_calls"] = [
                {"index": n, "type": "function", **c} if isinstance(c, dict) and "index" not in c else c
                for n, c in enumerate(calls)
            ]
        reason = choice.get("finish_reason", choice.get("stop_reason"))
        choices.append({"index": choice.get("index", number), "delta": delta, "finish_reason": reason})
    return {k: v for k, v in inner.items() if k != "choices"} | {"choices": choices}


class BedrockChatTranslator(OpenAIChatTranslator):
    """The OpenAI Chat translation, where a completion ends with its last chunk: InvokeModel
    streams never carry ``data: [DONE]`` (the eventstream ends instead), so its absence is no finding."""

    def _implicit_end(self, pos: Pos, next_completion: str | None = None, line: int | None = None) -> list[Event]:
        self.open = False
        return [MessageStop(pos)]
