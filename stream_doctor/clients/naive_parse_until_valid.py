"""naive-parse-until-valid: runs the call as soon as its buffer parses as JSON.

The pattern (bug class B, report #9 vercel/ai PR #13137, reverted): after every fragment the
buffer is tried as JSON and the first success finalizes the call. ``{"query":"test"`` + ``}``
parses before ``,"limit":10}`` arrives... when a fragment boundary falls after a closing brace
of the top-level object, or on a stream whose completion event comes late. A call whose buffer
never parses is not run.

The profile keeps an incremental bracket count, so it tries a parse only when the buffer could
be a whole value: linear in the buffer, as the check it models is not.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from stream_doctor.capture.base import Pos
from stream_doctor.clients._naive import ByCall, Held
from stream_doctor.clients._wire import Fragment
from stream_doctor.clients.base import parse_json, profile
from stream_doctor.values.events import MISSING


@dataclass
class _Scan:
    depth: int = 0
    inside: bool = False
    escaped: bool = False
    begun: bool = False


@dataclass
class UntilValid(ByCall):
    scans: dict[int, _Scan] = field(default_factory=dict)

    def grew(self, held: Held, fragment: Fragment) -> None:
        scan = self.scans.setdefault(id(held), _Scan())
        closed = False
        for char in fragment.arguments or "":
            if scan.inside:
                if scan.escaped:
                    scan.escaped = False
                elif char == "\\":
                    scan.escaped = True
                elif char == '"':
                    scan.inside = False
            elif char == '"':
                scan.inside = True
            elif char in "{[":
                scan.depth += 1
                scan.begun = True
            elif char in "}]":
                scan.depth -= 1
                closed = closed or scan.depth == 0
        if closed and scan.depth == 0 and not scan.inside:
            value = parse_json("".join(held.texts))
            if value is not MISSING:
                held.done = True
                if not held.server_side:
                    self.hand(
                        (held.call,) if held.call is not None else (),
                        held.call_id,
                        held.name,
                        "".join(held.texts),
                        value,
                        fragment.pos,
                        "the buffer first parsed",
                    )

    def complete(self, held: Held, pos: Pos | None) -> None:
        if not held.texts and isinstance(held.start_input, dict) and held.start_input:
            # no fragment to try: the start event carried the whole input (Gemini, Bedrock …)
            call = (held.call,) if held.call is not None else ()
            self.hand(call, held.call_id, held.name, None, held.start_input, pos, "completion event (whole input)")
        # otherwise never parsed: not run


PROFILE = profile(
    "naive-parse-until-valid",
    "Naive: runs the call when its buffer first parses",
    "pattern",
    "tries the buffer as JSON after every fragment and runs the call on the first success",
)(UntilValid)
