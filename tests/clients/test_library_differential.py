"""Each profile that models a Python library agrees with the real library, at its pinned version, on
the ORIGINAL response bytes: what it hands the tool (input or argument text), at which event, and
the class of the exception it raises.

``test_library_agreement.py`` feeds the libraries frames that stream-doctor wrote back as SSE, so the
capture's own framing never reached them. Here the mock transport returns the bytes as the server
sent them (``clients.library.Original``), cut one frame at a time (positions compared) and at
arbitrary byte offsets (positions not compared: a chunk may hold several frames). The inputs, shared
with the TypeScript libraries' test, are described in ``tests/clients/streams.py``: fixtures and corpus
captures, the SSE bodies inside containers, generated streams, and this module's ``SAVED`` examples.
The comparisons and the checks are the harness's (``tests/clients/differential.py``): this module is
its Python side (``PYTHON``), with the lists of what it excuses.

CI runs a bounded number of examples (``STREAM_DOCTOR_DIFF_EXAMPLES``, default 25 per provider).
A long run: ``STREAM_DOCTOR_DIFF_EXAMPLES=2000 pytest tests/clients/test_library_differential.py -p
no:cacheprovider`` (add ``--hypothesis-show-statistics`` to see the shapes drawn).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from stream_doctor.api import replay
from stream_doctor.clients import PROFILES, run
from stream_doctor.clients.library import LIBRARIES, LibraryMissing, Original, Outcome, Seen, outcome_of
from stream_doctor.clients.library import load as load_library
from tests.clients.differential import Side, assert_corpus_compared
from tests.clients.streams import (
    GENERATED,
    ContainerCase,
    Fed,
    anthropic_streams,
    capture_name,
    chat_streams,
    container_cases,
    fed_sse,
    sse_captures,
)

#: fixtures, corpus, container bodies and generated streams through each real Python library
pytestmark = [pytest.mark.slow]

#: (client, capture name) where the profile follows the library only in part, and why (see streams.py). None now:
#: the framings that were here reach the profiles as ``clients.framing.Framing`` and ``KeepAlive.choices``.
KNOWN_DIVERGENCES: dict[tuple[str, str], str] = {}


def _library(client: str) -> Any:
    try:
        return load_library(client)
    except LibraryMissing as missing:  # pragma: no cover - the test extra installs them
        pytest.skip(str(missing))


def _clients(provider: str) -> list[str]:
    return [name for name in sorted(LIBRARIES) if PROFILES[name].applies_to(provider)]


def _without_positions(outcome: Outcome) -> Outcome:
    return Outcome(tuple(Seen(None, s.call_id, s.name, s.value) for s in outcome.seen), outcome.error, None)


def _disagreements(client: str, fed: Fed, cuts: tuple[int, ...] | None) -> list[str]:
    """What ``client``'s profile and its library, run in this process, disagree on for one response body."""
    library, capture = _library(client), fed.capture
    # as --client's live run is fed
    predicted = outcome_of(*run(PROFILES[client], fed.events, fed.provider, fed.framings, fed.cut_last), client)
    actual = library(capture, capture.frames, Original(fed.data))
    found = []
    if actual != predicted:
        found.append(f"{client} by frame: profile {predicted} / library {actual}")
    if cuts is not None:
        cut = library(capture, capture.frames, Original(fed.data, cuts))
        if _without_positions(cut) != _without_positions(predicted):
            found.append(f"{client} cut at {cuts}: profile {predicted} / library {cut}")
    return found


PYTHON = Side("Python", _clients, _disagreements)


# -- fixtures and corpus ------------------------------------------------------------------------


def _captures() -> list[Path]:
    return sse_captures(("anthropic", "openai"))


@pytest.mark.parametrize("path", _captures(), ids=capture_name)
def test_profiles_agree_on_the_original_bytes(path: Path) -> None:
    PYTHON.check_capture(path, KNOWN_DIVERGENCES)


#: (client, container case name) where the profile follows the library only in part on a container's
#: body, and why. None now: Writer's null ``type`` on a fragment reaches openai-python as ``wire`` on the
#: ArgsDelta, a beta ``context_management`` reaches langchain as ``Finish.context_management``.
CONTAINER_DIVERGENCES: dict[tuple[str, str], str] = {}


@pytest.mark.parametrize("case", container_cases(), ids=lambda case: case.name)
def test_profiles_agree_on_the_bodies_of_containers(case: ContainerCase) -> None:
    PYTHON.check_container(case, CONTAINER_DIVERGENCES)


def test_the_corpus_is_there_or_said_missing() -> None:
    assert_corpus_compared(_captures())


# -- generated streams --------------------------------------------------------------------------


