"""How findings and client reviews quote what a capture holds: a place, a value, a piece of raw text.

Rules and ``clients/extras.py`` word their messages with these, so one capture value reads the same
in every finding and review.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from stream_doctor.capture.base import Pos


def where(pos: Pos | None) -> str:
    """``line 12 (event 7)`` for messages."""
    if pos is None:
        return "the end of the capture"
    return f"line {pos.line} (event {pos.number})"


def preview(value: object, limit: int = 80) -> str:
    """A value for a message: its JSON text, clipped at ``limit`` characters (``jsontext.brief``)."""
    from stream_doctor.util import jsontext

    return jsontext.brief(value, limit)


def excerpt(text: str, limit: int = 60, tail: bool = False) -> str:
    """Raw text for a message, in backquotes, newlines shown as \\n, clipped at the start or end."""
    text = text.replace("\n", "\\n")
    if len(text) > limit:
        text = "…" + text[-(limit - 1) :] if tail else text[: limit - 1] + "…"
    return f"`{text}`"
