"""The tool calls of a Chat Completions choice: which call each ``tool_calls[]`` entry (or the legacy
``function_call``) belongs to, the key it gets, the fields it sends with a wrong type, and its events.
``openai_chat.OpenAIChatTranslator`` reads the rest of the chunk and hands each entry here
(``CallReading``, its base); ``Choice`` is what one choice opened.

Correlation follows the robust strategy of wire-formats §2.5 (and the AI SDK's
``StreamingToolCallTracker``): a tool-call fragment is found by its non-empty ``id`` first, then by
``(choice index, tool_calls[].index)``, and a fragment with neither goes to the latest open call
(key ``None``: the accumulator attributes it and records that it had to). A new id that names a
tool on an index whose call is still open is another call (compatible servers that give every call
index 0, or send one whole call per chunk at one index); a new id without a name is the same call
whose id changed. Ids and names are never concatenated: fragments that carry them again are passed
on, and the accumulator counts repeats, late arrivals, blanks and changes.
"""

from __future__ import annotations

from typing import Any, Hashable

from stream_doctor.capture.base import Pos
from stream_doctor.capture.problem_facts import CallAfterFinishReason
from stream_doctor.providers.openai_chat_protocol import ARGS, LEGACY_ARGS
from stream_doctor.util import jsontext
from stream_doctor.values.events import ArgsDelta, Event, Malformed, Problem, ToolStart, Wire


class Choice:
    """What one choice of the current completion opened: enough to route its fragments and to stop
    its blocks at its finish_reason. The buffers themselves live in the accumulator."""

    __slots__ = (
        "index", "by_index", "by_id", "names", "call_index", "latest", "opened", "stopped", "blocks", "calls",
        "reason", "reason_pos", "role",
    )  # fmt: skip

    def __init__(self, index: int) -> None:
        self.index = index
        self.by_index: dict[int, Hashable] = {}  # tool_calls[].index -> the latest call on it
        self.by_id: dict[str, Hashable] = {}
        self.names: dict[Hashable, str | None] = {}
        self.call_index: dict[Hashable, int | None] = {}
        self.latest: Hashable = None
        self.opened: list[Hashable] = []  # every key (call or text block), in order
        self.stopped = 0  # how many of ``opened`` a finish_reason already stopped
        self.blocks: set[str] = set()  # content block types opened
        self.calls = 0
        self.reason: str | None = None  # its finish_reason, once it came
        self.reason_pos: Pos | None = None
        self.role = False  # a chunk gave it a delta.role (openai-node throws at the end without one)


