"""A stream recorded as the SDK's chunk objects (llama-stack's recordings, gemini-cli's fake responses): read
as one JSON Lines body, each line placed at the file line its object starts on."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeGuard

import orjson

if TYPE_CHECKING:
    from stream_doctor.capture._text_places import Source
    from stream_doctor.capture.http_frames import BodyPlace

#: the content type a list of chunk objects is read as (even a list of one: a stream of one chunk)
NDJSON = "application/x-ndjson"

#: google-genai fields whose value is the application's own data, whose keys stay as they are
_USER_DATA = frozenset({"args", "response", "parameters", "response_schema", "response_json_schema"})


def sdk_data(item: Any) -> Any:
    """An SDK object as recorded, as the wire has it: llama-stack wraps the OpenAI SDK's models as
    ``{"__type__": "openai.types…", "__data__": {…}}``, and dumps google-genai's responses with the
    SDK's snake_case field names and its ``sdk_http_response`` (headers), which the wire spells in
    camelCase (``function_call`` is ``functionCall``) and does not have."""
    if isinstance(item, dict) and "__data__" in item and "__type__" in item:
        return item["__data__"]
    if isinstance(item, dict) and "sdk_http_response" in item:
        return _camel_case({k: v for k, v in item.items() if k != "sdk_http_response"})
    return item


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


def is_chunk_list(raw: Any) -> TypeGuard[list[Any]]:
    """A streamed body recorded as a list of chunk objects (not a JSON array reply of one object)."""
    return isinstance(raw, list) and bool(raw) and all(isinstance(item, dict) for item in raw)


def chunk_lines(items: list[Any], source: Source, starts: list[int | None]) -> tuple[bytes, BodyPlace]:
    """Chunk objects as a JSON Lines body, each line placed at the file line its object starts on."""
    from stream_doctor.capture.http_frames import Folded

    lines = [orjson.dumps(sdk_data(item)) for item in items]
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
