"""litellm: LiteLLM's ``stream_chunk_builder`` (how ``litellm.completion(stream=True)`` chunks are
rebuilt into one response, which agents built on LiteLLM then run).

Follows ``litellm`` 1.83.0, the newest release that installs beside openai 3.x (1.83.1-1.106.10
require ``openai<3``; 1.108.0 and later require a certifi release PyPI does not have), and is
checked against it (``clients/library/litellm_stream.py``: ``litellm.completion`` on the OpenAI SDK
over a mock transport, then ``stream_chunk_builder``).
``litellm/litellm_core_utils/streaming_chunk_builder_utils.py`` L159-300,
``ChunkProcessor.get_combined_tool_content``: the fragments of every choice grouped by ``index``
alone (``types/utils.py`` ``Delta.__init__`` numbers the entries of one chunk that have no index
0, 1, 2 …, so a call sent whole without an index is kept apart from the others of its chunk but
merged with the calls of later chunks; ``main.py`` L7348-7490 puts the calls on choice 0), argument text
concatenated per index, the last non-empty ``id`` and ``name`` win, an empty buffer becomes
``"{}"``, and an index that never had both an id and a name is dropped; the response is built
after the stream, whatever its finish reason. The legacy ``function_call`` is combined on its own
(``get_combined_function_call_content``).

- Two calls sent on one index become one call with ``{…}{…}`` (litellm #7621), run with text that
  does not parse; so do the calls of two choices (``n=2``) at the same index.
- An error object in the stream: the OpenAI SDK raises ``APIError``, which ``CustomStreamWrapper``
  re-raises as ``MidStreamFallbackError`` (``streaming_handler.py`` L2242-2315); so does an event
  whose data is not JSON (the SDK's ``JSONDecodeError``).
- Later releases (1.109.1) key calls by choice and index; profile and test move together when the
  pin can.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from stream_doctor.capture.base import Pos
from stream_doctor.clients._wire import Fragment, WireMachine, lax_int
from stream_doctor.clients.base import choice_of, parse_json, profile
from stream_doctor.clients.framing import SENTINEL_READERS
from stream_doctor.values.events import (
    ArgsDelta,
    BlockDelta,
    BlockStart,
    BlockStop,
    Event,
    Finish,
    KeepAlive,
    ToolStart,
)


@dataclass
class _Slot:
    calls: list[int]
    call_id: str | None = None
    name: str | None = None
    texts: list[str] = field(default_factory=list)


@dataclass
class _Reading:
    """Whether ``CustomStreamWrapper`` still reads the stream (``streaming_handler.py``): once a chunk's first
    choice had a finish_reason (``received_finish_reason``), an empty chunk (a choice with nothing in its
    delta: ``is_chunk_non_empty`` false) is its last chunk (``sent_last_chunk``, L1066), and the next empty
    one raises StopIteration (L1021-1030): nothing after it is read, an error chunk neither. A chunk with no
    choices (usage) changes nothing. Each chunk is judged from its events, once the next frame begins."""

    frame: Pos | None = None
    carried: bool = False  # the frame's chunk carried calls or text
    choice: bool = False  # ... a choice (a finish, or a finished choice carried again)
    finish: bool = False  # ... a finish_reason
    finished: bool = False  # received_finish_reason
    sent_last: bool = False  # sent_last_chunk
    stopped: bool = False

    def reads(self, event: Event) -> bool:
        if event.pos != self.frame:
            self._chunk_read()
            self.frame = event.pos
        if self.stopped:
            return False
        kind = type(event)
        if kind in (ToolStart, ArgsDelta, BlockStart, BlockDelta):
            self.carried = True
        elif kind in (BlockStop, Finish):
            self.choice = self.finish = True
        elif kind is KeepAlive and event.choices:  # type: ignore[union-attr]
            self.choice = True
        return True

    def _chunk_read(self) -> None:
        self.finished = self.finished or self.finish
        if self.finished and self.choice and not self.carried:
            self.stopped, self.sent_last = self.sent_last, True
        self.carried = self.choice = self.finish = False


@dataclass
class ChunkBuilder(WireMachine):
    slots: dict[int, _Slot] = field(default_factory=dict)
    legacy: _Slot | None = None  # the legacy function_call, every choice's fragments together
    unindexed: dict[tuple[int, int], int] = field(default_factory=dict)  # (chunk, choice) -> last index given
    chunk: list[Fragment] = field(default_factory=list)  # the latest chunk's fragments, merged at the next
    refused: bool = False  # the latest chunk's Delta failed validation
    done_sentinel = SENTINEL_READERS["litellm"]
    reading: _Reading = field(default_factory=lambda: _Reading())

    def feed(self, event: Event, call: int | None) -> None:
        if not self.reading.reads(event):
            return  # CustomStreamWrapper has stopped reading the stream
        super().feed(event, call)

    def fragment(self, fragment: Fragment) -> None:
        if fragment.server_side or self.provider == "anthropic":
            return
        if self.chunk and self.chunk[0].pos != fragment.pos:
            self._merge_chunk()
        self.chunk.append(fragment)
        # types/utils.py Delta.__init__ builds a ChatCompletionDeltaToolCall of each entry as sent: an index of
        # digits is read as the integer, an object as arguments is json.dumps'd (Function.__init__), and any
        # other value of the wrong type fails validation; chunk_creator then logs it and gives the chunk an
        # empty Delta(), so every call fragment of that chunk is lost (streaming_handler.py L1538-1545)
        for field_name, value in fragment.wire:
            if value is None or (field_name == "index" and lax_int(value) is not None):
                continue
            if not (field_name == "arguments" and isinstance(value, dict)):
                self.refused = True
            else:
                try:
                    json.dumps(value)
                except RecursionError:  # Function.__init__ raises it inside Delta(): the chunk is dropped too
                    self.refused = True

    def _merge_chunk(self) -> None:
        if not self.refused:
            for fragment in self.chunk:
                self._merge(fragment)
        self.chunk.clear()
        self.refused = False

    def _merge(self, fragment: Fragment) -> None:
        if fragment.block_type == "function_call":
            if self.legacy is None:  # get_combined_function_call_content: the name of the first fragment
                self.legacy = _Slot([], None, fragment.name)
            if fragment.call is not None and fragment.call not in self.legacy.calls:
                self.legacy.calls.append(fragment.call)
            if fragment.arguments:
                self.legacy.texts.append(fragment.arguments)
            return
        index = fragment.index
        arguments = fragment.arguments
        for field_name, value in fragment.wire:
            if field_name == "index":
                index = lax_int(value)
            elif field_name == "arguments" and isinstance(value, dict):
                arguments = json.dumps(value)
        if index is None:
            # litellm's Delta numbers the index-less entries of one chunk's tool_calls 0, 1, 2 …
            where = (fragment.pos.number, choice_of(fragment.key))
            index = self.unindexed[where] = self.unindexed.get(where, -1) + 1
        slot = self.slots.setdefault(index, _Slot([]))
        if fragment.call is not None and fragment.call not in slot.calls:
            slot.calls.append(fragment.call)
        if fragment.call_id:
            slot.call_id = fragment.call_id
        if fragment.name:
            slot.name = fragment.name
        if arguments:
            slot.texts.append(arguments)

    def stream_error(self, pos: Pos) -> None:
        self.fail(pos, "MidStreamFallbackError", "the stream sent an error object", provider_error=True)

    def malformed(self, reason: str, pos: Pos) -> None:
        if reason.startswith("not JSON"):
            # the OpenAI SDK's sse.json() raises JSONDecodeError, which CustomStreamWrapper re-raises as
            # MidStreamFallbackError (streaming_handler.py _handle_stream_fallback_error)
            self.fail(pos, "MidStreamFallbackError", "an event's data is not JSON")

    def end(self, end: Pos | None) -> None:
        self._merge_chunk()
        for _, slot in sorted(self.slots.items()):
            if not (slot.call_id and slot.name):
                continue  # L287: only an index with an id and a name becomes a tool call
            text = "".join(slot.texts) or "{}"
            self.hand(
                tuple(slot.calls),
                slot.call_id,
                slot.name,
                text,
                parse_json(text),
                None,
                "end of stream (stream_chunk_builder)",
            )
        if self.legacy is not None:
            text = "".join(self.legacy.texts)
            self.hand(
                tuple(self.legacy.calls),
                None,
                self.legacy.name,
                text,
                parse_json(text),
                None,
                "end of stream (stream_chunk_builder, function_call)",
            )


PROFILE = profile(
    "litellm",
    "LiteLLM stream_chunk_builder",
    "library",
    "tool calls of every choice grouped by index (missing index: 0); last id and name win; built after the stream",
    providers=("openai", "mistral"),
    library="litellm",
    version="1.83.0",
    runs_in_python=True,
    sources=(
        "litellm/litellm_core_utils/streaming_chunk_builder_utils.py:159-300 (get_combined_tool_content)",
        "litellm/main.py:7348-7490 (stream_chunk_builder)",
        "litellm/litellm_core_utils/streaming_handler.py:2242-2315 (_handle_stream_fallback_error)",
    ),
)(ChunkBuilder)
