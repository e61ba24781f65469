"""The error a stream reported in its own events (``Message.error``, from a ``StreamError`` event).

Apart from the accumulated stream because only a stream that reports an error makes one: the
accumulator imports this module when it reads the error.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from stream_doctor.capture.base import Pos


@dataclass(frozen=True, slots=True)
class ErrorInfo:
    pos: Pos
    error_type: str | None
    message: str | None
