"""Calls and results across turns: which result answers which call, and what does not line up.

All the matching lives here, as the accumulator holds all the stitching of one stream: the SD6xx
rules only report the ``PairingProblem`` values ``pair`` returns. For each request, in order:

- the calls the previous turn streamed are found again in the assistant turn the client sent back
  (by id, else by name in order: a gateway may have rewritten the id), and their echoed input is
  compared with what was streamed (the empty-input bug, seen from the next request);
- every result is matched to a call by id (by name and order where the protocol has no ids:
  Gemini ``functionResponse`` without ``id``, Ollama ``tool_name``), and placed by the provider's
  own rules: Anthropic and Bedrock want the results in the user message right after the
  assistant message, ``tool_result`` blocks first; OpenAI a ``tool`` message for each call
  before the next assistant or user message; Gemini the ``functionResponse`` parts in the next
  content; Responses an output after its ``function_call`` item, or a ``previous_response_id``.

Only the messages a request adds to the previous request's history are checked, so a problem is
reported once, in the request that introduced it.
"""

from __future__ import annotations

from bisect import bisect_right
from collections import defaultdict
from operator import is_
from typing import AbstractSet, Any, Literal, Sequence

import orjson

from stream_doctor.accumulate.stream import ToolCall
from stream_doctor.conversation.model import RequestFacts, Turn, is_empty_input
from stream_doctor.conversation.pairing_problems import (
    CallIdReused,
    CallIdRewritten,
    CallWithoutResult,
    DuplicateResult,
    EchoedEmptyInput,
    EchoedInputDiffers,
    ItemIdAsCallId,
    Misplacement,
    PairingProblem,
    Place,
    ResultMisplaced,
    ResultWithoutCall,
    ThoughtSignatureNotSentBack,
)
from stream_doctor.conversation.request_parts import EchoedCall, MessageFacts, ToolResult
from stream_doctor.util.jsontext import equal
from stream_doctor.values.events import MISSING

#: Where each family wants the results of an assistant message's calls.
_NEXT_MESSAGE = ("anthropic", "bedrock", "gemini")


def pair(turns: Sequence[Turn]) -> list[PairingProblem]:
    pairing = Pairing()
    problems: list[PairingProblem] = []
    for turn in turns:
        problems += pairing.request(turn)
        problems += pairing.streamed(turn)
    return problems


class Pairing:
    """``pair`` a turn at a time, for a conversation that is still going (the recording proxy's live
    findings): ``request`` when a turn's request is known (its stream is not read), ``streamed`` once
    its stream is. Each call costs what its own turn holds, never the turns before it."""

    def __init__(self) -> None:
        self.streamed_calls: dict[
            str, tuple[int, ToolCall]
        ] = {}  # call id -> the first turn that streamed it, and the call
        self.items: dict[str, tuple[int, ToolCall]] = {}  # Responses item id (fc_…) -> turn and call
        self.previous: Turn | None = None
        self.index: _Index | None = None  # the last request's lookups, extended by the next one

    def request(self, turn: Turn) -> list[PairingProblem]:
        """What the turn's request gets wrong about the turns before it."""
        if turn.request is None or turn.facts.family == "unknown":
            return []
        index = self.index
        self.index = index = _Index(turn.facts) if index is None else index.extended(turn.facts)
        return _Request(turn, self.previous, self.streamed_calls, self.items, index).check()

    def streamed(self, turn: Turn) -> list[PairingProblem]:
        """What the turn's stream gets wrong about the turns before it (a reused call id); the turn
        is then the previous one for the next request."""
        problems: list[PairingProblem] = []
        streamed = self.streamed_calls
        for call in turn.stream.calls:
            if call.call_id:
                first = streamed.get(call.call_id)
                if first is not None and first[0] != turn.number:
                    problems.append(
                        CallIdReused(
                            Place(turn.number, call.started),
                            call.call_id,
                            call.name,
                            first[0],
                            first[1].name,
                            related=(("first streamed", Place(first[0], first[1].started)),),
                        )
                    )
                streamed.setdefault(call.call_id, (turn.number, call))
            if call.item_id:
                self.items.setdefault(call.item_id, (turn.number, call))
        self.previous = turn
        return problems


