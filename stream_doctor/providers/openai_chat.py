"""OpenAI Chat Completions streaming (``POST /v1/chat/completions`` with ``"stream": true``) and the
many servers that imitate it (Azure, Groq, xAI, DeepSeek, Alibaba, Cerebras, vLLM, Ollama ``/v1`` …).

Wire format: ../shared/reference/wire-formats.md §2 and openai-python's ``types/chat/chat_completion_chunk.py``
and ``_streaming.py``. Every SSE ``data:`` line is a chunk ``{"id","object":"chat.completion.chunk","created",
"model","choices":[{"index","delta","finish_reason"}],"usage"}``; the stream ends with ``data: [DONE]``.

Each ``tool_calls[]`` fragment goes to its call as ``openai_chat_calls`` decides (an id first, then
the choice's and the entry's index, else the latest open call); this module reads the rest of a chunk.

Completion is the choice's own ``finish_reason``: at that chunk every call (and text block) the
choice opened gets a ``BlockStop``. A call is never completed by "another index appeared" or "the
buffer parses". A call whose choice has no finish_reason when the capture ends without ``[DONE]``
is abandoned (SD301), as hermes-agent #81017 settled ("no terminal finish_reason: never execute"),
unless the capture's last chunk is the usage chunk (``choices: []``), which OpenAI sends only once
the request is over ("an additional chunk … before the data: [DONE] message … for the entire
request"): then the server ended the response and only ``[DONE]`` is missing (watsonx.ai sends none).
``data: [DONE]`` with no finish_reason is different: the server ended the stream itself, and the
official clients hand the calls over there, so they complete at ``[DONE]`` and the missing reason is
reported (SD530). ``length``, ``content_filter`` and ``error`` end the choice without completing its
calls, so they are reported as cut, with that reason. A call that starts after its choice's
finish_reason (Together sends one after every call) completes at the next one (SD531).

A capture holds one message per completion. With ``n > 1`` the choices share that message, each
with its own keys; their calls complete at their own finish_reason, and the message's stop reason is
emitted once every choice seen has finished (the most severe of their reasons, ``tool_calls`` before
``stop``).
"""

from __future__ import annotations

from typing import Any, Hashable, Sequence

from stream_doctor.capture.base import NOT_JSON, Frame, Pos
from stream_doctor.capture.problem_facts import (
    EndOfStreamInexact,
    EndOfStreamMissing,
    FinishReasonMissing,
)
from stream_doctor.capture.runs import FRAGMENT, RunForm
from stream_doctor.providers.base import Batching
from stream_doctor.providers.openai_chat_calls import CallReading, Choice
from stream_doctor.providers.openai_chat_protocol import (
    ARGS,
    CHOICE_FIELDS,
    CHUNK_FIELDS,
    CONTENT_FIELDS,
    CUTTING,
    DOCUMENTED_EXTENSIONS,
    FINISH_CATEGORIES,
    IGNORED_DELTA_FIELDS,
    SEVERITY,
    WORDS,
)
from stream_doctor.values.events import (
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
    Unknown,
)
from stream_doctor.values.protocol import EventWords, ProtocolFacts, StreamEnd

name = "openai"
title = "OpenAI Chat Completions (and compatible servers)"

#: What ends the stream (SD303 and SD508 name it); what completes a call (SD301 names it when a
#: call never got it); ``tool_calls[].index`` numbers a choice's calls 0, 1, 2 … (SD507 checks it).
#: On the wire the stream ends at ``[DONE]``, or at a mid-stream ``{"error": …}`` chunk, on which
#: openai-python raises ``APIError`` and closes the response (wire-formats §2.1).
protocol = ProtocolFacts(
    EventWords(
        message_start="a chunk with a new id",
        call_start="the first tool_calls fragment",
        fragment="tool_calls[].function.arguments",
        call_end="its choice's finish_reason",
        stream_end="data: [DONE]",
        stop_reason="finish_reason",
    ),
    positional_indices=False,
    dense_call_indices=True,
    extension_fields=frozenset(DOCUMENTED_EXTENSIONS),
    stream_end=StreamEnd(sentinels=frozenset({"[DONE]"}), keys=frozenset({"error"})),
)


