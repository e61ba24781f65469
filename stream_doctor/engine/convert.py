"""``stream-doctor convert``: any capture stream-doctor reads, rewritten as a capture envelope (docs/envelope.md).

``convert`` (one capture) and ``convert_many`` (one session's captures, joined) read the capture and
find its provider as ``engine/pipeline.replay`` does, and mask the secrets of its records and of the calls its
streams reassemble; ``to_envelope`` writes the records.

The envelope keeps everything the diagnosis uses: a header naming the provider, for each turn a
``request`` record (method, URL with secrets redacted, body) and an ``event`` record per frame
with its payload as received (``data``, or ``raw`` plus the reader's ``error`` when it was not
JSON), ``execute`` records as they were, and, on the record they concern, the ``problems`` the
original capture's reader noticed (a cut last event, bytes that are not UTF-8, a corrupt
event-stream frame). Replaying the envelope gives the findings the original gives; only the
positions differ, since they now point into the envelope.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from stream_doctor.capture import load
from stream_doctor.capture.base import NOT_JSON, RELEASED, Capture, CaptureError, Frame, InputProblem, Pos
from stream_doctor.capture.envelope import VERSION
from stream_doctor.capture.http_frames import redact_body
from stream_doctor.conversation.build import Section, split
from stream_doctor.engine.pipeline import session_adapter
from stream_doctor.engine.stages import RunError, TurnContext, TurnFrames, accumulate_turn, adapter_for, profiles_named
from stream_doctor.util import jsontext
from stream_doctor.util.gcpause import no_gc

if TYPE_CHECKING:
    from stream_doctor.engine.redaction import SecretRedactor
    from stream_doctor.providers.base import Adapter
    from stream_doctor.values.options import Options

#: Keys of a request frame's value that the envelope's request record keeps.
_REQUEST_KEYS = ("t", "method", "url", "body", "status")


def convert(path: str, options: Options, data: bytes | None = None) -> bytes:
    """The capture at ``path`` (or ``data``) as envelope JSONL (``stream-doctor convert``); RunError when it cannot be read."""
    with no_gc():
        try:
            capture = load(path, options.container, data, options.limits)
        except CaptureError as error:
            raise RunError(path if path != "-" else "<stdin>", error.message, error.line) from None
        sections = split(capture)
        adapter = adapter_for(capture, options, next((s.frames for s in sections if s.has_events), None))
        return to_envelope(capture, adapter.name, _redactor(capture, adapter, options, sections))


def convert_many(paths: list[str], options: Options) -> bytes:
    """Several captures of one session (or a folder), in the order ``replay_many`` replays them, as one
    envelope of several turns (``stream-doctor convert``); one path is ``convert``. A file after the
    first that has no request record cannot start a turn in one envelope: RunError, as for a mix of
    formats or providers."""
    from stream_doctor.capture.session import SessionError, collect

    try:
        session = collect(paths, options.limits)
    except SessionError as error:
        raise RunError(error.path or "stream-doctor", error.message) from None
    if len(session.files) == 1:
        return convert(session.files[0], options)
    with no_gc():
        captures: list[Capture] = []
        adapter: Adapter | None = None
        detected_in = ""
        for path in session.files:
            try:
                capture = load(path, options.container, None, options.limits)
            except CaptureError as error:
                raise RunError(path, error.message, error.line) from None
            if captures and capture.container != captures[0].container:
                raise RunError(
                    path,
                    f"its format is {capture.container}, but {captures[0].path}'s is {captures[0].container}: "
                    "the captures of one conversation are of one format",
                )
            if captures and not capture.exchanges and not (capture.frames and capture.frames[0].kind == "request"):
                raise RunError(
                    path, "it starts with no request record, so in one envelope it would join the turn before it"
                )
            for section in split(capture):
                if section.has_events:
                    adapter, detected_in = session_adapter(capture, options, section.frames, path, adapter, detected_in)
            captures.append(capture)
        merged = _joined(session.label, captures)
        sections = split(merged)
        if adapter is None:
            adapter = adapter_for(merged, options)  # forced, or: no events, which says why
        return to_envelope(merged, adapter.name, _redactor(merged, adapter, options, sections))


def _joined(path: str, captures: list[Capture]) -> Capture:
    """One capture holding ``captures`` one after another: frame numbers and interactions continued,
    so that each problem stays on its frame and each turn on its own (what ``convert`` writes)."""
    first = captures[0]
    joined = Capture(path, first.container, 0, [], first.compressed, first.header)
    frames = interactions = 0  # how far this capture's frame numbers and interactions are moved
    for capture in captures:
        joined.size += capture.size
        joined.frames += [
            replace(f, pos=_moved(f.pos, frames), interaction=_shifted(f.interaction, interactions))
            for f in capture.frames
        ]
        joined.problems += [
            replace(p, pos=_moved(p.pos, frames) if p.pos else None, interaction=_shifted(p.interaction, interactions))
            for p in capture.problems
        ]
        joined.exchanges += [replace(e, number=e.number + interactions) for e in capture.exchanges]
        numbers = [f.pos.number for f in capture.frames] + [p.pos.number for p in capture.problems if p.pos]
        frames += max(numbers, default=0) + 1
        interactions += max((e.number for e in capture.exchanges), default=0)
    joined.ended_cleanly = captures[-1].ended_cleanly
    return joined


def _moved(pos: Pos, by: int) -> Pos:
    return pos._replace(number=pos.number + by)


def _shifted(number: int | None, by: int) -> int | None:
    return None if number is None else number + by


def _redactor(capture: Capture, adapter: Adapter, options: Options, sections: list[Section]) -> SecretRedactor:
    """What ``convert`` must mask: the secrets in the capture's records and in the calls its streams
    reassemble (whose fragments are masked in their frames, so the envelope replays alike)."""
    from stream_doctor.engine.redaction import SecretRedactor

    context = TurnContext(adapter, options, profiles_named(capture.path, options), release=False)
    streams = [accumulate_turn(context, TurnFrames(capture, section))[0] for section in sections]
    redactor = SecretRedactor.of_capture(capture, streams)
    if redactor:
        redactor.frames(capture.frames, streams)
    return redactor


def to_envelope(capture: Capture, provider: str, redactor: SecretRedactor | None = None) -> bytes:
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
    bodies = {e.body_container for e in capture.exchanges if e.body_container}
    if len(bodies) == 1:  # a HAR's or cassette's responses: what their bodies were read as (SSE holds [DONE])
        header["body_container"] = bodies.pop()
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
        body = redact_body(record.get("body"))  # read as sent (the rules compare it), written redacted
        record["body"] = body
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
