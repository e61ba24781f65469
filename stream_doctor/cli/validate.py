"""Option values checked and turned into what the engine takes; a bad one is one line and exit 2."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from stream_doctor.cli.output import fail
from stream_doctor.config.selection import codes as codes  # the one reading of CODES, re-exported for the commands

if TYPE_CHECKING:
    from stream_doctor.cli.check import Check
    from stream_doctor.cli.replay import Replay
    from stream_doctor.values.options import ClientMode, Given


def said(command: Replay | Check) -> Given:
    """What ``replay``'s or ``check``'s command line says of the options a configuration also sets, for
    ``config/resolve.resolve`` to layer over the configuration (an unknown rule code: one line, exit 2)."""
    from stream_doctor.values.options import Given

    return Given(
        select=codes(command.select) or None,
        ignore=codes(command.ignore),
        extend_select=codes(command.extend_select),
        per_file_ignores=tuple(file_ignores(command.per_file_ignores).items()),
        fail_on=command.fail_on,
        provider=command.provider,
        container=command.container,
        max_bytes=command.max_bytes,
        max_frames=command.max_frames,
    )


def choice(value: str, choices: tuple[str, ...], option: str, what: str, fold: bool = True) -> str:
    """A closed set of names, refused with "did you mean" (exit 2) like every other option; ``fold``: any
    case of a name is that name (a provider's name is not folded: the configuration file and the API take
    it as written)."""
    from stream_doctor.config.selection import check_choice

    try:
        return check_choice(value.lower() if fold else value, choices, what)
    except ValueError as error:
        fail(f"{option}: {error}")


def client_mode(value: str) -> ClientMode:
    """``--client-mode`` (replay's, check's and record's), read as the command line is: one of its modes, else
    one line and exit 2."""
    from stream_doctor.config.selection import check_client_mode

    try:
        return check_client_mode(value)
    except ValueError as error:
        fail(f"--client-mode: {error}")


def file_ignores(values: Sequence[str]) -> dict[str, tuple[str, ...]]:
    from stream_doctor.config.selection import parse_per_file_ignores

    try:
        return parse_per_file_ignores(values)
    except ValueError as error:
        fail(str(error))


def paths_given(given: Sequence[str]) -> tuple[str, ...]:
    """The PATH arguments; ``-`` stands for the paths standard input lists, one a line (``git ls-files | …``)."""
    if "-" not in given:
        return tuple(given)
    listed = [line.strip() for line in sys.stdin.read().splitlines() if line.strip()]
    return tuple(path for item in given for path in (listed if item == "-" else [item]))


def client_names(values: Sequence[str] | None) -> tuple[str, ...]:
    """``--client`` values (repeatable, commas, ``all``) as profile names; an unknown one is refused
    with the closest names, as ``replay`` refuses it."""
    from stream_doctor.config.selection import check_clients

    try:
        return check_clients(values)
    except ValueError as error:
        fail(str(error))
