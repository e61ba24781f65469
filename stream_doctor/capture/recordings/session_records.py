"""SessionRecords, the .NET test recorder's files (``System.ClientModel`` and the Azure SDKs):
``{"Entries": [{RequestUri, RequestMethod, RequestHeaders, RequestBody, StatusCode, ResponseHeaders,
ResponseBody}], "Variables"}``; a streamed ``ResponseBody`` is a list of the body's lines (SSE lines, each
with its line end), a whole reply a JSON value."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import orjson

from stream_doctor.capture.base import Exchange, Pos
from stream_doctor.capture.recordings._shared import Places, add, as_str, fixed, header_items, skipped, status

if TYPE_CHECKING:
    from stream_doctor.capture._text_places import Source
    from stream_doctor.capture.http_frames import Exchanges

_START = re.compile(rb'\A(?:\xef\xbb\xbf)?\s*\{\s*"Entries"\s*:\s*\[')


def sniff(head: bytes) -> bool:
    return bool(_START.match(head))


def reads(data: bytes, document: Any) -> bool:
    return isinstance(document, dict) and isinstance(document.get("Entries"), list)


def exchanges(data: bytes, document: Any, source: Source, collected: Exchanges) -> Iterator[None]:
    from stream_doctor.capture._text_places import json_places

    places = json_places(data, lambda p: len(p) <= 2 or (len(p) == 4 and p[2] == "ResponseBody"))
    for number, entry in enumerate(document["Entries"], 1):
        _entry(collected, source, places, number, entry)
        yield


def _entry(collected: Exchanges, source: Source, places: Places, number: int, entry: Any) -> None:
    from stream_doctor.capture.http_frames import header, is_llm_call, redact_headers, redact_url, request_body

    start = places.get(("Entries", number - 1), 0)
    pos = Pos(0, source.line_of(start), start)
    if not isinstance(entry, dict):
        skipped(collected, number, pos, "not a SessionRecords entry")
        return
    method = as_str(entry.get("RequestMethod")) or "GET"
    url = redact_url(as_str(entry.get("RequestUri")) or "")
    headers = redact_headers(header_items(entry.get("RequestHeaders")))
    body = request_body(entry.get("RequestBody"), collected.budget)
    response_headers = redact_headers(header_items(entry.get("ResponseHeaders")))
    content_type = header(response_headers, "content-type")
    exchange = Exchange(number, pos, method.upper(), url, status(entry.get("StatusCode")), None,
                        skipped=is_llm_call(method, url, body, content_type))  # fmt: skip
    value = {"method": method.upper(), "url": url, "headers": headers, "body": body}
    raw = entry.get("ResponseBody")
    if isinstance(raw, list) and raw and all(isinstance(line, str) for line in raw):
        lines, place = _body_lines(raw, source, places, number, pos)
        collected.add(exchange, value, lines, content_type, place)
        return
    payload = raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else None
    if isinstance(raw, (dict, list)):
        payload = orjson.dumps(raw)
    where = places.get(("Entries", number - 1, "ResponseBody"))
    add(
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


def _body_lines(raw: list[str], source: Source, places: Places, number: int, pos: Pos) -> tuple[bytes, Any]:
    """The body's lines, each a JSON string on a line of the file: a frame points at its line."""
    from stream_doctor.capture.http_frames import Folded

    parts = [line.encode("utf-8", "surrogatepass") for line in raw]
    body_offsets, file_lines, file_offsets = [], [], []
    at = 0
    for index, part in enumerate(parts):
        where = places.get(("Entries", number - 1, "ResponseBody", index))
        if where is not None:
            body_offsets.append(at)
            file_lines.append(source.line_of(where))
            file_offsets.append(where)
        at += len(part)
    place = Folded(body_offsets, file_lines, file_offsets) if body_offsets else fixed(pos)
    return b"".join(parts), place