class _Request:
    """The checks of one request, against the history and the earlier turns' streams."""

    def __init__(
        self,
        turn: Turn,
        previous: Turn | None,
        streamed: dict[str, tuple[int, ToolCall]],
        items: dict[str, tuple[int, ToolCall]],
        index: _Index,
    ) -> None:
        self.turn = turn
        self.facts: RequestFacts = turn.facts
        self.previous = previous
        self.streamed = streamed
        self.items = items
        self.index = index
        self.start = _first_new_message(previous, turn, index)
        # Where the results and calls that may sit at or after ``start`` begin: after what the
        # previous request already held, when all of that lies before ``start`` (else from the first).
        tail = index.before if index.before.message_end <= self.start else _NOTHING_BEFORE
        self.new_results = self.facts.results[tail.results :]
        self.new_calls = self.facts.calls[tail.calls :]
        self.problems: list[PairingProblem] = []
        self.echo_ids = index.call_ids
        self.echo_items = index.items
        self.paired: dict[int, EchoedCall] = {}  # ordinal of a previous-turn call -> its echo
        self.answered_by_item: set[str] = set()  # call ids answered under their item id (reported as SD605)

    def place(self, path: str) -> Place:
        return Place(self.turn.number, request_path=path)

    def add(self, problem: PairingProblem) -> None:
        self.problems.append(problem)

    def check(self) -> list[PairingProblem]:
        continues = self._continues()
        if continues:
            self._echoes()
            if self.facts.family == "gemini":
                self._signatures()
        answered = self._placement()
        if continues:
            self._unanswered_stream_calls(answered)
        self._duplicates()
        return self.problems

    # -- the previous turn's calls, sent back -----------------------------------------------------

    def _continues(self) -> bool:
        """Whether this request carries on from the previous turn (so its calls need results here)."""
        previous = self.previous
        if previous is None or not previous.stream.calls:
            return False
        if self.facts.previous_response_id is not None:
            return any(m.message_id == self.facts.previous_response_id for m in previous.stream.messages)
        if self.start > 0:
            return True
        ids = {c.call_id for c in previous.stream.calls if c.call_id}
        return bool(ids & (self.echo_ids | {r.call_id for r in self.facts.results if r.call_id}))

    def _echoes(self) -> None:
        assert self.previous is not None
        calls = [c for c in self.previous.stream.calls if c.status == "complete"]
        new = [c for c in self.new_calls if c.message >= self.start and not c.reference]
        by_id = _Lookup(self.index.first_call)  # the first occurrence wins; new ones first
        for echoed in reversed(new):
            if echoed.call_id:
                by_id.new[echoed.call_id] = echoed
        used: set[int] = set()
        waiting: list[ToolCall] = []
        for call in calls:
            echoed_call = by_id.get(call.call_id) if call.call_id else None
            if echoed_call is None and call.item_id:
                # Responses: the item id sent where the call id belongs, or the item named by reference
                echoed_call = by_id.get(call.item_id)
                same_item = self.echo_items.get(call.item_id)
                if echoed_call is None and same_item is not None and same_item.reference:
                    self.paired[call.ordinal] = same_item
                    continue
            if echoed_call is None:
                waiting.append(call)
                continue
            used.add(id(echoed_call))
            self.paired[call.ordinal] = echoed_call
            self._compare(call, echoed_call)
        if not waiting:
            return  # every call was echoed under its id (a session's every turn): no candidates to list
        candidates = [c for c in _first_group(new, self.facts.family) if id(c) not in used]
        for call in waiting:
            echoed_call = next((c for c in candidates if c.name == call.name and id(c) not in used), None)
            if echoed_call is None:
                continue
            used.add(id(echoed_call))
            self.paired[call.ordinal] = echoed_call
            if call.call_id and echoed_call.call_id and echoed_call.call_id != call.call_id:
                self.add(
                    CallIdRewritten(
                        self.place(echoed_call.path),
                        echoed_call.call_id,
                        call.name,
                        call.call_id,
                        echoed_call.call_id,
                        related=(("streamed as", self._stream_place(call)),),
                    )
                )
            self._compare(call, echoed_call)

    def _signatures(self) -> None:
        """Gemini: a part that streamed with a thoughtSignature goes back with it, in the place the
        stream gave it among its turn's calls (the signature validates that step of the turn)."""
        assert self.previous is not None
        calls = [c for c in self.previous.stream.calls if c.status == "complete"]
        if not any(c.signed for c in calls):
            return
        for message in sorted({c.message for c in calls}):
            streamed = [c for c in calls if c.message == message]
            echoed = [(n, c, self.paired[c.ordinal]) for n, c in enumerate(streamed) if c.ordinal in self.paired]
            sent = sorted(echoed, key=lambda item: (item[2].message, item[2].part or 0))
            for rank, (position, call, echo) in enumerate(echoed):
                if not call.signed:
                    continue
                why: Literal["dropped", "moved"] = "moved" if echo.signed else "dropped"
                at = sent.index(echoed[rank]) if echo.signed else None
                if why == "moved" and at == rank:
                    continue
                self.add(
                    ThoughtSignatureNotSentBack(
                        self.place(echo.path),
                        echo.call_id or call.call_id,
                        call.name,
                        why,
                        position,
                        at,
                        related=(("streamed with its thoughtSignature", self._stream_place(call)),),
                    )
                )

    def _stream_place(self, call: ToolCall) -> Place:
        assert self.previous is not None
        return Place(self.previous.number, call.started)

    def _compare(self, call: ToolCall, echoed: EchoedCall) -> None:
        if echoed.reference:
            return
        if call.item_id and echoed.call_id == call.item_id and call.call_id != call.item_id:
            self.add(
                ItemIdAsCallId(
                    self.place(echoed.path),
                    echoed.call_id,
                    call.name,
                    call.item_id,
                    call.call_id,
                    "function_call",
                    related=(("streamed as", self._stream_place(call)),),
                )
            )
        if call.parse_failure is not None or call.status != "complete":
            return
        streamed = call.arguments
        value = echoed.input
        if call.input_format == "text":
            if isinstance(value, str) and value != streamed:
                self._differs(call, echoed, streamed, value)
            return
        if is_empty_input(value) and isinstance(streamed, dict) and streamed:
            self.add(
                EchoedEmptyInput(
                    self.place(echoed.path),
                    echoed.call_id or call.call_id,
                    call.name,
                    streamed,
                    value,
                    echoed.raw,
                    related=(("streamed with its input", self._stream_place(call)),),
                )
            )
        elif value is MISSING or (
            not equal(value, streamed) and not (is_empty_input(value) and is_empty_input(streamed))
        ):
            self._differs(call, echoed, streamed, value)

    def _differs(self, call: ToolCall, echoed: EchoedCall, streamed: Any, value: Any) -> None:
        self.add(
            EchoedInputDiffers(
                self.place(echoed.path),
                echoed.call_id or call.call_id,
                call.name,
                streamed,
                value,
                echoed.raw,
                related=(("streamed with its input", self._stream_place(call)),),
            )
        )

    # -- results: matched to calls, and in their place --------------------------------------------

    def _placement(self) -> AbstractSet[str]:
        """Match the request's new results to calls and check where they are; returns the ids answered."""
        facts = self.facts
        family = facts.family
        index = self.index
        results = [r for r in self.new_results if r.message >= self.start]
        matched: set[int] = set()  # id() of results matched to an echoed call in their place
        answered = index.first_result.keys()
        groups: dict[int, list[EchoedCall]] = defaultdict(list)
        for call in self.new_calls:
            if not call.server_side and not call.reference:
                groups[call.message].append(call)
        for message, calls in sorted(groups.items()):
            if message < self.start:
                continue
            expected = _expected_results(facts, message, index)
            pairs, lonely_calls = _match(calls, expected, facts.by_name)
            for result in pairs.values():
                matched.add(id(result))
                if family == "anthropic" and result.after_other_content:
                    self.add(ResultMisplaced(self.place(result.path), result.call_id, "after-other-content", family))
            for call in lonely_calls:
                if call.call_id and call.call_id in answered:
                    continue  # reported from the result's side
                if (
                    facts.by_name
                    and call.call_id is None
                    and any(r.name == call.name and id(r) not in matched for r in index.results_after(message))
                ):
                    continue
                self.add(CallWithoutResult(self.place(call.path), call.call_id, call.name, "request", family))
        for result in results:
            if id(result) in matched:
                continue
            self._unmatched_result(result, family)
        return answered

    def _unmatched_result(self, result: ToolResult, family: str) -> None:
        facts = self.facts
        call_id = result.call_id
        if call_id is not None and any(r.call_id == call_id and r is not result for r in facts.results):
            return  # a second result for the same call: SD603's
        if call_id is None:
            self.add(ResultWithoutCall(self.place(result.path), None, result.name, "name"))
            return
        echoed = next((c for c in facts.calls if c.call_id == call_id and not c.reference), None)
        if echoed is not None:
            self.add(
                ResultMisplaced(
                    self.place(result.path),
                    call_id,
                    "away-from-its-call",
                    family,
                    call_path=echoed.path,
                    related=(("its call", self.place(echoed.path)),),
                )
            )
            return
        earlier = self.streamed.get(call_id)
        if earlier is not None:
            turn, call = earlier
            stream_place = Place(turn, call.started)
            if family == "responses":
                referenced = call.item_id is not None and call.item_id in self.echo_items
                if facts.previous_response_id is not None or referenced:
                    return
                why: Misplacement = "item-not-sent-back"
            else:
                why = "call-not-sent-back"
            self.add(
                ResultMisplaced(
                    self.place(result.path), call_id, why, family, turn=turn, related=(("call streamed", stream_place),)
                )
            )
            return
        by_item = self.items.get(call_id)
        echoed_item = self.echo_items.get(call_id)
        if by_item is not None or (echoed_item is not None and echoed_item.call_id != call_id):
            call_id_proper = by_item[1].call_id if by_item is not None else echoed_item.call_id  # type: ignore[union-attr]
            name = by_item[1].name if by_item is not None else echoed_item.name  # type: ignore[union-attr]
            if call_id_proper:
                self.answered_by_item.add(call_id_proper)
            related = (("call streamed", Place(by_item[0], by_item[1].started)),) if by_item is not None else ()
            self.add(
                ItemIdAsCallId(
                    self.place(result.path), call_id, name, call_id, call_id_proper, "result", related=related
                )
            )
            return
        if facts.by_name and result.name and self._answers_by_name(result):
            return
        self.add(ResultWithoutCall(self.place(result.path), call_id, result.name, "id"))

    def _answers_by_name(self, result: ToolResult) -> bool:
        """Gemini: a response with an id the call never had still answers it by name (the call had no id)."""
        return any(c.name == result.name and c.call_id is None for c in self.facts.calls if c.message < result.message)

    def _unanswered_stream_calls(self, answered: AbstractSet[str]) -> None:
        """The previous turn's calls that this request neither sends back nor answers."""
        assert self.previous is not None
        previous = self.previous
        names: dict[str, int] = defaultdict(int)
        for result in self.new_results:
            if result.message >= self.start and result.name:
                names[result.name] += 1
        for call in previous.stream.calls:
            if call.server_side or call.status != "complete" or call.ordinal in self.paired:
                continue
            if call.call_id and (call.call_id in answered or call.call_id in self.answered_by_item):
                continue
            if call.call_id is None and names.get(call.name or "", 0) > 0:
                names[call.name or ""] -= 1
                continue
            if self._sent_back_as_text(call):
                continue  # a structured-output tool: the application keeps its arguments as the answer
            self.add(
                CallWithoutResult(
                    self.place(_container(self.facts.family)),
                    call.call_id,
                    call.name,
                    "stream",
                    self.facts.family,
                    turn=previous.number,
                    related=(("call streamed", Place(previous.number, call.started)),),
                )
            )

    def _sent_back_as_text(self, call: ToolCall) -> bool:
        """The request carries the call's arguments as an assistant message's text (the same JSON value):
        the tool was a structured-output tool, whose arguments are the answer, and no result is owed."""
        texts = [m.text for m in self.facts.messages if m.message >= self.start and m.role == "assistant" and m.text]
        if not texts:
            return False
        expected = call.arguments  # None when they do not parse
        if not isinstance(expected, (dict, list)):
            return False
        for text in texts:
            try:
                if equal(orjson.loads(text), expected):
                    return True
            except orjson.JSONDecodeError:
                continue
        return False

    def _duplicates(self) -> None:
        first_result = self.index.first_result
        for result in self.new_results:
            if not result.call_id:
                continue
            first = first_result[result.call_id]
            if first is not result and result.message >= self.start:
                self.add(
                    DuplicateResult(
                        self.place(result.path),
                        result.call_id,
                        first.path,
                        related=(("first result", self.place(first.path)),),
                    )
                )


