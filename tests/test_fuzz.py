"""Fuzzing every capture reader and provider adapter: a mutated fixture is replayed (and converted) and
must give a report or a one-line ``RunError``, never another exception.

Two kinds of input, both drawn by hypothesis from the project's own fixtures: byte-level mutations
(flips, inserts, deletions, cuts, repeats) of whole files, which exercise every container reader;
and structure-aware mutations of the decoded events (a node anywhere in an event's JSON replaced by
any JSON value, a key dropped), re-framed as SSE and replayed with the fixture's provider forced,
which exercise every adapter past its own sniffing; and hostile ones of the same events: numbers
made huge (indices, lengths, counts: nothing may allocate in proportion to them) and a value nested
deeper than orjson writes (255-1,015 levels), through client profiles and the timeline too. Inputs
that once crashed are kept in ``tests/fuzz_corpus/`` and replayed on every run.

CI runs a bounded, derandomised number of cases. A long run (a million cases, new seeds each time)::

    STREAM_DOCTOR_FUZZ_EXAMPLES=1000000 STREAM_DOCTOR_FUZZ_RANDOM=1 pytest tests/test_fuzz.py -x

and, where ``atheris`` installs (``pip install -e ".[fuzz]"``), coverage-guided::

    python tests/fuzz_atheris.py -atheris_runs=1000000
"""

from __future__ import annotations

import os
from functools import cache, lru_cache
from typing import Any

import orjson
import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, assume, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from tests.conftest import ROOT, fixture_files  # noqa: E402

EXAMPLES = int(os.environ.get("STREAM_DOCTOR_FUZZ_EXAMPLES", "150"))
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=not os.environ.get("STREAM_DOCTOR_FUZZ_RANDOM"),
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

#: The fixture folder's provider, forced for the structure-aware cases.
PROVIDERS = {
    "anthropic": "anthropic",
    "openai": "openai",
    "openai-responses": "openai-responses",
    "gemini": "gemini",
    "cohere": "cohere",
    "bedrock": "bedrock",
    "mistral": "mistral",
    "ollama": "ollama",
    "vercel-ai": "vercel-ai",
}
_CAPTURE_SUFFIXES = (".sse", ".jsonl", ".json", ".har", ".yaml", ".eventstream", ".txt", ".gz")
#: Inputs that once crashed a replay or convert (its README says which and how): replayed on every run
#: (``test_saved_crash_inputs``) and seeds of the byte mutations.
CORPUS = ROOT / "tests" / "fuzz_corpus"


def saved_crashes() -> list[Any]:
    return sorted(path for path in CORPUS.iterdir() if path.suffix in _CAPTURE_SUFFIXES)


@lru_cache(maxsize=1)
def fixtures() -> tuple[tuple[str, bytes], ...]:
    found = fixture_files(suffixes=_CAPTURE_SUFFIXES, check_tree=True, max_size=64 * 1024)
    found += [path for path in saved_crashes() if path.is_file() and path.stat().st_size <= 64 * 1024]
    return tuple((path.relative_to(ROOT).as_posix(), path.read_bytes()) for path in found)


@lru_cache(maxsize=1)
def provider_events() -> tuple[tuple[str, str, tuple[Any, ...]], ...]:
    """(fixture, provider, decoded event payloads) for every fixture whose folder names a provider."""
    from stream_doctor.capture import load
    from stream_doctor.capture.base import NOT_JSON, RELEASED

    found = []
    for name, _ in fixtures():
        provider = PROVIDERS.get(name.split("/")[1])
        if provider is None:
            continue
        try:
            capture = load(str(ROOT / name))
        except Exception:  # noqa: BLE001, S112 - a fixture that is unreadable on purpose
            continue
        values = tuple(f.value for f in capture.frames if f.kind == "event" and f.value not in (NOT_JSON, RELEASED))
        if values:
            found.append((name, provider, values))
    return tuple(found)


def replay_bytes(data: bytes, name: str, **options: Any) -> None:
    """Replay and convert ``data``: anything but a report or a RunError fails the test."""
    from stream_doctor.engine.convert import convert
    from stream_doctor.engine.pipeline import replay
    from stream_doctor.engine.stages import RunError
    from stream_doctor.values.options import Options

    chosen = Options(**options)
    try:
        report = replay(name, chosen, data)
    except RunError:
        return
    assert report.findings is not None
    from stream_doctor.reporters import RenderOptions, json_report, terminal

    json_report.render(report, RenderOptions(max_rows=50))
    terminal.render(report, RenderOptions(width=100, max_rows=50))
    try:
        convert(name, chosen, data)
    except RunError:
        pass


# ------------------------------------------------------------------------------------------- byte mutations


