"""``stream-doctor fixture CAPTURE --serve MODULE:FUNCTION``: the regression test it writes serves the capture
to the user's function with the ``stream_doctor_server`` fixture and fails with the finding while the bug is
there. Run with a real pytest on the page's todo agent (docs/examples/todo_agent.py, the real Anthropic SDK):
against its buggy loop the test fails naming SD608, against its fixed twin it passes. The capture is written
as an envelope with its credentials masked (``convert``'s writer), which serves the same conversation; the
module is built as a tree like every test ``fixture`` writes, and a file ``fixture`` did not write is never
replaced."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest

from stream_doctor.serve.load import Script, load_script
from tests import planted_secrets
from tests.conftest import first_in_the_inner_loop

#: the written test module run against the loopback server
pytestmark = [pytest.mark.external]

pytest.importorskip("anthropic")
pytest.importorskip("aiohttp")

ROOT = Path(__file__).resolve().parents[2]
CAPTURE = "fixtures/conversations/anthropic_echo_empty_input.yaml"
#: the user's own code: the page's todo agent, its buggy loop and its fixed twin, each a function of no arguments
AGENT = f"""
import sys

sys.path.insert(0, {str(ROOT / "docs" / "examples")!r})
import todo_agent


def buggy():
    sys.argv = ["todo_agent.py"]
    todo_agent.main()


def fixed():
    sys.argv = ["todo_agent.py", "--fixed"]
    todo_agent.main()
"""


def _run(*arguments: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-W", "ignore", *arguments],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join((str(ROOT), str(cwd)))},
        cwd=cwd,
        timeout=300,
    )


def _fixture(
    folder: Path, target: str, capture: str = CAPTURE, keep: str = "SD608", name: str = "echo.jsonl"
) -> subprocess.CompletedProcess[str]:
    output = str(folder / name)
    return _run("-m", "stream_doctor", "fixture", capture, "--keep", keep, "--serve", target, "-o", output)


def _conversation(script: Script) -> list[tuple[Any, list[Any]]]:
    """What a script serves, turn by turn: the request body it expects, and each event's JSON payload
    (SSE ``data:`` lines) in order: the same for a capture and its envelope, whatever the bytes' spacing."""
    turns = []
    for turn in script.turns:
        lines = turn.recorded.body.decode().splitlines()
        events = [orjson.loads(line[5:]) for line in lines if line.startswith("data:") and line[5:].strip() != "[DONE]"]
        turns.append(((turn.request or {}).get("body"), events))
    return turns


@pytest.mark.slow  # the CLI twice and the written test under pytest twice, in child processes (15 s of CPU)
def test_the_written_test_fails_with_the_finding_on_the_buggy_agent_and_passes_on_the_fixed_one(tmp_path: Path) -> None:
    (tmp_path / "agent_under_test.py").write_text(AGENT, encoding="utf-8")
    written = _fixture(tmp_path, "agent_under_test:buggy")
    assert written.returncode == 0, written.stderr
    envelope = tmp_path / "echo.jsonl"
    assert envelope.read_bytes().startswith(b'{"sd":"header"')  # an envelope, not a copy of the cassette
    assert _conversation(load_script(str(envelope))) == _conversation(load_script(str(ROOT / CAPTURE)))
    test = tmp_path / "test_echo.py"
    buggy = _run("-m", "pytest", "-q", "-p", "no:cacheprovider", str(test), cwd=tmp_path)
    assert buggy.returncode == 1, buggy.stdout + buggy.stderr
    assert "error SD608: write_file (toolu_016VrNJIy6Bc1b7mC4BgQKrx) is sent back in turn 2's request" in buggy.stdout

    rewritten = _fixture(tmp_path, "agent_under_test:fixed")  # its own unedited module: replaced
    assert rewritten.returncode == 0, rewritten.stderr
    fixed = _run("-m", "pytest", "-q", "-p", "no:cacheprovider", str(test), cwd=tmp_path)
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert "1 passed" in fixed.stdout


@pytest.mark.parametrize(
    "target", first_in_the_inner_loop(["agent", "agent:run()", "agent:'; import os", ":run", "agent:run:x"])
)
def test_a_target_that_is_not_module_colon_function_is_one_line(target: str, tmp_path: Path) -> None:
    done = _fixture(tmp_path, target)
    assert (done.returncode, done.stdout) == (2, "")
    assert len(done.stderr.strip().splitlines()) == 1 and "MODULE:FUNCTION" in done.stderr
    assert list(tmp_path.iterdir()) == []