def _first_new_message(previous: Turn | None, turn: Turn, index: _Index) -> int:
    """The index of the first message this request adds to the previous request's history (0: check all)."""
    if previous is None or previous.request is None or turn.facts.previous_response_id is not None:
        return 0
    if previous.facts is index.before.facts and index.before.messages_shared:
        # the same message objects (History shares them): the same roles, without comparing them
        count = len(previous.facts.messages)
        return count if 0 < count < len(turn.facts.messages) else 0
    before = [m.role for m in previous.facts.messages]
    now = [m.role for m in turn.facts.messages]
    if before and len(now) > len(before) and now[: len(before)] == before:
        return len(before)
    return 0


def _first_group(calls: list[EchoedCall], family: str) -> list[EchoedCall]:
    """The calls of the first assistant turn among ``calls`` (Responses: every function_call item)."""
    if not calls or family == "responses":
        return calls
    first = calls[0].message
    return [c for c in calls if c.message == first]


def _expected_results(facts: RequestFacts, message: int, index: _Index) -> Sequence[ToolResult]:
    """The results that may answer the calls of assistant message ``message``, where the family wants them."""
    family = facts.family
    by_message = index.by_message
    if family in _NEXT_MESSAGE:
        return list(by_message.get(message + 1, ()))
    if family == "openai-chat":
        messages = index.messages
        run: list[ToolResult] = []
        at = message + 1
        while at in messages and messages[at].role == "tool":
            run += by_message.get(at, ())
            at += 1
        return run
    return index.results_after(message)  # responses: anywhere after the call


