"""nock's recordings (``nock.recorder.rec({output_objects: true})``, ``nockBack`` fixtures): a JSON array of
``{scope, method, path, body, status, response, rawHeaders | headers, responseIsBinary}``; ``rawHeaders`` a
flat ``[name, value, …]`` list, or an object from nock 14. A text response is a string; a binary one (an
event stream) is hex: one string with ``responseIsBinary: true``; a content-encoded one is a list of hex
chunks, still compressed (nock 14 compresses again what fetch decoded)."""

from __future__ import annotations

import binascii
import re
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, TypeGuard

import orjson

from stream_doctor.capture.base import Exchange, Pos
from stream_doctor.capture.recordings._shared import Places, add, as_str, header_items, skipped, status

if TYPE_CHECKING:
    from stream_doctor.capture._text_places import Source
    from stream_doctor.capture.http_frames import Exchanges

_START = re.compile(rb"\A(?:\xef\xbb\xbf)?\s*\[\s*\{")
_HEX = re.compile(r"\A(?:[0-9a-fA-F]{2})+\Z")


def sniff(head: bytes) -> bool:
    return bool(_START.match(head)) and b'"scope"' in head[:8192]


def reads(data: bytes, document: Any) -> bool:
    return isinstance(document, list)


def exchanges(data: bytes, document: Any, source: Source, collected: Exchanges) -> Iterator[None]:
    from stream_doctor.capture._text_places import json_places

    places = json_places(data, lambda p: len(p) == 1 or (len(p) == 2 and p[1] == "response"))
    for number, entry in enumerate(document, 1):
        _definition(collected, source, places, number, entry)
        yield


def _definition(collected: Exchanges, source: Source, places: Places, number: int, entry: Any) -> None:
    from stream_doctor.capture.http_frames import header, is_llm_call, redact_headers, redact_url, request_body

    start = places.get((number - 1,), 0)
    pos = Pos(0, source.line_of(start), start)
    if not isinstance(entry, dict):
        skipped(collected, number, pos, "not a nock definition object")
        return
    method = as_str(entry.get("method")) or "GET"
    url = redact_url((as_str(entry.get("scope")) or "") + (as_str(entry.get("path")) or ""))
    body = request_body(entry.get("body"), collected.budget)
    response_headers = redact_headers(_headers(entry))
    content_type = header(response_headers, "content-type")
    exchange = Exchange(number, pos, method.upper(), url, status(entry.get("status")), None,
                        skipped=is_llm_call(method, url, body, content_type))  # fmt: skip
    response = entry.get("response")
    payload = _body(response, entry.get("responseIsBinary") is True)
    value = {"method": method.upper(), "url": url, "headers": {}, "body": body}
    # nock keeps a content-encoded body as the hex of the bytes received, still encoded (nock 14 compresses
    # again what fetch decoded): its Content-Encoding is undone whatever the coding (deflate has no magic number)
    where = places.get((number - 1, "response"))
    encoding = header(response_headers, "content-encoding")
    add(collected, source, exchange, value, payload, content_type, where, pos, encoding, encoded=_hex_chunks(response))


def _headers(entry: dict[str, Any]) -> list[tuple[Any, Any]]:
    raw_headers = entry.get("rawHeaders")
    if isinstance(raw_headers, list):  # nock's flat [name, value, name, value, …]
        return list(zip(raw_headers[0::2], raw_headers[1::2], strict=False))
    if isinstance(raw_headers, dict):  # nock 14 (@mswjs/interceptors): Object.fromEntries(response.headers)
        return list(raw_headers.items())
    return header_items(entry.get("headers"))


def _hex_chunks(response: Any) -> TypeGuard[list[str]]:
    """A nock response kept as a list of hex chunks: a content-encoded body, as received."""
    return isinstance(response, list) and bool(response) and all(isinstance(c, str) and _HEX.match(c) for c in response)


def _body(response: Any, binary: bool) -> bytes | None:
    """A nock response as bytes: hex (one string marked binary, or a list of hex chunks), text, or JSON."""
    if _hex_chunks(response):
        return b"".join(binascii.unhexlify(c) for c in response)
    if isinstance(response, str):
        if binary and _HEX.match(response):
            return binascii.unhexlify(response)
        return response.encode("utf-8", "surrogatepass")
    if isinstance(response, (dict, list)):
        return orjson.dumps(response)
    return None