#: (shape, client) whose disagreement is found and not yet followed by the profile, and why. An example
#: holding one is counted (``--hypothesis-show-statistics``), not failed, for that client only; every other
#: client is asserted. Wrong-typed fields reach the profiles as ``wire`` on the events (SAVED shows each).
UNFIXED: dict[tuple[str, str], str] = {
    # the OpenAI SDK's SSEDecoder.decode (openai/_streaming.py) dispatches a blank line's event when
    # ``_last_event_id`` is set, and never resets it (as the spec says), so after an ``id:`` line every
    # later blank line (a blank-line run, a comment-only block) is an event of data "", whose
    # ``sse.json()`` (``json.loads(self.data)``) raises JSONDecodeError; the capture reader drops those
    # data-less dispatches as the spec does, so no event reaches the profiles there
    **{
        ("an id field", client): "openai/_streaming.py SSEDecoder.decode: data-less events after an id"
        for client in ("openai-python", "langchain", "litellm", "pydantic-ai")
    },
    # the Python SDKs decode each line with raw_line.decode("utf-8") (openai/_streaming.py
    # SSEDecoder._iter_chunks / iter_bytes, anthropic/_streaming.py:353), which keeps U+FEFF, so the
    # first line's field name is "\ufeffevent" or "\ufeffdata" and ignored; the capture reader strips the
    # BOM (as the spec says) before any frame, so the profiles never see which line it hid
    **{
        ("a BOM", client): "the SDK's SSEDecoder keeps the BOM: the first line's field is unknown"
        for client in ("openai-python", "anthropic-python", "langchain", "litellm", "pydantic-ai")
    },
    # ServerSentEvent.json is json.loads (openai/_streaming.py:300, anthropic/_streaming.py), which reads
    # NaN, 1e400 and a lone surrogate escape; the capture reader (orjson) refuses them, so the frame is
    # not JSON to the adapter and its events never reach the profiles
    **{
        (f"JSON orjson refuses: {kind}", client): "json.loads accepts what orjson refuses"
        for kind in ("NaN", "a number past a double", "a lone surrogate escape")
        for client in ("openai-python", "anthropic-python", "langchain", "litellm", "pydantic-ai")
    },
    # the adapter gives a second choice's finish_reason "length" after the stream's Finish only as
    # KeepAlive("finished choice") (a call cut at the token limit gets no BlockStop), so the profile sees no
    # finish for that choice; the SDK fires its calls' arguments.done on any finish_reason (openai/lib/streaming/chat/_completions.py _build_events)
    ("a second choice finishing with length", "openai-python"): "no finish event for the second choice's length",
    # langchain-openai _convert_chunk_to_generation_chunk reads ``choices[0]`` of each chunk
    # (langchain_openai/chat_models/base.py:1656) and pydantic-ai's chunk reading ``choices[0]`` too:
    # a second choice in the same chunk is dropped; ``ArgsDelta`` carries no choice, so the profiles
    # cannot tell its fragments from the first choice's
    **{
        ("a second choice in the first choice's chunk", client): "choices[0] of each chunk only"
        for client in ("langchain", "pydantic-ai")
    },
}


@GENERATED
@given(st.data())
def test_profiles_agree_on_generated_anthropic_streams(data: st.DataObject) -> None:
    PYTHON.check_generated(data, *data.draw(anthropic_streams()), UNFIXED)


@GENERATED
@given(st.data())
def test_profiles_agree_on_generated_chat_streams(data: st.DataObject) -> None:
    shapes, stream = data.draw(chat_streams())
    # an unread stream would compare nothing (event: chunk was once taken for Bedrock's)
    assert replay(stream, name="generated.sse").stream.capture.provider == "openai"
    PYTHON.check_generated(data, shapes, stream, UNFIXED)


@GENERATED
@given(st.data())
def test_profiles_agree_on_generated_mistral_streams(data: st.DataObject) -> None:
    shapes, stream = data.draw(chat_streams(mistral=True))
    assert replay(stream, name="generated.sse").stream.capture.provider in ("mistral", "openai")
    PYTHON.check_generated(data, shapes, stream, UNFIXED)


# -- what the generated inputs found, kept --------------------------------------------------------

#: each disagreement found, as the bytes that showed it; the profile now follows the library
_MSG = (
    b'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant",'
    b'"model":"claude","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":1,"output_tokens":1}}}\n\n'
)
_START = b'event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_0","name":"f","input":%s}}\n\n'
_DELTA = b'event: content_block_delta\ndata: {"type":"content_block_delta",%s"delta":{"type":"input_json_delta","partial_json":"%s"}}\n\n'
_STOP = b'event: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\n'
_MESSAGE_DELTA = (
    b'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},'
    b'"usage":{"output_tokens":1}%s}\n\n'
)
_ERROR_EVENT = b'event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n'
_MESSAGE_STOP = b'event: message_stop\ndata: {"type":"message_stop"}\n\n'


