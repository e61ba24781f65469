"""naive-index-concat: keys calls by their index alone and concatenates, ignoring ids.

The pattern (bug class E, reports #18 ollama #15457, #20 litellm #7621, #21 langchain #34807):
every fragment with the same ``(choice, index)`` (a missing index read as 0; an Anthropic block
index) goes into one buffer; the first id and name are kept. Calls sent on one index, whole or
not, become one call with ``{…}{…}``. Calls run at the finish, or when the stream ends.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from stream_doctor.capture.base import Pos
from stream_doctor.clients._wire import Fragment, WireMachine
from stream_doctor.clients.base import parse_json, profile


@dataclass
class _Slot:
    calls: list[int]
    call_id: str | None
    name: str | None
    texts: list[str] = field(default_factory=list)
    server_side: bool = False
    start_input: Any = None  # a whole input the start event carried (Gemini, Bedrock, Ollama …)


@dataclass
class IndexConcat(WireMachine):
    slots: dict[tuple[int, int], _Slot] = field(default_factory=dict)
    handed: bool = False

    def fragment(self, fragment: Fragment) -> None:
        key = fragment.key
        lane = key[0] if isinstance(key, tuple) and key and isinstance(key[0], int) else 0
        anthropic = self.provider == "anthropic"
        index = fragment.index if anthropic and fragment.index is not None else (fragment.index or 0)
        slot = self.slots.get((lane, index))
        if slot is None:
            slot = self.slots[(lane, index)] = _Slot(
                [], fragment.call_id, fragment.name, server_side=fragment.server_side
            )
        if fragment.call is not None and fragment.call not in slot.calls:
            slot.calls.append(fragment.call)
        slot.call_id = slot.call_id or fragment.call_id
        slot.name = slot.name or fragment.name
        if fragment.first and isinstance(fragment.start_input, dict) and fragment.start_input:
            slot.start_input = fragment.start_input
        if fragment.arguments and not (fragment.first and anthropic):
            slot.texts.append(fragment.arguments)

    def finished(self, pos: Pos) -> None:
        self._hand_all(pos, "the finish")

    def end(self, end: Pos | None) -> None:
        self._hand_all(None, "the end of the stream")

    def _hand_all(self, pos: Pos | None, when: str) -> None:
        if self.handed:
            return
        self.handed = True
        for slot in self.slots.values():
            if slot.server_side:
                continue
            text = "".join(slot.texts)
            value = parse_json(text) if text.strip() else (slot.start_input or {})
            self.hand(tuple(slot.calls), slot.call_id, slot.name, text, value, pos, when)


PROFILE = profile(
    "naive-index-concat",
    "Naive: concatenates by index, ignoring ids",
    "pattern",
    "one buffer per (choice, index), first id and name kept; calls on one index fused into {…}{…}",
)(IndexConcat)
