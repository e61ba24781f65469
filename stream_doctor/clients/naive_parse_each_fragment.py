"""naive-parse-each-fragment: parses each argument fragment on its own and keeps the last that parsed.

The pattern (bug class A, report #7 ai-agent-book #194): every ``partial_json`` is passed to
``json.loads`` alone, errors are swallowed, and the input stays the start placeholder ``{}``
unless one fragment happens to be a whole object. The call runs at its completion event.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from stream_doctor.capture.base import Pos
from stream_doctor.clients._naive import ByCall, Held
from stream_doctor.clients._wire import Fragment
from stream_doctor.clients.base import parse_json, profile
from stream_doctor.values.events import MISSING


@dataclass
class EachFragment(ByCall):
    parsed: dict[int, Any] = field(default_factory=dict)

    def grew(self, held: Held, fragment: Fragment) -> None:
        text = fragment.arguments or ""
        stripped = text.strip()
        if stripped.startswith("{") and stripped.endswith("}"):  # only a whole object can parse alone
            value = parse_json(text)
            if isinstance(value, dict):
                self.parsed[id(held)] = value

    def complete(self, held: Held, pos: Pos | None) -> None:
        value = self.parsed.get(id(held), MISSING)
        if value is MISSING:
            value = held.start_input if isinstance(held.start_input, dict) else {}
        self.hand(
            (held.call,) if held.call is not None else (),
            held.call_id,
            held.name,
            None,
            value,
            pos,
            "completion event (each fragment parsed alone)",
        )


PROFILE = profile(
    "naive-parse-each-fragment",
    "Naive: parses each fragment alone",
    "pattern",
    "json.loads on each fragment alone, errors swallowed; the input stays {} unless one fragment is a whole object",
)(EachFragment)
