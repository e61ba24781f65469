"""JSON recordings of HTTP exchanges written by test recorders other than vcrpy and Polly.

The shapes:

- **one exchange** ``{"request": {method, url, headers, body}, "response": {status, headers, body}}``,
  as ddapm-test-agent (dd-trace-py's cassettes) writes one file per request; ``status`` may be a
  number or ``{"code", "message"}``; a body with a NUL byte (an AWS event stream) or not UTF-8 is
  ``"base64:"`` and the bytes in base64. llama-stack's recordings have this shape too, after a ``test_id``:
  their streamed ``response.body`` is a list of the SDK's chunk objects, each ``{"__type__", "__data__"}``
  (the OpenAI SDK's models) or a plain dict (google-genai's), read as one JSON Lines stream of the chunks.
- **SessionRecords** (the .NET test recorder of ``System.ClientModel`` and the Azure SDKs):
  ``{"Entries": [{RequestUri, RequestMethod, RequestHeaders, RequestBody, StatusCode, ResponseHeaders,
  ResponseBody}], "Variables"}``; a streamed ``ResponseBody`` is a list of the body's lines (SSE lines,
  each with its line end), a whole reply a JSON value.
- **one response** ``{"status", "headers", "body"}`` (keys in any order; ``statusCode`` too): a test suite's
  recording of one streamed response with no request, its ``body`` the SSE (or NDJSON) text.
- **httprr** (Go's ``golang.org/x/oscar/internal/httprr``, langchaingo's recordings): ``httprr trace v1``,
  then per exchange a line ``<request bytes> <response bytes>`` and the raw HTTP/1.1 request and response
  (headers, blank line, body; a body may be sent chunked).
- **gemini-cli's fake responses** (``*.responses``): JSON Lines, one SDK call a line,
  ``{"method": "generateContentStream", "response": [chunk, …]}`` (a stream) or
  ``{"method": "generateContent", "response": {…}}`` (a whole reply); no request is recorded.
- **ReqLLM transcripts** (Elixir's ``req_llm``, ``ReqLLM.Test.Transcript``: its fixtures under
  ``test/support/fixtures/<provider>/<model>/``): one exchange, ``{"request": {method, url, headers,
  canonical_json, body: {"b64"}}, "response": {status, headers, body}}`` plus, for a stream, ``chunks``
  (each ``{"b64"}``, or a plain string in the older files) or ``events``
  (``{"type": "status" | "headers" | "data" | "done", …}``, ``data`` carrying ``b64``), and
  ``captured_at``/``provider``/``model_spec``; a whole reply is ``response.body`` (JSON, or ``{"b64"}``).
  The stream is the chunks' bytes joined, as ReqLLM replays them. Its first transcripts are
  one-exchange wrappers whose ``response.body`` is ``{"b64"}`` (the bytes, stream or reply) and
  whose ``request.body`` is ``{"b64"}`` beside ``canonical_json``: read as those bytes and that JSON.
- **nock** (``nock.recorder.rec({output_objects: true})``, ``nockBack`` fixtures): a JSON array of
  ``{scope, method, path, body, status, response, rawHeaders | headers, responseIsBinary}``;
  ``rawHeaders`` a flat ``[name, value, …]`` list, or an object from nock 14. A text response is a string;
  a binary one (an event stream) is hex: one string with ``responseIsBinary: true``; a content-encoded
  one is a list of hex chunks, still compressed (nock 14 compresses again what fetch decoded).
- **Mastra's llm-recorder** (``__recordings__/*.json``): ``{"meta": {…}, "recordings": [...]}`` or, in older
  files, the bare array; each recording ``{hash, request: {url, method, body, timestamp}, response: {status,
  statusText, headers, body | chunks, chunkTimings, isStreaming}}``, a streamed body kept as ``chunks``, the
  text of each read off the wire in order (a chunk may end inside an event), a whole reply as ``body``.

Each exchange that is an LLM call becomes a request frame and its response body's frames, like a
HAR entry or a cassette interaction (see ``exchange``). A body is one JSON string on one line of
the file, so every frame of an exchange points at that line.
"""