def _match(
    calls: list[EchoedCall], results: Sequence[ToolResult], by_name: bool
) -> tuple[dict[int, ToolResult], list[EchoedCall]]:
    """Results for calls: by id; where one side has no id (and the protocol allows it), by name in order."""
    pairs: dict[int, ToolResult] = {}
    free = list(results)
    lonely: list[EchoedCall] = []
    for call in calls:
        found = next((r for r in free if call.call_id and r.call_id == call.call_id), None)
        if found is None and by_name:
            found = next(
                (r for r in free if r.name == call.name and (r.call_id is None or call.call_id is None)),
                None,
            )
        if found is None:
            lonely.append(call)
            continue
        free.remove(found)
        pairs[id(call)] = found
    return pairs, lonely


def _container(family: str) -> str:
    return {"gemini": "contents", "responses": "input"}.get(family, "messages")


class _Before:
    """What the request before held: its facts, how many results and calls, the message after its
    results' and calls' last, and whether the current request starts with its very message objects."""

    __slots__ = ("calls", "facts", "message_end", "messages_shared", "results")

    def __init__(self, facts: RequestFacts | None, message_end: int, shared: bool) -> None:
        self.facts = facts
        self.results = len(facts.results) if facts is not None else 0
        self.calls = len(facts.calls) if facts is not None else 0
        self.message_end = message_end
        self.messages_shared = shared


