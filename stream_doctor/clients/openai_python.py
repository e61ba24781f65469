"""openai-python: the OpenAI Python SDK's Chat Completions stream helper (``client.chat.completions.stream``).

Follows ``openai`` 3.54.0: ``lib/streaming/_deltas.py`` ``accumulate_delta`` (L10-70) and
``lib/streaming/chat/_completions.py`` ``ChatCompletionStreamState._accumulate_chunk`` (L362-420)
and ``ChoiceEventState.get_done_events`` / ``_add_tool_done_event`` (L590-735).

- Each ``tool_calls[]`` fragment is merged into ``message.tool_calls[fragment.index]``, the index
  taken as a list position: an index past the end inserts the entry at the end, and
  ``_build_events`` then reads ``tool_calls[index]`` and raises ``IndexError`` (a first index of 1,
  a gap). A fragment without ``index`` raises ``RuntimeError`` ("Expected list delta entry to have
  an `index` key"), or ``TypeError`` when no entry of its chunk's list has an ``index`` (of any type)
  and the snapshot holds no call yet: the list is taken whole (``_has_indexed_entries`` reads the whole
  list, so the profile merges a chunk's entries once the chunk has ended).
- Strings are concatenated with ``+=``, ``id`` and ``function.name`` included: a server that repeats
  them on every fragment gets ``call_abccall_abc`` and ``get_weatherget_weather``. Two calls sent
  on one index are merged into one entry (``{…}{…}``), in the first chunk too
  (``_convert_initial_chunk_into_snapshot`` runs ``accumulate_delta``), and the entry's ``type`` is
  the latest one sent.
- ``tool_calls.function.arguments.done`` fires for the current index when a fragment of another
  index arrives, or when the choice has a ``finish_reason`` (whatever it is: ``length`` too).
  The application runs the call on that event with ``json.loads(arguments)``; under interleaved
  fragments it fires before the call's last fragment. ``_add_tool_done_event`` (L700-735) fires it
  only for an entry whose ``type`` is ``"function"``: a call sent without ``type`` (Mistral sends
  none) is never handed, though its index is marked done. A later fragment's ``"type": null`` (Writer
  sends it on every continuation) replaces the entry's ``type``, and ``_accumulate_chunk``'s ``assert
  new_tool.type == "function"`` (L402-405) raises AssertionError at that chunk.
- Fields of the wrong type (``events.Wire``) are merged as sent: an ``index`` of digits is the integer
  when every entry of its chunk's list passes ``ChoiceDeltaToolCall``'s validation (``_models.py``
  ``construct_type`` tries ``validate_type`` on the list whole, L639-643), else it stays a string; a
  string index raises ``TypeError``; a numeric ``id`` is kept (added to a later number, left as it is by a
  string), and ``arguments`` null or an object stay the done event's ``arguments`` until text replaces
  a null (an object after text, or text after an object, is left out).
- An ``error`` object in the stream raises ``APIError``; data that starts with ``[DONE]`` ends the
  reading (``Stream.__stream__``: ``sse.data.startswith("[DONE]")``), other data that is not JSON raises
  ``JSONDecodeError`` (data lines written without blank lines between them are one such event). A chunk
  whose ``object`` is not "chat.completion.chunk" is skipped (``_is_valid_chat_completion_chunk_weak``, for
  Azure's asynchronous filter events). With no chunk
  read at all (the only event cut, or ``[DONE]`` alone) the snapshot is None and reading the
  final completion raises ``AssertionError`` (``ChatCompletionStreamState.current_completion_snapshot``,
  L341-343). The legacy ``function_call`` gets no done event: the application reads it from the
  final completion.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, Hashable

from stream_doctor.capture.base import Pos
from stream_doctor.clients._chat import ChatSnapshot, Choice, Entry, WireEntry
from stream_doctor.clients._wire import lax_int, wired
from stream_doctor.clients.base import choice_of, profile
from stream_doctor.values.events import MISSING, Event, Execution, MessageStop, Request, Wire


@dataclass(frozen=True)
class _ListFacts:
    """What the SDK reads of one choice's whole ``tool_calls`` list in a chunk before merging any entry."""

    #: every entry passes ChoiceDeltaToolCall's validation, so pydantic's lax mode reads an index "0" as 0:
    #: ``_models.construct_type`` tries ``validate_type`` on the ``Optional[List[…]]`` as a whole and, when
    #: one entry fails (no index, a numeric id, object arguments), builds the list unvalidated, as sent
    validates: bool = True
    #: an entry has an ``index`` key, of any type (``_deltas.py`` ``_has_indexed_entries``): the list is
    #: merged entry by entry, and an entry without one raises RuntimeError; otherwise it is taken whole
    indexed: bool = False


