"""From a capture's frames to turns: where each turn starts, and what its request was.

A HAR file or a cassette has one turn per interaction that is an LLM call. In an envelope a
``request`` record starts a new turn when the turn so far already holds events or a request, so
an envelope with one request (or none) is one turn, exactly as before (docs/envelope.md). Each
turn keeps its own frames, input problems and position labels; the engine replays each one.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from stream_doctor.capture.base import Capture, CaptureError, Exchange, Frame, InputProblem
from stream_doctor.conversation.model import NO_FACTS, RequestFacts, RequestInfo, RequestsRead

if TYPE_CHECKING:
    from stream_doctor.conversation.request_parts import ToolDef
    from stream_doctor.conversation.requests import History


@dataclass(eq=False)
class Section:
    """The frames of one turn, before it is replayed."""

    number: int  # 1-based
    interaction: int | None  # what positions name; None for a capture of one stream
    frames: list[Frame] = field(default_factory=list)
    problems: list[InputProblem] = field(default_factory=list)
    ended_cleanly: bool = True
    exchange: Exchange | None = None

    @property
    def has_events(self) -> bool:
        return any(f.kind == "event" for f in self.frames)

    @property
    def request(self) -> Frame | None:
        return next((f for f in self.frames if f.kind == "request"), None)

    @property
    def status(self) -> int | None:
        """The HTTP status the turn's request got: the interaction's, or an envelope request record's ``status``."""
        if self.exchange is not None:
            return self.exchange.status
        request = self.request
        status = request.value.get("status") if request is not None and isinstance(request.value, dict) else None
        return status if isinstance(status, int) and not isinstance(status, bool) else None


def split(capture: Capture) -> list[Section]:
    """The capture's turns, in order."""
    if capture.exchanges:
        return _by_interaction(capture)
    frames = capture.frames
    if capture.container != "envelope":  # only the envelope records requests: one turn, no scan
        return [Section(1, None, frames, list(capture.problems), capture.ended_cleanly)]
    requests = [index for index, frame in enumerate(frames) if frame.kind == "request"]
    if len(requests) <= 1:  # the common case, a stream and at most its request: one turn, no copy
        return [Section(1, None, frames, list(capture.problems), capture.ended_cleanly)]
    cuts = [0]  # where each turn starts
    for index in requests:
        if index > cuts[-1] and any(f.kind in ("event", "request") for f in frames[cuts[-1] : index]):
            cuts.append(index)  # the turn so far holds events or a request: this request starts the next one
    bounds = zip(cuts, cuts[1:] + [len(frames)], strict=True)
    sections = [Section(number, None, frames[start:end]) for number, (start, end) in enumerate(bounds, 1)]
    starts = [frames[start].pos.number for start in cuts]
    for problem in capture.problems:
        number = problem.pos.number if problem.pos is not None else starts[-1]
        sections[max(0, bisect_right(starts, number) - 1)].problems.append(problem)
    sections[-1].ended_cleanly = capture.ended_cleanly
    if len(sections) > 1:
        for section in sections:
            section.interaction = section.number
    return sections


def sections_of(turns: Iterable[tuple[Exchange, list[Frame], list[InputProblem]]]) -> Iterator[Section]:
    """The turns of a capture read one interaction at a time (``capture.streamed.Interactions``), as
    ``split`` gives them for the same capture read whole: one per interaction that is an LLM call."""
    number = 0
    for exchange, frames, problems in turns:
        if exchange.skipped is None:
            number += 1
            yield Section(number, exchange.number, frames, problems, exchange.ended_cleanly, exchange)


def _by_interaction(capture: Capture) -> list[Section]:
    sections: dict[int, Section] = {}
    for exchange in capture.exchanges:
        if exchange.skipped is None:
            section = Section(len(sections) + 1, exchange.number, exchange=exchange)
            section.ended_cleanly = exchange.ended_cleanly
            sections[exchange.number] = section
    for frame in capture.frames:
        if frame.interaction in sections:
            sections[frame.interaction].frames.append(frame)
    for problem in capture.problems:
        if problem.interaction in sections:
            sections[problem.interaction].problems.append(problem)
    return list(sections.values())


def request_info(section: Section) -> RequestInfo | None:
    frame = section.request
    if frame is None or not isinstance(frame.value, dict):
        return None
    value = frame.value
    method, url = value.get("method"), value.get("url")
    places = section.exchange.request_places if section.exchange is not None else {}
    return RequestInfo(
        frame.pos,
        method if isinstance(method, str) else None,
        url if isinstance(url, str) else None,
        value.get("body"),
        places,
    )


class RequestReader:
    """The facts of a conversation's requests, read in order: each request's history from where the
    previous request's ends (``requests.History``, imported at the first request a capture has)."""

    def __init__(self, provider: str) -> None:
        self.provider = provider
        self.history: History | None = None

    def facts(self, request: RequestInfo | None) -> RequestFacts:
        if request is None:
            return NO_FACTS
        if self.history is None:
            from stream_doctor.conversation.requests import History

            self.history = History(self.provider)
        return self.history.parse(request.body)

    @property
    def counts(self) -> RequestsRead | None:
        """How the requests were read; None when there was none."""
        return None if self.history is None else self.history.counts


def load_tools(path: str) -> dict[str, ToolDef]:
    """The tool definitions of a ``--tools`` file (JSON or YAML). CaptureError when it cannot be read."""
    from stream_doctor.conversation.requests import tools_from
    from stream_doctor.util.opener import UnreadableFile, read_bytes

    try:
        data = read_bytes(path)
    except UnreadableFile as error:
        raise CaptureError(f"--tools {path}: cannot read the file: {error}") from None
    if not data.strip():
        raise CaptureError(f"--tools {path}: the file is empty")
    value: Any
    wanted = "a list of tools, or a request body, in JSON or YAML"
    read_as = "its JSON is"
    try:
        import orjson

        value = orjson.loads(data)
    except ValueError as error:
        import yaml

        not_json = f"not JSON ({str(error).partition(':')[0]} at {_json_place(error)})"
        try:
            value = yaml.load(data, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
        except yaml.YAMLError:
            raise CaptureError(f"--tools {path}: {not_json}, nor YAML ({wanted})") from None
        read_as = f"{not_json}, and read as YAML it is"  # any text is some YAML (issue 36: an SSE capture)
    found = tools_from(value)
    if not found:
        raise CaptureError(f"--tools {path}: {read_as} {_kind(value)} without tool definitions ({wanted})")
    return found


def _kind(value: Any) -> str:
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return f"a list of {len(value)} item{'s' if len(value) != 1 else ''}"
    return "plain text" if isinstance(value, str) else "a single value"


def _json_place(error: ValueError) -> str:
    """Where the JSON text stopped making sense, as orjson (and json) say it: ``line 1 column 1``."""
    line, column = getattr(error, "lineno", None), getattr(error, "colno", None)
    return f"line {line} column {column}" if line is not None else "its start"
