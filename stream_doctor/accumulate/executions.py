"""What the application ran (``AccumulatedStream.executions``): the capture's ``execute`` records, and
those given after the fact, resolved against the calls the stream produced.

Apart from the accumulated stream because only a turn with executions makes one: the accumulator
imports this module when it has some.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from stream_doctor.capture.base import Pos
    from stream_doctor.values.findings import Location


@dataclass(frozen=True, slots=True)
class ExecutionRecord:
    """An envelope ``execute`` record, resolved against the calls the stream produced."""

    pos: Pos
    call_id: str | None
    name: str | None
    input: Any
    call: int | None  # ordinal of the call it names, None when the stream never produced that id
    call_state: Literal["complete", "open", "never-completed", "unknown"]
    previous: Pos | None  # an earlier execution of the same call
    origin: Location | None = None  # given after the fact (--executed, --executions): where; None: in the capture
