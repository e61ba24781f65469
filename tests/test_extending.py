"""docs/architecture.md's steps to add a provider, a rule, a container, a reporter and a client
profile, each done once on a scratch part exactly as the page says, and checked to become live:
detected, run, read, written, listed. Registering is patched in (the page's step is a line in the
registry's source), so the real registries are untouched after each test."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from typer.testing import CliRunner

import stream_doctor
from stream_doctor import providers, rules
from stream_doctor.capture.base import Frame
from tests.conftest import ROOT

EMPTY_INPUT = str(ROOT / "fixtures/anthropic/empty_input_bug.jsonl")  # runs write_file with {}
ONE_CALL = str(ROOT / "fixtures/anthropic/one_call.sse")  # one get_weather call, clean


def scratch_module(monkeypatch: pytest.MonkeyPatch, name: str, source: str) -> ModuleType:
    """A module of the package written as the page says, importable by its dotted name for this test only."""
    module = ModuleType(name)
    module.__file__ = f"<scratch {name}>"
    monkeypatch.setitem(sys.modules, name, module)
    exec(compile(textwrap.dedent(source), module.__file__, "exec"), module.__dict__)
    return module


# -- a provider ---------------------------------------------------------------------------------

SCRATCH_ADAPTER = '''
    """Scratch chat: OpenAI Chat's chunks, told apart by their "object"."""
    from stream_doctor.providers import openai_chat

    name = "scratch"
    title = "Scratch chat"
    protocol = openai_chat.protocol


    def sniff(frames):
        # above OpenAI Chat (90 on these chunks): detection takes the highest score, a tie is an error
        return 95 if any(isinstance(f.value, dict) and f.value.get("object") == "scratch.chunk" for f in frames) else 0


    def translator():
        return openai_chat.translator()
'''


def scratch_capture(tmp_path: Path) -> Path:
    def chunk(delta: dict[str, Any], finish: str | None = None) -> str:
        body = {
            "id": "s1",
            "object": "scratch.chunk",
            "model": "m",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }
        return f"data: {json.dumps(body)}\n\n"

    call = {"index": 0, "id": "call_1", "type": "function", "function": {"name": "lookup", "arguments": ""}}
    path = tmp_path / "scratch.sse"
    path.write_text(
        chunk({"role": "assistant", "tool_calls": [call]})
        + chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"q": '}}]})
        + chunk({"tool_calls": [{"index": 0, "function": {"arguments": '"x"}'}}]})
        + chunk({}, "tool_calls")
        + "data: [DONE]\n\n"
    )
    return path


def detected_by(paths: list[Path]) -> set[str]:
    """The adapters that win detection on at least one of these captures (each turn's first event frames)."""
    from tests.providers.test_detection import samples

    won = set()
    for path in paths:
        for sample in samples(path):
            try:
                adapter, _ = providers.detect(sample)
            except providers.DetectionError:
                continue
            won.add(adapter.name)
    return won


def test_every_registered_adapter_is_detected_on_a_fixture() -> None:
    """The guard for the step most easily forgotten: an adapter that ``candidates()`` never names is
    never asked to sniff, scores 0 on every capture and would be dead code; here it fails by name."""
    from tests.providers.test_detection import FIXTURES

    assert set(providers.ADAPTERS) - detected_by(FIXTURES) == set()


def test_adding_a_provider(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    scratch_module(monkeypatch, "stream_doctor.providers.scratch", SCRATCH_ADAPTER)
    monkeypatch.setitem(providers.ADAPTERS._modules, "scratch", "stream_doctor.providers.scratch")
    capture = scratch_capture(tmp_path)

    # Registered in ADAPTERS but without a candidates() entry: never asked, so the guard above fails.
    assert "scratch" not in detected_by([capture])
    assert stream_doctor.replay(capture).stream.capture.provider != "scratch"

    # The page's step: a condition in providers.candidates() that the adapter's sniff requires.
    original = providers.candidates

    def candidates(sample: list[Frame]) -> set[str]:
        found = original(sample)
        if any(isinstance(f.value, dict) and f.value.get("object") == "scratch.chunk" for f in sample):
            found.add("scratch")
        return found

    monkeypatch.setattr(providers, "candidates", candidates)
    assert detected_by([capture]) == {"scratch"}
    report = stream_doctor.replay(capture)
    assert report.stream.capture.provider == "scratch"
    (call,) = report.stream.calls
    assert call.name == "lookup" and call.arguments == {"q": "x"}
    assert stream_doctor.replay(capture, provider="scratch").stream.capture.provider_forced


# -- a rule -------------------------------------------------------------------------------------

SCRATCH_RULE = '''
    """A call to write_file (a scratch rule: the docstring is the rule's documentation).

    What it checks:
        Every tool call named ``write_file``.

    Why it matters:
        The scratch test of docs/architecture.md needs a rule that fires on one fixture only.

    Severity:
        info. It reports what the request asked for.

    Example:
        content_block_start {"content_block":{"type":"tool_use","name":"write_file"}}

    How to fix:
        Nothing to fix.
    """

    from stream_doctor.findings import Severity
    from stream_doctor.rules.base import rule


    @rule("SD099", "scratch-write-file", "A call to write_file", Severity.INFO)
    def check(stream, self):
        for call in stream.calls:
            if call.name == "write_file":
                yield self.finding(stream, call.started, f"call {call.call_id} runs write_file", "Nothing to fix")
