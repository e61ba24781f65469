"""stream-doctor's capture envelope, version 1: what each record means and when one is malformed.

One JSON object per line, discriminated by ``"sd"`` (see docs/envelope.md). The reader lives in
``jsonl.py``; this module turns one decoded record into a frame. Validation is written by hand
because it runs once per line on the replay path; ``schemas/capture-envelope-v1.schema.json``
states the same rules as a JSON Schema, and a test keeps the two in agreement.
"""

from __future__ import annotations

from typing import Any, Callable

from stream_doctor.capture.base import NOT_JSON, Frame, InputProblem, Pos

VERSION = 1
SCHEMA_ID = "https://stream-doctor.dev/schemas/capture-envelope-v1.json"
RECORD_TYPES = ("header", "event", "request", "execute")

_OPTIONAL_STRINGS = {
    "header": ("provider", "source", "note", "started"),
    "event": ("event",),
    "request": ("method", "url"),
    "execute": ("call_id", "name"),
}


def _is_number(value: Any) -> bool:
    # bool is an int to Python but not a number to JSON (or to JSON Schema)
    return type(value) is int or type(value) is float


def _is_integer(value: Any) -> bool:
    # JSON Schema counts 1.0 as an integer; so does this, to agree with the schema
    return type(value) is int or (type(value) is float and value.is_integer())


def check_record(record: Any) -> str | None:
    """What is wrong with one envelope record, or None when it fits the format.

    Only the record itself is checked; where it may appear (a header only on the first line) and
    whether its version is supported are the reader's business.
    """
    if type(record) is not dict:
        return "not a JSON object"
    if "sd" not in record:
        return 'no "sd" key saying what the record is'
    kind = record["sd"]
    if type(kind) is not str:
        return '"sd" is not a string'
    if kind not in _OPTIONAL_STRINGS:
        return f'unknown record type "sd": {kind!r} (expected header, event, request or execute)'
    for key in _OPTIONAL_STRINGS[kind]:
        value = record.get(key)
        if value is not None and type(value) is not str:
            return f'{kind} record: "{key}" must be a string'
    if kind == "header":
        if "version" not in record:
            return 'header record: no "version"'
        if not _is_integer(record["version"]):
            return 'header record: "version" must be an integer'
        expect = record.get("expect")
        if expect is not None and not (type(expect) is list and all(type(code) is str for code in expect)):
            return 'header record: "expect" must be a list of rule codes'
        return None
    t = record.get("t")
    if t is not None and not (_is_number(t) and t >= 0):
        return f'{kind} record: "t" must be a number of seconds >= 0'
    if kind == "event":
        has_data = "data" in record
        if "raw" in record:
            if has_data:
                return 'event record: has both "data" and "raw"; keep one'
            if type(record["raw"]) is not str:
                return 'event record: "raw" must be a string'
        elif not has_data:
            return 'event record: no "data" (or "raw" for a payload that is not JSON)'
    elif kind == "request":
        if "body" not in record:
            return 'request record: no "body"'
        if type(record["body"]) is not dict:
            return 'request record: "body" must be an object'
    elif "input" not in record:  # execute
        return 'execute record: no "input"'
    return None


def to_frame(
    record: Any, line: bytes, pos: Pos, redact: Callable[[str], str] | None = None, checked: bool = False
) -> Frame:
    """The frame for one decoded record (not a header); a record that does not fit is kept as a
    ``NOT_JSON`` event frame whose error says why, so the replay reports it instead of losing it.
    ``redact``: how a request's URL is redacted (a reader of many records: ``http_frames.LastUrl``).
    ``checked``: the record is known to fit, and is not checked again (the recorder's own records of a plan's
    kept lines, ``record.writer.Slice``)."""
    problem = None if checked else check_record(record)
    if problem is not None:
        return Frame(pos, line, NOT_JSON, f"envelope: {problem}")
    kind = record["sd"]
    t = record.get("t")
    if kind == "event":
        if "data" in record:
            # ``data`` is the record's line: the payload is in it, as read. Serialising every
            # payload again would cost a third of the read, and nothing needs it on its own.
            return Frame(pos, line, record["data"], None, record.get("event"), t)
        raw: str = record["raw"]
        error = record.get("error")  # why the payload was not JSON, as the original capture's reader said
        reason = error if type(error) is str else "not JSON"
        return Frame(pos, raw.encode("utf-8", "surrogatepass"), NOT_JSON, reason, record.get("event"), t)
    if kind == "header":
        return Frame(pos, line, NOT_JSON, "envelope: a header record must be the first line")
    if kind == "request":
        if redact is None:
            from stream_doctor.capture.http_frames import redact_url

            redact = redact_url
        record, line = _redacted(record, line, redact)
    return Frame(pos, line, record, None, None, t, kind)


def _redacted(record: dict[str, Any], line: bytes, redact: Callable[[str], str]) -> tuple[dict[str, Any], bytes]:
    """A request record with the credentials of its URL and headers redacted, as HAR files' and
    cassettes' are: an envelope written by hand or by another tool may carry them. Its body is kept
    as sent (see ``capture/http_frames.py``); the line is written again only when the record changed."""
    changed = False
    url = record.get("url")
    if isinstance(url, str):
        record["url"] = redact(url)
        changed = record["url"] != url
    headers = record.get("headers")
    if isinstance(headers, dict):
        from stream_doctor.capture.http_frames import redact_headers

        record["headers"] = redact_headers(headers.items())
        changed = changed or record["headers"] != headers
    if not changed:
        return record, line
    from stream_doctor.util import jsontext

    return record, jsontext.dumps(record)


#: Problems that mean the capture ends inside a frame (see ``problems_of``).
CUT_KINDS = ("unterminated-event", "truncated-array")


def problems_of(record: Any, pos: Pos) -> list[InputProblem]:
    """The input problems a record carries in its optional ``problems`` list (``stream-doctor convert``
    writes there what the original capture's reader noticed, so a converted capture is diagnosed alike)."""
    listed = record.get("problems") if type(record) is dict else None
    if type(listed) is not list:
        return []
    return [
        InputProblem(item["kind"], item["message"], pos)
        for item in listed
        if type(item) is dict and type(item.get("kind")) is str and type(item.get("message")) is str
    ]