# A fragment chunk as OpenAI sends it (``capture/runs.py``), and as Azure does (keys in alphabetical
# order, ``content_filter_results``): one choice holding one tool call with only ``function.arguments``
# (and ``index``), nothing unescaped in between. The chunk's other fields are scalars whose names are
# not ``choices`` (so the fragment is the chunk's one ``choices``); ``obfuscation`` (printable ASCII)
# is the one field that differs from chunk to chunk besides the fragment. A run of such chunks, byte
# for byte alike but for those two, is read without a Frame per chunk.
_SCALAR = rb'(?:"[^"\\\x00-\x1f]*+"|[-+.0-9eE]++|null|true|false)'
_OTHER = rb'"(?!choices"|obfuscation")[A-Za-z_][A-Za-z0-9_]{0,63}+":' + _SCALAR
_INDEX = rb'"index":(?:0|[1-9][0-9]{0,5})'
_OBFUSCATION = rb"[\x20\x21\x23-\x5b\x5d-\x7e]{0,256}+"
run_form = RunForm(
    "openai chat.completion.chunk function.arguments",
    rb"data: \{(?:" + _OTHER + rb",)*+"
    rb'"choices":\[\{(?:"content_filter_results":\{\},)?(?:' + _INDEX + rb',)?"delta":\{"tool_calls":\[\{'
    rb"(?:" + _INDEX + rb',)?"function":\{"arguments":"(?P<fragment>' + FRAGMENT + rb')"\}(?:,' + _INDEX + rb")?\}\]\}"
    rb'(?:,"logprobs":null)?,"finish_reason":null(?:,' + _INDEX + rb')?(?:,"logprobs":null)?\}\]'
    rb"(?:," + _OTHER + rb')*+(?:,"obfuscation":"(?P<free>' + _OBFUSCATION + rb')")?(?:,' + _OTHER + rb")*+"
    rb"\}\n\n",
    {"free": _OBFUSCATION},
)


def sniff(frames: Sequence[Frame]) -> int:
    """Chunks are objects with a ``choices`` list whose entries have a ``delta``, usually with
    ``"object": "chat.completion.chunk"``; the usage chunk and Azure's filter chunk have ``choices: []``."""
    if not WORDS.heard(frames):
        return 0  # no frame holds a word of this protocol (what detection's ranking reads)
    seen = hits = 0
    for frame in frames:
        value = frame.value
        if not isinstance(value, dict):
            continue
        seen += 1
        choices = value.get("choices")
        if not isinstance(choices, list):
            continue
        if value.get("object") == "chat.completion.chunk":
            hits += 2
        elif any(isinstance(c, dict) and "delta" in c for c in choices):
            hits += 2
        elif not choices and ("usage" in value or "prompt_filter_results" in value):
            hits += 1
    if not seen or not hits:
        return 0
    return min(90, int(80 * hits / (2 * seen)) + 10)


def translator() -> OpenAIChatTranslator:
    return OpenAIChatTranslator()


def content_size(payload: Any) -> int:
    """Characters of text a content field carries (1 for a non-empty structured part)."""
    if isinstance(payload, str):
        return len(payload)
    if isinstance(payload, list):
        return sum(_part_size(part) for part in payload)
    if isinstance(payload, dict):
        return 1 if payload else 0
    return 0


def _part_size(part: Any) -> int:
    if isinstance(part, dict):
        text = part.get("text")
        return len(text) if isinstance(text, str) else (1 if part else 0)
    if isinstance(part, list):  # not a part of any API: counted as one, never walked (it may nest 1,000 deep)
        return 1 if part else 0
    return content_size(part)


def stream_error(pos: Pos, value: dict[str, Any], error: Any) -> StreamError:
    """The error a chunk carries: an ``error`` object, a bare string (TGI) or the chunk itself (vLLM)."""
    if isinstance(error, dict):
        kind = error.get("type") or error.get("code")
        message = error.get("message")
    elif isinstance(error, str):
        kind, message = value.get("error_type"), error
    else:  # vLLM: {"object": "error", "message": …, "type": …, "code": …}
        kind, message = value.get("type") or value.get("code"), value.get("message")
    return StreamError(pos, str(kind) if kind is not None else None, message if isinstance(message, str) else None)