'''


def forget_rules(monkeypatch: pytest.MonkeyPatch) -> None:
    """Drop what the registry and the stages remember of the rule set (a new process would not have it)."""
    from stream_doctor import stages

    for cached in ("RULES", "BY_CODE"):
        monkeypatch.delitem(rules.__dict__, cached, raising=False)
    rules.rules_of.cache_clear()
    stages.selected_rules.cache_clear()  # the per-selection cache


def test_adding_a_rule(monkeypatch: pytest.MonkeyPatch) -> None:
    scratch_module(monkeypatch, "stream_doctor.rules.capture.sd099_scratch_write_file", SCRATCH_RULE)
    monkeypatch.setitem(rules.MODULES, "stream", (*rules.STREAM_MODULES, "capture.sd099_scratch_write_file"))
    forget_rules(monkeypatch)
    try:
        assert "SD099" in rules.codes()
        (found,) = [f for f in stream_doctor.replay(EMPTY_INPUT).findings if f.code == "SD099"]
        assert found.name == "scratch-write-file" and "write_file" in found.message
        assert not [f for f in stream_doctor.replay(ONE_CALL).findings if f.code == "SD099"]  # the near miss
        assert not [f for f in stream_doctor.replay(EMPTY_INPUT, ignore="SD099").findings if f.code == "SD099"]
        assert rules.lookup("SD099") is not None and "What it checks" in rules.lookup("SD099").doc  # explain
    finally:
        forget_rules(monkeypatch)


# -- a container --------------------------------------------------------------------------------

SCRATCH_READER = '''
    """Scratch lines: a first line "SCRATCH 1", then one JSON event a line."""
    import orjson

    from stream_doctor.capture.base import Capture, Frame, InputProblem, Pos

    MAGIC = b"SCRATCH 1\\n"


    class ScratchReader:
        name = "scratch"
        title = "Scratch lines"

        def sniff(self, head):
            return 95 if head.startswith(MAGIC) else 0

        def reject_reason(self, head):
            return "no SCRATCH 1 line"

        def read(self, data, path):
            frames, problems, offset = [], [], len(MAGIC)
            for line_number, line in enumerate(data[len(MAGIC):].splitlines(keepends=True), start=2):
                pos = Pos(len(frames) + 1, line_number, offset)
                offset += len(line)
                try:
                    value = orjson.loads(line)
                except orjson.JSONDecodeError as error:
                    problems.append(InputProblem("malformed", f"not JSON: {error}", pos))
                    continue
                kind = value.get("type") if isinstance(value, dict) else None
                frames.append(Frame(pos, line.rstrip(b"\\n"), value, None, kind))
            return Capture(path, self.name, len(data), frames, problems=problems)


    READER = ScratchReader()
