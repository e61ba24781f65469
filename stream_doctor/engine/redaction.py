"""What no output may show: the credential values a capture carries where the analysis needs them real.

Reading a capture already replaces credential headers and keys in URLs by ``[redacted]``
(``capture/http_frames.py``); the credential fields of a request body outside its tool inputs are
replaced by ``[redacted]`` where something is written (``capture/http_frames.redact_body``: the
envelope ``convert`` writes, and every report, through ``walk``). What is left must stay real while
the rules run, since they compare it:
a tool call's streamed input, the same input echoed in the next request's history (SD609), the
input an application executed (SD103), tool results, and the events of the response. A field named
like a credential (``api_key``, ``apiKey``, ``key``, ``token``, ``secret``, ``password``,
``authorization`` …, at any depth, also inside JSON carried in a string such as OpenAI's
``arguments``) holds a secret there too.

``SecretRedactor.of_report`` finds those values once the report is built; ``SecretRedactor.report`` is the
report every output is rendered from (the CLI's replay formats, each ``check`` report), with every
occurrence of each value replaced by ``[redacted:N]``, in call arguments and each of their
fragments, request bodies, executed inputs, kept events and finding messages (before anything is
clipped or wrapped, so no prefix of a secret survives either). ``N`` numbers the distinct values of
one capture, so two different secrets still read as different (an SD609 stays explainable) and a
converted envelope replays to the same findings. The library API returns the real report.
"""

from __future__ import annotations

import dataclasses
import re
from typing import TYPE_CHECKING, Any, Iterable, Iterator, Sequence

import orjson

from stream_doctor.util.credentials import REDACTED, is_secret_field_name

if TYPE_CHECKING:
    from stream_doctor.accumulate.stream import AccumulatedStream, ToolCall
    from stream_doctor.capture.base import Capture, Frame, Pos
    from stream_doctor.conversation.model import Turn
    from stream_doctor.values.events import Event
    from stream_doctor.values.report import Report

#: Shorter values are not masked in text: replacing every ``1`` or ``abc`` of a report would garble it,
#: and such a value is no credential (the field itself is still masked wherever it is a field).
MIN_LENGTH = 4
#: JSON carried in a string is looked into up to this size (a tool result can be a whole document).
_MAX_EMBEDDED = 1 << 20
#: ``"name": "value`` in text that is not (or not yet) JSON: an abandoned call's buffer.
_TEXT_FIELD = re.compile(r'"([A-Za-z][A-Za-z0-9_-]{0,62})"\s*:\s*"([^"\\]*(?:\\.[^"\\]*)*)')
_JSON_START = re.compile(r"\s*[\[{]")
_ELLIPSIS = "…"  # how excerpts and previews clip a value (rules/base.py), and rich a cell
_DEEPEST = 400  # a value nested deeper is masked whole (parsed JSON stops at 1,024 levels, Python's stack at ~1,000)


def is_secret_field(name: object) -> bool:
    return isinstance(name, str) and is_secret_field_name(name)


def _scalar_secret(value: object) -> str | None:
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        return None
    text = str(value)
    return text if len(text) >= MIN_LENGTH and text != REDACTED and not text.startswith("[redacted") else None


def collect(value: Any, found: dict[str, None]) -> None:
    """Add to ``found`` (ordered) the value of every credential-named field in ``value``, at any
    depth, looking into strings that hold a JSON object or array, and into partial JSON text."""
    stack = [value]
    while stack:
        current = stack.pop()
        if isinstance(current, dict):
            for name, item in current.items():
                if is_secret_field(name):
                    secret = _scalar_secret(item)
                    if secret is not None:
                        found.setdefault(secret, None)
                if isinstance(item, (dict, list, str)):
                    stack.append(item)
        elif isinstance(current, list):
            stack.extend(item for item in current if isinstance(item, (dict, list, str)))
        elif isinstance(current, str) and _looks_like_json(current):
            collect_text(current, found, stack)