def _chunk(tool_calls: str, chunk_id: str = "chatcmpl-1", model: str = "gpt-4o", finish: str = "null") -> bytes:
    return (
        f'data: {{"id":"{chunk_id}","object":"chat.completion.chunk","created":1,"model":"{model}",'
        f'"choices":[{{"index":0,"delta":{{"tool_calls":{tool_calls}}},"finish_reason":{finish}}}]}}\n\n'
    ).encode()


_ROLE = b'data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-4o","choices":[{"index":0,"delta":{"role":"assistant","content":null},"finish_reason":null}]}\n\n'
_ERROR_CHUNK = b'data: {"error":{"message":"The server had an error","type":"server_error","code":null}}\n\n'
_EMPTY = b'data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-4o","choices":[{"index":0,"delta":{},"finish_reason":null}]}\n\n'
_USAGE = b'data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-4o","choices":[],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}\n\n'
_FINISH = b'data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-4o","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}\n\n'


def _other_block(index: bytes, kind: str = "text", delta_index: bytes | None = None) -> bytes:
    """A text (or thinking) block's start, one delta and stop at ``index`` (its delta's index ``delta_index``)."""
    start, delta = {
        "text": (b'{"type":"text","text":""}', b'{"type":"text_delta","text":"Hi"}'),
        "thinking": (
            b'{"type":"thinking","thinking":"","signature":""}',
            b'{"type":"thinking_delta","thinking":"Hm."}',
        ),
    }[kind]
    return (
        b'event: content_block_start\ndata: {"type":"content_block_start","index":%s,"content_block":%s}\n\n'
        % (index, start)
        + b'event: content_block_delta\ndata: {"type":"content_block_delta","index":%s,"delta":%s}\n\n'
        % (delta_index or index, delta)
        + b'event: content_block_stop\ndata: {"type":"content_block_stop","index":%s}\n\n' % index
    )


#: a tool call at block index 1 (after a block at 0)
_CALL_AT_1 = (
    (_START % b"{}").replace(b'"index":0', b'"index":1')
    + _DELTA % (b'"index":1,', b"{}")
    + _STOP.replace(b'"index":0', b'"index":1')
)


