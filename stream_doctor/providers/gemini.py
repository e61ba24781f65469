"""Google Gemini and Vertex AI ``streamGenerateContent`` (``?alt=sse``, or the streamed JSON array).

Wire format: ../shared/reference/wire-formats.md §4; python-genai ``types.py`` (``Candidate``,
``Part``, ``FunctionCall``, ``PartialArg``, ``FinishReason``). The ``alt=sse`` body ends its lines
with CRLF (nyroway/nyro PR #265: "Vertex AI emits SSE frames with CRLF terminators"; routstr-core
PR #543 for the Gemini API); the SSE reader takes either. Each chunk is a whole
``GenerateContentResponse``: ``candidates[].content.parts[]`` plus ``finishReason``. There is no
start event and no end event: the first chunk begins the message and the connection closing after a
chunk with ``finishReason`` ends it (``close`` emits the stop then; without a finish reason the
stream was cut).

Tool calls are ``functionCall`` parts. Classic calls come whole (``args`` is an object, no ``args``
means ``{}``): the part starts and completes the call. Vertex's streamed arguments
(``streamFunctionCallArguments``) open a call with ``{name, willContinue: true}``, send
``partialArgs`` pieces addressed by JSON path, and end at a part without ``willContinue`` (normally
the empty ``{"functionCall":{}}``). The pieces are written out here as JSON text fragments, in the
order they arrive, so the accumulator joins and parses the arguments once like any other provider's;
every call gets its own key, so calls of one name are never merged. ``FunctionCall.id`` is optional
(none of the captured streams has one): a call without an id is not a stream problem here.
"""

from __future__ import annotations

from json.encoder import encode_basestring
from typing import Any, Hashable, Sequence

from stream_doctor.capture.base import NOT_JSON, Frame, Pos
from stream_doctor.capture.problem_facts import (
    MissingTerminalPart,
    PartialArgUnplaceable,
    PromptBlocked,
    SplitCall,
    StringsSplit,
    ThoughtSignatures,
    ToolCallRejected,
)
from stream_doctor.capture.runs import FRAGMENT, FrameRun, RunForm
from stream_doctor.providers.base import Batching
from stream_doctor.providers.fields import ANY, FieldCheck, Shape
from stream_doctor.providers.gemini_partial_args import StreamedArguments
from stream_doctor.providers.gemini_protocol import WORDS
from stream_doctor.providers.sniffing import score
from stream_doctor.util import jsontext
from stream_doctor.values.events import (
    ArgsDelta,
    BlockDelta,
    BlockStart,
    BlockStop,
    Event,
    Finish,
    FinishCategory,
    KeepAlive,
    Malformed,
    MessageStart,
    MessageStop,
    Problem,
    StreamError,
    ToolStart,
    Unknown,
)
from stream_doctor.values.protocol import EventWords, ProtocolFacts, StreamEnd

name = "gemini"
title = "Google Gemini / Vertex AI (streamGenerateContent)"
#: What ends the stream and what completes one call, in this provider's words (SD301, SD303).
#: Gemini has no tool-call finish reason: a turn that made calls ends with ``STOP`` (SD525).
protocol = ProtocolFacts(
    EventWords(
        message_start="a chunk with a new responseId",
        call_start="a functionCall part",
        fragment="functionCall.args or partialArgs",
        call_end="a functionCall part without willContinue",
        stream_end="a chunk with finishReason",
        stop_reason="finishReason",
    ),
    positional_indices=False,
    finish_with_calls="STOP",
    # Nothing on the wire ends the stream: only the body's end does. A finishReason is no end
    # (wire-formats §4.1: it can come on more than one chunk; a built-in tool's round ends with one
    # and the stream goes on, 0xPlaygrounds/rig PR #2328), and google-genai reads to the body's end.
    stream_end=StreamEnd(),
)

DELTA_TYPE = "partialArgs"

