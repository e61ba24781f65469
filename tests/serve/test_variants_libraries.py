"""A meaning-keeping variant never changes what the real, unmodified SDK hands the tool; a fault does.

Every SSE fixture of Anthropic and OpenAI Chat, played under each meaning-keeping variant and seed (hypothesis
draws the seeds), is fed to the official SDK as the server would write it: the plan's bytes, cut where its reads
end (the Python SDKs through an ``httpx`` mock transport, ``clients.library``; ``@anthropic-ai/sdk`` and
``openai`` under Node through the harness, one read per enqueued chunk). What the SDK hands over (each call's id,
name and input or argument text, and whether it was handed during the stream or only after it) and the class of
what it raised must equal what it does on the recorded bytes, read one event at a time. Frame numbers are not
compared: a ping or a keep-alive is a frame more.

The near miss: on every fixture whose calls the SDK hands cleanly, each fault that keeps a 200 changes that. The
status faults are checked against the SDKs over a loopback server (``test_apps.py``).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stream_doctor.api import replay
from stream_doctor.clients.library import LIBRARIES, Original, Outcome, original_chunks
from stream_doctor.clients.library import load as load_library
from stream_doctor.serve.variants import VARIANTS, variant_names
from stream_doctor.serve.wire import Plan, Recorded
from stream_doctor.values.events import ToolStart
from tests.clients.node_harness import NodeHarness, library_outcome
from tests.clients.streams import Fed, anthropic_streams, chat_streams, fed_sse
from tests.conftest import FIXTURES, fixture_files
from tests.serve.recorded import cuts, recorded_from, recorded_of, written

#: loopback servers in front of the real SDKs and the Node harness; about 1,300 fixture x variant x library cases
pytestmark = [pytest.mark.external, pytest.mark.slow]

#: seeds drawn per fixture and seeded variant (the unseeded ones run once)
EXAMPLES = int(os.environ.get("STREAM_DOCTOR_VARY_EXAMPLES", "3"))
PYTHON_SDK = {"anthropic": "anthropic-python", "openai": "openai-python"}
NODE_SDK = {"anthropic": "anthropic-typescript", "openai": "openai-node"}
MEANING = variant_names("meaning")
#: the faults that answer 200 and change the body; the status faults need an HTTP status the mock cannot give
BODY_FAULTS = (
    "cut-after-event",
    "cut-before-completion",
    "disconnect-after-ms",
    "error-event-first",
    "overloaded-mid-stream",
)


def _fixtures() -> list[tuple[Path, str]]:
    found = [
        (path, replay(str(path)).stream.capture.provider) for path in fixture_files(*PYTHON_SDK, suffixes=[".sse"])
    ]
    return [(path, provider) for path, provider in found if provider in PYTHON_SDK]


FIXTURE_CASES = _fixtures()


def _name(case: tuple[Path, str]) -> str:
    return str(case[0].relative_to(FIXTURES))


def _python(fed: Fed, provider: str, reads: tuple[int, ...] | None) -> tuple[Any, ...]:
    library = load_library(PYTHON_SDK[provider])
    outcome = library(fed.capture, list(fed.capture.frames), Original(fed.data, reads))
    return _compared(outcome)


def _compared(outcome: Outcome) -> tuple[Any, ...]:
    """What an application relies on: each call handed (id, name, value, during the stream or after it), and
    the class of the exception."""
    return tuple((s.call_id, s.name, s.value, s.at is None) for s in outcome.seen), outcome.error


def _node(
    harness: NodeHarness, fed: Fed, provider: str, chunks: list[bytes] | None, client: str | None = None
) -> dict[str, Any]:
    if chunks is None:
        position: list[Any] = [None]
        chunks = list(original_chunks(Original(fed.data), list(fed.capture.frames), position))
    tools = {c.name for c in fed.stream.calls if c.name}
    ids = {e.call_id for e in fed.events if isinstance(e, ToolStart) and isinstance(e.call_id, str)}
    answer = harness.run(client or NODE_SDK[provider], provider, [(None, piece) for piece in chunks], tools, ids)
    outcome = library_outcome(answer, positions=False)
    # handed during the stream or after it: the harness's ``at`` is None only after the body ended
    handed = [s["at"] is None for s in answer["seen"]]
    return {**outcome, "after": handed}


def _plans(recorded: Recorded, name: str) -> Any:
    """A strategy of the variant's plans over seeds (one plan when the variant draws nothing)."""
    variant = VARIANTS[name]
    if variant.plan(recorded, 0) == variant.plan(recorded, 1):
        return st.just(variant.plan(recorded, 0))
    return st.integers(0, 2**32 - 1).map(lambda seed: variant.plan(recorded, seed))


SEEDS = settings(max_examples=EXAMPLES, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))


@pytest.mark.parametrize("name", MEANING)
@pytest.mark.parametrize("case", FIXTURE_CASES, ids=_name)
def test_a_meaning_keeping_variant_never_changes_what_the_python_sdk_hands(case: tuple[Path, str], name: str) -> None:
    path, provider = case
    recorded = recorded_of(path, provider)
    if (reason := VARIANTS[name].skipped(recorded)) is not None:
        pytest.skip(reason)
    unmodified = _python(fed_sse(recorded.body, str(path)), provider, None)

    @SEEDS
    @given(plan=_plans(recorded, name))
    def check(plan: Plan) -> None:
        assert _python(fed_sse(written(plan), str(path), provider), provider, cuts(plan)) == unmodified

    check()


