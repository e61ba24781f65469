"""What writes captures: the httpx transport for SDKs (``Recorder``) and the recording proxy
(``stream-doctor record``, in ``proxy``). Both write envelopes (docs/envelope.md); nothing here
imports the rules or the reporters."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from stream_doctor.record.recorder import Recorder

__all__ = ["Recorder"]


def __getattr__(name: str) -> Any:
    if name == "Recorder":
        from stream_doctor.record.recorder import Recorder

        return Recorder
    raise AttributeError(name)
