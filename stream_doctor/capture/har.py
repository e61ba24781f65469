"""HAR 1.2 files: what browser devtools, mitmproxy and HTTP proxies export (http://www.softwareishard.com/blog/har-12-spec/).

``log.entries[]`` each hold a ``request`` (``method``, ``url``, ``headers``, ``postData.text``) and
a ``response`` (``status``, ``headers``, ``content.text``, base64 when ``content.encoding`` says
so). An entry that is an LLM call becomes a request frame and its response body's frames (see
``exchange``); any other entry (a page, a script, telemetry) is skipped and counted. A response
body is one JSON string on one line of the file, so every frame of an entry points at that line.
"""

from __future__ import annotations

import base64
import binascii
import re
from typing import TYPE_CHECKING, Any

import orjson

from stream_doctor.capture._text import json_error
from stream_doctor.capture.base import Capture, CaptureError, Exchange, Pos

if TYPE_CHECKING:
    from stream_doctor.capture._text_places import Source
    from stream_doctor.capture.exchange import Exchanges

_START = re.compile(rb'\A(?:\xef\xbb\xbf)?\s*\{\s*"log"\s*:')


def _sniff(head: bytes) -> tuple[int, str]:
    if _START.match(head):
        return 95, ""
    return 0, 'does not start with {"log": (not a HAR file)'


def _wanted(path: tuple[str | int, ...]) -> bool:
    size = len(path)
    if size < 3 or path[0] != "log" or path[1] != "entries":
        return False
    if size == 3:
        return True
    return path[3:] in (("request",), ("response", "content", "text"), ("request", "postData", "text"))


def read_har(data: bytes, path: str) -> Capture:
    # Imported here: sniffing (what `check` does to every file of a folder) needs none of it.
    from stream_doctor.capture._text_places import Source, json_places
    from stream_doctor.capture.exchange import Exchanges

    try:
        document = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise CaptureError(f"not a readable HAR file: {json_error(exc)}", line=exc.lineno) from None
    log = document.get("log") if isinstance(document, dict) else None
    entries = log.get("entries") if isinstance(log, dict) else None
    if not isinstance(entries, list):
        raise CaptureError("not a HAR file: no log.entries list")
    source = Source(data)
    places = json_places(data, _wanted)
    collected = Exchanges(path)
    for number, entry in enumerate(entries, 1):
        index = number - 1
        start = places.get(("log", "entries", index, "request"), places.get(("log", "entries", index), 0))
        pos = Pos(0, source.line_of(start), start)
        _entry(collected, source, places, number, entry, pos)
    return collected.capture(READER.name, len(data))


def _entry(collected: Exchanges, source: Source, places: dict[Any, int], number: int, entry: Any, pos: Pos) -> None:
    from stream_doctor.capture.exchange import Fixed, header, is_llm_call, redact_headers, redact_url, request_body

    fallback = Fixed(pos.line, pos.offset)
    if not isinstance(entry, dict):
        collected.add(
            Exchange(number, pos, None, None, None, None, skipped="not an entry object"), {}, None, None, fallback
        )
        return
    request = _dict(entry.get("request"))
    response = _dict(entry.get("response"))
    method = request.get("method") if isinstance(request.get("method"), str) else None
    raw_url = request.get("url")
    url = redact_url(raw_url) if isinstance(raw_url, str) else None
    headers = redact_headers(_pairs(request.get("headers")))
    post = _dict(request.get("postData"))
    text = post.get("text")
    if isinstance(text, str) and post.get("encoding") == "base64":
        text = _base64(text)
    body = request_body(text)
    response_headers = redact_headers(_pairs(response.get("headers")))
    content = _dict(response.get("content"))
    content_type = content.get("mimeType") if isinstance(content.get("mimeType"), str) else None
    content_type = content_type or header(response_headers, "content-type")
    status = response.get("status") if isinstance(response.get("status"), int) else None
    skipped = is_llm_call(method, url, body, content_type)
    exchange = Exchange(number, pos, method, url, status, None, skipped=skipped)
    raw = content.get("text")
    payload: bytes | None = None
    if isinstance(raw, str):
        payload = _base64(raw) if content.get("encoding") == "base64" else raw.encode("utf-8", "surrogatepass")
    index = number - 1
    where = places.get(("log", "entries", index, "response", "content", "text"))
    place = Fixed(source.line_of(where), where + 1) if where is not None else fallback
    # Browsers and proxies store the body decoded, whatever content-encoding says; gzip bytes left as they
    # came are still recognised by their magic number.
    value = {"method": method, "url": url, "headers": headers, "body": body}
    collected.add(exchange, value, payload, content_type, place)


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _pairs(headers: Any) -> list[tuple[Any, Any]]:
    if not isinstance(headers, list):
        return []
    return [(h.get("name"), h.get("value")) for h in headers if isinstance(h, dict)]


def _base64(text: str) -> bytes:
    try:
        return base64.b64decode(text)
    except (binascii.Error, ValueError):
        return text.encode("utf-8", "surrogatepass")


class HarReader:
    """Reader for HAR 1.2 files (browser devtools, mitmproxy, proxy exports)."""

    name = "har"
    title = "HAR 1.2 (browser devtools, mitmproxy, proxies)"

    def sniff(self, head: bytes) -> int:
        return _sniff(head)[0]

    def reject_reason(self, head: bytes) -> str:
        """Why ``sniff`` gave 0, for the "could not recognise" message."""
        return _sniff(head)[1]

    def read(self, data: bytes, path: str) -> Capture:
        return read_har(data, path)


READER = HarReader()