#: finishReason -> neutral category. ``STOP`` is mapped per candidate: Gemini has no tool-call finish
#: reason and ends a turn that made calls with ``STOP`` too (python-genai ``FinishReason``; SD525 says so).
FINISH_CATEGORIES: dict[str, FinishCategory] = {
    "STOP": "end",
    "MAX_TOKENS": "length",
    "SAFETY": "filter",
    "RECITATION": "filter",
    "BLOCKLIST": "filter",
    "PROHIBITED_CONTENT": "filter",
    "SPII": "filter",
    "MODEL_ARMOR": "filter",
    "IMAGE_SAFETY": "filter",
    "IMAGE_PROHIBITED_CONTENT": "filter",
    "IMAGE_RECITATION": "filter",
    "MALFORMED_FUNCTION_CALL": "error",
    "UNEXPECTED_TOOL_CALL": "error",
    "TOO_MANY_TOOL_CALLS": "error",
    "MISSING_THOUGHT_SIGNATURE": "error",
    "LANGUAGE": "other",
    "OTHER": "other",
    "IMAGE_OTHER": "other",
    "NO_IMAGE": "other",
    "FINISH_REASON_UNSPECIFIED": "other",
}

#: Finish reasons that say the API refused the function call the model produced (SD526 says what each means).
TOOL_CALL_REJECTED = frozenset(
    {"MALFORMED_FUNCTION_CALL", "UNEXPECTED_TOOL_CALL", "TOO_MANY_TOOL_CALLS", "MISSING_THOUGHT_SIGNATURE"}
)

#: Part fields that carry content other than a function call (one per part) and fields that only
#: annotate a part. Anything else is a part type this adapter does not know.
CONTENT_PARTS = ("text", "inlineData", "fileData", "functionResponse", "executableCode", "codeExecutionResult")
PART_ANNOTATIONS = frozenset({"thought", "thoughtSignature", "videoMetadata", "partMetadata", "mediaResolution"})

#: The documented fields of a chunk (SD006 lists any other): ``GenerateContentResponse``,
#: ``Candidate``, ``Content`` and ``FunctionCall`` of the Gemini API and Vertex AI references
#: (generativelanguage v1beta, aiplatform v1beta1) and python-genai ``types.py``. A part's own
#: fields are its type (an unknown one is SD002), so only its functionCall is checked.
CHUNK_FIELDS = frozenset({"candidates", "promptFeedback", "usageMetadata", "modelVersion", "responseId", "createTime"})
CHUNK = Shape(
    CHUNK_FIELDS | {"error"},
    {
        "candidates": Shape(
            "index content finishReason finishMessage safetyRatings citationMetadata groundingMetadata"
            " groundingAttributions urlContextMetadata avgLogprobs logprobsResult tokenCount",
            {
                "content": Shape(
                    "role parts",
                    {"parts": Shape(ANY, {"functionCall": Shape("id name args partialArgs willContinue")})},
                )
            },
        )
    },
)


#: The chunk that continues a streamed string argument, as Vertex AI sends it (``capture/runs.py``):
#: one candidate, one part, one piece with willContinue, no whitespace; the rest of the chunk
#: (usageMetadata, modelVersion, createTime, responseId) as it comes. A run of chunks that are the
#: same bytes but for the piece's text is read without a Frame per chunk. Its positions are read with
#: it: ``run_fragments`` escapes the pieces into argument text, so they could not be computed later.
run_form = RunForm(
    "gemini partialArgs stringValue",
    rb'data: \{"candidates":\[\{"content":\{"role":"model","parts":\[\{"functionCall":\{"partialArgs":\['
    rb'\{"jsonPath":"[^"\\\x00-\x1f]++","stringValue":"(?P<fragment>'
    + FRAGMENT
    + rb')","willContinue":true\}\],"willContinue":true\}\}\]\}\}\][^\x0d\x0a]*+\n\n',
    computed=False,
)


def sniff(frames: Sequence[Frame]) -> int:
    """Gemini chunks are objects with a ``candidates`` list (or a ``promptFeedback``), no ``type``."""
    return score(frames, WORDS, _weigh)


def _weigh(frame: Frame) -> int:
    value = _unwrapped(frame.value)
    if "type" in value or "object" in value or "choices" in value:
        return 0
    if isinstance(value.get("candidates"), list) or isinstance(value.get("promptFeedback"), dict):
        return 2
    return 1 if "usageMetadata" in value and "modelVersion" in value else 0


