"""A closed choice takes its names from its registry: ``--help`` lists them, and a name that is none of them
is refused as the command line is read (one line naming them all, exit 2), before any capture is opened."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from stream_doctor.capture import CONTAINERS
from stream_doctor.providers import ADAPTERS
from tests.cli.test_usage_errors import ENTRY, ONE, run
from tests.conftest import ROOT, first_in_the_inner_loop

MISSING = "no/such/capture.sse"  # a refused option is said before the capture is looked for

#: every command that takes --provider (each from the one declaration, cli/shared_options.Provider)
PROVIDER_COMMANDS = [["replay"], ["check"], ["convert"], ["minimize"], ["fixture"], ["scan"]]
#: replay's case in the inner loop, the other commands' (which share the one declaration) under slow
PER_COMMAND = first_in_the_inner_loop(PROVIDER_COMMANDS, ids=[command for (command,) in PROVIDER_COMMANDS])


def help_of(command: str) -> str:
    """``command --help`` with its help column as one line (click wraps it, a name at its hyphen too)."""
    result = subprocess.run([sys.executable, "-c", ENTRY, command, "--help"], capture_output=True, cwd=ROOT, check=True)
    return re.sub(r"\s+", " ", re.sub(r"-\n\s+", "-", result.stdout.decode("utf-8")))


def error_line(argv: list[str]) -> str:
    result = run(argv)
    lines = result.stderr.decode("utf-8").splitlines()
    assert (result.returncode, result.stdout, len(lines)) == (2, b"", 1), lines
    return lines[0]


@pytest.mark.parametrize("command", PER_COMMAND)
def test_an_unknown_provider_is_refused_before_the_capture_is_read(command: list[str]) -> None:
    line = error_line([*command, MISSING, "--provider", "antropic"])
    assert line.startswith("stream-doctor: error: --provider: unknown provider 'antropic'; did you mean 'anthropic'?")
    assert line.endswith(f"(choose from {', '.join(ADAPTERS)})")  # every name, in the registry's order
    assert MISSING not in line


def test_a_provider_name_is_taken_as_written() -> None:
    """The near miss: every registry name passes, and another case of one does not (the configuration
    file and the API take a provider's name as written, so the command line does too)."""
    from stream_doctor.cli.shared_options import _providers, closed

    parse = closed("--provider", "provider", _providers, fold=False)
    assert [parse(name) for name in ADAPTERS] == list(ADAPTERS)
    assert "did you mean 'openai'?" in error_line(["replay", ONE, "--provider", "OpenAI"])


def test_a_forced_provider_replays() -> None:
    result = run(["replay", "fixtures/openai/one_call.sse", "--provider", "openai", "--format", "json"])
    assert result.returncode == 0, result.stderr
    assert b'"provider":"openai"' in result.stdout.replace(b" ", b"")


def test_an_unknown_container_lists_every_reader() -> None:
    line = error_line(["replay", MISSING, "--container", "ssse"])
    assert line.endswith(f"did you mean 'sse'? (choose from {', '.join(CONTAINERS)})")


@pytest.mark.parametrize("command", PER_COMMAND)
def test_help_lists_the_registries_names(command: list[str]) -> None:
    shown = help_of(*command)
    assert f"Force the provider adapter: {', '.join(ADAPTERS)} (default: detected)." in shown
    assert f"by its reader's name: {', '.join(CONTAINERS)} (default: detected)." in shown


OTHER_CHOICES = [
    (["replay", MISSING, "--client-mode", "sometimes"], "--client-mode: unknown client mode 'sometimes'"),
    (["check", MISSING, "--client-mode", "sometimes"], "--client-mode: unknown client mode 'sometimes'"),
    (["check", MISSING, "--report", "sraif:out.sarif"], "--report: unknown format 'sraif'; did you mean 'sarif'?"),
    (["serve", MISSING, "--format", "yaml"], "--format: unknown format 'yaml' (choose from text, json, markdown,"),
]


@pytest.mark.parametrize(
    ("argv", "expected"),
    # replay's case in the inner loop, the other commands' under slow (one child process each)
    first_in_the_inner_loop(OTHER_CHOICES, ids=[" ".join(argv) for argv, _ in OTHER_CHOICES], several=True),
)
def test_other_closed_choices_are_refused_as_the_command_line_is_read(argv: list[str], expected: str) -> None:
    line = error_line(argv)
    assert line.startswith(f"stream-doctor: error: {expected}") and MISSING not in line


def test_a_closed_choice_takes_any_case_of_a_name_and_says_the_registry_s() -> None:
    """The near miss of the cases above: names in another case pass, and reach the work as the registry names them."""
    result = run(["check", ONE, "--isolated", "--report", "JSON", "--client-mode", "Model"])
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(b"{")  # the json reporter wrote standard output


def test_help_lists_the_other_closed_choices() -> None:
    from stream_doctor.cli.serve import TABLES
    from stream_doctor.reporters import CHECK_FORMATS
    from stream_doctor.values.options import CLIENT_MODES

    shown = {command: help_of(command) for command in ("check", "serve")}
    assert f"A report in this format ({', '.join(CHECK_FORMATS)})" in shown["check"]
    modes = ", ".join(f"{mode} ({does})" for mode, does in CLIENT_MODES.items())
    assert f"How --client answers for a library: {modes}." in shown["check"]
    assert f"With --matrix: the table's format: {', '.join(TABLES)}." in shown["serve"]


def test_a_command_given_no_client_reads_its_other_options() -> None:
    """``record`` without ``--client`` (click hands the option's callback None): the command goes on to
    its own checks, here the --listen address, instead of failing inside the client check (it was an
    internal error, exit 2, on every ``record`` run without --client)."""
    line = error_line(["record", "--upstream", "http://127.0.0.1:9", "--listen", "nonsense", "--out", MISSING])
    assert line == "stream-doctor: error: --listen nonsense: expected HOST:PORT, e.g. 127.0.0.1:8080"
