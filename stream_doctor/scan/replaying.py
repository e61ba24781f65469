"""The one place ``scan`` replays a capture: the library API, ``stream_doctor.replay``, as ``replay`` does."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from stream_doctor.report import Report


@dataclass(frozen=True)
class ReplayOptions:
    """What every capture of a scan is replayed with (``stream_doctor.replay``'s keyword arguments)."""

    provider: str | None = None
    container: str | None = None
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()

    def validate(self) -> None:
        """ValueError (with "did you mean …") for an unknown provider, format or selector, before any work."""
        from stream_doctor.api import build_options

        build_options(provider=self.provider, container=self.container, select=self.select, ignore=self.ignore)


def replay_capture(data: bytes, name: str, options: ReplayOptions) -> Report:
    """Replay a capture's bytes, its positions named ``name``; ``RunError`` when it cannot be replayed."""
    from stream_doctor import replay

    return replay(
        data, name=name, provider=options.provider, container=options.container, select=options.select,
        ignore=options.ignore,
    )  # fmt: skip