from __future__ import annotations

import binascii
import re
from typing import TYPE_CHECKING, Any, TypeGuard

import orjson

from stream_doctor.capture._base64_text import b64, is_b64
from stream_doctor.capture._text import json_error
from stream_doctor.capture.base import Capture, CaptureError, Exchange, Pos
from stream_doctor.capture.limits import Budget

if TYPE_CHECKING:
    from stream_doctor.capture._text_places import Source
    from stream_doctor.capture.exchange import BodyPlace, Exchanges

_ONE_EXCHANGE = re.compile(rb'\A(?:\xef\xbb\xbf)?\s*\{\s*"(?:request|response)"\s*:')
#: llama-stack: ``{"test_id": "…", "request": {…}, "response": {…}}``
_TEST_ID_EXCHANGE = re.compile(
    rb'\A(?:\xef\xbb\xbf)?\s*\{\s*"test_id"\s*:\s*(?:"(?:[^"\\]|\\.)*"|null)\s*,\s*"request"\s*:'
)
#: one response: an object that opens with one of its keys
_ONE_RESPONSE = re.compile(rb'\A(?:\xef\xbb\xbf)?\s*\{\s*"(?:status|statusCode|headers|body)"\s*:')
_SESSION_RECORDS = re.compile(rb'\A(?:\xef\xbb\xbf)?\s*\{\s*"Entries"\s*:\s*\[')
_HTTPRR = re.compile(rb"\Ahttprr trace v1\r?\n")
_HTTPRR_SIZES = re.compile(rb"(\d{1,12}) (\d{1,12})\r?\n")
#: gemini-cli: a line ``{"method": "generateContent…", "response": …}``
_GEMINI_CLI_LINE = re.compile(rb'\A(?:\xef\xbb\xbf)?\{"method"\s*:\s*"[A-Za-z]+"\s*,\s*"response"\s*:')
_ARRAY_OF_OBJECTS = re.compile(rb"\A(?:\xef\xbb\xbf)?\s*\[\s*\{")
#: ReqLLM: Jason writes the keys sorted, so a transcript opens with ``captured_at`` then ``chunks``
#: (or ``events``), or with ``model_spec`` then ``provider`` (a whole reply)
_REQ_LLM = re.compile(
    rb'\A(?:\xef\xbb\xbf)?\s*\{\s*(?:"captured_at"\s*:\s*"[^"\\]{0,64}"\s*,\s*"(?:chunks|events)"\s*:\s*\['
    rb'|"model_spec"\s*:\s*"[^"\\]{0,256}"\s*,\s*"provider"\s*:)'
)
#: Mastra's llm-recorder: ``[{"hash": "…", "request": …}]``, or ``{"meta": {…}, "recordings": […]}``
_MASTRA_ARRAY = re.compile(rb'\A(?:\xef\xbb\xbf)?\s*\[\s*\{\s*"hash"\s*:\s*"[^"\\]*"\s*,\s*"request"\s*:')
_MASTRA_FILE = re.compile(rb'\A(?:\xef\xbb\xbf)?\s*\{\s*"meta"\s*:\s*\{[^{}]*\}\s*,\s*"recordings"\s*:\s*\[')
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
    if (
        (_ONE_EXCHANGE.match(head) and not _json_lines(head))
        or _TEST_ID_EXCHANGE.match(head)
        or _SESSION_RECORDS.match(head)
        or (_ONE_RESPONSE.match(head) and b'"body"' in head and not _json_lines(head))
        or _GEMINI_CLI_LINE.match(head)
        or _HTTPRR.match(head)
        or (_ARRAY_OF_OBJECTS.match(head) and b'"scope"' in head[:8192])
        or _REQ_LLM.match(head)
        or _MASTRA_ARRAY.match(head)
        or _MASTRA_FILE.match(head)
    ):
        return 95, ""
    return 0, (
        'neither {"request": …, "response": …}, {"Entries": […]}, {"method": …, "response": …} lines, '
        '{"status", "headers", "body"}, an httprr trace, a ReqLLM transcript, a nock array of {"scope": …} nor '
        'Mastra\'s {"meta": …, "recordings": […]}'
    )