_MISTRAL = ("0123456789abcdef0123456789abcdef", "mistral-small-latest")
SAVED: dict[str, bytes] = {
    # anthropic-python: accumulate_event reads content[None]: TypeError at the delta; langchain: the
    # call runs with "{" repaired to {} and "}" is a nameless invalid call; pydantic-ai: {} (latest part)
    "anthropic_delta_without_index": _MSG
    + _START % b"{}"
    + _DELTA % (b'"index":0,', b"{")
    + _DELTA % (b"", b"}")
    + _STOP,
    # the whole input in an index-less delta: langchain runs {} and a nameless {"a":1}; pydantic-ai {"a":1}
    "anthropic_whole_input_without_index": _MSG + _START % b"{}" + _DELTA % (b"", b'{\\"a\\":1}') + _STOP,
    # anthropic-python: accumulate_event's bytes(partial_json, "utf-8") on None: TypeError
    "anthropic_partial_json_null": _MSG
    + _START % b"{}"
    + b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,'
    + b'"delta":{"type":"input_json_delta","partial_json":null}}\n\n'
    + _STOP,
    # pydantic-ai: an empty text delta on the start event's dict input raises UnexpectedModelBehavior
    "anthropic_start_input_then_empty_delta": _MSG + _START % b'{"a":1}' + _DELTA % (b'"index":0,', b"") + _STOP,
    # pydantic-ai: a start event's input on a reused block index goes to the part that index holds
    # (handle_tool_call_delta): merged into dict args, UnexpectedModelBehavior on the text args of the
    # deltas before it, an empty one too (the empty-input starts of block_index_reused only rename)
    "anthropic_start_input_on_reused_index_after_deltas": _MSG
    + _START % b"{}"
    + _DELTA % (b'"index":0,', b"")
    + _STOP
    + _START % b'{"a":1}'
    + _STOP,
    "anthropic_start_input_on_reused_index_merged": _MSG + _START % b'{"a":1}' + _STOP + _START % b'{"b":2}' + _STOP,
    # openai-python: the first chunk's entries are merged by index too (accumulate_delta({}, delta)), ids and
    # names concatenated and the latest type kept; langchain: the first chunk is the sum as it is, its
    # two entries on index 0 stay two calls
    "chat_first_chunk_two_entries_on_one_index": _chunk(
        '[{"index":0,"id":"call_0","function":{"name":"f","arguments":"{}"}},'
        '{"index":0,"id":"call_1","type":"function","function":{"name":"g","arguments":""}}]'
    )
    + _FINISH
    + b"data: [DONE]\n\n",
    # pydantic-ai: Azure's first chunk with choices: [] is the chunk the OpenAI model peeks, so a stream whose
    # only other chunk is cut ends with no calls and no UnexpectedModelBehavior
    "chat_filter_chunk_then_a_cut_one": b'data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,'
    b'"model":"gpt-4o","choices":[],"prompt_filter_results":[]}\n\n'
    + _chunk('[{"index":0,"function":{"name":"f","arguments":""}}]')[:-1],
    # langchain, litellm, pydantic-ai: the OpenAI SDK's sse.json() raises on data that is not JSON
    # (JSONDecodeError as it is; MidStreamFallbackError; ModelAPIError)
    "chat_data_not_json": _ROLE + b'data: {"id":}]}\n\n' + b"data: [DONE]\n\n",
    # openai-python: an index-less fragment after an indexed one: RuntimeError in accumulate_delta
    "chat_fragment_without_index": _ROLE
    + _chunk('[{"index":0,"id":"call_0","type":"function","function":{"name":"f","arguments":""}}]')
    + _chunk('[{"function":{"arguments":"{}"}}]')
    + b"data: [DONE]\n\n",
    # openai-python: a first tool_calls list with no index is taken whole: TypeError in _build_events
    "chat_first_call_without_index": _ROLE
    + _chunk('[{"id":"call_0","type":"function","function":{"name":"f","arguments":"{}"}}]')
    + b"data: [DONE]\n\n",
    # litellm: Delta numbers the index-less calls of one chunk 0 and 1: both run
    "mistral_two_calls_in_one_chunk": _chunk(
        '[{"id":"call_0","type":"function","function":{"name":"f","arguments":"{}"}},'
        '{"id":"call_1","type":"function","function":{"name":"g","arguments":"{}"}}]',
        *_MISTRAL,
        finish='"tool_calls"',
    )
    + b"data: [DONE]\n\n",
    # openai-python: a call without type gets no arguments.done, so nothing runs (the others run it)
    "chat_call_without_type": _ROLE
    + _chunk('[{"index":0,"id":"call_0","function":{"name":"f","arguments":"{}"}}]')
    + _FINISH
    + b"data: [DONE]\n\n",
    # pydantic-ai: no chunk is ever dispatched (the only event is unterminated): UnexpectedModelBehavior;
    # openai-python: no snapshot, AssertionError
    "mistral_single_unterminated_chunk": _chunk(
        '[{"id":"call_0","type":"function","function":{"name":"f","arguments":"{}"}}]', *_MISTRAL
    )[:-1],
    # wrong-typed fields, as each library reads them (Fragment.wire): langchain's ToolCallChunk fails
    # validation (ValidationError at the chunk), litellm's Delta too and chunk_creator drops the chunk's whole
    # delta; openai-python's accumulate_delta keeps a numeric id (concatenated after a string: left as it was),
    # pydantic-ai's part takes it
    "chat_id_a_number_after_a_string": _ROLE
    + _chunk('[{"index":0,"id":"call_0","type":"function","function":{"name":"f","arguments":"{\\"a\\""}}]')
    + _chunk('[{"index":0,"id":7,"function":{"arguments":":1}"}}]')
    + _FINISH
    + b"data: [DONE]\n\n",
    "mistral_id_a_number": _chunk(
        '[{"id":7,"function":{"name":"f","arguments":"{}"}}]', *_MISTRAL, finish='"tool_calls"'
    )
    + b"data: [DONE]\n\n",
    # openai-python's done event and pydantic-ai's part carry the object; litellm json.dumps it (Function)
    "chat_arguments_an_object": _ROLE
    + _chunk('[{"index":0,"id":"call_0","type":"function","function":{"name":"f","arguments":{"a":1}}}]')
    + _FINISH
    + b"data: [DONE]\n\n",
    # after text: openai-python keeps the text ("" + an object is left as ""); pydantic-ai raises
    # UnexpectedModelBehavior (a dict delta on text args)
    "chat_arguments_an_object_after_text": _ROLE
    + _chunk('[{"index":0,"id":"call_0","type":"function","function":{"name":"f","arguments":""}}]')
    + _chunk('[{"index":0,"function":{"arguments":{"a":1}}}]')
    + _FINISH
    + b"data: [DONE]\n\n",
    # openai-python: accumulate_delta keeps the null, so the done event's arguments are None
    "chat_arguments_null_only": _ROLE
    + _chunk('[{"index":0,"id":"call_0","type":"function","function":{"name":"f","arguments":null}}]')
    + _FINISH
    + b"data: [DONE]\n\n",
    # an index of digits is the integer to every library (pydantic's lax mode in the SDK's chunk model,
    # ToolCallChunk, ChatCompletionDeltaToolCall): the fragments at 0 are one call
    "chat_index_a_string_of_digits": _ROLE
    + _chunk('[{"index":"0","id":"call_0","type":"function","function":{"name":"f","arguments":""}}]')
    + _chunk('[{"index":0,"function":{"arguments":"{}"}}]')
    + _FINISH
    + b"data: [DONE]\n\n",
    # any other string: openai-python TypeError (accumulate_delta), langchain ValidationError, litellm drops
    # the chunk, pydantic-ai a part of its own (vendor part id "x")
    "chat_index_a_string_not_digits": _ROLE
    + _chunk('[{"index":"x","id":"call_0","type":"function","function":{"name":"f","arguments":""}}]')
    + _chunk('[{"index":0,"function":{"arguments":"{}"}}]')
    + _FINISH
    + b"data: [DONE]\n\n",
    # litellm: one bad entry fails the chunk's Delta, and the good call beside it is lost with it
    "chat_id_a_number_beside_a_good_call": _ROLE
    + _chunk(
        '[{"index":0,"id":"call_0","type":"function","function":{"name":"f","arguments":"{}"}},'
        '{"index":1,"id":7,"type":"function","function":{"name":"g","arguments":"{}"}}]'
    )
    + _FINISH
    + b"data: [DONE]\n\n",
    # pydantic-ai: a null name leaves a ToolCallPartDelta, which get_parts() skips, so iterator_with_part_end's
    # part_end_event reads get_parts()[1] for the named call after it: IndexError when the stream ends
    "mistral_name_null_before_a_named_call": _chunk(
        '[{"id":"call_0","function":{"name":null,"arguments":"{}"}},{"id":"call_1","function":{"name":"g","arguments":"{}"}}]',
        *_MISTRAL,
        finish='"tool_calls"',
    )
    + b"data: [DONE]\n\n",
    # pydantic-ai raises that IndexError where its reading ends: at a [DONE] the SDK reads, or once the body
    # has ended when the [DONE] has no closing blank line (never dispatched), as after a stream without one
    "chat_name_null_before_a_named_call_done_unterminated": _ROLE
    + _chunk('[{"index":0,"id":"call_0","type":"function","function":{"name":null,"arguments":""}}]')
    + _chunk('[{"function":{"arguments":"{}"}}]')
    + _chunk('[{"index":1,"id":"call_1","type":"function","function":{"name":"g","arguments":"{}"}}]')
    + _FINISH
    + b"data: [DONE]\n",
    # the Anthropic SDK validates each event in pydantic's lax mode (_models.construct_type): an index "0" is
    # the index 0, so anthropic-python, langchain and pydantic-ai run the call as if it were an integer
    "anthropic_index_a_string": _MSG
    + _START.replace(b'"index":0', b'"index":"0"') % b"{}"
    + _DELTA % (b'"index":"0",', b'{\\"a\\":1}')
    + _STOP.replace(b'"index":0', b'"index":"0"'),
    # anthropic-python: content[event.index] first: IndexError for a block past the content list; langchain:
    # tool_call_chunk(index=3, args=None) is a nameless call {} of its own
    "anthropic_partial_json_null_past_the_content": _MSG
    + _START % b"{}"
    + b'event: content_block_delta\ndata: {"type":"content_block_delta","index":3,'
    + b'"delta":{"type":"input_json_delta","partial_json":null}}\n\n'
    + _STOP,
    # langchain: AIMessageChunk's ToolCallChunk wants args str | None: ValidationError at the delta;
    # anthropic-python: bytes(1, "utf-8") is a TypeError
    "anthropic_partial_json_a_number": _MSG
    + _START % b"{}"
    + b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,'
    + b'"delta":{"type":"input_json_delta","partial_json":1}}\n\n'
    + _STOP,
    # the near miss: after a text block no tool_call_chunk is made (langchain) and no buffer is read
    # (anthropic-python reads partial_json only for a block that tracks tool input): nothing raises
    "anthropic_partial_json_a_number_on_a_text_block": _MSG
    + b'event: content_block_start\ndata: {"type":"content_block_start","index":0,'
    + b'"content_block":{"type":"text","text":""}}\n\n'
    + b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,'
    + b'"delta":{"type":"input_json_delta","partial_json":1}}\n\n'
    + _STOP,
    # a start without id fails validation, so its index "0" stays a string: pydantic-ai's part for vendor id "0"
    # gets no delta (the deltas at 0 make a nameless ToolCallPartDelta), langchain's chunk "0" merges with none
    "anthropic_index_a_string_on_a_start_without_id": _MSG
    + _START.replace(b'"index":0', b'"index":"0"').replace(b'"id":"toolu_0",', b"") % b"{}"
    + _DELTA % (b'"index":0,', b'{\\"a\\":1}')
    + _STOP,
    # langchain: a null partial_json without index is tool_call_chunk(index=None, args=None): a nameless call {}
    "anthropic_partial_json_null_without_index": _MSG
    + _START % b"{}"
    + b'event: content_block_delta\ndata: {"type":"content_block_delta",'
    + b'"delta":{"type":"input_json_delta","partial_json":null}}\n\n'
    + _STOP,
    # anthropic-python: a list input is kept as it is (construct_type builds what fails validation unchecked)
    # and handed when no delta gave text
    "anthropic_input_a_list": _MSG + _START % b"[]" + _DELTA % (b'"index":0,', b"") + _STOP,
    # found by a forced wrong-type scan: langchain-core merges the message's content blocks by index as it
    # merges tool_call_chunks (merge_content -> merge_lists -> merge_dicts); a second tool_use start on block
    # index 0 without an id merges into the first, and its list input after a dict one raises TypeError
    "anthropic_input_a_list_on_a_reused_index": _MSG
    + _START % b"{}"
    + _STOP
    + _START.replace(b'"id":"toolu_0",', b"") % b"[]"
    + _STOP,
    # the near miss: another id keeps the two blocks apart, nothing is merged and nothing raises
    "anthropic_input_a_list_on_a_reused_index_with_its_own_id": _MSG
    + _START % b"{}"
    + _STOP
    + _START.replace(b"toolu_0", b"toolu_1") % b"[]"
    + _STOP,
    # found on Writer's cassettes (openllmetry): "type": null on a fragment after the call's head. openai-python's
    # accumulate_delta copies the null over "function", _accumulate_chunk asserts the type: AssertionError
    "chat_type_null_after_the_head": _ROLE
    + _chunk('[{"index":0,"id":"call_1","type":"function","function":{"name":"f","arguments":""}}]')
    + _chunk('[{"index":0,"id":null,"type":null,"function":{"name":null,"arguments":"{}"}}]')
    + _FINISH
    + b"data: [DONE]\n\n",
    # the near miss: null from the head on was never "function", so nothing asserts; no done event is
    # fired for a type that is not "function", so openai-python hands nothing and raises nothing
    "chat_type_null_from_the_head": _ROLE
    + _chunk('[{"index":0,"id":"call_1","type":null,"function":{"name":"f","arguments":""}}]')
    + _chunk('[{"index":0,"type":null,"function":{"arguments":"{}"}}]')
    + _FINISH
    + b"data: [DONE]\n\n",
    # found on a dd-trace-py beta cassette: langchain-anthropic calls .model_dump() on message_delta's
    # context_management, a plain dict in the non-beta RawMessageDeltaEvent: AttributeError
    "anthropic_context_management_in_message_delta": _MSG
    + _START % b"{}"
    + _STOP
    + _MESSAGE_DELTA % b',"context_management":{"applied_edits":[]}'
    + _MESSAGE_STOP,
    # found by the generated framings (a thinking block, wrong-typed index): the SDK's lax int reads a thinking or
    # text delta's index "0" as 0 as it does a tool delta's (read_as: BlockDelta); the profiles had raised the
    # TypeError of a missing index there
    "anthropic_thinking_delta_index_a_string": _MSG + _other_block(b"0", "thinking", b'"0"') + _CALL_AT_1,
    "anthropic_text_delta_index_a_string": _MSG + _other_block(b"0", "text", b'"0"') + _CALL_AT_1,
    # found by the generated event types: pydantic-ai's parts manager raises UnexpectedModelBehavior when a
    # block index that holds a text part gets a tool call (and a thinking one a text delta); the near miss
    # gives each block its own index
    "anthropic_tool_call_on_a_text_blocks_index": _MSG
    + _other_block(b"0")
    + _START % b"{}"
    + _DELTA % (b'"index":0,', b"{}")
    + _STOP,
    "anthropic_tool_call_on_its_own_index_after_text": _MSG + _other_block(b"0") + _CALL_AT_1,
    # found by the generated block order (skipped indices): anthropic-python's accumulate_event reads
    # ``content[event.index]`` for a text delta too: IndexError at a text block started at index 2 after one
    # block; the near miss: the text block at the next index
    "anthropic_text_delta_past_the_content": _MSG
    + _START % b"{}"
    + _DELTA % (b'"index":0,', b"{}")
    + _STOP
    + _other_block(b"2"),
    "anthropic_text_delta_at_the_next_index": _MSG
    + _START % b"{}"
    + _DELTA % (b'"index":0,', b"{}")
    + _STOP
    + _other_block(b"1"),
    # found by the tally at 100 (mistral-shaped, a wrong-typed index): accumulate_delta's _has_indexed_entries
    # reads the whole list, so the index "0" of a later entry makes the first, index-less one a RuntimeError
    # (openai-python); the list is taken whole only when no entry has an index
    "chat_index_after_index_less_entries": _ROLE.replace(b'"content":null', b'"content":""')
    + _chunk(
        '[{"function":{"name":"tool_0","arguments":"{}"}},{"function":{"name":"tool_1","arguments":""},"id":"call_1"},'
        '{"function":{"name":"tool_2","arguments":"{\\"city\\":\\"Paris\\"}"},"id":"call_2","type":"function","index":"0"}]',
        *_MISTRAL,
        finish='"length"',
    ),
    # found by the tally at 1,000 (mistral-shaped): construct_type validates the chunk's whole tool_calls list
    # (Optional[List[ChoiceDeltaToolCall]], a union: validate_type first) and builds it unvalidated when one
    # entry fails, so beside an index-less entry the index "0" stays a string: openai-python's accumulate_delta
    # raises TypeError at it (the profile had read it as 0 and raised RuntimeError at the next entry) ...
    "mistral_index_a_string_beside_an_index_less_entry": _chunk(
        '[{"index":"0","type":"function","function":{"name":"f","arguments":"{}"}},{"function":{"name":"g","arguments":""}}]',
        *_MISTRAL,
    )
    + b"data: [DONE]\n\n",
    # ... and beside an entry whose id is a number (every other library reads the "0" as 0)
    "chat_index_a_string_beside_a_numeric_id": _ROLE
    + _chunk(
        '[{"index":"0","id":"call_0","type":"function","function":{"name":"f","arguments":"{}"}},'
        '{"index":1,"id":7,"type":"function","function":{"name":"g","arguments":"{}"}}]'
    )
    + _FINISH
    + b"data: [DONE]\n\n",
    # the near miss: beside an entry that validates, the "0" is 0 and both calls run
    "chat_index_a_string_beside_a_valid_entry": _ROLE
    + _chunk(
        '[{"index":"0","id":"call_0","type":"function","function":{"name":"f","arguments":"{}"}},'
        '{"index":1,"id":"call_1","type":"function","function":{"name":"g","arguments":"{}"}}]'
    )
    + _FINISH
    + b"data: [DONE]\n\n",
    # found by the tally at 1,000: pydantic-ai's IndexError of a nameless part delta (a start whose index "0" fails
    # validation, then a delta at 0) before a named part comes from iterator_with_part_end once the Anthropic SDK
    # has read the body to its end, message_stop or not: no frame (the profile had said the last event's)
    "anthropic_nameless_part_before_a_named_one": _MSG
    + _START.replace(b'"index":0', b'"index":"0"').replace(b'"id":"toolu_0",', b"") % b"{}"
    + _DELTA % (b'"index":0,', b"{}")
    + _STOP
    + _CALL_AT_1
    + _MESSAGE_DELTA % b""
    + _MESSAGE_STOP,
    # found by the tally at 1,000 (an error chunk after a second choice's finish): LiteLLM's CustomStreamWrapper
    # ends its reading at the second empty chunk after a finish_reason (StopIteration once sent_last_chunk), so
    # the error chunk after it is never read and the call runs; the others read it and raise
    "chat_empty_chunk_after_the_finish_then_an_error": _ROLE
    + _chunk('[{"index":0,"id":"call_0","type":"function","function":{"name":"f","arguments":"{}"}}]')
    + _FINISH
    + _EMPTY
    + _ERROR_CHUNK
    + b"data: [DONE]\n\n",
    # the near miss: a usage chunk (no choices) is no empty chunk to it: the error chunk is read
    "chat_usage_chunk_after_the_finish_then_an_error": _ROLE
    + _chunk('[{"index":0,"id":"call_0","type":"function","function":{"name":"f","arguments":"{}"}}]')
    + _FINISH
    + _USAGE
    + _ERROR_CHUNK
    + b"data: [DONE]\n\n",
    # found by the generated error events: the SDK raises at the error event and reads nothing after it, so
    # pydantic-ai raises ModelOverloadedError there (not a later part's error at the stream's end)
    "anthropic_overloaded_error_mid_call": _MSG
    + _START % b"{}"
    + _DELTA % (b'"index":0,', b'{\\"a')
    + _ERROR_EVENT
    + _DELTA % (b"", b"1}")
    + _STOP,
    # found by the generated error chunks (after a "[DONE] " with a trailing space, events named chunk): the
    # OpenAI SDK's Stream.__stream__ breaks at data that starts with [DONE] and reads nothing after it, so
    # LangChain, LiteLLM and pydantic-ai run the call; the profiles had read on and raised at the error
    "chat_error_chunk_after_the_done": (
        _ROLE
        + _chunk('[{"index":0,"id":"call_0","type":"function","function":{"name":"f","arguments":"{}"}}]')
        + _FINISH
        + b"data: [DONE] \n\n"
        + _ERROR_CHUNK
    ).replace(b"data: ", b"event: chunk\ndata: "),
    # the near miss: the same error chunk before the [DONE] is read, and raises
    "chat_error_chunk_before_the_done": _ROLE
    + _chunk('[{"index":0,"id":"call_0","type":"function","function":{"name":"f","arguments":"{}"}}]')
    + _ERROR_CHUNK
    + _FINISH
    + b"data: [DONE]\n\n",
    # found by the generated error events: anthropic-python re-reads the buffer on every delta, so a blank
    # partial_json (jiter: EOF while parsing a value) raised ValueError there, before the error event (the
    # profile had read the buffer only at the block's stop); the near miss is anthropic_overloaded_error_mid_call,
    # whose buffer so far is a JSON prefix
    "anthropic_blank_input_then_an_error_event": _MSG
    + _START % b"{}"
    + _DELTA % (b'"index":0,', b" ")
    + _ERROR_EVENT
    + _STOP,
    # ... and before a later delta's IndexError (a block past the content)
    "anthropic_broken_input_then_a_delta_past_the_content": _MSG
    + _START % b"{}"
    + _DELTA % (b'"index":0,', b"}")
    + _DELTA % (b'"index":3,', b"{}")
    + _STOP,
    # the near miss: an empty (falsy) context_management is never read
    "anthropic_context_management_empty": _MSG
    + _START % b"{}"
    + _STOP
    + _MESSAGE_DELTA % b',"context_management":{}'
    + _MESSAGE_STOP,
}