@st.composite
def mutated_fixture(draw: st.DrawFn) -> tuple[str, bytes]:
    name, data = draw(st.sampled_from(fixtures()))
    data = bytearray(data)
    for _ in range(draw(st.integers(1, 6))):
        if not data:
            break
        at = draw(st.integers(0, len(data) - 1))
        kind = draw(st.sampled_from(["flip", "insert", "delete", "cut", "repeat", "interesting"]))
        if kind == "flip":
            data[at] ^= 1 << draw(st.integers(0, 7))
        elif kind == "insert":
            data[at:at] = draw(st.binary(min_size=1, max_size=16))
        elif kind == "delete":
            del data[at : at + draw(st.integers(1, 64))]
        elif kind == "cut":
            del data[at:]
        elif kind == "repeat":
            end = min(len(data), at + draw(st.integers(1, 256)))
            data[at:at] = data[at:end] * draw(st.integers(1, 4))
        else:
            token = draw(
                st.sampled_from(
                    [
                        b"\x00",
                        b"\r",
                        b"\n\n",
                        b'"',
                        b"\\",
                        b"{",
                        b"[",
                        b"]",
                        b"}",
                        b"\xff",
                        b"\xe2\x80\xa8",
                        b"-1",
                        b"1e999",
                        b"null",
                        b"&a",
                        b"*a",
                        b"!!python/tuple",
                    ]
                )
            )
            data[at:at] = token
    return name, bytes(data)


@FUZZ
@given(mutated_fixture(), st.booleans())
def test_byte_mutations_of_every_fixture(case: tuple[str, bytes], sniffed: bool) -> None:
    name, data = case
    provider = None if sniffed else PROVIDERS.get(name.split("/")[1])
    replay_bytes(data, name, provider=provider)


# ------------------------------------------------------------------------------------ structure-aware JSON

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=12), children, max_size=4),
    max_leaves=12,
)


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            found += _paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += _paths(item, (*prefix, index))
    return found


def _replace(value: Any, path: tuple[Any, ...], new: Any, drop: bool) -> Any:
    if not path:
        return new
    copy = orjson.loads(orjson.dumps(value))
    parent = copy
    for step in path[:-1]:
        parent = parent[step]
    if drop and isinstance(parent, dict):
        del parent[path[-1]]
    else:
        parent[path[-1]] = new
    return copy


@st.composite
def mutated_events(draw: st.DrawFn) -> tuple[str, str, bytes]:
    name, provider, values = draw(st.sampled_from(provider_events()))
    events = list(values)
    for _ in range(draw(st.integers(1, 4))):
        at = draw(st.integers(0, len(events) - 1))
        path = draw(st.sampled_from(_paths(events[at])))
        events[at] = _replace(events[at], path, draw(json_values), draw(st.booleans()))
    if draw(st.booleans()):  # and an event twice, or one lost
        at = draw(st.integers(0, len(events) - 1))
        events[at:at] = [events[at]] if draw(st.booleans()) else []
        del events[at : at + (0 if events else 0)]
    frames = b"".join(b"data: " + orjson.dumps(event, option=orjson.OPT_NON_STR_KEYS) + b"\n\n" for event in events)
    return name, provider, frames


@FUZZ
@given(mutated_events())
def test_structure_aware_mutations_reach_every_adapter(case: tuple[str, str, bytes]) -> None:
    name, provider, data = case
    replay_bytes(data, name + ".mutated.sse", provider=provider, container="sse")


def test_every_provider_folder_has_events_to_mutate() -> None:
    assert {provider for _, provider, _ in provider_events()} == set(PROVIDERS.values())


# ----------------------------------------------------------------- deep nesting and huge stated numbers


def nested(depth: int, kind: str) -> Any:
    """A value ``depth`` containers deep (orjson reads 1,024 levels and writes 254), built without recursion."""
    value: Any = [] if kind == "list" else {}
    for _ in range(depth - 1):
        value = [value] if kind == "list" else {"a": value}
    return value


#: Numbers a capture states (an index, a length, a count, a sequence number) far beyond its bytes.
huge_numbers = st.sampled_from([10**8, 2**31 - 1, 2**32, 2**53 + 1, 2**63 - 1, -(2**63), -1, 10**12])
deep_values = st.builds(nested, st.sampled_from([255, 300, 1000, 1015]), st.sampled_from(["list", "dict"]))


def _at(value: Any, path: tuple[Any, ...]) -> Any:
    for step in path:
        value = value[step]
    return value