def read_recording(data: bytes, path: str) -> Capture:
    from stream_doctor.capture._text_places import Source, json_places
    from stream_doctor.capture.exchange import Exchanges

    if _GEMINI_CLI_LINE.match(data):
        return _read_gemini_cli(data, path)
    if _HTTPRR.match(data):
        return _read_httprr(data, path)
    try:
        document = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise CaptureError(f"not a readable JSON recording: {json_error(exc)}", line=exc.lineno) from None
    source = Source(data)
    collected = Exchanges(path, budget=Budget(used=len(data)))
    if isinstance(document, dict) and isinstance(document.get("Entries"), list):
        places = json_places(data, lambda p: len(p) <= 2 or (len(p) == 4 and p[2] == "ResponseBody"))
        for number, entry in enumerate(document["Entries"], 1):
            _session_record(collected, source, places, number, entry)
    elif isinstance(document, dict) and _REQ_LLM.match(data):
        _transcript(collected, source, document, json_places(data, lambda p: p in (("request",), ("response",))))
    elif _mastra(document):
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
                _one(collected, source, places, (*prefix, number - 1), number, entry)
            else:
                start = places.get((*prefix, number - 1), 0)
                _skipped(collected, number, Pos(0, source.line_of(start), start), "not a recording object")
    elif isinstance(document, dict) and "request" not in document and "response" not in document:
        _one_response(collected, source, document, json_places(data, lambda p: p == ("body",)))
    elif isinstance(document, dict):
        places = json_places(
            data, lambda p: p in (("request",), ("response", "body")) or (len(p) == 3 and p[:2] == ("response", "body"))
        )
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
    body = request_body(request.get("body"), collected.budget)
    if is_b64(request.get("body")):  # ReqLLM's older transcripts (JSON beside it), a test agent's binary body
        body = request_body(request.get("canonical_json", b64(request["body"], "request body")), collected.budget)
    response_headers = redact_headers(_header_items(response.get("headers")))
    status = _status(response.get("status", response.get("status_code")))
    content_type = header(response_headers, "content-type")
    skipped = is_llm_call(method, url, body, content_type)
    exchange = Exchange(number, pos, method, url, status, None, skipped=skipped, response_headers=response_headers)
    raw = response.get("body")
    body_key = "body"
    chunks = response.get("chunks")
    if raw is None and isinstance(chunks, list) and all(isinstance(chunk, str) for chunk in chunks):
        raw, body_key = "".join(chunks), "chunks"  # Mastra's llm-recorder: the stream's text as read, in order
    value = {"method": method, "url": url, "headers": headers, "body": body}
    if _is_sdk_chunk_list(raw):  # llama-stack: the stream as the SDK's chunk objects, one per item
        lines, place = _chunk_lines(
            raw, source, [places.get((*prefix, "response", "body", i)) for i in range(len(raw))]
        )
        collected.add(exchange, value, lines, _NDJSON, place)
        return
    payload = raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else None
    if is_b64(raw):  # ReqLLM's older transcripts, a test agent's binary body (an event stream): the bytes
        payload = b64(raw, "response body")
    elif isinstance(raw, (dict, list)):
        payload = orjson.dumps(_sdk_data(raw))  # a whole JSON reply, not a stream
    where = places.get((*prefix, "response", body_key))
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


