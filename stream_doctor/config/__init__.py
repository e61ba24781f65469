"""Configuration every command reads: where the file is (``locate``), what it says (``file``), the
globs it and ``.gitignore`` use (``globs``, ``gitignore``), and the names a user types checked
(``selection``: rule selectors, providers, containers). ``replay``, ``check``, ``scan``, the library
API and the pytest plugin all read their configuration through here.
"""

from __future__ import annotations

from typing import Any


class CheckError(Exception):
    """A command cannot run at all (bad configuration, a path that does not exist): exit 2, one line.

    Named for ``check``, which raises it most; ``stream_doctor.check`` re-exports it."""


def parse_toml(text: str, path: str) -> dict[str, Any]:
    """``tomllib.loads``, its failures a CheckError naming the file: invalid TOML, and TOML nested
    deeper than the parser's recursion (``a = [[[[…`` a few thousand deep)."""
    import tomllib

    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise CheckError(f"{path}: not valid TOML: {error}") from None
    except RecursionError:
        raise CheckError(f"{path}: cannot read the TOML: its arrays or inline tables nest too deeply") from None
