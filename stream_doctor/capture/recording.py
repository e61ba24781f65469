"""JSON recordings of HTTP exchanges written by test recorders other than vcrpy and Polly.

Two shapes:

- **one exchange** ``{"request": {method, url, headers, body}, "response": {status, headers, body}}``,
  as ddapm-test-agent (dd-trace-py's cassettes) writes one file per request; ``status`` may be a
  number or ``{"code", "message"}``.
- **nock** (``nock.recorder.rec({output_objects: true})``, ``nockBack`` fixtures): a JSON array of
  ``{scope, method, path, body, status, response, rawHeaders | headers, responseIsBinary}``. A text
  response is a string; a binary one (gzip, an event stream) is hex: one string with
  ``responseIsBinary: true``, or, in older nock, a list of hex chunks.

Each exchange that is an LLM call becomes a request frame and its response body's frames, like a
HAR entry or a cassette interaction (see ``exchange``). A body is one JSON string on one line of
the file, so every frame of an exchange points at that line.
"""

from __future__ import annotations

import binascii
import re
from typing import TYPE_CHECKING, Any

import orjson

from stream_doctor.capture._text import json_error
from stream_doctor.capture.base import Capture, CaptureError, Exchange, Pos

if TYPE_CHECKING:
    from stream_doctor.capture._text_places import Source
    from stream_doctor.capture.exchange import Exchanges

_ONE_EXCHANGE = re.compile(rb'\A(?:\xef\xbb\xbf)?\s*\{\s*"(?:request|response)"\s*:')
_ARRAY_OF_OBJECTS = re.compile(rb"\A(?:\xef\xbb\xbf)?\s*\[\s*\{")
_HEX = re.compile(r"\A(?:[0-9a-fA-F]{2})+\Z")


def _json_lines(head: bytes) -> bool:
    """The head is JSON lines whose first object merely starts with a "response" key (openai-python's
    ``responses.stream()`` events dumped one per line: ``{"response": {…}, "type": "response.created"}``)."""
    first, newline, rest = head.partition(b"\n")
    if not newline or not rest.lstrip().startswith(b"{"):
        return False
    try:
        return isinstance(orjson.loads(first), dict)
    except orjson.JSONDecodeError:
        return False


def _sniff(head: bytes) -> tuple[int, str]:
    if (_ONE_EXCHANGE.match(head) and not _json_lines(head)) or (
        _ARRAY_OF_OBJECTS.match(head) and b'"scope"' in head[:8192]
    ):
        return 95, ""
    return 0, 'neither {"request": …, "response": …} nor a nock array of {"scope": …}'


def read_recording(data: bytes, path: str) -> Capture:
    from stream_doctor.capture._text_places import Source, json_places
    from stream_doctor.capture.exchange import Exchanges

    try:
        document = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise CaptureError(f"not a readable JSON recording: {json_error(exc)}", line=exc.lineno) from None
    source = Source(data)
    collected = Exchanges(path)
    if isinstance(document, dict):
        places = json_places(data, lambda p: p in (("request",), ("response", "body")))
        _one(collected, source, places, (), 1, document)
    elif isinstance(document, list):
        places = json_places(data, lambda p: len(p) == 1 or (len(p) == 2 and p[1] == "response"))
        for number, entry in enumerate(document, 1):
            _nock(collected, source, places, number, entry)
    else:
        raise CaptureError("not a JSON recording: neither an object nor an array")
    return collected.capture(READER.name, len(data))


def _one(
    collected: Exchanges, source: Source, places: dict[Any, int], prefix: tuple[Any, ...], number: int, value: Any
) -> None:
    from stream_doctor.capture.exchange import header, is_llm_call, redact_headers, redact_url, request_body

    request = _dict(value.get("request"))
    response = _dict(value.get("response"))
    start = places.get((*prefix, "request"), 0)
    pos = Pos(0, source.line_of(start), start)
    method = _str(request.get("method"))
    url = redact_url(_str(request.get("url") or request.get("uri")) or "")
    headers = redact_headers(_header_items(request.get("headers")))
    body = request_body(request.get("body"))
    response_headers = redact_headers(_header_items(response.get("headers")))
    status = _status(response.get("status", response.get("status_code")))
    content_type = header(response_headers, "content-type")
    exchange = Exchange(number, pos, method, url, status, None, skipped=is_llm_call(method, url, body, content_type))
    raw = response.get("body")
    payload = raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else None
    if isinstance(raw, (dict, list)):
        payload = orjson.dumps(raw)  # a whole JSON reply, not a stream
    where = places.get((*prefix, "response", "body"))
    _add(collected, source, exchange, {"method": method, "url": url, "headers": headers, "body": body}, payload,
         content_type, where, pos, header(response_headers, "content-encoding"))  # fmt: skip