@st.composite
def hostile_events(draw: st.DrawFn) -> tuple[str, str, bytes]:
    """A fixture's events with numbers anywhere made huge, and one node made a value nested deeper than
    orjson writes (the frame written by ``jsontext.dumps``; deeper than 1,024 in all, it is not JSON)."""
    from stream_doctor.util import jsontext

    name, provider, values = draw(st.sampled_from(provider_events()))
    events = list(values)
    for _ in range(draw(st.integers(0, 4))):
        at = draw(st.integers(0, len(events) - 1))
        numbers = [p for p in _paths(events[at]) if p and type(_at(events[at], p)) is int]
        if numbers:
            events[at] = _replace(events[at], draw(st.sampled_from(numbers)), draw(huge_numbers), False)
    if draw(st.booleans()):  # last: the copies _replace makes go through orjson, which writes 254 levels
        at = draw(st.integers(0, len(events) - 1))
        path = draw(st.sampled_from(_paths(events[at])))
        events[at] = _replace(events[at], path, draw(deep_values), False)
    frames = b"".join(b"data: " + jsontext.dumps(event, orjson.OPT_NON_STR_KEYS) + b"\n\n" for event in events)
    return name, provider, frames


@FUZZ
@given(hostile_events())
def test_deep_nesting_and_huge_numbers_reach_every_adapter(case: tuple[str, str, bytes]) -> None:
    name, provider, data = case
    # they parse and compare too; anthropic-python and pydantic-ai since issue 31 (a deep buffer, an index []).
    # The profiles (the models) are what is fuzzed here: a library run per example would be six processes.
    profiles = ("anthropic-typescript", "anthropic-python", "openai-python", "pydantic-ai", "langchain", "vercel-ai")
    replay_bytes(
        data,
        name + ".hostile.sse",
        provider=provider,
        container="sse",
        clients=profiles,
        client_mode="model",
        timeline=True,
    )


# --------------------------------------------------------------------------------- the crashes fuzzing found


@pytest.mark.parametrize("path", saved_crashes(), ids=lambda path: path.name)
def test_saved_crash_inputs(path: Any) -> None:
    """Each input of ``tests/fuzz_corpus/`` replays and converts to a report or a one-line error."""
    replay_bytes(path.read_bytes(), path.name)
    profiles = ("anthropic-typescript", "openai-python", "langchain")
    replay_bytes(path.read_bytes(), path.name, clients=profiles, client_mode="model")  # the profiles these crashed


def test_the_corpus_holds_the_crashes_of_issue_22() -> None:
    assert {path.name for path in saved_crashes()} >= {
        "anthropic_sdk_block_type_object.jsonl",
        "anthropic_start_input_nested_300.sse",
        "openai_sdk_chunk_nested_300.jsonl",
        "responses_input_item_type_list.jsonl",
        "vcr_repeated_body_key_mapping_first.yaml",
        "responses_completed_output_type_list.sse",
    }


def test_anthropic_delta_whose_type_is_not_a_string() -> None:
    events = [
        {"type": "message_start", "message": {"id": "m", "content": [], "model": "c"}},
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {"type": "tool_use", "id": "t", "name": "f", "input": {}},
        },
        {"type": "content_block_delta", "index": 0, "delta": {"type": {"nested": True}, "partial_json": "{}"}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": ["input_json_delta"], "partial_json": "{}"}},
        {"type": "content_block_stop", "index": 0},
        {"type": "message_stop"},
    ]
    data = b"".join(b"data: " + orjson.dumps(event) + b"\n\n" for event in events)
    replay_bytes(data, "delta_type.sse", provider="anthropic")


def test_responses_arguments_done_without_deltas() -> None:
    item = {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "f", "arguments": ""}
    events = [
        {"type": "response.created", "response": {"id": "r", "status": "in_progress", "output": []}},
        {"type": "response.output_item.added", "output_index": 0, "item": item},
        {
            "type": "response.function_call_arguments.done",
            "output_index": 0,
            "item_id": "fc_1",
            "arguments": "{not json",
        },
        {"type": "response.output_item.done", "output_index": 0, "item": {**item, "arguments": "{not json"}},
        {"type": "response.completed", "response": {"id": "r", "status": "completed", "output": []}},
    ]
    data = b"".join(b"data: " + orjson.dumps(event) + b"\n\n" for event in events)
    from stream_doctor.engine.pipeline import replay
    from stream_doctor.values.options import Options

    report = replay("done_without_deltas.sse", Options(provider="openai-responses"), data)
    assert any(f.code == "SD201" for f in report.findings)