def collect_body(body: Any, found: dict[str, None], plain: set[str], seen: set[tuple[int, bool]]) -> None:
    """What ``collect`` finds in ``body`` as a writer writes it (``capture/http_frames.redact_body``),
    without copying it: a credential field outside tool inputs is written ``[redacted]``, so its
    value goes to ``plain``; what is left is looked into as ``collect`` does. A container already
    in ``seen`` (and so its secrets) is passed over."""
    from stream_doctor.capture.http_frames import is_tool_block, is_tool_input, redact_body

    if isinstance(body, str):
        collect(redact_body(body), found)
        return
    stack: list[tuple[Any, bool]] = [(body, False)]  # a value, and whether it is in a tool's input
    while stack:
        current, inside = stack.pop()
        if isinstance(current, (dict, list)):
            if (id(current), inside) in seen:
                continue
            seen.add((id(current), inside))
        if isinstance(current, dict):
            tool_block = not inside and is_tool_block(current)
            for name, item in current.items():
                if is_secret_field(name) and not isinstance(item, (dict, list)):
                    if inside:
                        secret = _scalar_secret(item)
                        if secret is not None:
                            found.setdefault(secret, None)
                    elif item not in (None, "", True, False):
                        plain.add(str(item))
                        continue
                if isinstance(item, (dict, list, str)):
                    stack.append((item, inside or is_tool_input(name, tool_block)))
        elif isinstance(current, list):
            stack.extend((item, inside) for item in current if isinstance(item, (dict, list, str)))
        elif isinstance(current, str) and _looks_like_json(current):
            collect_text(current, found)


def _looks_like_json(text: str) -> bool:
    if len(text) < 2 or len(text) > _MAX_EMBEDDED:
        return False
    first = text[0]
    return first in "{[" or (first.isspace() and _JSON_START.match(text) is not None)


def collect_text(text: str, found: dict[str, None], stack: list[Any] | None = None) -> None:
    """The secrets of JSON text: parsed when it parses, else read field by field (a cut buffer)."""
    try:
        parsed = orjson.loads(text)
    except orjson.JSONDecodeError:
        for match in _TEXT_FIELD.finditer(text):
            if is_secret_field(match.group(1)):
                secret = _scalar_secret(match.group(2))
                if secret is not None:
                    found.setdefault(secret, None)
        return
    if stack is None:
        collect(parsed, found)
    else:
        stack.append(parsed)