def _nock(collected: Exchanges, source: Source, places: dict[Any, int], number: int, entry: Any) -> None:
    from stream_doctor.capture.exchange import header, is_llm_call, redact_headers, redact_url, request_body

    start = places.get((number - 1,), 0)
    pos = Pos(0, source.line_of(start), start)
    if not isinstance(entry, dict):
        collected.add(
            Exchange(number, pos, None, None, None, None, skipped="not a nock definition object"),
            {},
            None,
            None,
            _fixed(pos),
        )
        return
    method = _str(entry.get("method")) or "GET"
    url = redact_url((_str(entry.get("scope")) or "") + (_str(entry.get("path")) or ""))
    body = request_body(entry.get("body"))
    raw_headers = entry.get("rawHeaders")
    if isinstance(raw_headers, list):  # nock's flat [name, value, name, value, …]
        items = list(zip(raw_headers[0::2], raw_headers[1::2], strict=False))
    else:
        items = _header_items(entry.get("headers"))
    response_headers = redact_headers(items)
    content_type = header(response_headers, "content-type")
    exchange = Exchange(
        number, pos, method.upper(), url, _status(entry.get("status")), None,
        skipped=is_llm_call(method, url, body, content_type),
    )  # fmt: skip
    payload = _nock_body(entry.get("response"), entry.get("responseIsBinary") is True)
    where = places.get((number - 1, "response"))
    value = {"method": method.upper(), "url": url, "headers": {}, "body": body}
    _add(
        collected,
        source,
        exchange,
        value,
        payload,
        content_type,
        where,
        pos,
        header(response_headers, "content-encoding"),
    )


def _nock_body(response: Any, binary: bool) -> bytes | None:
    """A nock response as bytes: hex (one string marked binary, or a list of hex chunks), text, or JSON."""
    if isinstance(response, list) and response and all(isinstance(c, str) and _HEX.match(c) for c in response):
        return b"".join(binascii.unhexlify(c) for c in response)
    if isinstance(response, str):
        if binary and _HEX.match(response):
            return binascii.unhexlify(response)
        return response.encode("utf-8", "surrogatepass")
    if isinstance(response, (dict, list)):
        return orjson.dumps(response)
    return None


def _add(
    collected: Exchanges,
    source: Source,
    exchange: Exchange,
    value: dict[str, Any],
    payload: bytes | None,
    content_type: str | None,
    where: int | None,
    pos: Pos,
    recorded_encoding: str | None,
) -> None:
    from stream_doctor.capture.exchange import Fixed

    place = Fixed(source.line_of(where), where + 1) if where is not None else _fixed(pos)
    compressed = payload is not None and payload.startswith(b"\x1f\x8b")
    encoding = recorded_encoding if compressed else None
    collected.add(exchange, value, payload, content_type, place, encoding, None if compressed else recorded_encoding)


def _fixed(pos: Pos) -> Any:
    from stream_doctor.capture.exchange import Fixed

    return Fixed(pos.line, pos.offset)


def _header_items(headers: Any) -> list[tuple[Any, Any]]:
    if isinstance(headers, dict):
        return list(headers.items())
    if isinstance(headers, list):  # [{name, value}] or [[name, value]]
        pairs = []
        for item in headers:
            if isinstance(item, dict):
                pairs.append((item.get("name"), item.get("value")))
            elif isinstance(item, (list, tuple)) and len(item) == 2:
                pairs.append((item[0], item[1]))
        return pairs
    return []


def _status(status: Any) -> int | None:
    if isinstance(status, dict):
        status = status.get("code")
    if isinstance(status, bool):
        return None
    if isinstance(status, int):
        return status
    if isinstance(status, str) and status.split() and status.split()[0].isdigit():
        return int(status.split()[0])
    return None


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


class RecordingReader:
    """Reader for JSON recordings of exchanges: one-exchange wrappers and nock recordings."""

    name = "recording"
    title = "JSON recordings (one-exchange {request, response} wrappers, nock)"

    def sniff(self, head: bytes) -> int:
        return _sniff(head)[0]

    def reject_reason(self, head: bytes) -> str:
        return _sniff(head)[1]

    def read(self, data: bytes, path: str) -> Capture:
        return read_recording(data, path)


READER = RecordingReader()