def _transcript(collected: Exchanges, source: Source, document: dict[str, Any], places: dict[Any, int]) -> None:
    """A ReqLLM transcript: one exchange whose stream is its chunks' bytes joined (see the module's docstring)."""
    from stream_doctor.capture.exchange import header, is_llm_call, redact_headers, redact_url, request_body

    request = _dict(document.get("request"))
    response = _dict(document.get("response"))
    start = places.get(("request",), 0)
    pos = Pos(0, source.line_of(start), start)
    method = _str(request.get("method"))
    url = redact_url(_str(request.get("url")) or "")
    headers = redact_headers(_header_items(request.get("headers")))
    canonical = request.get("canonical_json")
    body = request_body(canonical if canonical is not None else b64(request.get("body"), "request body"))
    response_headers = redact_headers(_header_items(response.get("headers")))
    status = _status(response.get("status"))
    payload: bytes | None
    if isinstance(document.get("chunks"), list):
        payload = b"".join(b64(chunk, f"chunk {n}") for n, chunk in enumerate(document["chunks"], 1))
    elif isinstance(document.get("events"), list):
        payload = b""
        for n, event in enumerate(document["events"], 1):
            event = _dict(event)
            if event.get("type") == "data":
                payload += b64(event, f"event {n}")
            elif event.get("type") == "status":
                status = _status(event.get("value"))
            elif event.get("type") == "headers":
                response_headers = redact_headers(_header_items(event.get("value")))
    else:
        raw = response.get("body")
        if isinstance(raw, dict) and isinstance(raw.get("b64"), str):
            payload = b64(raw, "response body")
        elif isinstance(raw, (dict, list)):
            payload = orjson.dumps(raw)  # a whole JSON reply, not a stream
        else:
            payload = raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else None
    content_type = header(response_headers, "content-type")
    exchange = Exchange(1, pos, method, url, status, None, skipped=is_llm_call(method, url, body, content_type))
    value = {"method": method, "url": url, "headers": headers, "body": body}
    where = places.get(("response",))
    encoding = header(response_headers, "content-encoding")
    _add(collected, source, exchange, value, payload, content_type, where, pos, encoding)


#: the content type a list of chunk objects is read as (even a list of one: a stream of one chunk)
_NDJSON = "application/x-ndjson"


def _mastra(document: Any) -> bool:
    """Mastra's llm-recorder file: ``{"meta", "recordings": [...]}``, or the bare array of ``{hash, request, response}``."""
    if isinstance(document, dict):
        return "meta" in document and isinstance(document.get("recordings"), list)
    return (
        isinstance(document, list)
        and bool(document)
        and isinstance(document[0], dict)
        and {"hash", "request", "response"} <= document[0].keys()
    )


def _one_response(collected: Exchanges, source: Source, document: dict[str, Any], places: dict[Any, int]) -> None:
    """A recording of one response and nothing of its request: a turn whose stream is the body."""
    from stream_doctor.capture.exchange import header, redact_headers

    if not isinstance(document.get("body"), str):
        raise CaptureError('not a readable response recording: its "body" is not text')
    headers = redact_headers(_header_items(document.get("headers")))
    status = _status(document.get("status", document.get("statusCode")))
    pos = Pos(0, 1, 0)
    exchange = Exchange(1, pos, None, None, status, None)
    payload = document["body"].encode("utf-8", "surrogatepass")
    _add(collected, source, exchange, {"method": None, "url": None, "headers": {}}, payload,
         header(headers, "content-type"), places.get(("body",)), pos, header(headers, "content-encoding"))  # fmt: skip


def _sdk_data(item: Any) -> Any:
    """An SDK object as recorded, as the wire has it: llama-stack wraps the OpenAI SDK's models as
    ``{"__type__": "openai.types…", "__data__": {…}}``, and dumps google-genai's responses with the
    SDK's snake_case field names and its ``sdk_http_response`` (headers), which the wire spells in
    camelCase (``function_call`` is ``functionCall``) and does not have."""
    if isinstance(item, dict) and "__data__" in item and "__type__" in item:
        return item["__data__"]
    if isinstance(item, dict) and "sdk_http_response" in item:
        return _camel_case({k: v for k, v in item.items() if k != "sdk_http_response"})
    return item


#: google-genai fields whose value is the application's own data, whose keys stay as they are
_USER_DATA = frozenset({"args", "response", "parameters", "response_schema", "response_json_schema"})