class SecretRedactor:
    """Replaces each secret value by ``[redacted:N]`` in text, JSON values, calls and whole reports."""

    def __init__(self, secrets: Iterable[str], plain: Iterable[str] = ()) -> None:
        """``secrets`` are numbered; ``plain`` (a request body's credential fields, which a writer
        writes as ``[redacted]``) read ``[redacted]`` wherever else they appear (an envelope's line)."""
        ordered = list(dict.fromkeys(s for s in secrets if len(s) >= MIN_LENGTH))
        self.labels = {secret: f"[redacted:{number}]" for number, secret in enumerate(ordered, 1)}
        plain = sorted(plain)
        for secret in plain:
            if len(secret) >= MIN_LENGTH and secret != REDACTED:
                self.labels.setdefault(secret, REDACTED)
        self._fields = bool(plain)  # credential fields to mask, even with no value long enough to look for
        forms: dict[str, str] = {}
        for secret, label in self.labels.items():
            forms[secret] = label
            escaped = orjson.dumps(secret).decode()[1:-1]  # as it stands inside JSON text
            forms.setdefault(escaped, label)
            forms.setdefault(orjson.dumps(escaped).decode()[1:-1], label)  # JSON text inside a JSON string
        self._forms = sorted(forms.items(), key=lambda item: -len(item[0]))
        self._bytes = [(form.encode(), label.encode()) for form, label in self._forms]
        self._memo: dict[int, Any] = {}
        self._fragment_at: dict[tuple[Pos, str], str] = {}  # (event position, fragment) -> masked fragment

    def __bool__(self) -> bool:
        return bool(self.labels) or self._fields

    # -- finding the secrets ---------------------------------------------------------------------

    @classmethod
    def of_streams(
        cls,
        streams: Iterable[AccumulatedStream],
        requests: Iterable[Any] = (),
        plain: Iterable[str] = (),
        found: dict[str, None] | None = None,
    ) -> SecretRedactor:
        """The secrets ``found`` so far, then those of ``requests`` (values as written) and the streams."""
        found = {} if found is None else found
        for body in requests:
            collect(body, found)
        for stream in streams:
            for call in stream.calls:
                if call.start_input:
                    collect(call.start_input, found)
                if call.arguments is not None:
                    collect(call.arguments, found)
                elif call.raw_arguments:
                    collect_text(call.raw_arguments, found)
            for execution in stream.executions:
                collect(execution.input, found)
        return cls(found, plain)

    @classmethod
    def of_report(cls, report: Report) -> SecretRedactor:
        return cls.of_turns(report.turns, report.events, report.stream)

    @classmethod
    def of_turns(
        cls,
        turns: Sequence[Turn],
        events: Iterable[tuple[Frame, Event]] = (),
        stream: AccumulatedStream | None = None,
    ) -> SecretRedactor:
        """The secrets of a conversation's turns (their requests and streams), of the events a report kept, and
        of its one stream when it has no turns."""
        found: dict[str, None] = {}
        plain: set[str] = set()
        seen: set[tuple[int, bool]] = set()  # a session's requests share their history: each part is read once
        for turn in turns:
            if turn.request is not None:
                collect_body(turn.request.body, found, plain, seen)
        values = (_as_written(frame, plain) for frame, _event in events)
        streams = [turn.stream for turn in turns] or ([] if stream is None else [stream])
        return cls.of_streams(streams, values, plain, found)

    @classmethod
    def of_capture(cls, capture: Capture, streams: Iterable[AccumulatedStream]) -> SecretRedactor:
        plain: set[str] = set()
        return cls.of_streams(streams, (_as_written(frame, plain) for frame in capture.frames), plain)

    # -- masking ---------------------------------------------------------------------------------

    def text(self, text: str) -> str:
        for form, label in self._forms:
            if form in text:
                text = text.replace(form, label)
        return self._clipped(text) if _ELLIPSIS in text and self._forms else text

    def _clipped(self, text: str) -> str:
        """``text`` with what a clipped excerpt or preview kept of a secret masked too: its start
        before an ellipsis (``sk-proj-4f…``), or its end after one (``…kM1nT6``)."""
        out = []
        at = 0
        for mark in re.finditer(_ELLIPSIS, text):
            begin, end = mark.start(), mark.end()
            head = self._longest(text, at, begin, before=True)
            out.append(text[at : begin - head[0]] + head[1] + _ELLIPSIS)
            tail = self._longest(text, end, len(text), before=False)
            out.append(tail[1])
            at = end + tail[0]
        out.append(text[at:])
        return "".join(out)

    def _longest(self, text: str, lo: int, hi: int, before: bool) -> tuple[int, str]:
        """The longest piece (at least MIN_LENGTH) of a secret that ends at ``hi`` (``before``) or
        starts at ``lo``: its length and its label; (0, "") when there is none."""
        best = (0, "")
        for form, label in self._forms:
            for size in range(min(len(form) - 1, hi - lo), MIN_LENGTH - 1, -1):
                if size <= best[0]:
                    break
                if (text[hi - size : hi] == form[:size]) if before else (text[lo : lo + size] == form[-size:]):
                    best = (size, label)
                    break
        return best

    def data(self, data: bytes) -> bytes:
        for form, label in self._bytes:
            if form in data:
                data = data.replace(form, label)
        return data

    def value(self, value: Any, depth: int = 0) -> Any:
        """A JSON value with every credential-named field and every secret in its strings masked."""
        if isinstance(value, str):
            return self.text(value)
        if depth > _DEEPEST and isinstance(value, (dict, list)):
            return REDACTED
        if isinstance(value, dict):
            return {
                name: self._field(item) if is_secret_field(name) else self.value(item, depth + 1)
                for name, item in value.items()
            }
        if isinstance(value, list):
            return [self.value(item, depth + 1) for item in value]
        return value

    def _field(self, item: Any) -> Any:
        if isinstance(item, (dict, list)):
            return self.value(item)
        secret = _scalar_secret(item)
        if secret is not None:
            return self.labels.get(secret, REDACTED)
        return REDACTED if isinstance(item, str) and item else item

    def call(self, call: ToolCall) -> ToolCall:
        """The call with its arguments masked, fragment by fragment: the fragments still join to the
        masked buffer, so a report's timeline and a converted envelope agree with its arguments.
        A call with nothing to mask is returned as it is (its text stays where its store keeps it)."""
        from stream_doctor.accumulate.spill import StoredArguments

        raw, fragment_texts = call.raw_arguments, call.fragment_texts
        texts = self.fragments(raw, fragment_texts)
        masked_raw = "".join(texts) if texts is not fragment_texts else self.text(raw)
        arguments = call.arguments
        masked = self.value(arguments)
        changes: dict[str, Any] = {
            name: new
            for name, old, new in (
                ("start_input", call.start_input, self.value(call.start_input)),
                ("name", call.name, None if call.name is None else self.text(call.name)),
                ("call_id", call.call_id, None if call.call_id is None else self.text(call.call_id)),
                ("parse_failure", call.parse_failure, self.walk(call.parse_failure)),
            )
            if new != old
        }
        if masked_raw != raw or masked != arguments:
            changes["stored"] = StoredArguments.held(masked_raw, texts, call.fragment_positions, masked)
        return dataclasses.replace(call, **changes) if changes else call

    def fragments(self, raw: str, texts: Sequence[str]) -> Sequence[str]:
        """``texts`` (whose join is ``raw``) with each secret's span replaced by its label, in the
        fragment where the span begins; what the span covers of later fragments is dropped."""
        spans = sorted(self._spans(raw))
        if not spans or "".join(texts) != raw:
            return texts
        out: list[str] = []
        first = 0  # the first span that ends after the current fragment's start
        start = 0
        for text in texts:
            end = start + len(text)
            while first < len(spans) and spans[first][1] <= start:
                first += 1
            pieces = []
            at = start
            for begin, finish, label in spans[first:]:
                if begin >= end:
                    break
                if begin > at:
                    pieces.append(raw[at:begin])
                if begin >= start:  # the span begins here: its label stands for all of it
                    pieces.append(label)
                at = max(at, min(finish, end))
            pieces.append(raw[at:end])
            out.append("".join(pieces))
            start = end
        return tuple(out)

    def _spans(self, raw: str) -> Iterator[tuple[int, int, str]]:
        taken: list[tuple[int, int]] = []
        for form, label in self._forms:  # longest first: a secret inside a longer one is the longer one's
            at = raw.find(form)
            while at >= 0:
                end = at + len(form)
                if not any(a < end and at < b for a, b in taken):
                    taken.append((at, end))
                    yield at, end, label
                at = raw.find(form, end)

    def walk(self, obj: Any) -> Any:
        """``obj`` (a report, a finding, a frame …) rebuilt with every string, byte string, JSON value
        and tool call in it masked; unchanged parts are shared."""
        key = id(obj)
        if key in self._memo:
            return self._memo[key]
        result = self._walk(obj)
        self._memo[key] = result
        return result

    def _walk(self, obj: Any) -> Any:
        from stream_doctor.accumulate.stream import ToolCall
        from stream_doctor.values.events import ArgsDelta

        if obj is None or isinstance(obj, (bool, int, float)):
            return obj
        if isinstance(obj, str):
            return self.text(obj)
        if isinstance(obj, bytes):
            return self.data(obj)
        if isinstance(obj, ToolCall):
            return self.call(obj)
        if isinstance(obj, ArgsDelta) and (obj.pos, obj.fragment) in self._fragment_at:
            return dataclasses.replace(obj, fragment=self._fragment_at[(obj.pos, obj.fragment)])
        if isinstance(obj, dict):
            return {name: self._field(item) if is_secret_field(name) else self.walk(item) for name, item in obj.items()}
        if isinstance(obj, list):
            return [self.walk(item) for item in obj]
        if isinstance(obj, tuple):
            items = [self.walk(item) for item in obj]
            if all(a is b for a, b in zip(items, obj, strict=True)):
                return obj
            return type(obj)._make(items) if hasattr(obj, "_make") else tuple(items)
        if dataclasses.is_dataclass(obj) and not isinstance(obj, type) and type(obj).__name__ not in _OPAQUE:
            changes = {}
            for each in dataclasses.fields(obj):
                if not each.init:
                    continue
                current = getattr(obj, each.name)
                masked = self.walk(current)
                if masked is not current:
                    changes[each.name] = masked
            return dataclasses.replace(obj, **changes) if changes else obj
        return obj

    def report(self, report: Report) -> Report:
        if not self:
            return report
        for call in report.calls:  # what each fragment event of a masked call becomes
            masked = self.fragments(call.raw_arguments, call.fragment_texts)
            if masked is not call.fragment_texts:
                for pos, old, new in zip(call.fragment_positions, call.fragment_texts, masked, strict=True):
                    self._fragment_at[(pos, old)] = new
        return self.walk(report)  # type: ignore[no-any-return]

    def frames(self, frames: list[Frame], streams: Iterable[AccumulatedStream]) -> None:
        """Mask, in place, the argument fragments the frames carry (for ``convert``, which writes
        each frame's value as received): the fragment a secret begins in gets its label, later
        fragments lose what the secret covered."""
        by_place = {(f.pos.line, f.pos.offset, f.pos.number): f for f in frames if f.kind == "event"}
        for stream in streams:
            for call in stream.calls:
                masked = self.fragments(call.raw_arguments, call.fragment_texts)
                if masked is call.fragment_texts:
                    continue
                for pos, old, new in zip(call.fragment_positions, call.fragment_texts, masked, strict=True):
                    frame = by_place.get((pos.line, pos.offset, pos.number))
                    if old != new and frame is not None:
                        frame.value = _replace_string(frame.value, old, new)


