"""Findings: what a rule reports, as values that carry their position in the capture."""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum

from stream_doctor.capture.base import Pos


class Severity(IntEnum):
    INFO = 1
    WARNING = 2
    ERROR = 3

    @property
    def label(self) -> str:
        return self.name.lower()

    @classmethod
    def parse(cls, text: str) -> Severity:
        try:
            return cls[text.upper()]
        except KeyError:
            raise ValueError(f"unknown severity {text!r} (use info, warning or error)") from None


@dataclass(frozen=True, slots=True)
class Location:
    """A place in a capture: ``path:line`` plus the event number and byte offset."""

    path: str
    line: int | None = None
    event: int | None = None
    offset: int | None = None

    @classmethod
    def at(cls, path: str, pos: Pos | None) -> Location:
        if pos is None:
            return cls(path)
        return cls(path, pos.line, pos.number, pos.offset)

    def __str__(self) -> str:
        text = self.path if self.line is None else f"{self.path}:{self.line}"
        return text if self.event is None else f"{text} (event {self.event})"


@dataclass(frozen=True, slots=True)
class Related:
    label: str
    location: Location


@dataclass(frozen=True, slots=True)
class Finding:
    code: str
    name: str
    severity: Severity
    message: str
    hint: str
    location: Location
    related: tuple[Related, ...] = ()
    call_id: str | None = None

    @property
    def sort_key(self) -> tuple[int, int, str]:
        return (self.location.event or 0, self.location.line or 0, self.code)