'''


def test_adding_a_container(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from stream_doctor import capture

    scratch_module(monkeypatch, "stream_doctor.capture.scratch", SCRATCH_READER)
    monkeypatch.setitem(capture.READERS._modules, "scratch", "stream_doctor.capture.scratch:READER")
    monkeypatch.setattr(capture, "CONTAINERS", tuple(capture.READERS))  # the names --container takes, read at import
    records = [json.loads(line) for line in Path(EMPTY_INPUT).read_text().splitlines()]
    events = [r["data"] for r in records if r["sd"] == "event"]  # the envelope's events, bare
    path = tmp_path / "capture.scratch"
    path.write_text("SCRATCH 1\n" + "".join(f"{json.dumps(event)}\n" for event in events))
    start_line = 2 + next(i for i, e in enumerate(events) if e.get("content_block", {}).get("type") == "tool_use")

    report = stream_doctor.replay(path)
    assert report.stream.capture.container == "scratch" and report.stream.capture.provider == "anthropic"
    (call,) = report.stream.calls
    assert call.name == "write_file" and set(call.arguments) == {"path", "content"}
    assert (
        stream_doctor.replay(path, container="scratch").stream.calls[0].started.line == start_line
    )  # positions from the first byte


# -- a reporter ---------------------------------------------------------------------------------

SCRATCH_REPORTER = '''
    """Scratch check report: one line per capture, its path and how many findings fail it."""


    def render(result, options):
        return "".join(f"{c.path} {len(c.failures)}\\n" for c in result.captures)
'''


def test_adding_a_check_reporter(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from stream_doctor import reporters
    from stream_doctor.cli import app

    scratch_module(monkeypatch, "stream_doctor.reporters.scratch_lines", SCRATCH_REPORTER)
    monkeypatch.setitem(reporters.CHECK_FORMATS._modules, "scratch", "stream_doctor.reporters.scratch_lines")
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "out.txt"
    result = CliRunner().invoke(app, ["check", EMPTY_INPUT, ONE_CALL, "--isolated", "--report", f"scratch:{out}"])
    assert result.exit_code == 1, result.output
    lines = sorted(out.read_text().splitlines())
    assert [line.rsplit(" ", 1)[0].rsplit("/", 1)[1] for line in lines] == ["empty_input_bug.jsonl", "one_call.sse"]
    assert [int(line.rsplit(" ", 1)[1]) > 0 for line in lines] == [True, False]


# -- a client profile ---------------------------------------------------------------------------

SCRATCH_PROFILE = '''
    """scratch-start-placeholder: the naive start-placeholder pattern under a new name."""
    from stream_doctor.clients.base import profile
    from stream_doctor.clients.naive_start_placeholder import StartPlaceholder

    PROFILE = profile(
        "scratch-start-placeholder",
        "Scratch: reads the start event's input",
        "pattern",
        "runs the tool with the start event's input ({})",
    )(StartPlaceholder)
'''


def test_adding_a_client_profile(monkeypatch: pytest.MonkeyPatch) -> None:
    from stream_doctor import clients

    module = scratch_module(monkeypatch, "stream_doctor.clients.scratch_start_placeholder", SCRATCH_PROFILE)
    monkeypatch.setattr(clients, "PROFILES", (*clients.PROFILES, module.PROFILE))
    monkeypatch.setattr(clients, "BY_NAME", {p.name: p for p in clients.PROFILES})

    report = stream_doctor.replay(ONE_CALL, clients="scratch-start-placeholder")
    (differs,) = [f for f in report.findings if f.code == "SD801"]
    assert "scratch-start-placeholder" in differs.message
    assert "scratch-start-placeholder" in report.extras[1][0].data
