"""The options several commands share, each declared once (an ``Annotated`` type a command's field
or parameter takes), their help texts, and closed choices.

No ``from __future__ import annotations``: these are values typer reads, not annotations.
"""

from enum import Enum
from typing import Annotated, Callable, List, Optional, Sequence

import typer

from stream_doctor.values.findings import Severity as Severity  # re-exported: the commands annotate --fail-on with it
from stream_doctor.values.options import CLIENT_MODES
from stream_doctor.values.options import ClientMode as Mode

#: --fail-on's choices, lowest first, as ``Severity`` orders them
SEVERITIES = tuple(severity.label for severity in Severity)

MAX_BYTES_HELP = "Refuse a capture larger than this once decompressed (SIZE: 512M, 2GiB, 1.5GB; default 1GiB)."
MAX_FRAMES_HELP = "Refuse a capture of more frames than this (default 10,000,000)."

SELECT_HELP = (
    "Only these rule codes or prefixes (repeatable, or comma-separated; ALL for every rule). "
    "The most specific selector wins: --select SD3 --ignore SD30 --select SD301."
)
IGNORE_HELP = "Skip these rule codes or prefixes (repeatable, or comma-separated)."
EXTEND_SELECT_HELP = "Rule codes or prefixes to select on top of --select (or of the configuration's select)."
PER_FILE_IGNORES_HELP = "Skip these codes for captures matching GLOB, e.g. 'captures/relay/**:SD001' (repeatable)."
QUIET_HELP = "Print nothing on standard output; the exit code says it all (errors still go to standard error)."
LISTING_WIDTH_HELP = "Terminal width for the listing (else COLUMNS, else the terminal's)."
SESSION_HELP = (
    "Check each folder GLOB matches as one entry: its captures replayed as one conversation, in recorded "
    "(else file-name) order (repeatable; adds to the configuration's sessions)."
)
FORCE_HELP = "Replace an output file that exists even when stream-doctor cannot tell it wrote it."
CLIENT_MODE_HELP = (
    f"How --client answers for a library: {', '.join(f'{mode} ({does})' for mode, does in CLIENT_MODES.items())}."
)
NODE_MODULES_HELP = (
    "A node_modules folder holding the TypeScript libraries --client runs under Node (@anthropic-ai/sdk, "
    "openai, ai); default: the project's own harness in a source checkout."
)
EXIT_ZERO_HELP = "Exit 0 even when findings reach --fail-on (2 still means stream-doctor could not run)."


def size(option: str) -> Callable[[str], int]:
    """The parser of a SIZE option (``capture/limits.parse_size``: ``512M``, ``2GiB``, ``1.5GB``), run as the
    command line is read; a value that is no size is one line naming the option, and exit 2."""

    def parse(text: str | int) -> int:
        if isinstance(text, int):  # a default, in bytes
            return text
        from stream_doctor.capture.limits import parse_size
        from stream_doctor.cli.output import fail

        try:
            return parse_size(text)
        except ValueError as error:
            fail(f"{option} {text}: {error}")

    return parse


def _severity(text: str | Severity) -> Severity:
    if isinstance(text, Severity):  # a default
        return text
    from stream_doctor.cli.output import fail
    from stream_doctor.config.selection import check_severity

    try:
        return check_severity(text)
    except ValueError as error:
        fail(f"--fail-on: {error}")


def fail_on_option(when: str, default: str = "error") -> typer.models.OptionInfo:
    """``--fail-on SEVERITY`` of a command (replay, check, scan, record, serve), checked as the command line
    is read; ``when`` says what makes it exit 1 there, ``default`` what happens without it."""
    declared: typer.models.OptionInfo = typer.Option(
        "--fail-on",
        metavar="SEVERITY",
        parser=_severity,
        show_default=False,  # the sentence says it
        help=f"Exit 1 {when}: {', '.join(SEVERITIES)} (default: {default}).",
    )
    return declared


def output_file_option(help: str) -> typer.models.OptionInfo:
    """``--output-file PATH`` / ``-o PATH`` of a command that writes a report (replay, check, serve --matrix);
    ``help`` says what goes to PATH there."""
    declared: typer.models.OptionInfo = typer.Option("--output-file", "-o", metavar="PATH", help=help)
    return declared


def _idle_seconds(text: str | float) -> float:
    """--idle-timeout's value, read as the command line is: seconds, more than 0 (else one line, exit 2)."""
    if isinstance(text, float):  # a default
        return text
    from stream_doctor.cli.output import fail

    try:
        seconds = float(text)
    except ValueError:
        fail(f"--idle-timeout {text}: not a number of seconds")
    if not seconds > 0 or seconds == float("inf"):
        fail(f"--idle-timeout {text}: the seconds must be more than 0 (and finite)")
    return seconds