def _camel_case(value: Any) -> Any:
    """google-genai's snake_case dump back in the API's camelCase, but for the application's own data."""
    if isinstance(value, list):
        return [_camel_case(item) for item in value]
    if not isinstance(value, dict):
        return value
    out = {}
    for key, item in value.items():
        head, *rest = str(key).split("_")
        out[head + "".join(word[:1].upper() + word[1:] for word in rest)] = (
            item if key in _USER_DATA else _camel_case(item)
        )
    return out


def _is_sdk_chunk_list(raw: Any) -> TypeGuard[list[Any]]:
    """A streamed body recorded as a list of chunk objects (not a JSON array reply of one object)."""
    return isinstance(raw, list) and bool(raw) and all(isinstance(item, dict) for item in raw)


def _chunk_lines(items: list[Any], source: Source, starts: list[int | None]) -> tuple[bytes, BodyPlace]:
    """Chunk objects as a JSON Lines body, each line placed at the file line its object starts on."""
    from stream_doctor.capture.exchange import Folded

    lines = [orjson.dumps(_sdk_data(item)) for item in items]
    body_offsets, file_lines, file_offsets = [], [], []
    at = 0
    for line, start in zip(lines, starts, strict=True):
        if start is not None:
            body_offsets.append(at)
            file_lines.append(source.line_of(start))
            file_offsets.append(start)
        at += len(line) + 1
    if not body_offsets:
        body_offsets, file_lines, file_offsets = [0], [1], [0]
    return b"\n".join(lines) + b"\n", Folded(body_offsets, file_lines, file_offsets)


def _session_record(collected: Exchanges, source: Source, places: dict[Any, int], number: int, entry: Any) -> None:
    """One entry of a .NET SessionRecords file."""
    from stream_doctor.capture.exchange import Folded, header, is_llm_call, redact_headers, redact_url, request_body

    start = places.get(("Entries", number - 1), 0)
    pos = Pos(0, source.line_of(start), start)
    if not isinstance(entry, dict):
        _skipped(collected, number, pos, "not a SessionRecords entry")
        return
    method = _str(entry.get("RequestMethod")) or "GET"
    url = redact_url(_str(entry.get("RequestUri")) or "")
    headers = redact_headers(_header_items(entry.get("RequestHeaders")))
    body = request_body(entry.get("RequestBody"), collected.budget)
    response_headers = redact_headers(_header_items(entry.get("ResponseHeaders")))
    content_type = header(response_headers, "content-type")
    exchange = Exchange(
        number, pos, method.upper(), url, _status(entry.get("StatusCode")), None,
        skipped=is_llm_call(method, url, body, content_type),
    )  # fmt: skip
    value = {"method": method.upper(), "url": url, "headers": headers, "body": body}
    raw = entry.get("ResponseBody")
    if isinstance(raw, list) and raw and all(isinstance(line, str) for line in raw):
        # the body's lines, each a JSON string on a line of the file: a frame points at its line
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
        place: Any = Folded(body_offsets, file_lines, file_offsets) if body_offsets else _fixed(pos)
        collected.add(exchange, value, b"".join(parts), content_type, place)
        return
    payload = raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else None
    if isinstance(raw, (dict, list)):
        payload = orjson.dumps(raw)
    where = places.get(("Entries", number - 1, "ResponseBody"))
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


#: gemini-cli's fake responses: the SDK method of each line, and whether it is a model call
_GEMINI_CLI_CALLS = ("generateContent", "generateContentStream")