def test_the_atheris_harness_runs(tmp_path: Any) -> None:
    """The documented coverage-guided command works, and writes its new inputs beside, never into, fixtures/
    (only where the ``fuzz`` extra is installed: atheris has no wheel for every Python)."""
    pytest.importorskip("atheris")
    import subprocess
    import sys

    corpus = tmp_path / "corpus"
    corpus.mkdir()
    before = sorted(p.name for p in (ROOT / "fixtures/anthropic").iterdir())
    ran = subprocess.run(
        [sys.executable, str(ROOT / "tests/fuzz_atheris.py"), "-atheris_runs=300", "-max_total_time=120"]
        + [f"-artifact_prefix={tmp_path}/", str(corpus), str(ROOT / "fixtures/anthropic")],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    assert ran.returncode == 0, ran.stderr[-2000:]
    assert "Done 300 in" in ran.stderr and any(corpus.iterdir())  # its new inputs went to the corpus given first
    assert sorted(p.name for p in (ROOT / "fixtures/anthropic").iterdir()) == before
    assert not list(tmp_path.glob("crash-*"))


# ------------------------------------------------------------------------ request bodies (issue 31)
# Every field a request reader reads (tests/request_bodies.py FIELDS) given any JSON type, a value nested
# deeper than orjson writes, or a huge number, in every request body of every capture that records one
# (envelopes, HAR files, cassettes, each recorder dialect): the replay is a report whose stream is read as
# before (the same calls), a wrong type an SD001 finding, never an exception; and the recording proxy's
# own readers of a body (the request record, the grouping) take it too.

from tests.request_bodies import FIELDS, captures_with_requests, rewritten, set_field  # noqa: E402

#: hypothesis: mutations of every fixture through every reader and adapter
pytestmark = [pytest.mark.slow]

body_values = (
    json_values
    | huge_numbers
    | st.builds(nested, st.sampled_from([255, 300, 1000]), st.sampled_from(["list", "dict"]))
    | st.sampled_from([True, False, 1.5, 7, -1, "", "text", {}, [], [7], [[]], {"type": []}, [{"role": []}]])
)


@cache
def _calls_of(name: str) -> tuple[tuple[Any, ...], ...]:
    from stream_doctor.engine.pipeline import replay
    from stream_doctor.values.options import Options

    report = replay(name, Options(), (ROOT / name).read_bytes())
    return tuple((turn.number, tuple((c.call_id, c.raw_arguments) for c in turn.stream.calls)) for turn in report.turns)


@st.composite
def request_bodies(draw: st.DrawFn) -> tuple[str, bytes, list[tuple[tuple[Any, ...], Any]]]:
    name, data = draw(st.sampled_from(captures_with_requests()))
    changes = [(draw(st.sampled_from(FIELDS)), draw(body_values)) for _ in range(draw(st.integers(1, 3)))]

    def change(body: dict[str, Any]) -> None:
        for path, value in changes:
            set_field(body, path, value)

    new = rewritten(name, data, change)
    assume(new is not None)  # None only for a YAML body nested past what PyYAML's dumper can write
    return name, new, changes


@FUZZ
@given(request_bodies())
def test_request_bodies_of_any_shape_through_every_container(case: tuple[str, bytes, Any]) -> None:
    from stream_doctor.engine.pipeline import replay
    from stream_doctor.engine.stages import RunError
    from stream_doctor.values.options import Options

    name, data, _ = case
    try:
        report = replay(name, Options(), data)  # any other RunError fails: a request body never ends the capture
    except RunError as error:
        # a body a cassette keeps as YAML (parsed_body) given a value nested 255+ deep: the YAML reader's
        # documented limit (capture/yaml_safe.py), a one-line error, as for any YAML that deep
        assert "nests deeper than 256 levels" in str(error), error
        return
    calls = tuple(
        (turn.number, tuple((c.call_id, c.raw_arguments) for c in turn.stream.calls)) for turn in report.turns
    )
    assert calls == _calls_of(name)


@FUZZ
@given(st.sampled_from(sorted({"anthropic", "openai", "openai-responses", "gemini", "bedrock", "ollama", "mistral"})),
       st.lists(st.tuples(st.sampled_from(FIELDS), body_values), min_size=1, max_size=3))  # fmt: skip
def test_request_bodies_of_any_shape_through_the_proxys_readers(provider: str, changes: Any) -> None:
    import io

    from stream_doctor.conversation.requests import parse
    from stream_doctor.record.echo import echo_of
    from stream_doctor.record.writer import EnvelopeWriter, request_record
    from stream_doctor.util import jsontext

    body: dict[str, Any] = {"model": "m", "messages": [{"role": "user", "content": "?"}], "tools": [{"name": "f"}]}
    for path, value in changes:
        set_field(body, path, value)
    record = request_record(0.0, "POST", "http://127.0.0.1/v1/x", jsontext.dumps(body), [])
    echo_of(provider, record["body"])
    parse(provider, record["body"])
    assert EnvelopeWriter(io.BytesIO(), 0.0).write(record) > 0


def test_the_corpus_holds_the_crashes_of_issue_31() -> None:
    assert {path.name for path in saved_crashes()} >= {
        "responses_request_tools_number.jsonl",
        "anthropic_start_and_execute_input_true.jsonl",
    }
