"""docs/architecture.md's steps to add a provider, a rule, a container, a reporter and a client
profile, each done once on a scratch part exactly as the page says, and checked to become live:
detected, run, read, written, listed.

A provider and a rule are added to a scratch copy of the package (and of the rule case tables), which
then runs in a process of its own; the files the step touched are counted: a provider is one new
module and one changed line in ``providers/__init__.py``, a rule one new module and one new case
table. The container, the reporter and the profile are registered by patching the registry for the
test, so the real registries are untouched after each test."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from typer.testing import CliRunner

import stream_doctor
from stream_doctor import providers
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


def scratch_tree(tmp_path: Path, tests: tuple[str, ...] = ()) -> Path:
    """A copy of the package (and of these test files) in a scratch folder, to change as the page says."""
    root = tmp_path / "scratch"
    shutil.copytree(ROOT / "stream_doctor", root / "stream_doctor", ignore=shutil.ignore_patterns("__pycache__"))
    for name in tests:
        source = ROOT / name
        copy = shutil.copytree if source.is_dir() else shutil.copyfile
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        copy(source, root / name)
    (root / "fixtures").symlink_to(ROOT / "fixtures")
    return root


def files_of(root: Path) -> dict[str, bytes]:
    """Every file of the scratch tree (but the fixtures it links to) by its path, with its bytes."""
    return {
        str(path.relative_to(root)): path.read_bytes()
        for path in root.rglob("*")
        if path.is_file() and "__pycache__" not in path.parts and path.parts[len(root.parts)] != "fixtures"
    }


def touched(before: dict[str, bytes], after: dict[str, bytes]) -> tuple[list[str], list[str]]:
    """The files a step added and the files it changed (none may be removed)."""
    assert set(before) <= set(after), set(before) - set(after)
    return sorted(set(after) - set(before)), sorted(p for p in before if after[p] != before[p])


def run_in(root: Path, *args: str, path: tuple[Path, ...] = ()) -> subprocess.CompletedProcess[str]:
    """A Python process with the scratch tree first on its path (not the package under test), then ``path``."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(map(str, (root, *path))), "PYTHONDONTWRITEBYTECODE": "1"}
    return subprocess.run(
        [sys.executable, *args], cwd=root, env=env, capture_output=True, text=True, timeout=300, check=False
    )


# -- a provider ---------------------------------------------------------------------------------

SCRATCH_ADAPTER = '''
    """Scratch chat: OpenAI Chat's chunks, told apart by their "object"."""
    from stream_doctor.providers import openai_chat
    from stream_doctor.providers.sniffing import Words

    name = "scratch"
    title = "Scratch chat"
    protocol = openai_chat.protocol
    WORDS = Words(field="object", names=frozenset({"scratch.chunk"}))


    def sniff(frames):
        # above OpenAI Chat (90 on these chunks): detection takes the highest score, a tie is an error
        return 95 if WORDS.heard(frames) else 0


    def translator():
        return openai_chat.translator()
'''

#: The page's one registry line, and the line it goes after in providers/__init__.py.
SCRATCH_LINE = '    "scratch": ("stream_doctor.providers.scratch", "stream_doctor.providers.scratch:WORDS"),\n'
LAST_ADAPTER = '"vercel-ai-data": ("stream_doctor.providers.vercel_ai_data", "stream_doctor.providers.vercel_ai_protocol:DATA_WORDS"),\n'

#: What detection and a replay make of a capture, in the scratch tree's process.
DETECT = """
import json, sys
import stream_doctor
from stream_doctor import providers
from tests.providers.test_detection import samples

path = sys.argv[1]
won = set()
for sample in samples(path):
    try:
        won.add(providers.detect(sample)[0].name)
    except providers.DetectionError:
        pass
report = stream_doctor.replay(path)
calls = [(c.name, c.arguments) for c in report.stream.calls]
forced = "scratch" in providers.ADAPTERS and stream_doctor.replay(path, provider="scratch").stream.capture.provider_forced
print(json.dumps({"file": stream_doctor.__file__, "detected": sorted(won), "provider": report.stream.capture.provider,
                  "calls": calls, "forced": forced}))
"""


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
    """The guard for an adapter whose words no capture holds: it is never asked to sniff, scores 0 on
    every capture and would be dead code; here it fails by name."""
    from tests.providers.test_detection import FIXTURES

    assert set(providers.ADAPTERS) - detected_by(FIXTURES) == set()