@pytest.mark.parametrize("name", MEANING)
@pytest.mark.parametrize("case", FIXTURE_CASES, ids=_name)
def test_a_meaning_keeping_variant_never_changes_what_the_node_sdk_hands(
    node_harness: NodeHarness, case: tuple[Path, str], name: str
) -> None:
    path, provider = case
    recorded = recorded_of(path, provider)
    if (reason := VARIANTS[name].skipped(recorded)) is not None:
        pytest.skip(reason)
    fed = fed_sse(recorded.body, str(path))
    unmodified = _node(node_harness, fed, provider, None)

    @SEEDS
    @given(plan=_plans(recorded, name))
    def check(plan: Plan) -> None:
        assert _node(node_harness, fed, provider, [data for _, data in plan.reads]) == unmodified

    check()


@settings(max_examples=EXAMPLES * 10, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(st.data())
def test_a_meaning_keeping_variant_never_changes_what_the_python_sdk_hands_on_generated_streams(
    data: st.DataObject,
) -> None:
    """The neighbours of the fixtures: streams drawn over the whole event-stream grammar and each provider's
    shapes (``tests/clients/streams.py``), each under a drawn meaning-keeping variant and seed."""
    provider = data.draw(st.sampled_from(sorted(PYTHON_SDK)))
    _, stream = data.draw(anthropic_streams() if provider == "anthropic" else chat_streams())
    recorded = recorded_from(stream, "generated.sse", provider)
    name = data.draw(st.sampled_from([n for n in MEANING if VARIANTS[n].skipped(recorded) is None]))
    plan = VARIANTS[name].plan(recorded, data.draw(st.integers(0, 2**32 - 1)))
    unmodified = _python(fed_sse(stream, "generated.sse", provider), provider, None)
    assert _python(fed_sse(written(plan), "generated.sse", provider), provider, cuts(plan)) == unmodified, name


@settings(max_examples=EXAMPLES * 10, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(st.data())
def test_a_meaning_keeping_variant_never_changes_what_the_node_sdk_hands_on_generated_streams(
    node_harness: NodeHarness, data: st.DataObject
) -> None:
    provider = data.draw(st.sampled_from(sorted(NODE_SDK)))
    _, stream = data.draw(anthropic_streams() if provider == "anthropic" else chat_streams())
    recorded = recorded_from(stream, "generated.sse", provider)
    name = data.draw(st.sampled_from([n for n in MEANING if VARIANTS[n].skipped(recorded) is None]))
    plan = VARIANTS[name].plan(recorded, data.draw(st.integers(0, 2**32 - 1)))
    fed = fed_sse(stream, "generated.sse", provider)
    unmodified = _node(node_harness, fed, provider, None)
    assert _node(node_harness, fed, provider, [piece for _, piece in plan.reads]) == unmodified, name


def _handed_cleanly(case: tuple[Path, str]) -> bool:
    """Whether the Python SDK hands every call of the fixture during the stream, with the input the reference
    accumulator reads (a fixture whose calls it already mishandles cannot show a fault changing them)."""
    path, provider = case
    seen, error = _python(fed_sse(path.read_bytes(), str(path)), provider, None)
    calls = replay(str(path)).stream.calls
    wanted = [c.raw_arguments if provider == "openai" else c.arguments for c in calls]
    complete = all(c.ended is not None for c in calls)
    return bool(seen) and error is None and complete and [s[2] for s in seen if not s[3]] == wanted


@pytest.mark.parametrize("name", BODY_FAULTS)
@pytest.mark.parametrize("case", [c for c in FIXTURE_CASES if _handed_cleanly(c)], ids=_name)
def test_a_fault_changes_what_the_sdks_hand(node_harness: NodeHarness, case: tuple[Path, str], name: str) -> None:
    path, provider = case
    recorded = recorded_of(path, provider)
    if (reason := VARIANTS[name].skipped(recorded)) is not None:
        pytest.skip(reason)
    fed = fed_sse(recorded.body, str(path))
    python, node = _python(fed, provider, None), _node(node_harness, fed, provider, None)
    for seed in range(EXAMPLES):
        plan = VARIANTS[name].plan(recorded, seed)
        changed = fed_sse(written(plan), str(path), provider) if written(plan) else None
        if changed is not None:
            assert _python(changed, provider, cuts(plan)) != python, seed
        assert _node(node_harness, fed, provider, [data for _, data in plan.reads if data]) != node, seed


def _quirk_cases() -> list[tuple[str, str]]:
    return [(name, library) for name in variant_names("quirk") for library in VARIANTS[name].libraries]


@pytest.mark.parametrize(("name", "library"), _quirk_cases(), ids=lambda value: str(value))
def test_a_quirk_changes_what_each_library_it_names_hands(node_harness: NodeHarness, name: str, library: str) -> None:
    """What the quirk's declaration says of each library, checked on the library itself: on a capture of two
    calls that it hands cleanly, the quirk changes what it hands or makes it raise."""
    path = FIXTURES / "openai" / "parallel_calls.sse"
    recorded = recorded_of(path, "openai")
    fed = fed_sse(recorded.body, str(path))
    plan = VARIANTS[name].plan(recorded, 0)
    quirked = fed_sse(written(plan), str(path), "openai")
    if library in LIBRARIES:
        run = load_library(library)
        before = run(fed.capture, list(fed.capture.frames), Original(fed.data))
        after = run(quirked.capture, list(quirked.capture.frames), Original(quirked.data, cuts(plan)))
        assert _compared(after) != _compared(before)
    else:
        before_node = _node(node_harness, fed, "openai", None, library)
        assert _node(node_harness, fed, "openai", [data for _, data in plan.reads], library) != before_node
