"""How the AI SDK's OpenAI-compatible provider turns ``tool_calls[]`` deltas into tool calls.

Follows ``@ai-sdk/openai-compatible`` 3.0.92 ``doStream`` (``processToolCallDelta``: the deltas of
an index are held until one brings a name, then handed on with the text held so far; an index
already handed on, or no index, goes straight through; at the flush the indices never named are
handed on without a name) and ``@ai-sdk/provider-utils`` 5.0.81 ``StreamingToolCallTracker``
(``resolveToolCall``'s precedence of id, index and name, a call whose arguments already hold a
whole ``{…}``/``[…]`` taking no more, a reused wire id getting a generated one, and ``flush``
emitting the calls sorted by index). State per delta is constant: the argument text is kept as
parts and scanned once, as it arrives.
"""

from __future__ import annotations

from dataclasses import dataclass, field


class NamelessCall(ValueError):
    """``processNewToolCall`` throws ``InvalidResponseDataError``: a new call without a name."""


@dataclass
class _Structure:
    """``StreamingToolCallArgumentState``: whether the arguments hold one whole JSON object or array."""

    kind: str = "undetermined"  # undetermined | structured | other
    stack: list[str] = field(default_factory=list)
    in_string: bool = False
    escaped: bool = False
    complete: bool = False

    def append(self, delta: str) -> None:
        for char in delta:
            if self.kind == "undetermined":
                if char.isspace():
                    continue
                if char not in "{[":
                    self.kind = "other"
                    continue
                self.kind, self.stack = "structured", [char]
                continue
            if self.kind != "structured" or self.complete:
                continue
            if self.in_string:
                if self.escaped:
                    self.escaped = False
                elif char == "\\":
                    self.escaped = True
                elif char == '"':
                    self.in_string = False
                continue
            if char == '"':
                self.in_string = True
            elif char in "{[":
                self.stack.append(char)
            elif char in "}]":
                if not self.stack or self.stack[-1] != ("{" if char == "}" else "["):
                    self.kind = "other"
                    continue
                self.stack.pop()
                if not self.stack:
                    self.complete = True


@dataclass
class TrackedCall:
    """One call as the tracker holds it; ``call_id`` None: the SDK generated one (random)."""

    call_id: str | None
    name: str
    index: int | None
    sequence: int
    calls: list[int]
    parts: list[str] = field(default_factory=list)
    structure: _Structure = field(default_factory=_Structure)
    finished: bool = False

    @property
    def arguments(self) -> str:
        return "".join(self.parts)


@dataclass
class _Delta:
    index: int | None
    call_id: str | None
    name: str | None
    arguments: str | None
    calls: list[int]


@dataclass
class _Pending:
    call_id: str | None
    buffered: list[str] = field(default_factory=list)
    calls: list[int] = field(default_factory=list)


def _nonblank(value: str | None) -> str | None:
    return value if value is not None and value.strip() else None


def _starts_structured(value: str | None) -> bool:
    stripped = value.lstrip() if isinstance(value, str) else ""
    return stripped[:1] in ("{", "[") and stripped != ""


_NEW, _AMBIGUOUS = "new", "ambiguous"


