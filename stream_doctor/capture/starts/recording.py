"""Other tools' recordings' start (``capture/recordings``): a JSON document (or JSON Lines) of exchanges, or an
httprr trace's first line."""

from __future__ import annotations

import re

from stream_doctor.capture.starts import start

#: How every JSON dialect's file opens: one document, or JSON Lines of objects.
JSON_OPENS = (b"{", b"[")
#: httprr's first line.
HTTPRR = re.compile(rb"\Ahttprr trace v1\r?\n")


def could_be(head: bytes) -> bool:
    return start(head)[:1] in JSON_OPENS or HTTPRR.match(head) is not None