def idle_timeout_option(help: str) -> typer.models.OptionInfo:
    """``--idle-timeout SECONDS`` of a command that drops a connection where nothing moves (record, serve);
    ``help`` says what it cuts there."""
    declared: typer.models.OptionInfo = typer.Option(
        "--idle-timeout", metavar="SECONDS", parser=_idle_seconds, help=help
    )
    return declared


def closed(option: str, what: str, names: Callable[[], Sequence[str]], fold: bool = True) -> Callable[[str], str]:
    """The parser of an option that takes one of a registry's names (``names``, read only when the option
    is given), run as the command line is read: an unknown name is one line with "did you mean", exit 2.
    ``fold``: any case of a name is that name (``validate.choice``)."""

    def parse(text: str) -> str:
        from stream_doctor.cli.validate import choice

        return choice(text, tuple(names()), option, what, fold)

    return parse


def _containers() -> Sequence[str]:
    # the readers' registry: its names are its keys, read without importing a reader (or orjson)
    from stream_doctor.capture import CONTAINERS

    return CONTAINERS


def _providers() -> Sequence[str]:
    # the adapters' registry (providers/__init__.py), read without importing an adapter
    from stream_doctor.providers import ADAPTERS

    return tuple(ADAPTERS)


def _client_mode(text: str) -> Mode:
    from stream_doctor.cli.validate import client_mode

    return client_mode(text)


def _clients(values: List[str] | None) -> List[str]:
    from stream_doctor.cli.validate import client_names

    return list(client_names(values))  # checked once, here: the commands hand the names on as they are


def client_option(what: str) -> typer.models.OptionInfo:
    """``--client NAME`` (replay, check, record): the profiles, checked as the command line is read."""
    declared: typer.models.OptionInfo = typer.Option(
        "--client",
        metavar="NAME",
        callback=_clients,
        help=f"Also predict what this client would hand the tool{what} (repeatable, or all; `stream-doctor clients` "
        "lists them). Differences are findings SD801-SD809.",
    )
    return declared


class OutputFormat(str, Enum):
    terminal = "terminal"
    json = "json"
    jsonl = "jsonl"


Select = Annotated[List[str], typer.Option("--select", metavar="CODES", help=SELECT_HELP)]
Ignore = Annotated[List[str], typer.Option("--ignore", metavar="CODES", help=IGNORE_HELP)]
ExtendSelect = Annotated[List[str], typer.Option("--extend-select", metavar="CODES", help=EXTEND_SELECT_HELP)]
PerFileIgnores = Annotated[
    List[str], typer.Option("--per-file-ignores", metavar="GLOB:CODES", help=PER_FILE_IGNORES_HELP)
]
Sessions = Annotated[List[str], typer.Option("--session", metavar="GLOB", help=SESSION_HELP)]
Isolated = Annotated[bool, typer.Option("--isolated", help="Use no configuration file.")]
ReportWidth = Annotated[
    Optional[int], typer.Option("--width", min=1, metavar="COLUMNS", help="Terminal width for the report.")
]
MaxRows = Annotated[
    int, typer.Option("--max-rows", min=0, help="Rows per list in text reports before a '… N more' line (0: all).")
]
MaxBytes = Annotated[
    Optional[int], typer.Option("--max-bytes", metavar="SIZE", parser=size("--max-bytes"), help=MAX_BYTES_HELP)
]
MaxFrames = Annotated[Optional[int], typer.Option("--max-frames", min=1, help=MAX_FRAMES_HELP)]
Provider = Annotated[
    Optional[str],
    typer.Option(
        "--provider",
        metavar="NAME",
        parser=closed("--provider", "provider", _providers, fold=False),
        help=f"Force the provider adapter: {', '.join(_providers())} (default: detected).",
    ),
]
Container = Annotated[
    Optional[str],
    typer.Option(
        "--container",
        "--input-format",
        metavar="FORMAT",
        parser=closed("--container", "container", _containers),
        help=f"Force the capture format, by its reader's name: {', '.join(_containers())} (default: detected).",
    ),
]
Quiet = Annotated[bool, typer.Option("--quiet", "-q", help=QUIET_HELP)]
ClientMode = Annotated[Mode, typer.Option("--client-mode", metavar="MODE", parser=_client_mode, help=CLIENT_MODE_HELP)]
NodeModules = Annotated[Optional[str], typer.Option("--node-modules", metavar="DIR", help=NODE_MODULES_HELP)]
ExitZero = Annotated[bool, typer.Option("--exit-zero", help=EXIT_ZERO_HELP)]
Force = Annotated[bool, typer.Option("--force", help=FORCE_HELP)]
