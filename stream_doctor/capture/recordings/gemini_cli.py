"""gemini-cli's fake responses (``*.responses``): JSON Lines, one SDK call a line,
``{"method": "generateContentStream", "response": [chunk, …]}`` (a stream) or
``{"method": "generateContent", "response": {…}}`` (a whole reply); no request is recorded."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import orjson

from stream_doctor.capture._text import json_error
from stream_doctor.capture.base import CaptureError, Exchange, Pos
from stream_doctor.capture.recordings import _sdk_chunks
from stream_doctor.capture.recordings._shared import as_str, fixed

if TYPE_CHECKING:
    from stream_doctor.capture._text_places import Source
    from stream_doctor.capture.http_frames import Exchanges

#: a line ``{"method": "generateContent…", "response": …}``
_START = re.compile(rb'\A(?:\xef\xbb\xbf)?\{"method"\s*:\s*"[A-Za-z]+"\s*,\s*"response"\s*:')
#: the SDK methods that are model calls
_CALLS = ("generateContent", "generateContentStream")


def sniff(head: bytes) -> bool:
    return bool(_START.match(head))


def exchanges(data: bytes, collected: Exchanges) -> Iterator[None]:
    """One SDK call a line, its response a chunk list (a stream) or one reply."""
    from stream_doctor.capture._text_places import Source

    source = Source(data)
    number = 0
    for line_number, start in enumerate(source.starts, 1):
        end = data.find(b"\n", start)
        line = data[start : len(data) if end < 0 else end]
        if not line.strip():
            continue
        number += 1
        try:
            entry = orjson.loads(line)
        except orjson.JSONDecodeError as exc:
            raise CaptureError(
                f"not a readable gemini-cli responses line: {json_error(exc)}", line=line_number
            ) from None
        _call(collected, source, number, Pos(0, line_number, start), line, entry)
        yield


def _call(collected: Exchanges, source: Source, number: int, pos: Pos, line: bytes, entry: Any) -> None:
    from stream_doctor.capture._text_places import json_places

    method = as_str(entry.get("method")) if isinstance(entry, dict) else None
    skipped = None if method in _CALLS else f"a {method or 'unnamed'} call, not a model call"
    exchange = Exchange(number, pos, None, method, None, None, skipped=skipped)
    response = entry.get("response") if isinstance(entry, dict) else None
    request: dict[str, Any] = {"method": None, "url": method, "headers": {}}
    if method == "generateContentStream" and _sdk_chunks.is_chunk_list(response):
        places = json_places(line, lambda p: len(p) == 2 and p[0] == "response")
        offsets = [places.get(("response", i)) for i in range(len(response))]
        starts = [None if at is None else pos.offset + at for at in offsets]
        payload, place = _sdk_chunks.chunk_lines(response, source, starts)
        collected.add(exchange, request, payload, _sdk_chunks.NDJSON, place)
    else:  # a whole reply: counted, not a stream
        collected.add(exchange, request, None, None, fixed(pos))
