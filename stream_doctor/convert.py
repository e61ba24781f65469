"""``stream-doctor convert``: any capture stream-doctor reads, rewritten as a capture envelope (docs/envelope.md).

The envelope keeps everything the diagnosis uses: a header naming the provider, for each turn a
``request`` record (method, URL with secrets redacted, body) and an ``event`` record per frame
with its payload as received (``data``, or ``raw`` plus the reader's ``error`` when it was not
JSON), ``execute`` records as they were, and, on the record they concern, the ``problems`` the
original capture's reader noticed (a cut last event, bytes that are not UTF-8, a corrupt
event-stream frame). Replaying the envelope gives the findings the original gives; only the
positions differ, since they now point into the envelope.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from stream_doctor import jsontext
from stream_doctor.capture.base import NOT_JSON, RELEASED, Capture, Frame, InputProblem
from stream_doctor.capture.envelope import VERSION

if TYPE_CHECKING:
    from stream_doctor.redaction import Redactor

#: Keys of a request frame's value that the envelope's request record keeps.
_REQUEST_KEYS = ("t", "method", "url", "body", "status")


def to_envelope(capture: Capture, provider: str, redactor: Redactor | None = None) -> bytes:
    """The capture as envelope JSONL (one record per line, UTF-8); with ``redactor``, every record
    masked by it (credential fields and the secret values it knows)."""
    attached = _attach(capture)
    header: dict[str, Any] = {
        "sd": "header",
        "version": VERSION,
        "provider": provider,
        "source": f"converted from {capture.path} ({capture.container})",
        "container": capture.container,  # what the original could hold (a chunk log cannot hold [DONE]: SD508)
    }
    if None in attached:
        header["problems"] = attached[None]
    lines = [jsontext.dumps(header)]
    statuses = {e.number: e.status for e in capture.exchanges if e.status is not None}
    for index, frame in enumerate(capture.frames):
        record = _record(frame)
        if frame.kind == "request" and frame.interaction in statuses:  # what the request got: a 400 says rejected
            record["status"] = statuses[frame.interaction]
        found = attached.get(index)
        if found:
            record["problems"] = found
        if redactor:
            record = redactor.value(record)
        lines.append(jsontext.dumps(record, default=_default))
    return b"\n".join(lines) + b"\n"


def _record(frame: Frame) -> dict[str, Any]:
    value = frame.value
    if frame.kind == "request":
        record: dict[str, Any] = {"sd": "request"}
        source = value if isinstance(value, dict) else {}
        for key in _REQUEST_KEYS:
            if source.get(key) is not None:
                record[key] = source[key]
        body = record.get("body")
        if not isinstance(body, dict):
            record["body"] = {}  # the envelope wants an object; a body that was not JSON says nothing we use
            if body is not None:
                record["raw_body"] = body if isinstance(body, str) else str(body)
        if frame.t is not None and "t" not in record:
            record["t"] = frame.t
        return record
    if frame.kind != "event":
        return dict(value) if isinstance(value, dict) else {"sd": frame.kind}
    record = {"sd": "event"}
    if frame.t is not None:
        record["t"] = frame.t
    if frame.event is not None:
        record["event"] = frame.event
    if value is NOT_JSON or value is RELEASED:
        record["raw"] = frame.data.decode("utf-8", "replace")
        if frame.error is not None:
            record["error"] = frame.error
    else:
        record["data"] = value
    return record


def _attach(capture: Capture) -> dict[int | None, list[dict[str, str]]]:
    """Each reader problem on the record of the frame it concerns (the next frame when it lies between
    frames, the last frame of its interaction when none follows; the header when there is none)."""
    attached: dict[int | None, list[dict[str, str]]] = {}
    for problem in capture.problems:
        index = _frame_index(capture.frames, problem)
        attached.setdefault(index, []).append({"kind": problem.kind, "message": problem.message})
    return attached


def _frame_index(frames: list[Frame], problem: InputProblem) -> int | None:
    number = problem.pos.number if problem.pos is not None else None
    last: int | None = None
    for index, frame in enumerate(frames):
        if problem.interaction is not None and frame.interaction != problem.interaction:
            continue
        if frame.kind != "event" and problem.interaction is not None:
            last = index
            continue
        if number is not None and frame.pos.number >= number:
            return index
        last = index
    return last


def _default(value: Any) -> Any:
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    raise TypeError