def test_a_test_module_it_did_not_write_is_never_replaced(tmp_path: Path) -> None:
    mine = tmp_path / "test_echo.py"
    mine.write_text("def test_mine():\n    pass\n", encoding="utf-8")
    done = _fixture(tmp_path, "agent_under_test:buggy")
    assert done.returncode == 2 and "refusing to replace it" in done.stderr
    assert mine.read_text(encoding="utf-8") == "def test_mine():\n    pass\n"
    assert not (tmp_path / "echo.jsonl").exists()


def test_a_fixture_named_for_another_format_is_refused(tmp_path: Path) -> None:
    done = _fixture(tmp_path, "agent_under_test:buggy", name="echo.yaml")  # the envelope is JSON Lines
    assert done.returncode == 2 and "name it" in done.stderr and "echo.jsonl" in done.stderr
    assert list(tmp_path.iterdir()) == []


#: the planted captures the server can serve, and a finding each shows (what --keep needs)
_PLANTED = {
    "planted.har": "SD302",
    "planted.yaml": "SD302",
    "planted_envelope.jsonl": "SD103",
    "planted_openai.har": "SD609",
}


@pytest.mark.parametrize("name", sorted(_PLANTED))
def test_no_planted_credential_reaches_the_written_fixture_and_it_serves_the_same_calls(
    name: str, tmp_path: Path
) -> None:
    captures = tmp_path / "captures"
    captures.mkdir()
    (path,) = [p for p in planted_secrets.write_all(captures) if p.name == name]
    out = tmp_path / "out"
    out.mkdir()
    done = _fixture(out, "agent_under_test:run", str(path), _PLANTED[name], "served.jsonl")
    assert done.returncode == 0, done.stderr
    for written in out.iterdir():
        data = written.read_text(encoding="utf-8")
        leaked = [secret for secret in planted_secrets.SECRETS if secret in data]
        assert not leaked, f"{written.name} holds {leaked}"
    original, served = load_script(str(path)), load_script(str(out / "served.jsonl"))
    assert len(served.turns) == len(original.turns) and served.provider == original.provider
    for before, after in zip(_conversation(original), _conversation(served), strict=True):
        assert [_kind(e) for e in after[1]] == [_kind(e) for e in before[1]]  # the same events, values masked


def _kind(event: Any) -> Any:
    return event.get("type") or event.get("object") if isinstance(event, dict) else None


def test_what_only_looks_like_a_key_is_kept_where_the_masking_rules_keep_it(tmp_path: Path) -> None:
    """A near miss: ``cache_key`` and ``max_tokens`` are no credential fields (``util/credentials.py`` masks no bare
    ``key``/``token`` suffix), a tool schema's ``api_key`` property holds a schema, not a secret, and a
    user's words about a key are text: each is served as the capture holds it, beside masked secrets."""
    first, second = planted_secrets.anthropic_requests()
    first = {**first, "cache_key": "ck-looks-like-a-key-0123", "messages": [{"role": "user", "content": "Which key?"}]}
    cassette = planted_secrets.anthropic_cassette()
    cassette["interactions"][0]["request"]["body"] = orjson.dumps(first).decode()
    (tmp_path / "near.yaml").write_bytes(orjson.dumps(cassette))  # JSON is YAML: the cassette reader's extension
    out = tmp_path / "out"
    out.mkdir()
    done = _fixture(out, "agent_under_test:run", str(tmp_path / "near.yaml"), "SD302", "near.jsonl")
    assert done.returncode == 0, done.stderr
    recorded = load_script(str(out / "near.jsonl")).turns[0].request
    assert recorded is not None
    request = recorded["body"]
    assert request["cache_key"] == "ck-looks-like-a-key-0123" and request["max_tokens"] == 1024
    assert request["tools"][0]["input_schema"]["properties"]["api_key"] == {"type": "string"}
    assert request["messages"] == [{"role": "user", "content": "Which key?"}]
    assert request["api_key"] == "[redacted]" and "sk-body-api-key" not in (out / "near.jsonl").read_text()
