"""naive-next-index: takes a call as complete when a fragment of another call arrives.

The pattern (bug class B, report #10 openai-ruby PR #638, the same heuristic as the SDKs'
``arguments.done``): the previous call is handed over as soon as another call's fragment shows up,
and the last one at the finish or when the stream ends (a stream cut short still runs it). Under
interleaved parallel calls the first call runs with part of its arguments.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Hashable

from stream_doctor.capture.base import Pos
from stream_doctor.clients._naive import ByCall, Held
from stream_doctor.clients._wire import Fragment
from stream_doctor.clients.base import parse_json, profile


@dataclass
class NextIndex(ByCall):
    current: dict[int, Held] = field(default_factory=dict)  # by choice

    def fragment(self, fragment: Fragment) -> None:
        lane = _lane(fragment.key)
        held = self.held.get(fragment.key)
        current = self.current.get(lane)
        if current is not None and (fragment.first or held is not current) and not current.done:
            self._hand(current, fragment.pos, "a fragment of another call arrived")
        super().fragment(fragment)
        new = self.held.get(fragment.key)
        if new is not None:
            self.current[lane] = new

    def _hand(self, held: Held, pos: Pos | None, when: str) -> None:
        held.done = True
        if held.server_side:
            return
        text = "".join(held.texts)
        start = held.start_input if isinstance(held.start_input, dict) else {}
        value = parse_json(text) if text.strip() else start
        self.hand((held.call,) if held.call is not None else (), held.call_id, held.name, text, value, pos, when)

    def stop(self, key: Hashable, call: int | None, pos: Pos) -> None:
        pass  # the protocol's completion signal is not what this pattern waits for

    def finished(self, pos: Pos) -> None:
        for held in self.current.values():
            if not held.done:
                self._hand(held, pos, "the finish")

    def end(self, end: Pos | None) -> None:
        for held in self.current.values():
            if not held.done:
                self._hand(held, None, "the end of the stream")

    def complete(self, held: Held, pos: Pos | None) -> None:  # pragma: no cover - stop() is a no-op
        pass


def _lane(key: Hashable) -> int:
    return key[0] if isinstance(key, tuple) and key and isinstance(key[0], int) else 0


PROFILE = profile(
    "naive-next-index",
    "Naive: a call is complete when the next one starts",
    "pattern",
    "hands a call over when another call's fragment arrives, the last at the finish or end of stream",
)(NextIndex)
