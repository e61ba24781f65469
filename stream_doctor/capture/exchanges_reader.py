"""The reader of a file of HTTP exchanges (HAR files, cassettes, other tools' recordings), built from
how sure it is of a head and its pass over the file's exchanges.

Apart from ``base`` so that the base types need nothing of ``exchange``, which this reader calls
only once a file is read (sniffing needs none of it).
"""

from __future__ import annotations

from typing import Any, Callable, Iterator

from stream_doctor.capture.base import Capture, Exchange, Frame, InputProblem


class ExchangesReader:
    """A reader of a file of HTTP exchanges (HAR files, cassettes, other tools' recordings), made of how sure it
    is of a head (``sniffed``: the score, and why when 0) and a pass that adds each exchange of a file to an
    ``Exchanges`` in turn (``exchanges``, a yield after each); reading the file whole and a turn at a time
    are the one loop over those (``capture.exchange.read_exchanges``, ``exchange_turns``)."""

    def __init__(
        self,
        name: str,
        title: str,
        sniffed: Callable[[bytes], tuple[int, str]],
        exchanges: Callable[[bytes, Any], Iterator[None]],
    ) -> None:
        self.name = name
        self.title = title
        self.sniffed = sniffed
        self.exchanges = exchanges  # (data, an exchange.Exchanges) -> a yield after each exchange added

    def sniff(self, head: bytes) -> int:
        return self.sniffed(head)[0]

    def reject_reason(self, head: bytes) -> str:
        """Why ``sniff`` gave 0, for the "could not recognise" message."""
        return self.sniffed(head)[1]

    def read(self, data: bytes, path: str) -> Capture:
        from stream_doctor.capture.http_frames import read_exchanges  # sniffing needs none of it

        return read_exchanges(self.exchanges, data, path, self.name)

    def turns(
        self, data: bytes, path: str, capture: Capture
    ) -> Iterator[tuple[Exchange, list[Frame], list[InputProblem]]]:
        """Each exchange as it is read: the engine replays a turn and lets its frames go."""
        from stream_doctor.capture.http_frames import exchange_turns

        return exchange_turns(self.exchanges, data, path, capture)
