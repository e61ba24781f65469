"""naive-start-placeholder: runs the tool with the input the start event carried.

The pattern (bug classes A, reports #5 crustly PR #38, #6 antseed PR #15): code that reads
``content_block_start.content_block.input`` (Anthropic sends ``{}`` there) and lets every
``input_json_delta`` fall through a catch-all. The call runs at its completion event with ``{}``.
On Chat Completions the start carries no input at all: ``{}`` too.
"""

from __future__ import annotations

from dataclasses import dataclass

from stream_doctor.capture.base import Pos
from stream_doctor.clients._naive import ByCall, Held
from stream_doctor.clients.base import profile


@dataclass
class StartPlaceholder(ByCall):
    def complete(self, held: Held, pos: Pos | None) -> None:
        value = held.start_input if isinstance(held.start_input, dict) else {}
        self.hand(
            (held.call,) if held.call is not None else (),
            held.call_id,
            held.name,
            None,
            value,
            pos,
            "completion event (start input)",
        )


PROFILE = profile(
    "naive-start-placeholder",
    "Naive: reads the start event's input",
    "pattern",
    "runs the tool with the start event's input ({}) and ignores every argument fragment",
)(StartPlaceholder)
