"""The one place ``scan`` replays a capture: the library API (``api.replay_given``), as ``replay`` does."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from stream_doctor.values.options import Given
    from stream_doctor.values.report import Report


def replay_capture(data: bytes, name: str, given: Given) -> Report:
    """Replay a capture's bytes, its positions named ``name``; ``RunError`` when it cannot be replayed.
    ``given`` (scan's --provider, --container, --select, --ignore) is resolved as ``replay`` resolves
    it, with no configuration file."""
    from stream_doctor.api import replay_given
    from stream_doctor.values.options import Options

    return replay_given(data, given, Options(), name=name)
