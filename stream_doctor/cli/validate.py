"""Option values checked and turned into what the engine takes; a bad one is one line and exit 2."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from stream_doctor.cli.output import fail

if TYPE_CHECKING:
    from stream_doctor.options import ClientMode


def size_limits(max_bytes: str | None, max_frames: int | None) -> dict[str, Any]:
    """``--max-bytes`` / ``--max-frames`` as Options fields (only those given)."""
    from stream_doctor.capture.limits import parse_size

    given: dict[str, Any] = {}
    if max_bytes is not None:
        try:
            given["max_bytes"] = parse_size(max_bytes)
        except ValueError:
            fail(f"--max-bytes {max_bytes}: not a size (give bytes, or a number with K, M or G)")
    if max_frames is not None:
        given["max_frames"] = max_frames
    return given


def choice(value: str, choices: tuple[str, ...], option: str, what: str) -> str:
    """A closed set of names, refused with "did you mean" (exit 2) like every other option."""
    from stream_doctor.config.selection import check_choice

    try:
        return check_choice(value.lower(), choices, what)
    except ValueError as error:
        fail(f"{option}: {error}")


def client_mode(value: str) -> ClientMode:
    """``--client-mode`` (replay's and check's): one of its modes, else one line and exit 2."""
    from stream_doctor.options import CLIENT_MODES

    checked = choice(value, CLIENT_MODES, "--client-mode", "client mode")
    return next(mode for mode in CLIENT_MODES if mode == checked)


def file_ignores(values: Sequence[str]) -> dict[str, tuple[str, ...]]:
    from stream_doctor.config.selection import parse_per_file_ignores

    try:
        return parse_per_file_ignores(values)
    except ValueError as error:
        fail(str(error))


def codes(values: Sequence[str]) -> tuple[str, ...]:
    return tuple(part.strip().upper() for value in values for part in value.split(",") if part.strip())


def paths_given(given: Sequence[str]) -> tuple[str, ...]:
    """The PATH arguments; ``-`` stands for the paths standard input lists, one a line (``git ls-files | …``)."""
    if "-" not in given:
        return tuple(given)
    listed = [line.strip() for line in sys.stdin.read().splitlines() if line.strip()]
    return tuple(path for item in given for path in (listed if item == "-" else [item]))


def client_names(values: Sequence[str]) -> tuple[str, ...]:
    """``--client`` values (repeatable, commas, ``all``) as profile names; an unknown one is refused
    with the closest names, as ``replay`` refuses it."""
    if not values:
        return ()
    from stream_doctor.clients import UnknownClient, resolve

    try:
        return tuple(profile.name for profile in resolve(values))
    except UnknownClient as error:
        fail(str(error))