def _read_gemini_cli(data: bytes, path: str) -> Capture:
    """gemini-cli's ``*.responses``: one SDK call a line, its response a chunk list (a stream) or one reply."""
    from stream_doctor.capture._text_places import Source, json_places
    from stream_doctor.capture.exchange import Exchanges

    source = Source(data)
    collected = Exchanges(path, budget=Budget(used=len(data)))
    number = 0
    for line_number, start in enumerate(source.starts, 1):
        end = data.find(b"\n", start)
        line = data[start : len(data) if end < 0 else end]
        if not line.strip():
            continue
        number += 1
        pos = Pos(0, line_number, start)
        try:
            entry = orjson.loads(line)
        except orjson.JSONDecodeError as exc:
            raise CaptureError(
                f"not a readable gemini-cli responses line: {json_error(exc)}", line=line_number
            ) from None
        method = _str(entry.get("method")) if isinstance(entry, dict) else None
        skipped = None if method in _GEMINI_CLI_CALLS else f"a {method or 'unnamed'} call, not a model call"
        exchange = Exchange(number, pos, None, method, None, None, skipped=skipped)
        response = entry.get("response") if isinstance(entry, dict) else None
        request: dict[str, Any] = {"method": None, "url": method, "headers": {}}
        if method == "generateContentStream" and _is_sdk_chunk_list(response):
            places = json_places(line, lambda p: len(p) == 2 and p[0] == "response")
            starts = [None if (at := places.get(("response", i))) is None else start + at for i in range(len(response))]
            payload, place = _chunk_lines(response, source, starts)
            collected.add(exchange, request, payload, _NDJSON, place)
        else:  # a whole reply: counted, not a stream
            collected.add(exchange, request, None, None, _fixed(pos))
    return collected.capture(READER.name, len(data))


def _read_httprr(data: bytes, path: str) -> Capture:
    """An httprr trace: length-prefixed raw HTTP requests and responses."""
    from stream_doctor.capture._text_places import Source
    from stream_doctor.capture.exchange import (
        Exchanges,
        Lines,
        header,
        is_llm_call,
        redact_headers,
        redact_url,
        request_body,
    )

    source = Source(data)
    collected = Exchanges(path, budget=Budget(used=len(data)))
    at = _HTTPRR.match(data).end()  # type: ignore[union-attr]
    number = 0
    while at < len(data):
        sizes = _HTTPRR_SIZES.match(data, at)
        line = source.line_of(at)
        if sizes is None:
            raise CaptureError("not a readable httprr trace: expected '<request bytes> <response bytes>'", line=line)
        request_size, response_size = int(sizes.group(1)), int(sizes.group(2))
        start = sizes.end()
        if start + request_size + response_size > len(data):
            raise CaptureError(
                f"the httprr trace is cut: an exchange of {request_size} + {response_size} bytes "
                f"goes past the end of the file ({len(data) - start} left)",
                line=line,
            )
        number += 1
        request, response = (
            data[start : start + request_size],
            data[start + request_size : start + request_size + response_size],
        )
        at = start + request_size + response_size
        pos = Pos(0, source.line_of(start), start)
        first, request_headers, request_text, _ = _http_message(request)
        method, _, rest = first.partition(" ")
        url = redact_url(rest.rpartition(" ")[0] or rest)
        body = request_body(request_text, collected.budget)
        status_line, response_headers_raw, response_body, body_at = _http_message(response)
        parts = status_line.split()
        status = int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else None
        response_headers = redact_headers(response_headers_raw)
        content_type = header(response_headers, "content-type")
        exchange = Exchange(number, pos, method.upper() or None, url, status, None,
                            skipped=is_llm_call(method, url, body, content_type))  # fmt: skip
        value = {"method": method.upper(), "url": url, "headers": redact_headers(request_headers), "body": body}
        place: Any
        if "chunked" in (header(response_headers, "transfer-encoding") or "").lower():
            response_body = _dechunked(response_body)
            place = _fixed(Pos(0, source.line_of(start + request_size + body_at), start + request_size + body_at))
        else:
            place = Lines(source.line_of(start + request_size + body_at), source.starts, 0)
        encoding = header(response_headers, "content-encoding")
        collected.add(exchange, value, response_body or None, content_type, place, encoding, encoding)
    return collected.capture(READER.name, len(data))