def _unwrapped(value: Any) -> Any:
    """The chunk inside Code Assist's wrapper, else the value itself.

    Gemini Code Assist (``cloudcode-pa.googleapis.com/v1internal:streamGenerateContent``, the endpoint
    gemini-cli uses when signed in with a Google account, and the proxies that reuse its login) sends
    each chunk as ``{"response": GenerateContentResponse, "traceId": …}`` (gemini-cli
    ``packages/core/src/code_assist/converter.ts``, ``CaGenerateContentResponse``: ``response``,
    ``traceId``, ``consumedCredits``, ``remainingCredits``); gemini-cli reads ``response`` and drops
    the rest. A chunk of its own (``candidates`` or ``promptFeedback`` at the top) is never unwrapped.
    """
    if (
        isinstance(value, dict)
        and isinstance(value.get("response"), dict)
        and "candidates" not in value
        and "promptFeedback" not in value
    ):
        return value["response"]
    return value


def translator() -> GeminiTranslator:
    return GeminiTranslator()


# -- the translator ----------------------------------------------------------------------------


class _Call:
    __slots__ = ("key", "name", "pos", "signed", "streamed", "label")

    def __init__(self, key: Any, name: str | None, pos: Pos, signed: bool, label: str) -> None:
        self.key = key
        self.name = name
        self.pos = pos
        self.signed = signed
        self.streamed: StreamedArguments | None = None
        self.label = label  # "getWeather (call 2)": the call's number in its turn, from 1


class _Candidate:
    """What one candidate's protocol needs remembered: its calls, its open streamed call, its blocks."""

    __slots__ = ("index", "calls", "open", "open_pos", "blocks", "finished", "signed_parts", "split")

    def __init__(self, index: int) -> None:
        self.index = index
        self.calls: list[_Call] = []
        self.open: _Call | None = None  # a streamed call whose parts said willContinue
        self.open_pos: Pos | None = None
        self.blocks: dict[str, Any] = {}  # "text"/"thought"/… -> key of its (open) content block
        self.finished = False
        self.signed_parts = 0  # parts other than calls that carried a thoughtSignature
        self.split: list[tuple[_Call, SplitCall]] = []  # strings streamed in pieces, per call

    def key(self, what: str | int) -> Any:
        return what if self.index == 0 else (self.index, what)


