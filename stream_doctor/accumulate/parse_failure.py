"""Why a call's arguments did not parse (``ToolCall.parse_failure``), as ``arguments.py`` classifies it.

Apart from the accumulated stream because only a call whose arguments fail to parse makes one:
``arguments.py`` imports this module when one does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

ParseFailureKind = Literal[
    "empty",
    "truncated",
    "unterminated-string",
    "trailing-data",
    "concatenated-objects",
    "not-an-object",
    "invalid",
    "too-deep",
]


@dataclass(frozen=True, slots=True)
class ParseFailure:
    """Why a call's arguments did not parse: a classification and where in the buffer it failed."""

    kind: ParseFailureKind
    detail: str  # the JSON parser's own words
    position: int  # character offset into the raw arguments
    fragment: int | None  # 0-based fragment holding that character, None when no fragment does