def _http_message(message: bytes) -> tuple[str, list[tuple[str, str]], bytes, int]:
    """A raw HTTP/1.1 message: its first line, its headers, its body and where the body starts."""
    head, separator, body = message.partition(b"\r\n\r\n")
    if not separator:
        head, separator, body = message.partition(b"\n\n")
    lines = head.decode("utf-8", "replace").splitlines()
    headers = []
    for line in lines[1:]:
        name, colon, value = line.partition(":")
        if colon:
            headers.append((name.strip(), value.strip()))
    return (lines[0] if lines else ""), headers, body, len(head) + len(separator)


def _dechunked(body: bytes) -> bytes:
    """A body sent with Transfer-Encoding: chunked, undone (what is not a well-formed chunk is kept as it is)."""
    out: list[bytes] = []
    at = 0
    while at < len(body):
        end = body.find(b"\r\n", at)
        size_text = body[at:end].split(b";")[0].strip() if end >= 0 else b""
        try:
            size = int(size_text, 16)
        except ValueError:
            return b"".join(out) + body[at:]
        if size == 0:
            break
        out.append(body[end + 2 : end + 2 + size])
        at = end + 2 + size + 2
    return b"".join(out)


def _nock(collected: Exchanges, source: Source, places: dict[Any, int], number: int, entry: Any) -> None:
    from stream_doctor.capture.exchange import header, is_llm_call, redact_headers, redact_url, request_body

    start = places.get((number - 1,), 0)
    pos = Pos(0, source.line_of(start), start)
    if not isinstance(entry, dict):
        _skipped(collected, number, pos, "not a nock definition object")
        return
    method = _str(entry.get("method")) or "GET"
    url = redact_url((_str(entry.get("scope")) or "") + (_str(entry.get("path")) or ""))
    body = request_body(entry.get("body"), collected.budget)
    raw_headers = entry.get("rawHeaders")
    if isinstance(raw_headers, list):  # nock's flat [name, value, name, value, …]
        items = list(zip(raw_headers[0::2], raw_headers[1::2], strict=False))
    elif isinstance(raw_headers, dict):  # nock 14 (@mswjs/interceptors): Object.fromEntries(response.headers)
        items = list(raw_headers.items())
    else:
        items = _header_items(entry.get("headers"))
    response_headers = redact_headers(items)
    content_type = header(response_headers, "content-type")
    exchange = Exchange(
        number, pos, method.upper(), url, _status(entry.get("status")), None,
        skipped=is_llm_call(method, url, body, content_type),
    )  # fmt: skip
    response = entry.get("response")
    payload = _nock_body(response, entry.get("responseIsBinary") is True)
    where = places.get((number - 1, "response"))
    value = {"method": method.upper(), "url": url, "headers": {}, "body": body}
    # nock keeps a content-encoded body as the hex of the bytes received, still encoded (nock 14 compresses
    # again what fetch decoded): its Content-Encoding is undone whatever the coding (deflate has no magic number)
    as_sent = _hex_chunks(response)
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
        encoded=as_sent,
    )


def _hex_chunks(response: Any) -> TypeGuard[list[str]]:
    """A nock response kept as a list of hex chunks: a content-encoded body, as received."""
    return isinstance(response, list) and bool(response) and all(isinstance(c, str) and _HEX.match(c) for c in response)


def _nock_body(response: Any, binary: bool) -> bytes | None:
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
    encoded: bool = False,
) -> None:
    """``encoded``: the recorder stores the body as it came, still carrying its codings."""
    from stream_doctor.capture.exchange import Fixed

    place = Fixed(source.line_of(where), where + 1) if where is not None else _fixed(pos)
    compressed = payload is not None and (encoded or payload.startswith(b"\x1f\x8b"))
    encoding = recorded_encoding if compressed else None
    collected.add(exchange, value, payload, content_type, place, encoding, None if compressed else recorded_encoding)


def _skipped(collected: Exchanges, number: int, pos: Pos, why: str) -> None:
    """An entry that is no exchange at all: counted, with why, and not replayed."""
    collected.add(Exchange(number, pos, None, None, None, None, skipped=why), {}, None, None, _fixed(pos))


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
