"""openai-node: the OpenAI Node SDK's ``ChatCompletionStream`` (``client.chat.completions.stream``).

Follows ``openai`` 7.57.0 on npm (``lib/ChatCompletionStream.js``: ``#addChunk``,
``#emitToolCallDoneEvent``, ``#accumulateChatCompletion``, ``finalizeChatCompletion``), and is
checked against it under Node on the original bytes (``tests/clients/test_node_differential.py``).

- ``tool_calls[index]``: the index is a key of a sparse array, so a first index of 1 is merged; but
  ``finalizeChatCompletion`` then reads the hole at 0 and throws (``Cannot read properties of
  undefined (reading 'id')``) once the stream has ended. A fragment without ``index`` throws at
  once (``invalid tool call index: undefined``).
- ``id`` and ``function.name`` are assigned when present (the last value wins: repeated ids and
  names are not concatenated); ``arguments`` is appended.
- ``tool_calls.function.arguments.done`` fires when a fragment of another index arrives or the
  choice has a ``finish_reason`` (before the chunk's own calls are read: a call that begins in the
  chunk carrying the finish_reason gets no done event); only the latter marks the call done, so with
  interleaved calls every switch of index fires it again, with the arguments so far. A call that
  never had a ``type`` throws there instead (``#emitToolCallDoneEvent``: "tool call snapshot missing
  `type`").
- A truthy ``id`` of any type is kept as sent; ``arguments`` that are an object are appended as
  ``"[object Object]"`` (``+=``); a string ``index`` throws like a missing one (``Number.isSafeInteger``).
- The SDK stops reading at ``[DONE]``, data that is exactly that (``sse.data === '[DONE]'``: a ``[DONE] ``
  with a trailing space goes to ``JSON.parse`` and throws); ``core/streaming.js`` dispatches a last event
  whose closing blank line never came once the body has ended (``sseDecoder.flush()``). ``finalizeChatCompletion``
  then throws when a choice has no ``finish_reason`` or a call no ``type``; a call without id gets a
  generated ``call_<uuid>``; the done events already fired stand.
- ``finalizeChatCompletion`` checks each choice in turn: its ``finish_reason``, then its role (a choice
  no chunk gave a truthy ``delta.role`` throws "missing role for choice N", whatever it carried: the
  adapter names such choices on ``Finish.roleless`` and ``MessageStop.roleless``: a stream cut after its
  finish_reason ends without a MessageStop the profile is fed), then its calls.
- An event whose data is not JSON throws (``SyntaxError``, handed on as an ``OpenAIError``): data lines
  written without blank lines between them are one such event (``SSEDecoder.decode`` joins them).
- ``#addChunk`` loops over every choice a chunk carries, so a chunk that carries a finished choice with
  nothing else (Azure's asynchronous content-filter event: ``KeepAlive.choices``) fires its pending done event.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Hashable

from stream_doctor.capture.base import Pos
from stream_doctor.clients._chat import ChatSnapshot, Choice, Entry
from stream_doctor.clients._wire import wired
from stream_doctor.clients.base import profile
from stream_doctor.clients.framing import SENTINEL_READERS
from stream_doctor.values.events import Event, Finish, MessageStop, Wire

UNDEFINED = "undefined"


@dataclass
class ChatCompletionStreamNode(ChatSnapshot):
    missing_entry_error = "Error"
    done_again_until_finish = True
    visits_finished_choices = True  # #addChunk loops over chunk.choices, whatever each carries
    done_throws_without_type = True
    # a thrown SyntaxError reaches the caller as an OpenAIError (AbstractChatCompletionRunner._handleError)
    malformed_error = "OpenAIError"
    # core/streaming.js _iterSSEMessages: `sseDecoder.flush()` once the body ended
    reads_unterminated_last_event = True
    done_sentinel = SENTINEL_READERS["openai-node"]  # else JSON.parse(sse.data)
    # #addChunk emits each done event as it reaches it: one fired before a later one throws stands
    hands_before_raising = True
    done_at: Pos | None = None  # the [DONE] frame, where the SDK stops reading and finalizes
    roleless: tuple[int, ...] = ()  # the choices no chunk gave a role, as of the latest Finish or that frame

    def feed(self, event: Event, call: int | None) -> None:
        kind = type(event)
        if kind is MessageStop and not self.ended:
            assert isinstance(event, MessageStop)
            self.done_at = event.pos
            self.roleless = event.roleless
        elif kind is Finish and not self.ended:
            assert isinstance(event, Finish)
            self.roleless = event.roleless  # the stream may end here without a MessageStop the profile sees
        super().feed(event, call)

    def new_choice(self) -> Choice:
        return Choice(entries={})

    def merge(
        self,
        choice: Choice,
        index: int | None,
        call_id: str | None,
        name: str | None,
        arguments: str | None,
        call: int | None,
        pos: Pos,
        wire: Wire = (),
    ) -> Hashable | None:
        if index is None:
            self.fail(pos, "OpenAIError", "Chat completion stream contains an invalid tool call index: undefined", call)
            return None
        key: Hashable = index
        entry = choice.entries.get(key)
        if entry is None:
            entry = choice.entries[key] = Entry([])
        entry.add_call(call)
        # #accumulateChatCompletion reads the entry's values as sent: a truthy id of any type is kept
        # (`if (id)`), arguments are appended with `+=` (an object as "[object Object]"), and a function
        # object whose name and arguments are null still makes the snapshot's {name: '', arguments: ''}
        sent_id: Any = wired(wire, "id", call_id)
        if _truthy(sent_id):
            entry.call_id = sent_id
        sent_arguments = wired(wire, "arguments", arguments)
        arguments = None if sent_arguments is None else _js_string(sent_arguments)
        has_function = name is not None or arguments is not None or any(f in ("name", "arguments") for f, _ in wire)
        if entry.name is None and has_function:
            entry.name = name or ""
        if name:
            entry.name = name
        if arguments:
            entry.add(arguments)
        elif entry.parts is None and has_function:
            entry.parts = []
        return key

    def entry(self, choice: Choice, key: Hashable) -> Entry | None:
        return choice.entries.get(key)  # type: ignore[no-any-return]

    def close(self, end: Pos | None) -> None:
        super().close(end)
        at = self.done_at
        for number in sorted(self.choices.keys() | self.roleless):
            choice = self.choices.get(number)
            if choice is not None and not choice.finished:
                self.fail(at, "OpenAIError", f"missing finish_reason for choice {number}")
                return
            if number in self.roleless:
                self.fail(at, "OpenAIError", f"missing role for choice {number}")
                return
            if choice is None:  # a choice with nothing but its role, text and finish_reason: no event of its own
                continue
            indices = sorted(k for k in choice.entries if isinstance(k, int))
            if indices and indices != list(range(len(indices))):
                self.fail(at, "OpenAIError", "Cannot read properties of undefined (reading 'id')")
                return
            # a call without id gets `call_<uuid4>`: no exception; one without type throws
            for position, entry in enumerate(choice.entries.values()):
                if entry.wire_type is None:
                    self.fail(at, "OpenAIError", f"missing choices[{number}].tool_calls[{position}].type")
                    return


def _truthy(value: Any) -> bool:
    """JavaScript's truthiness of a JSON value (an empty object or list is truthy there)."""
    return value is not None and value is not False and value != 0 and value != "" or isinstance(value, (dict, list))


def _js_string(value: Any) -> str:
    """What JavaScript's ``+=`` on a string appends for a JSON value."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        return "[object Object]"
    if isinstance(value, list):
        try:
            return ",".join("" if item is None else _js_string(item) for item in value)
        except RecursionError:  # nested ~1,000 deep: JavaScript's deeper stack still joins it; read as empty
            return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return json.dumps(value)


PROFILE = profile(
    "openai-node",
    "OpenAI Node SDK, ChatCompletionStream",
    "library",
    "tool_calls by index; last id and name win; done on each switch of index (again) or finish_reason",
    providers=("openai", "mistral"),
    library="openai (npm)",
    version="7.57.0",
    sources=(
        "lib/ChatCompletionStream.js (#accumulateChatCompletion, #addChunk, #emitToolCallDoneEvent, finalizeChatCompletion)",
    ),
)(ChatCompletionStreamNode)
