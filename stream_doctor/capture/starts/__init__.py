"""How each container reader's captures can start: the words its ``sniff`` reads, in a light module named for
the reader (``starts/<name>.py``, with a ``could_be(head)``), so that ``capture.candidates`` reads every
reader's without importing any reader: a capture is sniffed only by the readers it could be, and the others
are never imported. A reader without one (the binary event stream) is always asked.
"""

from __future__ import annotations

from stream_doctor.capture._text import BOM


def start(head: bytes) -> bytes:
    """The first two bytes of ``head`` once a BOM and ASCII whitespace are skipped."""
    return head.removeprefix(BOM).lstrip()[:2]