#: what the library does on a saved example, where that is the behaviour it keeps: client -> exception class
SAVED_RAISES: dict[str, dict[str, str | None]] = {
    "anthropic_tool_call_on_a_text_blocks_index": {"pydantic-ai": "UnexpectedModelBehavior"},
    "anthropic_tool_call_on_its_own_index_after_text": {"pydantic-ai": None},
    "anthropic_overloaded_error_mid_call": {
        "pydantic-ai": "ModelOverloadedError",
        "anthropic-python": "APIStatusError",
    },
    "anthropic_blank_input_then_an_error_event": {"anthropic-python": "ValueError"},
    "anthropic_broken_input_then_a_delta_past_the_content": {"anthropic-python": "ValueError"},
    "anthropic_text_delta_past_the_content": {"anthropic-python": "IndexError"},
    "anthropic_text_delta_at_the_next_index": {"anthropic-python": None},
    "anthropic_input_a_list_on_a_reused_index": {"langchain": "TypeError"},
    "anthropic_input_a_list_on_a_reused_index_with_its_own_id": {"langchain": None},
    "chat_type_null_after_the_head": {"openai-python": "AssertionError"},
    "chat_type_null_from_the_head": {"openai-python": None},
    "anthropic_context_management_in_message_delta": {"langchain": "AttributeError"},
    "anthropic_context_management_empty": {"langchain": None},
    "chat_error_chunk_after_the_done": {"langchain": None, "litellm": None, "pydantic-ai": None},
    "chat_index_after_index_less_entries": {"openai-python": "RuntimeError"},
    "anthropic_nameless_part_before_a_named_one": {"pydantic-ai": "IndexError"},
    "chat_empty_chunk_after_the_finish_then_an_error": {"litellm": None, "langchain": "APIError"},
    "chat_usage_chunk_after_the_finish_then_an_error": {"litellm": "MidStreamFallbackError"},
    "mistral_index_a_string_beside_an_index_less_entry": {"openai-python": "TypeError"},
    "chat_index_a_string_beside_a_numeric_id": {"openai-python": "TypeError"},
    "chat_index_a_string_beside_a_valid_entry": {"openai-python": None},
    "chat_error_chunk_before_the_done": {
        "langchain": "APIError",
        "litellm": "MidStreamFallbackError",
        "pydantic-ai": "ModelServerError",
    },
}


#: the clients a saved example is checked for, when not every one (the others' disagreement is in UNFIXED)
SAVED_FOR: dict[str, list[str]] = {}


@pytest.mark.parametrize("name", sorted(SAVED))
def test_saved_disagreements_stay_fixed(name: str) -> None:
    assert PYTHON.compare(SAVED[name], f"{name}.sse", SAVED_FOR.get(name)) == []


@pytest.mark.parametrize("name", sorted(SAVED_RAISES))
def test_saved_examples_show_what_the_library_does(name: str) -> None:
    fed = fed_sse(SAVED[name], f"{name}.sse")
    for client, raised in SAVED_RAISES[name].items():
        actual = _library(client)(fed.capture, fed.capture.frames, Original(fed.data))
        assert actual.error == raised
