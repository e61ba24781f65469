"""openai-node: the OpenAI Node SDK's ``ChatCompletionStream`` (``client.chat.completions.stream``).

Modelled from source, not run (the SDK is TypeScript): ``src/lib/ChatCompletionStream.ts`` at
openai/openai-node commit 00458aca, ``#accumulateChatCompletion``, ``#addChunk``,
``#emitToolCallDoneEvent`` and ``finalizeChatCompletion``.

- ``tool_calls[index] ??= {}``: the index is a key of a sparse array, so gaps and a first index of 1
  are fine; a fragment without ``index`` goes to ``tool_calls[undefined]``, which every such
  fragment shares (and which never gets a done event).
- ``id`` and ``function.name`` are assigned when present (the last value wins: repeated ids and
  names are not concatenated); ``arguments`` is appended.
- ``tool_calls.function.arguments.done`` fires, as in the Python SDK, when a fragment of another
  index arrives or the choice has a ``finish_reason``.
- At the end, ``finalizeChatCompletion`` throws when a choice has no ``finish_reason`` or a call has
  no id; the done events already fired stand.
- Not modelled: the throw when a call never had a ``type`` (the neutral events do not keep it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Hashable

from stream_doctor.capture.base import Pos
from stream_doctor.clients._chat import ChatSnapshot, Choice, Entry
from stream_doctor.clients.base import profile

UNDEFINED = "undefined"


@dataclass
class ChatCompletionStreamNode(ChatSnapshot):
    missing_entry_error = "Error"

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
    ) -> Hashable | None:
        key: Hashable = UNDEFINED if index is None else index
        entry = choice.entries.get(key)
        if entry is None:
            entry = choice.entries[key] = Entry([])
        entry.add_call(call)
        if call_id:
            entry.call_id = call_id
        if entry.name is None and (name is not None or arguments is not None):
            entry.name = name or ""
        if name:
            entry.name = name
        if arguments:
            entry.add(arguments)
        elif entry.parts is None and (name is not None or arguments is not None):
            entry.parts = []
        return key

    def entry(self, choice: Choice, key: Hashable) -> Entry | None:
        return choice.entries.get(key)  # type: ignore[no-any-return]

    def close(self, end: Pos | None) -> None:
        super().close(end)
        for number, choice in sorted(self.choices.items()):
            if not choice.finished:
                self.fail(None, "OpenAIError", f"missing finish_reason for choice {number}")
                return
            for entry in choice.entries.values():
                if entry.call_id is None:
                    self.fail(None, "OpenAIError", f"missing choices[{number}].tool_calls[].id")
                    return


PROFILE = profile(
    "openai-node",
    "OpenAI Node SDK, ChatCompletionStream",
    "library",
    "sparse tool_calls by index; last id and name win; done on the next index or finish_reason; modelled from source",
    providers=("openai",),
    library="openai (npm)",
    version="commit 00458aca",
    sources=("src/lib/ChatCompletionStream.ts (#accumulateChatCompletion, #addChunk, finalizeChatCompletion)",),
)(ChatCompletionStreamNode)
