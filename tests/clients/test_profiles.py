"""Client profiles through the whole pipeline: the SD8xx findings each pair deserves, the registry,
the report's per-call data, and the machines' contract (every profile runs every fixture)."""

from __future__ import annotations

from pathlib import Path

import pytest

from stream_doctor.api import replay
from stream_doctor.clients import PROFILES, UnknownClient, resolve
from stream_doctor.clients.library import LIBRARIES
from stream_doctor.values.findings import Severity
from tests.clients.cases import CLIENT_EXPECTED
from tests.clients.test_node_agreement import CLIENTS as NODE_CLIENTS
from tests.conftest import FIXTURES, fixture_files

STREAMS = [
    p
    for p in fixture_files(suffixes=(".sse", ".jsonl", ".json", ".txt", ".eventstream"))
    if p.parent.name != "conversations"
]


@pytest.mark.parametrize(("fixture", "client"), sorted(CLIENT_EXPECTED), ids=lambda v: v)
def test_each_pair_gets_the_client_findings_it_deserves(fixture: str, client: str) -> None:
    report = replay(FIXTURES / fixture, clients=[client], client_mode="model")  # the profile's own verdict
    found = {f.code for f in report.findings if f.code.startswith("SD8")}
    assert found == CLIENT_EXPECTED[(fixture, client)]
    named = ("model of " if PROFILES[client].kind == "library" else "") + PROFILES[client].label
    for finding in report.findings:
        if finding.code.startswith("SD8"):
            assert finding.message.startswith(named + " would ")  # tied to the client by name
            assert finding.severity is (Severity.WARNING if PROFILES[client].kind == "library" else Severity.INFO)


def test_profiles_are_named_documented_and_sourced() -> None:
    assert len({p.name for p in PROFILES.values()}) == len(PROFILES)
    assert all(PROFILES[name].name == name for name in PROFILES)  # the registry line names the profile it loads
    for profile in PROFILES.values():
        assert profile.doc.strip() and profile.summary and not profile.summary.endswith(".")
        if profile.kind == "library":
            assert profile.version and profile.sources and profile.library, profile.name
            # checked against the real library: by test_library_agreement (Python) or test_node_agreement (npm)
            assert profile.runs_in_python == (profile.name in LIBRARIES), profile.name
            assert profile.runs_in_python or profile.name in NODE_CLIENTS, profile.name


def test_resolve_takes_all_commas_and_suggests_names() -> None:
    assert resolve(["all"]) == tuple(PROFILES.values())
    assert [p.name for p in resolve(["openai-node,anthropic-python", "openai-node"])] == [
        "anthropic-python",
        "openai-node",
    ]
    with pytest.raises(UnknownClient, match="did you mean 'openai-python'"):
        resolve(["opnai-python"])


@pytest.mark.parametrize("path", STREAMS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_profile_runs_every_fixture(path: Path) -> None:
    """No profile raises on any capture: a client's exception is a finding, never ours."""
    report = replay(path, clients=["all"], client_mode="model")
    for number, call in enumerate(report.calls, 1):
        extras = {e.key: e for e in report.extras.get(number, ())}
        if call.server_side:
            continue
        applicable = [p for p in PROFILES.values() if p.applies_to(report.stream.capture.provider)]
        if applicable:
            data = extras["clients"].data
            assert set(data) == {p.name for p in applicable}
            assert len(extras["clients"].lines) == len(applicable)


@pytest.mark.slow  # anthropic-python's library run in a child process (3.5 s of CPU)
def test_the_json_report_carries_each_clients_prediction_per_call() -> None:
    report = replay(FIXTURES / "anthropic/abandoned_at_max_tokens.sse", clients=["anthropic-python", "vercel-ai"])
    call = report.to_dict()["calls"][0]
    predicted = call["extras"]["clients"]
    python = predicted["anthropic-python"]
    assert python["version"] == "2.12.0" and python["differences"] == ["abandoned"]
    assert python["handoffs"][0]["runs"] is True and python["handoffs"][0]["event"] is None
    assert predicted["vercel-ai"]["agrees"] is True and predicted["vercel-ai"]["handoffs"] == []  # dropped, not run


def test_a_profile_for_another_provider_adds_nothing() -> None:
    report = replay(FIXTURES / "anthropic/one_call.sse", clients=["openai-python"])
    assert not report.extras and not [f for f in report.findings if f.code.startswith("SD8")]


def test_unknown_client_is_a_value_error_with_a_suggestion() -> None:
    with pytest.raises(ValueError, match="unknown client 'langchian'; did you mean 'langchain'"):
        replay(FIXTURES / "anthropic/one_call.sse", clients=["langchian"])