@pytest.mark.slow  # the scratch copy, and a Python child detecting the capture before and after (3 s of CPU)
def test_adding_a_provider(tmp_path: Path) -> None:
    root = scratch_tree(tmp_path)
    capture = scratch_capture(tmp_path)
    before = files_of(root)

    def detect() -> dict[str, Any]:
        found = run_in(root, "-c", DETECT, str(capture), path=(ROOT,))
        assert found.returncode == 0, found.stderr
        result: dict[str, Any] = json.loads(found.stdout)
        assert result["file"].startswith(str(root))  # the scratch copy ran, not the package under test
        return result

    # The module alone, not registered: never asked, read as OpenAI Chat (the near miss).
    (root / "stream_doctor/providers/scratch.py").write_text(textwrap.dedent(SCRATCH_ADAPTER))
    unregistered = detect()
    assert "scratch" not in unregistered["detected"] and unregistered["provider"] != "scratch"

    # The page's step: one line in the registry.
    registry = root / "stream_doctor/providers/__init__.py"
    source = registry.read_text()
    assert source.count(LAST_ADAPTER) == 1
    registry.write_text(source.replace(LAST_ADAPTER, LAST_ADAPTER + SCRATCH_LINE))
    added, changed = touched(before, files_of(root))
    assert (added, changed) == (["stream_doctor/providers/scratch.py"], ["stream_doctor/providers/__init__.py"])

    registered = detect()
    assert registered["detected"] == ["scratch"] and registered["provider"] == "scratch"
    assert registered["calls"] == [["lookup", {"q": "x"}]]
    assert registered["forced"]


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

    from stream_doctor.values.findings import Severity
    from stream_doctor.rules.base import rule


    @rule("A call to write_file", Severity.INFO)
    def check(stream, self):
        for call in stream.calls:
            if call.name == "write_file":
                yield self.finding(stream, call.started, f"call {call.call_id} runs write_file", "Nothing to fix")
'''


SCRATCH_CASES = """\
# SD099 scratch-write-file: A call to write_file
cases:
- name: a call to write_file
  fixture: anthropic/empty_input_bug.jsonl
  fires: 1
  says:
  - runs write_file
- name: a call to get_weather only
  fixture: anthropic/one_call.sse
  fires: 0
"""


@pytest.mark.slow  # the scratch copy's rule tests run by pytest in a child process (3 s of CPU)
def test_adding_a_rule(tmp_path: Path) -> None:
    root = scratch_tree(
        tmp_path,
        (
            "tests/__init__.py",
            "tests/conftest.py",
            "tests/rules/__init__.py",
            "tests/rules/test_rule_cases.py",
            "tests/rules/cases",
        ),
    )
    before = files_of(root)
    # The page's steps: the rule's module, named for its code, in its family's folder, and its case table.
    (root / "stream_doctor/rules/capture/sd099_scratch_write_file.py").write_text(textwrap.dedent(SCRATCH_RULE))
    (root / "tests/rules/cases/SD099.yml").write_text(SCRATCH_CASES)
    added, changed = touched(before, files_of(root))
    assert (added, changed) == (
        ["stream_doctor/rules/capture/sd099_scratch_write_file.py", "tests/rules/cases/SD099.yml"],
        [],
    )

    cases = run_in(
        root,
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        "--noconftest",
        "-k",
        "SD099",
        "tests/rules/test_rule_cases.py",
    )
    assert "2 passed" in cases.stdout, cases.stdout + cases.stderr  # it fires where the table says, and only there
    explain = run_in(root, "-m", "stream_doctor", "explain", "sd099")
    assert explain.returncode == 0 and "scratch-write-file" in explain.stdout and "What it checks" in explain.stdout
    codes = run_in(
        root, "-c", "import stream_doctor, stream_doctor.rules as r; print(stream_doctor.__file__, r.codes())"
    )
    assert codes.stdout.startswith(str(root)) and "'SD099'" in codes.stdout  # the scratch copy ran, not the package


@pytest.mark.slow  # the scratch copy and the CLI in a child process per misnamed, doubled or helper module (3 s of CPU)
def test_a_rule_module_misnamed_or_doubled_is_refused(tmp_path: Path) -> None:
    """The file name is the registration: a rule file the registry cannot read is an error, not a rule
    silently left out, and two files for one code are refused (the near miss: a helper module is fine)."""
    root = scratch_tree(tmp_path)
    rule_source = textwrap.dedent(SCRATCH_RULE)
    probe = ("-m", "stream_doctor", "rules")
    (root / "stream_doctor/rules/capture/_scratch_helper.py").write_text('"""A family helper."""\n')
    assert run_in(root, *probe).returncode == 0
    misnamed = root / "stream_doctor/rules/capture/sd99_scratch_write_file.py"
    misnamed.write_text(rule_source)
    assert "sd99_scratch_write_file.py: a rule module is named sdNNN_<name>.py" in run_in(root, *probe).stderr
    misnamed.unlink()
    for name in ("sd099_scratch_write_file.py", "sd099_scratch_other.py"):
        (root / "stream_doctor/rules/capture" / name).write_text(rule_source)
    assert "two modules are rule SD099" in run_in(root, *probe).stderr


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

    scratch_module(monkeypatch, "stream_doctor.clients.scratch_start_placeholder", SCRATCH_PROFILE)
    path = "stream_doctor.clients.scratch_start_placeholder:PROFILE"
    monkeypatch.setitem(clients.PROFILES._modules, "scratch-start-placeholder", path)

    report = stream_doctor.replay(ONE_CALL, clients="scratch-start-placeholder")
    (differs,) = [f for f in report.findings if f.code == "SD801"]
    assert "scratch-start-placeholder" in differs.message
    assert "scratch-start-placeholder" in report.extras[1][0].data
