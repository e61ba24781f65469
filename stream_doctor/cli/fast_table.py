"""Writes ``cli/_fast_argv.py``: what the fast path (``cli/fast.py``) may parse, read from the typer app.

The typer application stays the one definition of every command and option. This module walks
the click command typer builds for each command in ``FAST_COMMANDS`` and writes its arguments,
options and defaults as plain data; ``tests/cli/test_fast.py`` regenerates the table and fails
when it differs from the file, so an option added to typer cannot be missed by the fast path.
Run ``python -m stream_doctor.cli.fast_table`` after changing those commands' options.

A parameter the fast path cannot reproduce exactly (a callback, an environment variable, a
prompt, a type other than text, integer range or flag) is an error here, not a silent difference.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

#: The commands the fast path runs without typer; the work of each is ``cli/<name>_run.py``'s ``run``.
FAST_COMMANDS = ("replay", "check")

TABLE = Path(__file__).with_name("_fast_argv.py")

HEADER = '''"""What the fast path (``cli/fast.py``) parses: generated from the typer app by
``python -m stream_doctor.cli.fast_table``; do not edit (``tests/cli/test_fast.py`` checks it).

Per command: its arguments (name, nargs: 1 or -1 for any number, required), its options (each
option string: the parameter's name and its kind, "str", "append", ("int", min, max) or
("flag", value)) and every parameter's default. ``HELP`` is what ``stream-doctor --help`` prints
on a terminal 80 columns wide or wider.
"""

from __future__ import annotations

from typing import Any

'''


def describe(command: Any) -> dict[str, Any]:
    """One command's arguments, options and defaults as the fast path reads them."""
    arguments: list[tuple[str, int, bool]] = []
    options: dict[str, tuple[Any, ...]] = {}
    defaults: dict[str, Any] = {}
    for param in command.params:
        name = param.name
        unsupported = param.callback is not None or param.is_eager or param.envvar or not param.expose_value
        if unsupported or getattr(param, "prompt", None) or getattr(param, "count", False):
            raise ValueError(f"{command.name} {name}: the fast path cannot reproduce this parameter")
        defaults[name] = _plain(param.default)
        kind = param.type.name
        if param.param_type_name == "argument":
            if kind != "str" or param.nargs not in (1, -1):
                raise ValueError(f"{command.name} {name}: an argument of type {kind} x{param.nargs}")
            arguments.append((name, param.nargs, bool(param.required)))
            continue
        if param.nargs != 1:
            raise ValueError(f"{command.name} {name}: an option of {param.nargs} values")
        if param.is_flag:
            if kind != "boolean" or param.multiple:
                raise ValueError(f"{command.name} {name}: a flag of type {kind}")
            options.update({opt: (name, ("flag", True)) for opt in param.opts})
            options.update({opt: (name, ("flag", False)) for opt in param.secondary_opts})
            continue
        if kind == "str":
            spec: Any = "append" if param.multiple else "str"
        elif kind == "int range" and not param.multiple:
            if param.type.min_open or param.type.max_open or param.type.clamp:
                raise ValueError(f"{command.name} {name}: an open or clamped range")
            spec = ("int", param.type.min, param.type.max)
        else:
            raise ValueError(f"{command.name} {name}: an option of type {kind}")
        options.update({opt: (name, spec) for opt in (*param.opts, *param.secondary_opts)})
    return {"arguments": tuple(arguments), "options": options, "defaults": defaults}


def _plain(value: Any) -> Any:
    return list(value) if isinstance(value, (list, tuple)) else value


def source() -> str:
    """The text of ``_fast_argv.py`` as the typer application defines it now."""
    import typer.main

    from stream_doctor.cli import app

    group = typer.main.get_command(app)
    commands = {name: describe(group.commands[name]) for name in FAST_COMMANDS}  # type: ignore[attr-defined]
    lines = ["COMMANDS: dict[str, dict[str, Any]] = {"]
    for name, table in commands.items():
        lines.append(f"    {_literal(name)}: {{")
        lines.append(f'        "arguments": {_literal(table["arguments"])},')
        for part in ("options", "defaults"):
            lines.append(f"        {_literal(part)}: {{")
            lines.extend(f"            {_literal(key)}: {_literal(value)}," for key, value in table[part].items())
            lines.append("        },")
        lines.append("    },")
    lines.append("}")
    lines.append("")
    lines.append("HELP = (")
    lines.extend(f"    {_literal(line)}" for line in top_help().splitlines(keepends=True))
    lines.append(")")
    return HEADER + "\n".join(lines) + "\n"


def top_help(columns: int = 80) -> str:
    """What ``stream-doctor --help`` prints on a terminal ``columns`` wide (click wraps at
    ``min(columns, 80) - 2``, so every width from 80 up gives the same text)."""
    import contextlib
    import io
    import os

    from stream_doctor.cli import app

    printed = io.StringIO()
    before = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = str(columns)
    try:
        with contextlib.redirect_stdout(printed):
            try:
                app(["--help"], prog_name="stream-doctor")
            except SystemExit:
                pass
    finally:
        if before is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = before
    return printed.getvalue()


def _literal(value: Any) -> str:
    """``value`` written as ``ruff format`` writes it (double quotes), so the file passes its check."""
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, tuple):
        inner = ", ".join(_literal(item) for item in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if isinstance(value, list):
        return "[" + ", ".join(_literal(item) for item in value) + "]"
    return repr(value)


if __name__ == "__main__":
    TABLE.write_text(source(), encoding="utf-8")