class CallReading:
    """The half of ``OpenAIChatTranslator`` that reads tool calls into events, keyed per ``Choice``."""

    #: Mistral's arguments may be a JSON object (``mistral.MistralTranslator``).
    object_arguments_allowed: bool
    #: choice index -> tool index -> key: the open calls a bare argument fragment may go to.
    lanes: dict[int, dict[int, Hashable]]

    def _tool_call(self, pos: Pos, state: Choice, call: Any) -> list[Event]:
        if not isinstance(call, dict):
            return [Malformed(pos, "a delta.tool_calls[] entry is not an object")]
        function = call.get("function")
        without_function = function is None  # langchain-openai raises on it (clients/langchain.py)
        if without_function:
            function = {}
        elif not isinstance(function, dict):
            return [Malformed(pos, "a tool call's function is not an object")]
        index = call.get("index")
        out: list[Event] = []
        call_id = call.get("id")
        wire: Wire = ()
        if (
            (index is not None and type(index) is not int)
            or (call_id is not None and type(call_id) is not str)
            or type(function.get("name", "")) is not str
            or type(function.get("arguments", "")) is not str
            or ("type" in call and call["type"] is None)
        ):
            wire = wrong_types(call, function)  # for the client profiles only: their library acts on the value
        if index is not None and type(index) is not int:
            out.append(
                Problem(
                    pos,
                    "malformed-frame",
                    f"tool_calls[].index {jsontext.brief(index)} is not an integer; read as missing",
                )
            )
            index = None
        call_id = call_id if isinstance(call_id, str) and call_id.strip() else None  # Alibaba sends "" on continuations
        wire_name = function.get("name")
        wire_name = wire_name if isinstance(wire_name, str) else None
        tool = wire_name if wire_name and wire_name.strip() else None
        arguments, problem = self._arguments(function.get("arguments"))
        if problem:
            out.append(Problem(pos, "malformed-frame", problem))

        key = self._resolve(state, index, call_id, tool, arguments)
        if key is _NEW:
            if state.reason is not None:
                line = state.reason_pos.line if state.reason_pos is not None else None
                facts = CallAfterFinishReason(tool, call_id, state.index, state.reason, line)
                out.append(Problem(pos, "call-after-finish-reason", "", facts))
            key = self._new_key(state, index, call_id)
            state.names[key] = tool
            state.call_index[key] = index
            state.latest = key
            state.opened.append(key)
            state.calls += 1
            if call_id is not None:
                state.by_id[call_id] = key
            if index is not None:
                state.by_index[index] = key
                if state.reason is None:
                    self.lanes.setdefault(state.index, {})[index] = key
            wire_type = call.get("type")
            wire_type = wire_type if isinstance(wire_type, str) else None  # Mistral sends none
            out.append(
                ToolStart(
                    pos, key, index, "function", call_id, tool, None, choice=state.index, wire_type=wire_type, wire=wire
                )
            )
            if arguments is not None:
                out.append(ArgsDelta(pos, key, arguments, ARGS, wire=wire))
            return out
        if key is not None:
            if call_id is not None:
                state.by_id.setdefault(call_id, key)
            if tool is not None and state.names.get(key) is None:
                state.names[key] = tool
        out.append(ArgsDelta(pos, key, arguments or "", ARGS, call_id, wire_name, without_function, wire))
        return out

    def _resolve(
        self, state: Choice, index: int | None, call_id: str | None, tool: str | None, arguments: str | None
    ) -> Any:
        """The key of the call this fragment belongs to, ``_NEW`` for a new call, None for none."""
        if call_id is not None and call_id in state.by_id:
            key = state.by_id[call_id]
            known = state.call_index.get(key)
            # The same id on another index with a name: a provider reusing one id for two calls.
            if index is not None and known is not None and known != index and tool is not None:
                return _NEW
            return key
        if index is not None:
            key = state.by_index.get(index)
            if key is None:
                return _NEW
            if call_id is not None and tool is not None:
                # Another id naming a tool on this index is a second call merged onto it, unless it
                # names the same tool and its arguments go on rather than start (`{`, `[` or
                # nothing): then it is this call, its id changing (as the AI SDK's tracker decides).
                if state.names.get(key) != tool or starts_arguments(arguments):
                    return _NEW
                return key
            if call_id is None and tool is not None and state.names.get(key) not in (None, tool):
                return _NEW  # another tool named on this index
            return key  # a continuation (an id without a name is the same call's id changing)
        if call_id is not None:
            return _NEW  # no index: the id is the correlator
        if tool is not None:
            latest = state.latest
            if latest is not None and state.names.get(latest) == tool and state.reason is None:
                return latest  # the name repeated on a continuation
            return _NEW
        return None  # neither index nor id nor name: the accumulator attributes it

    def _new_key(self, state: Choice, index: int | None, call_id: str | None) -> Hashable:
        if index is not None:
            key: Hashable = (state.index, index)
            return key if key not in state.call_index else (state.index, index, state.calls)
        if call_id is not None:
            key = (state.index, "id", call_id)
            return key if key not in state.call_index else (state.index, "id", call_id, state.calls)
        return (state.index, "call", state.calls)

    def _arguments(self, arguments: Any) -> tuple[str | None, str | None]:
        """The fragment's argument text, and a problem when it is not a string."""
        if arguments is None or type(arguments) is str:
            return arguments, None
        text = jsontext.dumps(arguments).decode() if isinstance(arguments, (dict, list)) else str(arguments)
        if self.object_arguments_allowed and isinstance(arguments, dict):
            return text, None
        return text, (
            f"function.arguments is a JSON {type(arguments).__name__}, not a string; "
            "clients that concatenate argument strings fail on it (read here as its JSON text)"
        )

    def _legacy_call(self, pos: Pos, state: Choice, payload: Any) -> list[Event]:
        """The deprecated ``delta.function_call`` {name?, arguments?}: one call per choice, no index,
        no id (the next request answers it with a ``role: "function"`` message naming it)."""
        if not isinstance(payload, dict):
            return [Malformed(pos, "delta.function_call is not an object")]
        key = (state.index, "function_call")
        wire_name = payload.get("name")
        wire_name = wire_name if isinstance(wire_name, str) else None
        arguments, problem = self._arguments(payload.get("arguments"))
        out: list[Event] = [Problem(pos, "malformed-frame", problem)] if problem else []
        if key not in state.call_index:
            tool = wire_name if wire_name and wire_name.strip() else None
            state.names[key] = tool
            state.call_index[key] = None
            state.latest = key
            state.opened.append(key)
            state.calls += 1
            out.append(ToolStart(pos, key, None, "function_call", None, tool, None, id_optional=True))
            if arguments is not None:
                out.append(ArgsDelta(pos, key, arguments, LEGACY_ARGS))
            return out
        out.append(ArgsDelta(pos, key, arguments or "", LEGACY_ARGS, None, wire_name))
        return out


_CHECKED_TYPES = {"index": int, "id": str}


def wrong_types(call: dict[str, Any], function: dict[str, Any]) -> Wire:
    """The fields of one ``tool_calls[]`` entry sent with a type Chat Completions does not allow, in the
    order sent (``events.Wire``): an ``index`` that is not an integer, an ``id`` that is not a string
    (null is "not sent"), a ``type`` sent as null, and a ``function.name`` or ``function.arguments`` that is not a string, null
    included: openai-python's ``accumulate_delta`` keeps a null as the snapshot's value where an absent
    key leaves none (Mistral's object arguments too: the OpenAI SDKs read them as any server's)."""
    found: Wire = ()
    for field, value in call.items():
        wanted = _CHECKED_TYPES.get(field)
        if wanted is not None and value is not None and type(value) is not wanted:
            found += ((field, value),)
        elif field == "type" and value is None:  # Writer's continuations: openai-python copies the null over
            found += ((field, value),)
        elif field == "function" and value is function:
            for part, given in function.items():
                if part in ("name", "arguments") and type(given) is not str:
                    found += ((part, given),)
    return found


def starts_arguments(arguments: str | None) -> bool:
    """Whether a fragment looks like the start of a call's arguments rather than their middle."""
    if not arguments:
        return True
    head = arguments.lstrip()[:1]
    return head in ("{", "[", "")


_NEW: Any = object()