@dataclass
class OpenAIPythonSnapshot(ChatSnapshot):
    #: the latest chunk's wire entries (``ChatSnapshot._entry``'s arguments), merged once it has ended: the
    #: SDK reads each choice's list whole before it merges the first entry (``_ListFacts``)
    queued: list[WireEntry] = field(default_factory=list)
    listed: _ListFacts = _ListFacts()  # the facts of the list whose entry is being merged
    done_needs_function_type = True
    reads_wire = True
    asserts_function_type = True
    chunked: bool = False  # a chunk reached the SDK, so there is a snapshot

    def feed(self, event: Event, call: int | None) -> None:
        if not self.ended and type(event) not in (MessageStop, Request, Execution):
            self.chunked = True  # KeepAlive too: the adapter's event for a chunk with no choices
        super().feed(event, call)

    def close(self, end: Pos | None) -> None:
        super().close(end)
        if not self.chunked and self.error is None:
            # ChatCompletionStreamState.current_completion_snapshot (and get_final_completion) assert
            # that a chunk made a snapshot: none does when the only event is cut or the body is [DONE]
            self.fail(None, "AssertionError", "no chunk was read, so there is no completion snapshot")

    def _entry(self, entry: WireEntry) -> None:
        self.queued.append(entry)

    def _flush(self) -> None:
        queued, self.queued = self.queued, []
        facts = _list_facts(queued)
        for entry in queued:
            if self.error is not None:
                break
            self.listed = facts[choice_of(entry.key)]
            super()._entry(entry)
        super()._flush()

    def wire_index(self, sent: Any) -> int | None:
        return lax_int(sent) if self.listed.validates else None

    def new_choice(self) -> Choice:
        return Choice(entries=[])

    def merge(
        self,
        choice: Choice,
        index: int | None,
        call_id: str | None,
        name: str | None,
        arguments: str | None,
        call: int | None,
        pos: Pos,
        wire: Wire = (),
    ) -> Hashable | None:
        entries: list[Entry] = choice.entries
        if index is None:
            if not entries and not self.listed.indexed:
                # accumulate_delta takes a first ``tool_calls`` list with no indexed entry whole (and the
                # first chunk is the snapshot as it is): _build_events then reads tool_calls[None]
                self.fail(pos, "TypeError", "list indices must be integers or slices, not NoneType", call)
            else:
                self.fail(pos, "RuntimeError", "Expected list delta entry to have an `index` key", call)
            return None
        # the first chunk's indexed entries are merged by index too (accumulate_delta({}, delta):
        # "Even the first indexed list must be merged"): two entries at index 0 are one call
        # a field of the wrong type is merged as sent: a numeric id kept, a null or an object as the arguments
        sent_id: Any = wired(wire, "id", call_id)
        sent_arguments: Any = wired(wire, "arguments", arguments) if wire else arguments
        null_arguments = sent_arguments is None and any(field == "arguments" for field, _ in wire)
        try:
            entry = entries[index]
        except IndexError:
            inserted = Entry.new(call, sent_id, name, None)
            _merge_arguments(inserted, sent_arguments, null_arguments)
            entries.insert(index, inserted)  # past the end: at the end (``_check`` then raises as _build_events)
            return self._check(entries, index, pos, call)
        entry.add_call(call)
        try:
            entry.call_id = _concat(entry.call_id, sent_id)
            _merge_arguments(entry, sent_arguments, null_arguments)
        except RecursionError:  # two objects nested ~1,000 deep: accumulate_delta recurses as deep and raises
            self.fail(pos, "RecursionError", "maximum recursion depth exceeded merging two objects", call)
            return None
        entry.name = _concat(entry.name, name)
        return index

    def _check(self, entries: list[Entry], index: int, pos: Pos, call: int | None) -> Hashable | None:
        """``_build_events`` reads ``tool_calls[delta.index]`` right after: past the end it raises."""
        if index >= len(entries):
            self.fail(pos, "IndexError", f"list index out of range: tool call index {index}", call)
            return None
        return index

    def entry(self, choice: Choice, key: Hashable) -> Entry | None:
        entries: list[Entry] = choice.entries
        if isinstance(key, int) and 0 <= key < len(entries):
            return entries[key]
        return None