class OpenAIChatTranslator(CallReading, Batching):
    """One capture's chunks to neutral events."""

    fragment_event = "chat.completion.chunk"
    delta_type = ARGS

    #: Subclasses (Mistral) widen these.
    finish_categories: dict[str, FinishCategory] = FINISH_CATEGORIES
    object_arguments_allowed = False

    def __init__(self) -> None:
        self.counts: dict[str, int] = {"chat.completion.chunk": 0}
        self.open = False  # a message (completion) is open
        self.done = False  # the open completion got its [DONE]
        self.end_recorded = True  # the capture could hold [DONE] (raw SSE); see ``end_not_recorded``
        self.completion_id: str | None = None
        self.choices: dict[int, Choice] = {}
        self.emitted_reason: str | None = None
        self.last_pos: Pos | None = None
        self.ended_with_usage = False  # the latest frame is the usage chunk that closes a request
        self.last_stop_pos: Pos | None = None  # the latest finish_reason: where a completion ended
        self.lanes: dict[int, dict[int, Hashable]] = {}  # ``CallReading.lanes``
        self.unknown_fields: set[str] = set()  # reported once per capture each (SD006)
        #: How many keys the latest checked chunk and choice had: the fast path takes a fragment only
        #: when its chunk and choice have as many (any other field goes the checked way, SD006).
        self.chunk_size = -1
        self.choice_size = -1

    # -- the hot path ------------------------------------------------------------------------

    def fast_fragment(self, frame: Frame) -> tuple[Hashable, str] | None:
        """The common chunk (see ``base.Batching``), ``{"choices":[{"index":c,"delta":{"tool_calls":
        [{"index":i,"function":{"arguments":"…"}}]},"finish_reason":null}]}`` for a call already open.
        Its chunk and choice must have as many keys as the latest checked ones (two integer
        comparisons): a field that only fragment chunks carry takes the checked path once, which
        reports it (SD006). A FrameRun's chunks differ from its head only in the fragment (and
        obfuscation), so each would be taken, on the same key."""
        try:
            value = frame.value
            (choice,) = value["choices"]
            delta = choice["delta"]
            if (
                choice["finish_reason"] is None
                and len(delta) == 1
                and len(value) == self.chunk_size
                and len(choice) == self.choice_size
            ):
                (call,) = delta["tool_calls"]
                function = call["function"]
                index = call["index"]
                if "id" not in call and "name" not in function and type(index) is int:
                    key = self.lanes[choice["index"]].get(index)
                    fragment = function["arguments"]
                    if key is not None and type(fragment) is str:
                        return key, fragment
        except (KeyError, TypeError, IndexError, ValueError):
            pass
        return None

    def _translated(self, last: Any) -> None:
        self.last_pos = last.pos  # where an implied end goes (``close``)
        value = getattr(last, "value", None)
        self.ended_with_usage = (
            isinstance(value, dict) and not value.get("choices") and isinstance(value.get("usage"), dict)
        )

    def end_not_recorded(self) -> None:
        """The capture is a log of parsed chunks (a JSON array, JSON Lines), which cannot hold the
        ``[DONE]`` line: the client that wrote it read the stream to its end, ``[DONE]`` or not."""
        self.end_recorded = False

    def close(self) -> list[Event]:
        """The capture ended. A completion whose every choice finished is over, even without its
        ``[DONE]``: JSONL chunk logs (the AI SDK's) never record it, and some servers never send it
        (SD508 reports that for SSE captures). One still waiting for a finish_reason stays open: its
        calls are abandoned (SD301) and the cut reported (SD303), unless the capture is a chunk log,
        whose end is where its client stopped reading: nothing there tells a cut from the ``[DONE]``
        of a server that sends no finish_reason after a call (text-generation-inference 3.x with a
        forced tool: ``router/src/chat.rs``'s ``ChatState`` drops the last token, which carries the
        finish reason, once the call's JSON closes), so the calls complete there, as at ``[DONE]``,
        and the missing reason is reported (SD530); arguments that do not parse are still SD201's.
        A raw stream whose last chunk is the usage chunk (``choices: []``, sent once the request is
        over) ended the same way, without its ``[DONE]`` (SD508): watsonx.ai's chat stream with a
        forced tool sends no finish_reason and no ``[DONE]``."""
        if not self.open or self.last_pos is None:
            return []
        if self._all_finished():
            return self._implicit_end(self.last_pos)
        if self.end_recorded and not self.ended_with_usage:
            return []
        out: list[Event] = []
        for state in self.choices.values():
            if state.reason is None and len(state.opened) > state.stopped:
                out.extend(
                    self._ended_without_reason(
                        self.last_pos, state, at_log_end=not self.end_recorded, at_usage_end=self.end_recorded
                    )
                )
        return out + self._implicit_end(self.last_pos)

    # -- chunks ------------------------------------------------------------------------------

    def _feed(self, frame: Frame) -> list[Event]:
        pos = frame.pos
        value = frame.value
        if value is NOT_JSON:
            if frame.data.strip() == b"[DONE]":
                if frame.data != b"[DONE]":
                    # read as the end here and by openai-python (startswith); readers that compare the
                    # data exactly parse it as JSON instead (SD508 says which)
                    facts = EndOfStreamInexact(frame.data.decode("ascii"))
                    return [Problem(pos, "end-of-stream-inexact", "", facts), *self._done(pos)]
                return self._done(pos)
            return [Malformed(pos, frame.error or "not JSON")]
        if not isinstance(value, dict):
            return [Malformed(pos, f"expected a JSON object, got {type(value).__name__}")]
        out: list[Event] = []
        kind = value.get("object")
        error = value.get("error")
        if error or kind == "error" or frame.event == "error":
            # openai-python raises APIError on any data object with an "error" key; vLLM sends
            # {"object":"error","message":…} (block/goose PR #8031); TGI a bare string.
            self._count("error")
            out.append(stream_error(pos, value, error))
            if not isinstance(value.get("choices"), list) or not value["choices"]:
                return out
        choices = value.get("choices")
        if not isinstance(choices, list):
            if "usage" in value:
                self._count("usage")
                return out + [KeepAlive(pos, "usage")]
            label = f"object {kind}" if isinstance(kind, str) and kind else "object without choices"
            self._count(label)
            return out + [Unknown(pos, label)]
        self._count(kind if isinstance(kind, str) and kind else "chunk")
        self.chunk_size = len(value)
        if not CHUNK_FIELDS.issuperset(value):
            out.extend(self._extensions(pos, value, CHUNK_FIELDS, ""))
        if not choices:
            # The usage chunk of stream_options.include_usage, or Azure's first chunk holding only
            # prompt_filter_results (with id "" and model ""): liveness, never a malformed choice.
            what = "prompt_filter_results" if "prompt_filter_results" in value else "usage"
            return out + [KeepAlive(pos, what)]
        out.extend(self._completion(pos, value))
        finished_again: list[int] = []
        for choice in choices:
            if not isinstance(choice, dict):
                out.append(Malformed(pos, "a choices[] entry is not an object"))
                continue
            produced = self._choice(pos, choice)
            out.extend(produced)
            number = choice.get("index")
            state = self.choices.get(number if type(number) is int else 0)
            if state is not None and state.reason is not None and all(type(e) is Problem for e in produced):
                finished_again.append(state.index)
        if finished_again:
            out.append(KeepAlive(pos, "finished choice", tuple(finished_again)))
        return out

    def _completion(self, pos: Pos, value: dict[str, Any]) -> list[Event]:
        """The message this chunk belongs to, starting one when needed."""
        chunk_id = value.get("id")
        chunk_id = chunk_id if isinstance(chunk_id, str) and chunk_id else None
        model = value.get("model")
        model = model if isinstance(model, str) and model else None
        out: list[Event] = []
        if self.open:
            if self.completion_id is None:
                self.completion_id = chunk_id
            # Some servers give every chunk its own id (litellm #1571, #32607), so a new id only
            # starts a new completion once every choice of the current one has finished.
            if chunk_id is None or chunk_id == self.completion_id or not self._all_finished():
                return out
            out.extend(self._implicit_end(self.last_stop_pos or pos, chunk_id, pos.line))
        elif self.done and chunk_id is not None and chunk_id == self.completion_id:
            return out  # a chunk of the finished completion after its [DONE]: the accumulator reports it
        self.open, self.done = True, False
        self.completion_id = chunk_id
        self.choices = {}
        self.lanes.clear()
        self.emitted_reason = None
        out.append(MessageStart(pos, chunk_id, model))
        return out

    def _implicit_end(self, pos: Pos, next_completion: str | None = None, line: int | None = None) -> list[Event]:
        """A completion that finished every choice ends without its [DONE] (the capture ends, or
        ``next_completion`` begins at ``line``)."""
        reasons = tuple(sorted({c.reason for c in self.choices.values() if c.reason}))
        self.open = False
        facts = EndOfStreamMissing(reasons, next_completion, line, next_completion is None and self.ended_with_usage)
        return [Problem(pos, "end-of-stream-missing", "", facts), MessageStop(pos, roleless=self._roleless())]

    def _done(self, pos: Pos) -> list[Event]:
        self._count("[DONE]")
        out: list[Event] = []
        if self.open:
            for state in self.choices.values():
                if state.reason is None and len(state.opened) > state.stopped:
                    out.extend(self._ended_without_reason(pos, state))
                elif (
                    len(state.opened) > state.stopped and self.finish_categories.get(state.reason or "") not in CUTTING
                ):
                    # Blocks opened after the choice's finish_reason (a call that came late, SD531) and
                    # no finish_reason after them: the server ended the stream, so they end at [DONE]
                    # as the earlier ones ended at the finish_reason.
                    out.extend(BlockStop(pos, key) for key in state.opened[state.stopped :])
                    state.stopped = len(state.opened)
        roleless = self._roleless() if self.open else ()
        self.open = False
        self.done = True
        self.lanes.clear()
        out.append(MessageStop(pos, roleless=roleless))
        return out

    def _ended_without_reason(
        self, pos: Pos, state: Choice, at_log_end: bool = False, at_usage_end: bool = False
    ) -> list[Event]:
        """``[DONE]`` came while the choice had no finish_reason. The server ended the stream itself,
        and openai-python's stream helper, the AI SDK and LangChain hand the calls over there: they are
        complete (SD201 still reports arguments that do not parse), and the missing reason is one
        warning about the server (SD530). A stream with no ``[DONE]`` stays cut (SD301, SD303)."""
        calls = [key for key in state.opened[state.stopped :] if key in state.names]
        out: list[Event] = []
        if calls:
            facts = FinishReasonMissing(state.index, len(calls), at_log_end, at_usage_end)
            out.append(Problem(pos, "finish-reason-missing", "", facts))
        out.extend(BlockStop(pos, key) for key in state.opened[state.stopped :])
        state.stopped = len(state.opened)
        return out

    def _roleless(self) -> tuple[int, ...]:
        """The choices of the completion that no chunk gave a role (``MessageStop.roleless``)."""
        return tuple(sorted(number for number, state in self.choices.items() if not state.role))

    def _all_finished(self) -> bool:
        return bool(self.choices) and all(c.reason is not None for c in self.choices.values())

    def _count(self, kind: str) -> None:
        self.counts[kind] = self.counts.get(kind, 0) + 1

    # -- choices -----------------------------------------------------------------------------

    def _choice(self, pos: Pos, choice: dict[str, Any]) -> list[Event]:
        number = choice.get("index")
        number = number if type(number) is int else 0
        state = self.choices.get(number)
        if state is None:
            state = self.choices[number] = Choice(number)
        out: list[Event] = []
        self.choice_size = len(choice)
        if not CHOICE_FIELDS.issuperset(choice):
            out.extend(self._extensions(pos, choice, CHOICE_FIELDS, "choices[]."))
        delta = choice.get("delta")
        if isinstance(delta, dict):
            if delta:
                out.extend(self._delta(pos, state, delta))
        elif delta is not None:
            out.append(Malformed(pos, f"choice {number}: delta is a {type(delta).__name__}, not an object"))
        elif "message" in choice or "text" in choice:
            # A whole chat.completion (or a legacy completions chunk) inside the stream.
            out.append(
                Unknown(pos, "choice with " + ("message" if "message" in choice else "text") + " instead of delta")
            )
        reason = choice.get("finish_reason")
        if isinstance(reason, str) and reason:  # some servers send "" on every chunk
            out.extend(self._finish(pos, state, reason))
        return out

    def _delta(self, pos: Pos, state: Choice, delta: dict[str, Any]) -> list[Event]:
        out: list[Event] = []
        for field, payload in delta.items():
            if field == "tool_calls":
                if isinstance(payload, list):
                    for call in payload:
                        out.extend(self._tool_call(pos, state, call))
                elif payload is not None:
                    out.append(Malformed(pos, "delta.tool_calls is not a list"))
            elif field in CONTENT_FIELDS:
                size = content_size(payload)
                if size:
                    block_type, delta_type = CONTENT_FIELDS[field]
                    if field == "content" and isinstance(payload, list):
                        out.extend(self._content_parts(pos, state, payload))
                    else:
                        out.extend(self._text(pos, state, block_type, delta_type, size))
            elif field == "function_call":
                if payload is not None:
                    out.extend(self._legacy_call(pos, state, payload))
            elif field == "role":
                # openai-node keeps a role only when it is truthy in JavaScript (`if (role)`)
                if payload not in (None, False, "", 0) and payload == payload:
                    state.role = True
            elif field not in IGNORED_DELTA_FIELDS and payload not in (None, "", [], {}):
                out.extend(self._extension(pos, f"delta.{field}", field))
        return out

    def _extensions(self, pos: Pos, value: dict[str, Any], defined: frozenset[str], prefix: str) -> list[Event]:
        out: list[Event] = []
        for field, payload in value.items():
            if field not in defined and payload not in (None, "", [], {}):
                out.extend(self._extension(pos, prefix + field, field))
        return out

    def _extension(self, pos: Pos, path: str, field: str) -> list[Event]:
        """A field the protocol does not define on an event it does: documented extensions are read as
        part of their event; any other is reported once per capture (SD006), never as an unknown event."""
        if field in DOCUMENTED_EXTENSIONS or path in self.unknown_fields:
            return []
        self.unknown_fields.add(path)
        return [Problem(pos, "unknown-field", path)]

    def _content_parts(self, pos: Pos, state: Choice, parts: list[Any]) -> list[Event]:
        """Mistral's content may be a list of chunks: ``{"type":"text","text":…}`` and
        ``{"type":"thinking","thinking":[{"type":"text","text":…}]}`` (client-python thinkchunk.py)."""
        out: list[Event] = []
        for part in parts:
            if isinstance(part, dict) and part.get("type") == "thinking":
                size = content_size(part.get("thinking"))
                if size:
                    out.extend(self._text(pos, state, "reasoning", "thinking", size))
            else:
                size = content_size(part.get("text") if isinstance(part, dict) else part)
                if size:
                    out.extend(self._text(pos, state, "text", "content", size))
        return out

    def _text(self, pos: Pos, state: Choice, block_type: str, delta_type: str, size: int) -> list[Event]:
        key = (state.index, block_type)
        out: list[Event] = []
        if block_type not in state.blocks:
            state.blocks.add(block_type)
            state.opened.append(key)
            out.append(BlockStart(pos, key, None, block_type))
        out.append(BlockDelta(pos, key, delta_type, size))
        return out

    def _finish(self, pos: Pos, state: Choice, reason: str) -> list[Event]:
        category = self.finish_categories.get(reason, "other")
        out: list[Event] = []
        if state.reason is None:
            self.last_stop_pos = pos
            state.reason_pos = pos
            cut = category in CUTTING
            # The choice's own end: its calls are complete unless the reason says they were cut
            # (then they stay open and are abandoned with that reason when the message ends).
            out.extend(BlockStop(pos, key) for key in state.opened if not (cut and key in state.names))
            state.stopped = len(state.opened)
            self.lanes.pop(state.index, None)
        else:
            # Another finish_reason after blocks opened since the first (Together sends one after each
            # call): it ends them as the first ended the earlier ones (SD531 reports the order).
            if len(state.opened) > state.stopped and category not in CUTTING:
                out.extend(BlockStop(pos, key) for key in state.opened[state.stopped :])
                state.stopped = len(state.opened)
            if reason == state.reason:
                return out  # the same finish_reason again (on a trailing usage chunk): nothing changes
        state.reason = reason
        if self._all_finished():
            reasons = [c.reason for c in self.choices.values() if c.reason is not None]
            message_reason = max(reasons, key=lambda r: SEVERITY.get(self.finish_categories.get(r, "other"), 0))
            if message_reason != self.emitted_reason:
                self.emitted_reason = message_reason
                category = self.finish_categories.get(message_reason, "other")
                out.append(Finish(pos, message_reason, category, self._roleless()))
        return out
