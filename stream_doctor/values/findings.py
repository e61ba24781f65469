"""Findings: what a rule reports, as values that carry their position in the capture.

They are ``util.records.record``s (frozen to mypy, made by plain slot stores): a long session's replay
makes a finding, its locations and related places for many of its turns.
"""

from __future__ import annotations

from enum import IntEnum
from typing import TYPE_CHECKING, Any

from stream_doctor.util.records import record

if TYPE_CHECKING:  # a name only: the command line reads Severity for --fail-on's choices without the capture stage
    from stream_doctor.capture.base import Pos


class Severity(IntEnum):
    INFO = 1
    WARNING = 2
    ERROR = 3

    @property
    def label(self) -> str:
        return self.name.lower()


@record
class Location:
    """A place in a capture: ``path:line`` plus the event number and byte offset.

    In a HAR file or a cassette (or an envelope of several turns) it also names the interaction,
    and a place in a request body its JSON path: ``cassette.yaml:212 (interaction 2, request
    messages[3].content[0])``. Event numbers count from the start of the interaction's response.
    """

    path: str
    line: int | None = None
    event: int | None = None
    offset: int | None = None
    interaction: int | None = None
    request_path: str | None = None  # a place in the interaction's request body, as a JSON path

    @classmethod
    def at(
        cls, path: str, pos: Pos | None, interaction: int | None = None, request_path: str | None = None
    ) -> Location:
        if pos is None:
            return cls(path, interaction=interaction, request_path=request_path)
        event = pos.number if pos.number > 0 else None  # 0: a request, which is not an event
        return cls(path, pos.line, event, pos.offset, interaction, request_path)

    def __str__(self) -> str:
        text = self.path if self.line is None else f"{self.path}:{self.line}"
        parts = [] if self.interaction is None else [f"interaction {self.interaction}"]
        if self.request_path is not None:
            parts.append(f"request {self.request_path}" if self.request_path else "request")
        elif self.event is not None:
            parts.append(f"event {self.event}")
        return f"{text} ({', '.join(parts)})" if parts else text

    def to_dict(self) -> dict[str, Any]:
        """As every JSON report gives it (report-v1's ``location``)."""
        data: dict[str, Any] = {"path": self.path, "line": self.line, "event": self.event, "offset": self.offset}
        if self.interaction is not None:
            data["interaction"] = self.interaction
        if self.request_path is not None:
            data["request_path"] = self.request_path
        return data


@record
class Related:
    label: str
    location: Location


#: What a finding says (``Finding.claim``): its code, severity and kind.
Claim = tuple[str, Severity, str | None]


@record
class Finding:
    code: str
    name: str
    severity: Severity
    message: str
    hint: str
    location: Location
    related: tuple[Related, ...] = ()
    call_id: str | None = None
    #: Which of its rule's problems this is, where the rule tells several apart and a client treats them
    #: differently (SD201's parse failure and what the arguments begin as: ``truncated object``); None
    #: where the code says it all. Not in the JSON report: the message says it in words.
    kind: str | None = None

    @property
    def claim(self) -> Claim:
        """What the finding says, whatever bytes, values and places it says it of: two findings with the
        same claim are the same finding of two captures (what ``minimize`` keeps while it cuts one down)."""
        return (self.code, self.severity, self.kind)

    @property
    def sort_key(self) -> tuple[int, int, int, str]:
        return (self.location.interaction or 0, self.location.event or 0, self.location.line or 0, self.code)

    def to_dict(self) -> dict[str, Any]:
        """As every JSON report gives it (report-v1's ``findings[]``; check's add a ``status``)."""
        return {
            "code": self.code,
            "name": self.name,
            "severity": self.severity.label,
            "message": self.message,
            "hint": self.hint,
            "location": self.location.to_dict(),
            "related": [{"label": r.label, "location": r.location.to_dict()} for r in self.related],
            "call_id": self.call_id,
        }
