"""The one place ``scan`` replays a capture: the same call as ``stream-doctor replay``.

Kept to one function so that it can follow the library API (``stream_doctor.replay``) as it
grows; every worker calls only this.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from stream_doctor.engine import Report
    from stream_doctor.options import Options


def replay_capture(data: bytes, name: str, options: Options) -> Report:
    """Replay a capture's bytes, its positions named ``name``; ``RunError`` when it cannot be replayed."""
    from stream_doctor.engine import replay

    return replay(name, options, data)
