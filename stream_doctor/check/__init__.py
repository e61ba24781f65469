"""``stream-doctor check``: many captures at once, with configuration and expectations.

Not a pipeline stage: it finds captures (``discover``), reads the configuration (``config``) and
each fixture's declared findings (``expectations``), replays every capture with
``engine.replay`` and compares (``run``). Reporters render the ``CheckResult`` it returns.
"""

from __future__ import annotations

from typing import Any


class CheckError(Exception):
    """``check`` cannot run at all (bad configuration, a path that does not exist): exit 2, one line."""


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
