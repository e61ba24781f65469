"""One exchange a file, ``{"request": {method, url, headers, body}, "response": {status, headers, body}}``: as
ddapm-test-agent (dd-trace-py's cassettes) writes one file per request. ``status`` may be a number or
``{"code", "message"}``; a body with a NUL byte (an AWS event stream) or not UTF-8 is ``"base64:"`` and
the bytes in base64. llama-stack's recordings have this shape too, after a ``test_id``: their streamed
``response.body`` is a list of the SDK's chunk objects, each ``{"__type__", "__data__"}`` (the OpenAI
SDK's models) or a plain dict (google-genai's), read as one JSON Lines stream of the chunks. Mastra's
recordings (``mastra.py``) are each this shape too, with a body kept as ``chunks``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import orjson

from stream_doctor.capture._base64_text import b64, is_b64
from stream_doctor.capture.base import Exchange, Pos
from stream_doctor.capture.recordings import _sdk_chunks
from stream_doctor.capture.recordings._shared import Places, add, as_dict, as_str, header_items, status

if TYPE_CHECKING:
    from stream_doctor.capture._text_places import Source
    from stream_doctor.capture.http_frames import Exchanges

_START = re.compile(rb'\A(?:\xef\xbb\xbf)?\s*\{\s*"(?:request|response)"\s*:')
#: llama-stack: ``{"test_id": "…", "request": {…}, "response": {…}}``
_TEST_ID_START = re.compile(
    rb'\A(?:\xef\xbb\xbf)?\s*\{\s*"test_id"\s*:\s*(?:"(?:[^"\\]|\\.)*"|null)\s*,\s*"request"\s*:'
)


def json_lines(head: bytes) -> bool:
    """The head is JSON lines whose first object merely starts with a "response" key (openai-python's
    ``responses.stream()`` events dumped one per line: ``{"response": {…}, "type": "response.created"}``)."""
    first, newline, rest = head.partition(b"\n")
    if not newline or not rest.lstrip().startswith(b"{"):
        return False
    try:
        return isinstance(orjson.loads(first), dict)
    except orjson.JSONDecodeError:
        return False


def sniff(head: bytes) -> bool:
    return bool(_START.match(head) and not json_lines(head)) or bool(_TEST_ID_START.match(head))


def reads(data: bytes, document: Any) -> bool:
    return isinstance(document, dict)


def exchanges(data: bytes, document: Any, source: Source, collected: Exchanges) -> Iterator[None]:
    from stream_doctor.capture._text_places import json_places

    places = json_places(
        data, lambda p: p in (("request",), ("response", "body")) or (len(p) == 3 and p[:2] == ("response", "body"))
    )
    exchange(collected, source, places, (), 1, document)
    yield


def exchange(
    collected: Exchanges, source: Source, places: Places, prefix: tuple[Any, ...], number: int, value: Any
) -> None:
    """The exchange ``value`` (at ``prefix`` in the file's JSON)."""
    from stream_doctor.capture.http_frames import header, is_llm_call, redact_headers

    request = as_dict(value.get("request"))
    response = as_dict(value.get("response"))
    start = places.get((*prefix, "request"), 0)
    pos = Pos(0, source.line_of(start), start)
    sent = _request(request, collected)
    response_headers = redact_headers(header_items(response.get("headers")))
    content_type = header(response_headers, "content-type")
    skipped = is_llm_call(sent["method"], sent["url"], sent["body"], content_type)
    got_status = status(response.get("status", response.get("status_code")))
    got = Exchange(
        number, pos, sent["method"], sent["url"], got_status, None, skipped=skipped, response_headers=response_headers
    )
    raw = response.get("body")
    body_key = "body"
    chunks = response.get("chunks")
    if raw is None and isinstance(chunks, list) and all(isinstance(chunk, str) for chunk in chunks):
        raw, body_key = "".join(chunks), "chunks"  # Mastra's llm-recorder: the stream's text as read, in order
    if _sdk_chunks.is_chunk_list(raw):  # llama-stack: the stream as the SDK's chunk objects, one per item
        starts = [places.get((*prefix, "response", "body", i)) for i in range(len(raw))]
        lines, place = _sdk_chunks.chunk_lines(raw, source, starts)
        collected.add(got, sent, lines, _sdk_chunks.NDJSON, place)
        return
    where = places.get((*prefix, "response", body_key))
    encoding = header(response_headers, "content-encoding")
    add(collected, source, got, sent, _payload(raw), content_type, where, pos, encoding)


def _request(request: dict[str, Any], collected: Exchanges) -> dict[str, Any]:
    """The request as a request frame holds it: method, URL and headers redacted, body."""
    from stream_doctor.capture.http_frames import redact_headers, redact_url, request_body

    body = request_body(request.get("body"), collected.budget)
    if is_b64(request.get("body")):  # ReqLLM's older transcripts (JSON beside it), a test agent's binary body
        body = request_body(request.get("canonical_json", b64(request["body"], "request body")), collected.budget)
    url = redact_url(as_str(request.get("url") or request.get("uri")) or "")
    headers = redact_headers(header_items(request.get("headers")))
    return {"method": as_str(request.get("method")), "url": url, "headers": headers, "body": body}


def _payload(raw: Any) -> bytes | None:
    """A recorded response body as its bytes: text, base64 bytes or a whole JSON reply."""
    if is_b64(raw):  # ReqLLM's older transcripts, a test agent's binary body (an event stream): the bytes
        return b64(raw, "response body")
    if isinstance(raw, (dict, list)):
        return orjson.dumps(_sdk_chunks.sdk_data(raw))  # a whole JSON reply, not a stream
    return raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else None
