"""One response a file, ``{"status", "headers", "body"}`` (keys in any order; ``statusCode`` too): a test
suite's recording of one streamed response with no request, its ``body`` the SSE (or NDJSON) text."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from stream_doctor.capture.base import CaptureError, Exchange, Pos
from stream_doctor.capture.recordings._shared import add, header_items, status
from stream_doctor.capture.recordings.one_exchange import json_lines

if TYPE_CHECKING:
    from stream_doctor.capture._text_places import Source
    from stream_doctor.capture.http_frames import Exchanges

#: an object that opens with one of its keys
_START = re.compile(rb'\A(?:\xef\xbb\xbf)?\s*\{\s*"(?:status|statusCode|headers|body)"\s*:')


def sniff(head: bytes) -> bool:
    return bool(_START.match(head)) and b'"body"' in head and not json_lines(head)


def reads(data: bytes, document: Any) -> bool:
    return isinstance(document, dict) and "request" not in document and "response" not in document


def exchanges(data: bytes, document: Any, source: Source, collected: Exchanges) -> Iterator[None]:
    """A turn whose stream is the body, and nothing of its request."""
    from stream_doctor.capture._text_places import json_places
    from stream_doctor.capture.http_frames import header, redact_headers

    if not isinstance(document.get("body"), str):
        raise CaptureError('not a readable response recording: its "body" is not text')
    headers = redact_headers(header_items(document.get("headers")))
    pos = Pos(0, 1, 0)
    exchange = Exchange(1, pos, None, None, status(document.get("status", document.get("statusCode"))), None)
    payload = document["body"].encode("utf-8", "surrogatepass")
    where = json_places(data, lambda p: p == ("body",)).get(("body",))
    add(collected, source, exchange, {"method": None, "url": None, "headers": {}}, payload,
        header(headers, "content-type"), where, pos, header(headers, "content-encoding"))  # fmt: skip
    yield