_NOTHING_BEFORE = _Before(None, 0, False)


class _Index:
    """The lookups over a request's results, calls and messages that every request's checks ask for.

    Each request of a session repeats the previous one's history, and ``requests.History`` gives it the
    previous request's very fact objects followed by the new ones: when every result, call and message
    of the previous request is the same object at the same place, the index is extended with what is
    new (identity, never equality, so ``1 == 1.0`` cannot make two histories look alike); else it is
    built again from the whole request."""

    def __init__(self, facts: RequestFacts) -> None:
        self.facts = facts
        self.before = _NOTHING_BEFORE
        self.first_result: dict[str, ToolResult] = {}  # call id -> its first result
        self.by_message: dict[int, list[ToolResult]] = {}  # message index -> its results, in order
        self.first_call: dict[str, EchoedCall] = {}  # call id -> its first echoed call that is no reference
        self.call_ids: set[str] = set()
        self.items: dict[str, EchoedCall] = {}  # item id -> its last echoed call
        self.messages: dict[int, MessageFacts] = {}  # index -> its last message
        self.result_messages: list[int] = []  # each result's message index, in the request's order
        self.results_in_order = True  # whether those never go down (a history's do): then they are bisected
        self.message_end = 0
        self._add(facts.results, facts.calls, facts.messages)

    def extended(self, facts: RequestFacts) -> _Index:
        """The index of ``facts``: this one with what is new, when ``facts`` starts with this one's."""
        old = self.facts
        extends = facts.extends
        if (extends is None or extends() is not old) and not (
            _starts_with(facts.messages, old.messages)
            and _starts_with(facts.results, old.results)
            and _starts_with(facts.calls, old.calls)
        ):
            return _Index(facts)  # an edited history, or one read whole: nothing before is known
        self.before = _Before(old, self.message_end, True)
        self.facts = facts
        self._add(facts.results[len(old.results) :], facts.calls[len(old.calls) :], facts.messages[len(old.messages) :])
        return self

    def _add(
        self, results: Sequence[ToolResult], calls: Sequence[EchoedCall], messages: Sequence[MessageFacts]
    ) -> None:
        end = self.message_end
        result_messages = self.result_messages
        for result in results:
            if result.call_id:
                self.first_result.setdefault(result.call_id, result)
            if result_messages and result.message < result_messages[-1]:
                self.results_in_order = False
            result_messages.append(result.message)
            self.by_message.setdefault(result.message, []).append(result)
            end = max(end, result.message + 1)
        for call in calls:
            if call.call_id:
                self.call_ids.add(call.call_id)
                if not call.reference:
                    self.first_call.setdefault(call.call_id, call)
            if call.item_id:
                self.items[call.item_id] = call
            end = max(end, call.message + 1)
        for message in messages:
            self.messages[message.message] = message
        self.message_end = end

    def results_after(self, message: int) -> Sequence[ToolResult]:
        """The request's results in messages after ``message``, in order: found by bisecting, not by
        reading every result of the history at each turn (Responses asks once per turn with calls)."""
        results = self.facts.results
        if self.results_in_order:
            return results[bisect_right(self.result_messages, message) :]
        return [r for r in results if r.message > message]


def _starts_with(now: Sequence[Any], before: Sequence[Any]) -> bool:
    """Whether ``now`` begins with the very objects of ``before`` (compared by identity, at C speed)."""
    return len(now) >= len(before) and all(map(is_, now, before))


class _Lookup:
    """Echoed calls by id: the new messages' first, then the whole request's first."""

    def __init__(self, first: dict[str, EchoedCall]) -> None:
        self.first = first
        self.new: dict[str, EchoedCall] = {}

    def get(self, call_id: str) -> EchoedCall | None:
        found = self.new.get(call_id)
        return found if found is not None else self.first.get(call_id)