@dataclass
class OpenAICompatibleTracker:
    calls: list[TrackedCall] = field(default_factory=list)
    by_id: dict[str, list[TrackedCall]] = field(default_factory=dict)
    by_index: dict[int, list[TrackedCall]] = field(default_factory=dict)
    used_ids: set[str] = field(default_factory=set)
    pending: dict[int, _Pending] = field(default_factory=dict)
    forwarded: set[int] = field(default_factory=set)

    # -- the provider's doStream: processToolCallDelta and flush ---------------------------------

    def delta(
        self, index: int | None, call_id: str | None, name: str | None, arguments: str | None, call: int | None
    ) -> None:
        """One wire ``tool_calls[]`` entry (NamelessCall: the stream errors here)."""
        calls = [call] if call is not None else []
        if index is None or index in self.forwarded:
            self._process(_Delta(index, call_id, name, arguments, calls))
            return
        held = self.pending.get(index)
        if held is None:
            held = self.pending[index] = _Pending(call_id)
        elif held.call_id is None and call_id is not None:
            held.call_id = call_id
        held.calls += [c for c in calls if c not in held.calls]
        if arguments is not None:
            held.buffered.append(arguments)
        if name is not None:
            del self.pending[index]
            self.forwarded.add(index)
            self._process(_Delta(index, held.call_id, name, "".join(held.buffered), held.calls))

    def flush(self) -> list[TrackedCall]:
        """The calls in the order their ``tool-call`` parts come (NamelessCall: the flush errors)."""
        for index, held in list(self.pending.items()):
            self._process(_Delta(index, held.call_id, None, "".join(held.buffered), held.calls))
        self.pending.clear()
        ordered = self.calls
        if all(c.index is not None for c in self.calls):
            ordered = sorted(self.calls, key=lambda c: (c.index, c.sequence))
        emitted = [c for c in ordered if not c.finished]
        for tracked in emitted:
            tracked.finished = True
        return emitted

    # -- StreamingToolCallTracker ----------------------------------------------------------------

    def _process(self, delta: _Delta) -> None:
        has_blank_name = isinstance(delta.name, str) and not delta.name.strip()
        wire_id, name = _nonblank(delta.call_id), _nonblank(delta.name)
        resolution = self._resolve(
            wire_id,
            delta.index,
            name,
            name is not None and _starts_structured(delta.arguments),
            delta.arguments is None or not delta.arguments.strip(),
        )
        if resolution is _AMBIGUOUS:
            return
        if resolution is _NEW:
            if has_blank_name:
                return
            if name is None:
                raise NamelessCall("Expected 'function.name' to be a string.")
            tracked = TrackedCall(self._new_id(wire_id), name, delta.index, len(self.calls), list(delta.calls))
            tracked.parts.append(delta.arguments or "")
            tracked.structure.append(delta.arguments or "")
            self.calls.append(tracked)
            if wire_id is not None:
                self.by_id.setdefault(wire_id, []).append(tracked)
        else:
            assert isinstance(resolution, TrackedCall)
            tracked = resolution
            if wire_id is not None and tracked not in self.by_id.setdefault(wire_id, []):
                self.by_id[wire_id].append(tracked)
            if not tracked.finished:
                tracked.calls += [c for c in delta.calls if c not in tracked.calls]
                if delta.arguments is not None:
                    tracked.structure.append(delta.arguments)
                    tracked.parts.append(delta.arguments)
        if delta.index is not None:
            held = self.by_index.setdefault(delta.index, [])
            if tracked not in held:
                held.append(tracked)

    def _resolve(
        self, wire_id: str | None, index: int | None, name: str | None, explicit_start: bool, empty_arguments: bool
    ) -> TrackedCall | str:
        indexed = self.by_index.get(index) if index is not None else None
        matching = [c for c in indexed or () if name is None or c.name == name]
        if wire_id is not None:
            with_id = self.by_id.get(wire_id)
            if with_id is not None:
                if index is not None:
                    found = self._matching([c for c in matching if c in with_id], explicit_start)
                    if found is not _NEW:
                        return found
                    if name is not None:
                        return _NEW
                    if indexed is not None:
                        return _AMBIGUOUS
                    return self._matching(list(with_id), False)
                if name is not None:
                    return self._matching([c for c in with_id if c.name == name], explicit_start)
                return self._matching(list(with_id), False)
            if matching:
                return _NEW if explicit_start else self._matching(matching, name is not None and empty_arguments)
            return _NEW
        if indexed is not None:
            return self._matching(matching, explicit_start)
        if name is not None:
            return _NEW
        return self._matching([c for c in self.calls if not c.finished], False)

    @staticmethod
    def _matching(candidates: list[TrackedCall], explicit_start: bool) -> TrackedCall | str:
        if not candidates:
            return _NEW
        continuable = [c for c in candidates if not (c.structure.kind == "structured" and c.structure.complete)]
        if not explicit_start and len(candidates) == 1:
            return candidates[0]
        if len(continuable) == 1:
            return continuable[0]
        if len(continuable) > 1 or not explicit_start:
            return _AMBIGUOUS
        return _NEW

    def _new_id(self, wire_id: str | None) -> str | None:
        if wire_id is not None and wire_id not in self.used_ids:
            self.used_ids.add(wire_id)
            return wire_id
        return None  # generateId(): random, so not a value to compare
