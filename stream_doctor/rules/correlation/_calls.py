"""Shared by the SD50x rules: how calls are told apart, and what a naive client would build."""

from __future__ import annotations

from typing import Hashable

from stream_doctor.accumulate.stream import ToolCall
from stream_doctor.util.wording import excerpt


def choice_of(call: ToolCall) -> Hashable:
    """The choice a call belongs to, for adapters whose keys start with it (OpenAI Chat: ``(choice, index)``)."""
    key = call.key
    return key[0] if isinstance(key, tuple) and key else None


def repeated(value: str, count: int, limit: int = 60) -> str:
    """What concatenating ``value`` ``count`` times builds, clipped, with its length."""
    built = value * count
    return f"{excerpt(built, limit)} ({len(built)} characters)"


def label(call: ToolCall) -> str:
    return f"call {call.ordinal + 1}, {call.label}"
