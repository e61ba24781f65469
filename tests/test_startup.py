"""What each command imports at start-up, so the heavy libraries cannot creep back into it.

Speed itself is measured in benchmarks/bench_startup.py (never timed in a test); here the import
list is the contract: ``--version`` is answered before the CLI loads (``launch.py``), importing the
``stream_doctor.cli`` package builds no typer application (PEP 562), ``--help`` imports no report
machinery, a command line imports the module of the command it names and no other's, and no
command imports pydantic (typer 0.29 would), rich where it renders without it, or what only
another command needs.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.conftest import ROOT, first_in_the_inner_loop

PROBE = """
import json, sys
sys.argv = ["stream-doctor", *json.loads(sys.argv[1])]
from stream_doctor.launch import main
try:
    main()
except SystemExit:
    pass
sys.stdout.flush()
sys.stderr.write("\\nMODULES " + json.dumps(sorted(sys.modules)) + "\\n")
"""

NEVER = ("pydantic", "jsonschema", "yaml", "pathspec", "dask", "xmlschema")


def imported(*args: str) -> set[str]:
    result = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(list(args))], capture_output=True, text=True, cwd=ROOT, check=True
    )
    line = next(line for line in result.stderr.splitlines() if line.startswith("MODULES "))
    return set(json.loads(line[len("MODULES ") :]))


def tops(modules: set[str]) -> set[str]:
    return {m.split(".")[0] for m in modules}


def test_version_imports_neither_typer_nor_the_engine() -> None:
    modules = imported("--version")
    assert not tops(modules) & {"typer", "click", "rich", *NEVER}
    # the version is defined below every layer (util/version.py, a constant), so nothing imports the root for it
    assert sorted(m for m in modules if m.startswith("stream_doctor")) == [
        "stream_doctor",
        "stream_doctor.launch",
        "stream_doctor.util",
        "stream_doctor.util.version",
    ]


def test_importing_the_cli_package_builds_no_typer_application() -> None:
    code = "import sys, stream_doctor.cli; print(sorted(m for m in ('typer', 'click') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True).stdout
    assert out.strip() == "[]"


@pytest.mark.parametrize(
    "args", first_in_the_inner_loop([("--help",), ("replay", "--help"), ("check", "-h"), ("--version", "--help")])
)
def test_help_imports_no_pydantic_and_no_replay_machinery(args: tuple[str, ...]) -> None:
    modules = imported(*args)
    assert "typer" in tops(modules)  # typer prints it, which typer 0.29 would slow with pydantic
    assert not tops(modules) & {"rich", "orjson", *NEVER}
    # the providers package itself is the adapters' registry, whose names --provider's help lists; no
    # adapter, no detection words and no adapter base is imported to list them
    assert not {
        m
        for m in modules
        if m.startswith(("stream_doctor.engine.pipeline", "stream_doctor.rules", "stream_doctor.providers."))
    }
    assert not {m for m in modules if m.endswith("_run")}  # no command's work is imported to describe it


#: The modules of the commands (cli/typer_app.COMMANDS): a command line imports the one it names.
COMMAND_MODULES = {
    f"stream_doctor.cli.{name}"
    for name in ("check", "clients", "convert", "minimize", "record", "rules", "scan", "serve")
}


def test_help_describes_every_command_and_a_command_imports_its_own_module_only() -> None:
    assert COMMAND_MODULES | {"stream_doctor.cli.replay"} <= imported("--help")  # the near miss: it lists them all
    assert not COMMAND_MODULES & imported("replay", "--help")


@pytest.mark.parametrize("fmt", first_in_the_inner_loop(["terminal", "json"]))  # terminal, the one rich could draw
def test_a_replay_imports_what_it_uses_only(fmt: str) -> None:
    modules = imported("replay", "fixtures/anthropic/one_call.sse", "--format", fmt)
    assert not tops(modules) & set(NEVER)
    assert "stream_doctor.cli.replay_run" in modules  # the near miss: the replay did run
    assert not {"stream_doctor.check.run", "stream_doctor.cli.check_run"} & modules  # `check`'s machinery
    assert not COMMAND_MODULES & modules  # typer built the replay command only (cli/typer_app.Commands)
    packages = {m.split(".")[1] for m in modules if m.startswith("stream_doctor.")}
    assert not packages & {"scan", "record"}  # other commands' machinery
    assert "rich" not in tops(modules)  # the terminal report renders on reporters/_page.py
    # the other commands' option records (a dataclass compiles its methods when its class is made)
    assert "stream_doctor.values.command_options" not in modules
    assert not ONLY_WHEN_MADE & modules  # records a clean capture without times does not make


#: The modules of records only some replays make, imported where they are made: what the application
#: ran, a parse failure, a stream's own error, a capture's times, ``--timeline``'s rows, ``--statistics``.
ONLY_WHEN_MADE = {
    "stream_doctor.accumulate.executions",
    "stream_doctor.accumulate.parse_failure",
    "stream_doctor.accumulate.stream_error",
    "stream_doctor.accumulate.pending",
    "stream_doctor.values.timeline_rows",
    "stream_doctor.values.finding_counts",
}


def test_a_replay_that_makes_those_records_imports_their_modules() -> None:
    executed = imported("replay", "fixtures/anthropic/empty_input_bug.jsonl", "--timeline", "--statistics")
    errored = imported("replay", "fixtures/anthropic/overloaded_error_mid_stream.sse")  # cut mid-arguments too
    assert executed | errored >= ONLY_WHEN_MADE


@pytest.mark.parametrize("args", first_in_the_inner_loop([(), ("--statistics",)]))
def test_a_check_imports_no_rich(args: tuple[str, ...]) -> None:
    modules = imported("check", "fixtures/anthropic", "--isolated", *args)
    reporter = "statistics" if args else "check_terminal"
    assert "stream_doctor.check.run" in modules and f"stream_doctor.reporters.{reporter}" in modules
    assert "stream_doctor.values.command_options" in modules  # the near miss of a replay's: check reads them
    assert not tops(modules) & {"rich", "pydantic"}


def test_a_named_provider_imports_one_adapter() -> None:
    forced = imported("replay", "fixtures/openai/one_call.sse", "--provider", "openai")
    adapters = {m for m in forced if m.startswith("stream_doctor.providers.") and m.count(".") == 2}
    assert adapters <= {
        "stream_doctor.providers.openai_chat",
        "stream_doctor.providers.openai_chat_protocol",  # the adapter's protocol tables
        "stream_doctor.providers.openai_chat_calls",  # the adapter's tool-call half
        "stream_doctor.providers.base",
        "stream_doctor.providers.sniffing",
    }
    hinted = imported("replay", "fixtures/anthropic/empty_input_bug.jsonl")  # its envelope header names the provider
    assert "stream_doctor.providers.anthropic" in hinted and "stream_doctor.providers.gemini" not in hinted
    assert "stream_doctor.conversation.request_parts" in hinted  # the near miss: its envelope holds requests


def test_the_registry_names_match_the_adapters() -> None:
    from stream_doctor.providers import ADAPTERS

    assert all(ADAPTERS[name].name == name for name in ADAPTERS)


def test_an_anthropic_replay_imports_neither_other_providers_nor_rules_it_cannot_run() -> None:
    modules = imported("replay", "fixtures/anthropic/one_call.sse")
    # detection asks only the adapters a frame could belong to (providers.candidates)
    others = ("gemini", "gemini_interactions", "bedrock", "bedrock_invoke", "ollama", "mistral", "vercel_ai_data")
    assert not {f"stream_doctor.providers.{name}" for name in others} & modules
    # no request history and no --client: the conversation (SD6xx, SD7xx) and client (SD8xx) rules stay out
    assert not {m for m in modules if m.startswith(("stream_doctor.rules.pairing", "stream_doctor.rules.schema"))}
    assert not {m for m in modules if m.startswith(("stream_doctor.rules.clients", "stream_doctor.clients"))}
    assert "stream_doctor.conversation.request_parts" not in modules  # a request's parts: none to read
    assert "stream_doctor.rules.arguments.sd201_unparseable_arguments" in modules  # the stream rules did run
    # no [tool.stream-doctor] table above the capture: the configuration's parser is not imported
    assert "stream_doctor.config.file" not in modules
    # the capture is sniffed by the readers its first byte allows (capture.candidates), and its
    # "type" names narrow the adapters to Anthropic's (providers.candidates)
    other_readers = {
        f"stream_doctor.capture.{n}" for n in ("jsonl", "json_array", "har", "vcr", "recordings", "http_frames")
    }
    assert not other_readers & modules
    other_adapters = {f"stream_doctor.providers.{n}" for n in ("openai_chat", "openai_sdk", "cohere", "vercel_ai")}
    assert not other_adapters & modules
    assert "stream_doctor.providers.anthropic" in modules and "tempfile" not in modules
