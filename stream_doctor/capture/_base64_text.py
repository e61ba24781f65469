"""Bodies and chunks that recorders store as base64 text inside their JSON: ReqLLM's ``{"b64": …}`` and the
Datadog APM test agent's ``"base64:…"`` strings (``capture/recordings/`` reads both recorders' files)."""

from __future__ import annotations

import binascii
from typing import Any

from stream_doctor.capture.base import CaptureError

#: the Datadog APM test agent's mark on a body it stores as base64 (``vcr_proxy._decode_body``: one that
#: holds a NUL byte, as an AWS event stream does, or is not UTF-8), read back by ``_encode_body``
_MARKED_B64 = "base64:"


def is_b64(value: Any) -> bool:
    """ReqLLM's ``{"b64": …}`` (an object of that one key, a string), or a test agent's ``"base64:…"``."""
    if isinstance(value, str):
        return value.startswith(_MARKED_B64)
    return isinstance(value, dict) and len(value) == 1 and isinstance(value.get("b64"), str)


def b64(item: Any, what: str) -> bytes:
    """A ReqLLM ``{"b64": …}`` (or, in its older files, a chunk as a plain string) or a test agent's
    ``"base64:…"`` as bytes."""
    marked = isinstance(item, str) and item.startswith(_MARKED_B64)
    if isinstance(item, str) and not marked:
        return item.encode("utf-8", "surrogatepass")
    text = item[len(_MARKED_B64) :] if marked else item.get("b64") if isinstance(item, dict) else None
    if not isinstance(text, str):
        raise CaptureError(f'not a readable ReqLLM transcript: {what} has no "b64" text')
    try:
        return binascii.a2b_base64(text.encode("ascii"), strict_mode=True)
    except (binascii.Error, UnicodeEncodeError):
        recorder = "test agent cassette" if marked else "ReqLLM transcript"
        raise CaptureError(f"not a readable {recorder}: {what} is not base64") from None