class GeminiTranslator(Batching):
    __slots__ = ("counts", "response_id", "started", "candidates", "last_pos", "fields", "streaming")

    fragment_event = "chunk"
    delta_type = DELTA_TYPE

    def __init__(self) -> None:
        self.counts: dict[str, int] = {}
        self.fields = FieldCheck()
        self.response_id: str | None = None
        self.started = False
        self.candidates: dict[int, _Candidate] = {}
        self.last_pos: Pos | None = None
        self.streaming: _Call | None = None  # the call of the latest chunk the hot path took as a fragment

    def fast_fragment(self, frame: Frame) -> tuple[Hashable, str] | list[Event] | None:
        """A chunk whose only part continues the open streamed call (see ``base.Batching``): its
        text, or its events when a piece adds no text or could not be placed."""
        value = frame.value
        try:
            candidates = value["candidates"]
            candidate = candidates[0]
            content = candidate["content"]
            parts = content["parts"]
            part = parts[0]
            call = part["functionCall"]
            if (
                len(parts) == 1
                and len(part) == 1
                and len(candidates) == 1
                and len(candidate) == 1  # content only: no field of the chunk is undocumented
                and (len(content) == 1 or (len(content) == 2 and "role" in content))
                and CHUNK_FIELDS.issuperset(value)
                and len(call) == 2
                and "name" not in call
                and call["willContinue"] is True
                and "finishReason" not in candidate
                and self.started
                and value.get("responseId", self.response_id) == self.response_id
            ):
                open_call = self.candidates[candidate.get("index", 0)].open
                pieces = call["partialArgs"]
                if open_call is not None and type(pieces) is list:
                    streamed = open_call.streamed
                    assert streamed is not None
                    if len(pieces) == 1:
                        text = streamed.place(pieces[0])
                    else:
                        text = "".join([streamed.place(piece) for piece in pieces])
                    self.last_pos = frame.pos
                    if not streamed.problems:
                        if text:
                            self.streaming = open_call
                            return open_call.key, text
                        return []
                    out: list[Event] = [ArgsDelta(frame.pos, open_call.key, text, DELTA_TYPE)] if text else []
                    return out + self._streamed_problems(frame.pos, open_call)
        except (KeyError, TypeError, IndexError, AttributeError):
            pass
        return None

    def run_fragments(self, run: FrameRun, key: Hashable) -> list[str] | None:
        """A run's chunks are the head's bytes but for the string piece, so each continues the same
        string of the same call the same way. An empty piece adds no fragment: such a run is read
        chunk by chunk."""
        pieces = run.fragments
        if "" in pieces:
            return None
        streaming = self.streaming
        assert streaming is not None and streaming.streamed is not None
        streaming.streamed.open_pieces += pieces
        self.last_pos = run.pos
        return [text[1:-1] for text in map(encode_basestring, pieces)]

    def _feed(self, frame: Frame) -> list[Event]:
        pos = frame.pos
        value = frame.value
        if value is NOT_JSON:
            return [Malformed(pos, frame.error or "not JSON")]
        if not isinstance(value, dict):
            return [Malformed(pos, f"expected a JSON object, got {type(value).__name__}")]
        value = _unwrapped(value)
        self.last_pos = pos
        self.counts["chunk"] = self.counts.get("chunk", 0) + 1
        found = self.fields.check(pos, value, CHUNK, "")
        out = self._chunk(frame, value)
        return out + found if found else out

    def _chunk(self, frame: Frame, value: dict[str, Any]) -> list[Event]:
        pos = frame.pos
        out: list[Event] = []
        candidates = value.get("candidates")
        feedback = value.get("promptFeedback")
        if candidates is None and feedback is None:
            if "usageMetadata" in value or "modelVersion" in value:
                return [KeepAlive(pos, "usageMetadata")]
            if isinstance(value.get("error"), dict):
                return self._error(frame, value["error"])
            return [Unknown(pos, "chunk without candidates")]
        response_id = value.get("responseId")
        if not self.started or (isinstance(response_id, str) and response_id != self.response_id):
            # A different responseId mid-stream means a second response was spliced in.
            if self.started:
                for previous in self.candidates.values():
                    out.extend(self._turn_problems(previous))
                out.extend(self._close_blocks(pos))
            self.started = True
            self.response_id = response_id if isinstance(response_id, str) else None
            self.candidates = {}
            model = value.get("modelVersion")
            out.append(MessageStart(pos, self.response_id, model if isinstance(model, str) else None))
        if isinstance(feedback, dict) and feedback.get("blockReason") is not None:
            out.extend(self._blocked(pos, feedback))
        if candidates is None:
            return out
        if not isinstance(candidates, list):
            out.append(Malformed(pos, "'candidates' is not a list"))
            return out
        for candidate in candidates:
            if not isinstance(candidate, dict):
                out.append(Malformed(pos, "a candidate is not an object"))
                continue
            out.extend(self._candidate(frame, candidate))
        return out

    def close(self) -> list[Event]:
        out: list[Event] = []
        pos = self.last_pos
        if pos is None:
            return out
        for candidate in self.candidates.values():
            out.extend(self._turn_problems(candidate))
        # No end event exists: the connection closing after the finish reason is the end.
        if self.candidates and all(c.finished for c in self.candidates.values()):
            out.extend(self._close_blocks(pos))
            out.append(MessageStop(pos))
        return out

    # -- candidates ------------------------------------------------------------------------

    def _candidate(self, frame: Frame, value: dict[str, Any]) -> list[Event]:
        pos = frame.pos
        index = value.get("index", 0)
        if type(index) is not int:
            return [Malformed(pos, "a candidate's 'index' is not an integer")]
        candidate = self.candidates.get(index)
        if candidate is None:
            candidate = self.candidates[index] = _Candidate(index)
        out: list[Event] = []
        content = value.get("content")
        if isinstance(content, dict):
            parts = content.get("parts", [])
            if not isinstance(parts, list):
                out.append(Malformed(pos, "'content.parts' is not a list"))
            else:
                for part in parts:
                    out.extend(self._part(pos, candidate, part))
        elif content is not None:
            out.append(Malformed(pos, "a candidate's 'content' is not an object"))
        reason = value.get("finishReason")
        if reason is not None:
            out.extend(self._finish(pos, candidate, reason, value.get("finishMessage")))
        return out

    def _finish(self, pos: Pos, candidate: _Candidate, reason: Any, message: Any) -> list[Event]:
        text = jsontext.brief(reason) if isinstance(reason, (dict, list)) else str(reason)
        category = FINISH_CATEGORIES.get(text, "other")
        if text == "STOP" and candidate.calls:
            category = "tool_calls"  # Gemini's STOP is its tool-call end too (wire-formats §4.2)
        candidate.finished = True
        out: list[Event] = [Finish(pos, text, category)]
        if text in TOOL_CALL_REJECTED:
            detail = message if isinstance(message, str) and message else None
            out.append(Problem(pos, "tool-call-rejected", "", ToolCallRejected("finishReason", text, detail)))
        return out

    def _blocked(self, pos: Pos, feedback: dict[str, Any]) -> list[Event]:
        reason = feedback.get("blockReason")
        text = jsontext.brief(reason) if isinstance(reason, (dict, list)) else str(reason)
        detail = feedback.get("blockReasonMessage")
        candidate = self.candidates.setdefault(0, _Candidate(0))
        candidate.finished = True
        facts = PromptBlocked(text, detail if isinstance(detail, str) and detail else None)
        return [Finish(pos, text, "filter"), Problem(pos, "prompt-blocked", "", facts)]

    # -- parts -----------------------------------------------------------------------------

    def _part(self, pos: Pos, candidate: _Candidate, part: Any) -> list[Event]:
        if not isinstance(part, dict):
            return [Malformed(pos, "a part is not an object")]
        call = part.get("functionCall")
        if call is not None:
            if not isinstance(call, dict):
                return [Malformed(pos, "a functionCall part whose functionCall is not an object")]
            return self._function_call(pos, candidate, call, "thoughtSignature" in part)
        if "thoughtSignature" in part:
            candidate.signed_parts += 1
        for field in CONTENT_PARTS:
            if field in part:
                what = "thought" if field == "text" and part.get("thought") is True else field
                payload = part[field]
                size = len(payload) if isinstance(payload, str) else 1
                return self._content(pos, candidate, what, size)
        unknown = [k for k in part if k not in PART_ANNOTATIONS]
        if unknown:
            return [Unknown(pos, f"part/{unknown[0]}")]
        return []  # a part that only carries a thoughtSignature

    def _content(self, pos: Pos, candidate: _Candidate, what: str, size: int) -> list[Event]:
        out: list[Event] = []
        key = candidate.blocks.get(what)
        if key is None:
            key = candidate.blocks[what] = candidate.key(what)
            out.append(BlockStart(pos, key, None, what))
        out.append(BlockDelta(pos, key, what, size))
        return out

    def _close_blocks(self, pos: Pos) -> list[Event]:
        out: list[Event] = []
        for candidate in self.candidates.values():
            out.extend(BlockStop(pos, key) for key in candidate.blocks.values())
            candidate.blocks = {}
        return out

    def _function_call(self, pos: Pos, candidate: _Candidate, call: dict[str, Any], signed: bool) -> list[Event]:
        more = call.get("willContinue") is True
        pieces = call.get("partialArgs")
        call_name = call.get("name")
        if call_name is None and "args" not in call:
            open_call = candidate.open
            if open_call is None:
                return [_unplaceable(pos, PartialArgUnplaceable("continues-no-call", piece=call))]
            if signed:
                open_call.signed = True
            out: list[Event] = self._pieces(pos, candidate, open_call, pieces) if pieces is not None else []
            if not more:
                out.extend(self._end_streamed(pos, candidate, open_call, terminal=not call))
            return out
        # A part with a name (or whole args) starts a new call.
        ordinal = len(candidate.calls)
        label = f"{call_name if isinstance(call_name, str) else '?'} (call {ordinal + 1}"
        label += f" of candidate {candidate.index})" if candidate.index else ")"
        record = _Call(candidate.key(ordinal), call_name if isinstance(call_name, str) else None, pos, signed, label)
        candidate.calls.append(record)
        call_id = call.get("id")
        start = ToolStart(
            pos,
            record.key,
            ordinal,
            "functionCall",
            call_id if isinstance(call_id, str) and call_id else None,
            record.name,
            None,
            id_optional=True,
            signed=signed,
        )
        if pieces is None and not more:
            args = call.get("args", {})  # no args key: a call without arguments (wire-formats §4.2)
            try:
                text = jsontext.dumps(args).decode()
            except TypeError:
                text = repr(args)
            return [start, BlockStop(pos, record.key, final_arguments=text, final_input=args)]
        out = [start]
        if "args" in call:
            out.append(_unplaceable(pos, PartialArgUnplaceable("args-and-partial-args")))
        record.streamed = StreamedArguments()
        # A streamed call still open here never got its closing part: it stays open (and is abandoned).
        candidate.open = record
        candidate.open_pos = pos
        if pieces is not None:
            out.extend(self._pieces(pos, candidate, record, pieces))
        if not more:
            out.extend(self._end_streamed(pos, candidate, record, terminal=False))
        return out

    def _pieces(self, pos: Pos, candidate: _Candidate, call: _Call, pieces: Any) -> list[Event]:
        streamed = call.streamed
        assert streamed is not None
        if not isinstance(pieces, list):
            return [_unplaceable(pos, PartialArgUnplaceable("partial-args-not-a-list"))]
        text = "".join(streamed.place(piece) for piece in pieces)
        out: list[Event] = [ArgsDelta(pos, call.key, text, DELTA_TYPE)] if text else []
        if streamed.problems:
            out.extend(self._streamed_problems(pos, call))
        return out

    def _end_streamed(self, pos: Pos, candidate: _Candidate, call: _Call, terminal: bool) -> list[Event]:
        """A part without willContinue ends the streamed call (``terminal``: it was the empty part)."""
        streamed = call.streamed
        assert streamed is not None
        out: list[Event] = []
        tail = streamed.finish()
        if tail:
            out.append(ArgsDelta(pos, call.key, tail, DELTA_TYPE))
        if streamed.problems:
            out.extend(self._streamed_problems(pos, call))
        out.append(BlockStop(pos, call.key))
        if not terminal:
            out.append(Problem(pos, "missing-terminal-function-call", "", MissingTerminalPart(call.label)))
        split = streamed.split_strings()
        if split:
            candidate.split.append((call, SplitCall(call.label, split)))
        if candidate.open is call:
            candidate.open = None
        return out

    @staticmethod
    def _streamed_problems(pos: Pos, call: _Call) -> list[Event]:
        streamed = call.streamed
        assert streamed is not None
        problems: list[Event] = [_unplaceable(pos, facts._replace(call=call.label)) for facts in streamed.problems]
        streamed.problems = []
        return problems

    def _turn_problems(self, candidate: _Candidate) -> list[Event]:
        """What only the whole turn shows: thought signatures (SD524) and strings streamed in pieces (SD522)."""
        return self._signatures(candidate) + self._split_strings(candidate)

    @staticmethod
    def _signatures(candidate: _Candidate) -> list[Event]:
        """Gemini puts a thoughtSignature on the first function call of a step only."""
        calls = candidate.calls
        if not calls or not (any(c.signed for c in calls) or candidate.signed_parts):
            return []
        first = calls[0]
        if not first.signed:
            signed = [c for c in calls if c.signed]
            facts = ThoughtSignatures(first.label, False, signed[0].label if signed else None)
            return [Problem(first.pos, "thought-signature-missing", "", facts)]
        unsigned = [c for c in calls[1:] if not c.signed]
        if not unsigned:
            return []
        facts = ThoughtSignatures(first.label, True, unsigned=tuple(c.label for c in unsigned))
        return [Problem(unsigned[0].pos, "thought-signature-first-only", "", facts)]

    @staticmethod
    def _split_strings(candidate: _Candidate) -> list[Event]:
        if not candidate.split:
            return []
        first_call = candidate.split[0][0]
        facts = StringsSplit(tuple(split for _, split in candidate.split))
        candidate.split = []
        return [Problem(first_call.pos, "partial-args-string-split", "", facts)]

    @staticmethod
    def _error(frame: Frame, error: dict[str, Any]) -> list[Event]:
        # An ``{"error": {code, message, status}}`` object (google.rpc.Status) in place of a chunk.
        # Unconfirmed that the streamed array ends this way mid-stream; read it as an error if it does.
        status = error.get("status")
        message = error.get("message")
        return [
            StreamError(
                frame.pos,
                status if isinstance(status, str) else _code(error.get("code")),
                message if isinstance(message, str) else None,
            )
        ]


def _unplaceable(pos: Pos, facts: PartialArgUnplaceable) -> Problem:
    return Problem(pos, "partial-args-unplaceable", "", facts)


def _code(code: Any) -> str:
    """An error's code as text: a number or a string as it is, anything else as brief JSON (never a repr)."""
    return jsontext.brief(code) if isinstance(code, (dict, list)) else str(code)
