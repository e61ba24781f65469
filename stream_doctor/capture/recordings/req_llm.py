"""ReqLLM transcripts (Elixir's ``req_llm``, ``ReqLLM.Test.Transcript``: its fixtures under
``test/support/fixtures/<provider>/<model>/``): one exchange, ``{"request": {method, url, headers,
canonical_json, body: {"b64"}}, "response": {status, headers, body}}`` plus, for a stream, ``chunks``
(each ``{"b64"}``, or a plain string in the older files) or ``events``
(``{"type": "status" | "headers" | "data" | "done", …}``, ``data`` carrying ``b64``), and
``captured_at``/``provider``/``model_spec``; a whole reply is ``response.body`` (JSON, or ``{"b64"}``).
The stream is the chunks' bytes joined, as ReqLLM replays them. Its first transcripts are one-exchange
wrappers (``one_exchange.py``) whose ``response.body`` is ``{"b64"}`` (the bytes, stream or reply) and
whose ``request.body`` is ``{"b64"}`` beside ``canonical_json``: read as those bytes and that JSON.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import orjson

from stream_doctor.capture._base64_text import b64
from stream_doctor.capture.base import Exchange, Pos
from stream_doctor.capture.recordings._shared import add, as_dict, as_str, header_items, status

if TYPE_CHECKING:
    from stream_doctor.capture._text_places import Source
    from stream_doctor.capture.http_frames import Exchanges

#: Jason writes the keys sorted, so a transcript opens with ``captured_at`` then ``chunks`` (or ``events``),
#: or with ``model_spec`` then ``provider`` (a whole reply)
_START = re.compile(
    rb'\A(?:\xef\xbb\xbf)?\s*\{\s*(?:"captured_at"\s*:\s*"[^"\\]{0,64}"\s*,\s*"(?:chunks|events)"\s*:\s*\['
    rb'|"model_spec"\s*:\s*"[^"\\]{0,256}"\s*,\s*"provider"\s*:)'
)


def sniff(head: bytes) -> bool:
    return bool(_START.match(head))


def reads(data: bytes, document: Any) -> bool:
    return isinstance(document, dict) and bool(_START.match(data))


def exchanges(data: bytes, document: Any, source: Source, collected: Exchanges) -> Iterator[None]:
    """One exchange whose stream is its chunks' bytes joined (see the module's docstring)."""
    from stream_doctor.capture._text_places import json_places
    from stream_doctor.capture.http_frames import header, is_llm_call, redact_headers, redact_url, request_body

    places = json_places(data, lambda p: p in (("request",), ("response",)))
    request = as_dict(document.get("request"))
    response = as_dict(document.get("response"))
    start = places.get(("request",), 0)
    pos = Pos(0, source.line_of(start), start)
    method = as_str(request.get("method"))
    url = redact_url(as_str(request.get("url")) or "")
    headers = redact_headers(header_items(request.get("headers")))
    canonical = request.get("canonical_json")
    body = request_body(canonical if canonical is not None else b64(request.get("body"), "request body"))
    got_status, response_headers, payload = _response(document, response)
    content_type = header(response_headers, "content-type")
    exchange = Exchange(1, pos, method, url, got_status, None, skipped=is_llm_call(method, url, body, content_type))
    value = {"method": method, "url": url, "headers": headers, "body": body}
    encoding = header(response_headers, "content-encoding")
    add(collected, source, exchange, value, payload, content_type, places.get(("response",)), pos, encoding)
    yield


def _response(document: dict[str, Any], response: dict[str, Any]) -> tuple[int | None, Any, bytes | None]:
    """The status, the redacted headers and the body: the chunks joined, the data events joined (a status or
    headers event replacing the response's), or the whole reply."""
    from stream_doctor.capture.http_frames import redact_headers

    got_status = status(response.get("status"))
    headers = redact_headers(header_items(response.get("headers")))
    if isinstance(document.get("chunks"), list):
        return got_status, headers, b"".join(b64(chunk, f"chunk {n}") for n, chunk in enumerate(document["chunks"], 1))
    if isinstance(document.get("events"), list):
        payload = b""
        for n, event in enumerate(document["events"], 1):
            event = as_dict(event)
            if event.get("type") == "data":
                payload += b64(event, f"event {n}")
            elif event.get("type") == "status":
                got_status = status(event.get("value"))
            elif event.get("type") == "headers":
                headers = redact_headers(header_items(event.get("value")))
        return got_status, headers, payload
    raw = response.get("body")
    if isinstance(raw, dict) and isinstance(raw.get("b64"), str):
        return got_status, headers, b64(raw, "response body")
    if isinstance(raw, (dict, list)):
        return got_status, headers, orjson.dumps(raw)  # a whole JSON reply, not a stream
    return got_status, headers, raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else None
