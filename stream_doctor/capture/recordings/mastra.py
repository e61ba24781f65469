"""Mastra's llm-recorder (``__recordings__/*.json``): ``{"meta": {…}, "recordings": [...]}`` or, in older
files, the bare array; each recording ``{hash, request: {url, method, body, timestamp}, response: {status,
statusText, headers, body | chunks, chunkTimings, isStreaming}}``, a streamed body kept as ``chunks``, the
text of each read off the wire in order (a chunk may end inside an event), a whole reply as ``body``: each
read as a one-exchange recording (``one_exchange.exchange``)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from stream_doctor.capture.base import Pos
from stream_doctor.capture.recordings._shared import skipped
from stream_doctor.capture.recordings.one_exchange import exchange

if TYPE_CHECKING:
    from stream_doctor.capture._text_places import Source
    from stream_doctor.capture.http_frames import Exchanges

#: ``[{"hash": "…", "request": …}]``, or ``{"meta": {…}, "recordings": […]}``
_ARRAY_START = re.compile(rb'\A(?:\xef\xbb\xbf)?\s*\[\s*\{\s*"hash"\s*:\s*"[^"\\]*"\s*,\s*"request"\s*:')
_FILE_START = re.compile(rb'\A(?:\xef\xbb\xbf)?\s*\{\s*"meta"\s*:\s*\{[^{}]*\}\s*,\s*"recordings"\s*:\s*\[')


def sniff(head: bytes) -> bool:
    return bool(_ARRAY_START.match(head) or _FILE_START.match(head))


def reads(data: bytes, document: Any) -> bool:
    """``{"meta", "recordings": [...]}``, or the bare array of ``{hash, request, response}``."""
    if isinstance(document, dict):
        return "meta" in document and isinstance(document.get("recordings"), list)
    return (
        isinstance(document, list)
        and bool(document)
        and isinstance(document[0], dict)
        and {"hash", "request", "response"} <= document[0].keys()
    )


def exchanges(data: bytes, document: Any, source: Source, collected: Exchanges) -> Iterator[None]:
    from stream_doctor.capture._text_places import json_places

    recordings = document["recordings"] if isinstance(document, dict) else document
    prefix: tuple[Any, ...] = ("recordings",) if isinstance(document, dict) else ()
    depth = len(prefix)
    places = json_places(
        data,
        lambda p: (
            p[:depth] == prefix
            and (len(p) == depth + 2 and p[-1] == "request" or len(p) == depth + 3 and p[-1] in ("body", "chunks"))
        ),
    )
    for number, entry in enumerate(recordings, 1):
        if isinstance(entry, dict):
            exchange(collected, source, places, (*prefix, number - 1), number, entry)
        else:
            start = places.get((*prefix, number - 1), 0)
            skipped(collected, number, Pos(0, source.line_of(start), start), "not a recording object")
        yield
