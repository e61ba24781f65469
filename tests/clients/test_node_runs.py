"""``--client`` runs the TypeScript libraries under Node (``clients/library/node.py``): the harness the
agreement tests drive, with the packages of ``--node-modules DIR`` (here the project's own harness,
``tests/clients/node/node_modules``); without Node or the packages, the model answers with a note that
says what to do, and a library that hangs, exhausts its heap or cannot be driven is bounded and noted.

The failing libraries are stand-in packages in a ``node_modules`` folder of the test's own.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from stream_doctor.api import replay
from stream_doctor.cli import app
from stream_doctor.clients import runs
from stream_doctor.engine.stages import RunError
from tests.clients.node_harness import HARNESS, node_executable
from tests.conftest import FIXTURES

#: Node and the harness's npm packages; each TypeScript library run in a Node child process
pytestmark = [pytest.mark.external, pytest.mark.slow]

ONE_CALL = str(FIXTURES / "anthropic/one_call.sse")
INPUT = {"location": "Lisbon, Portugal", "unit": "celsius"}
MODULES = str(HARNESS / "node_modules")


@pytest.fixture(autouse=True)
def _node() -> None:
    node_executable()  # skips (fails under CI=true) without node and the harness's packages


def _verdict(client: str, path: str = ONE_CALL, **options: Any) -> dict[str, Any]:
    report = replay(path, clients=client, **options)
    (call, *_) = report.calls
    (extra,) = [e for e in report.extras[report.number(call)] if e.key == "clients"]
    verdict: dict[str, Any] = extra.data[client]
    return verdict


def _stand_in(tmp_path: Path, package: str, body: str) -> str:
    """A node_modules folder whose ``package`` is an ES module that runs ``body``."""
    folder = tmp_path / "node_modules" / package
    folder.mkdir(parents=True)
    manifest = {"name": package, "version": "0.0.1", "type": "module", "exports": "./index.js"}
    (folder / "package.json").write_text(json.dumps(manifest))
    (folder / "index.js").write_text(body)
    return str(tmp_path / "node_modules")


def test_the_typescript_library_gives_the_verdict_and_says_so() -> None:
    verdict = _verdict("anthropic-typescript", node_modules=MODULES)
    assert verdict["source"] == {
        "label": "installed @anthropic-ai/sdk 1.12.0 (run)",
        "mode": "run",
        "library": "@anthropic-ai/sdk",
        "version": "1.12.0",
        "note": None,
    }
    (handed,) = verdict["handoffs"]
    assert (handed["input"], handed["line"], handed["event"]) == (INPUT, 37, 13)
    assert handed["when"] == "the SDK's contentBlock event (MessageStream)"
    assert verdict["agrees"] is True


@pytest.mark.parametrize(
    ("client", "version"), [("openai-node", "openai (npm) 7.57.0"), ("vercel-ai", "ai (npm) 7.0.173")]
)
def test_each_typescript_library_runs_on_its_provider(client: str, version: str) -> None:
    report = replay(str(FIXTURES / "openai/parallel_calls.sse"), clients=client, node_modules=MODULES)
    verdicts = [e.data[client] for n in report.extras for e in report.extras[n] if e.key == "clients"]
    assert [v["source"]["label"] for v in verdicts] == [f"installed {version} (run)"] * 2
    assert [v["handoffs"][0]["input"] for v in verdicts] == [{"city": "Porto"}, {"timezone": "Europe/Lisbon"}]
    assert all(v["agrees"] for v in verdicts)


def test_the_projects_own_harness_is_the_default() -> None:
    assert _verdict("anthropic-typescript")["source"]["mode"] == "run"


def test_a_folder_without_the_packages_leaves_the_model_naming_the_option(tmp_path: Path) -> None:
    verdict = _verdict("anthropic-typescript", node_modules=str(tmp_path))
    assert verdict["source"]["mode"] == "model"
    assert verdict["source"]["note"] == (
        f"{tmp_path} holds no @anthropic-ai/sdk: `npm install @anthropic-ai/sdk` in a project and pass its "
        "node_modules with --node-modules DIR to run it"
    )
    assert verdict["handoffs"][0]["input"] == INPUT  # the model's answer
    result = CliRunner().invoke(
        app,
        ["replay", ONE_CALL, "--client", "vercel-ai", "--node-modules", str(tmp_path), "--width", "300"],
    )
    said = " ".join(result.output.split())
    assert f"model of vercel-ai 7.0.173: runs it with {json.dumps(INPUT, separators=(',', ':'))}" in said
    assert "holds no ai, @ai-sdk/openai-compatible, @ai-sdk/anthropic: `npm install" in said


def test_run_mode_requires_the_packages(tmp_path: Path) -> None:
    with pytest.raises(RunError, match=f"--client-mode run: {tmp_path} holds no @anthropic-ai/sdk"):
        replay(ONE_CALL, clients="anthropic-typescript", client_mode="run", node_modules=str(tmp_path))
    result = CliRunner().invoke(
        app, ["replay", ONE_CALL, "--client", "vercel-ai", "--client-mode", "run", "--node-modules", str(tmp_path)]
    )
    assert result.exit_code == 2
    assert "Traceback" not in result.output and len(result.output.strip().splitlines()) == 1


def test_without_node_the_model_answers_and_says_why(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # the library's process finds no node (its python is absolute)
    verdict = _verdict("anthropic-typescript", node_modules=MODULES)
    assert verdict["source"]["mode"] == "model"
    assert verdict["source"]["note"] == (
        "Node.js (node) is not on PATH: install Node.js 20 or later to run anthropic-typescript"
    )


def test_a_library_that_hangs_is_stopped_at_its_time_bound(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    modules = _stand_in(tmp_path, "@anthropic-ai/sdk", "while (true) {}\n")
    monkeypatch.setattr(runs, "RUN_SECONDS", 8.0)  # Node's own bound: 3 s
    verdict = _verdict("anthropic-typescript", node_modules=modules)
    assert verdict["source"]["note"] == (
        "the library could not be run (TimeoutError: Node gave no answer within the run's time: stopped); "
        "this is the model's answer"
    )
    assert verdict["handoffs"][0]["input"] == INPUT


def test_a_library_that_exhausts_its_heap_is_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    modules = _stand_in(
        tmp_path, "@anthropic-ai/sdk", "const held = []; while (true) held.push(new Array(1e5).fill(1));\n"
    )
    monkeypatch.setattr(runs, "NODE_HEAP_MIB", 64)
    verdict = _verdict("anthropic-typescript", node_modules=modules)
    assert verdict["source"]["mode"] == "model"
    assert verdict["source"]["note"].startswith(
        "the library could not be run (RuntimeError: node ended without an answer"
    )
    assert "heap at most 64 MiB" in verdict["source"]["note"]


def test_a_library_that_cannot_be_driven_at_its_version_gives_a_note(tmp_path: Path) -> None:
    modules = _stand_in(tmp_path, "@anthropic-ai/sdk", "export default 42;\n")  # no client class
    verdict = _verdict("anthropic-typescript", node_modules=modules)
    assert verdict["source"]["mode"] == "model"
    assert verdict["source"]["note"] == (
        "the library could not be run (RuntimeError: TypeError: Anthropic is not a constructor); "
        "this is the model's answer"
    )