def _list_facts(queued: list[WireEntry]) -> dict[int, _ListFacts]:
    """Each choice's ``_ListFacts`` from a chunk's queued entries (the arguments that follow a ToolStart at
    its event are that entry's, not an entry of their own: ``ChatSnapshot._entry``)."""
    heads: dict[int, list[tuple[bool, bool]]] = {}  # choice -> (has an index key, validates) per entry
    previous: WireEntry | None = None
    for entry in queued:
        wrong = any(name != "index" and value is not None for name, value in entry.wire)
        wrong = wrong or entry.wire_type not in (None, "function")
        continued = previous is not None and previous.start and (previous.key, previous.pos) == (entry.key, entry.pos)
        continued = continued and not entry.start and entry.call_id is None and entry.name is None
        previous = entry
        entries = heads.setdefault(choice_of(entry.key), [])
        if continued:
            if wrong and entries:
                entries[-1] = (entries[-1][0], False)
            continue
        sent = wired(entry.wire, "index", MISSING)
        valid_index = entry.sent_index is not None or lax_int(sent) is not None
        entries.append((entry.sent_index is not None or sent is not MISSING, valid_index and not wrong))
    facts = {n: _ListFacts(all(v for _, v in e), any(h for h, _ in e)) for n, e in heads.items()}
    return defaultdict(_ListFacts, facts)


def _concat(held: Any, new: Any) -> Any:
    """``accumulate_delta``: the first value is taken (a null is replaced by the next), later strings are
    appended and numbers added; a value of another type leaves the held one as it is."""
    if held is None:
        return new
    if isinstance(held, str) and isinstance(new, str):
        return held + new
    if isinstance(held, (int, float)) and isinstance(new, (int, float)):
        return held + new
    if isinstance(held, dict) and isinstance(new, dict):
        merged = dict(held)
        for key, value in new.items():
            merged[key] = value if key not in merged or key in ("index", "type") else _concat(merged[key], value)
        return merged
    return held


def _merge_arguments(entry: Entry, sent: Any, null: bool) -> None:
    """``function.arguments`` into the snapshot as ``accumulate_delta`` merges it: text appended to text; a
    null (``null``: sent, not absent) held as None until a value replaces it; an object held as it is
    (and merged with a later object), and text after it, or an object after text, left out."""
    held: Any = entry.value if entry.value is not MISSING else entry.arguments
    if sent is None and not null:
        return
    if isinstance(sent, str) and (held is None or isinstance(held, str)):
        entry.value = MISSING
        entry.add(sent)
    elif held is None:
        entry.value = sent
    else:
        merged = _concat(held, sent)
        if merged is not held and not isinstance(merged, str):
            entry.value = merged


PROFILE = profile(
    "openai-python",
    "OpenAI Python SDK, chat.completions.stream()",
    "library",
    "tool_calls merged by index as a list position; id and name concatenated; done on the next index or finish_reason",
    providers=("openai", "mistral"),
    library="openai",
    version="3.54.0",
    sources=(
        "openai/lib/streaming/_deltas.py:10-70 (accumulate_delta)",
        "openai/lib/streaming/chat/_completions.py:362-420 (_accumulate_chunk)",
        "openai/lib/streaming/chat/_completions.py:590-735 (get_done_events, _add_tool_done_event)",
    ),
    runs_in_python=True,
)(OpenAIPythonSnapshot)