def _as_written(frame: Frame, plain: set[str]) -> Any:
    """A frame's value as a writer writes it: a request's credential fields are ``[redacted]`` there
    (``capture/http_frames.redact_body``), so they are not values to number; they go to ``plain``."""
    from stream_doctor.capture.http_frames import redact_request

    return redact_request(frame.value, plain) if frame.kind == "request" else frame.value


#: Dataclasses that hold no capture content (options, positions, protocol facts): never rebuilt.
_OPAQUE = frozenset({"Options", "Pos", "ProtocolFacts", "Limits"})


def _replace_string(value: Any, old: str, new: str) -> Any:
    """``value`` with the first string equal to ``old`` (a fragment, where its frame carries it) replaced."""
    stack: list[Any] = [value]
    while stack:
        current = stack.pop()
        pairs: Iterable[tuple[Any, Any]]
        if isinstance(current, dict):
            pairs = current.items()
        elif isinstance(current, list):
            pairs = enumerate(current)
        else:
            continue
        for key, item in list(pairs):
            if item == old and isinstance(item, str):
                current[key] = new
                return value
            if isinstance(item, (dict, list)):
                stack.append(item)
    return value


def redacted(report: Report) -> Report:
    """The report every output is rendered from: each secret the capture carries masked."""
    from stream_doctor.util.gcpause import no_gc

    with no_gc():  # a big report is millions of objects: collections would only re-scan them
        return SecretRedactor.of_report(report).report(report)
