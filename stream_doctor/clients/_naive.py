"""What the naive patterns share: calls kept as the reference correlates them, handed at their
completion event (Anthropic ``content_block_stop``; Chat Completions: the choice's finish)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Hashable

from stream_doctor.capture.base import Pos
from stream_doctor.clients._wire import Fragment, WireMachine


@dataclass
class Held:
    call: int | None
    call_id: str | None
    name: str | None
    start_input: Any
    texts: list[str] = field(default_factory=list)
    done: bool = False
    server_side: bool = False


@dataclass
class ByCall(WireMachine):
    held: dict[Hashable, Held] = field(default_factory=dict)
    order: list[Held] = field(default_factory=list)

    def fragment(self, fragment: Fragment) -> None:
        if fragment.first:
            held = Held(
                fragment.call, fragment.call_id, fragment.name, fragment.start_input, server_side=fragment.server_side
            )
            self.held[fragment.key] = held
            self.order.append(held)
        held_now = self.held.get(fragment.key)
        if held_now is None or held_now.done:
            return
        if fragment.arguments:
            held_now.texts.append(fragment.arguments)
        self.grew(held_now, fragment)

    def grew(self, held: Held, fragment: Fragment) -> None:
        """A fragment was added to ``held``."""

    def stop(self, key: Hashable, call: int | None, pos: Pos) -> None:
        held = self.held.get(key)
        if held is not None and not held.done:
            held.done = True
            if not held.server_side:
                self.complete(held, pos)

    def complete(self, held: Held, pos: Pos | None) -> None:  # pragma: no cover - overridden
        raise NotImplementedError
