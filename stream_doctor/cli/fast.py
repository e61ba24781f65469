"""The fast path: the common ``replay`` and ``check`` invocations and ``--help`` answered without importing typer
(about 25 ms, most of a start-up budget).

It is not a second CLI. What it accepts is the table ``_fast_argv.py``, generated from the typer
application (``fast_table.py``; a test fails when they differ), and it understands only the plain
forms of it: ``--option value``, ``--option=value``, ``-o value``, flags, and the arguments. Anything
else (``--help``, an unknown or malformed option, a missing value, a value typer would refuse,
combined short flags, ``--``, a shell-completion request) returns ``None`` from ``parse`` and goes
to typer unchanged, which then answers it with its own message. The work is the same function on
both paths (``cli/<command>_run.py``'s ``run``), and its exit code is handled as typer's does.
"""

from __future__ import annotations

import os
import sys
from typing import Any, NoReturn


def parse(argv: list[str]) -> tuple[str, dict[str, Any]] | None:
    """The command and its parameters as typer would pass them, or ``None`` when typer should answer."""
    from stream_doctor.cli._fast_argv import COMMANDS

    if not argv or argv[0] not in COMMANDS or _completing():
        return None
    table = COMMANDS[argv[0]]
    options: dict[str, tuple[str, Any]] = table["options"]
    values = {
        name: (list(default) if isinstance(default, list) else default) for name, default in table["defaults"].items()
    }
    given: list[str] = []
    words = argv[1:]
    at = 0
    while at < len(words):
        word = words[at]
        at += 1
        if word == "-" or not word.startswith("-"):
            given.append(word)
            continue
        name, equals, inline = word.partition("=")
        if name not in options or (equals and not name.startswith("--")):
            return None  # unknown, --help, combined short flags, -fjson, --: typer's to answer
        parameter, kind = options[name]
        if isinstance(kind, tuple) and kind[0] == "flag":
            if equals:
                return None
            values[parameter] = kind[1]
            continue
        if equals:
            value = inline
        elif at < len(words) and (words[at] == "-" or not words[at].startswith("-")):
            value = words[at]
            at += 1
        else:
            return None  # no value, or one that looks like an option: let typer decide
        if kind == "append":
            values[parameter].append(value)
        elif kind == "str":
            values[parameter] = value
        else:
            number = _integer(value, kind[1], kind[2])
            if number is None:
                return None
            values[parameter] = number
    if not _place(table["arguments"], given, values):
        return None
    return argv[0], values


def help_text() -> str | None:
    """``stream-doctor --help`` as typer prints it, from the table, when typer would print that
    text: run as ``stream-doctor`` (typer names the program after ``sys.argv[0]``, or ``python -m
    stream_doctor``), on a terminal of 80 columns or more (click wraps at ``min(columns, 80) - 2``),
    not completing. Otherwise ``None``: typer answers (importing it costs more than 1.5x Python's
    own start-up)."""
    main = sys.modules.get("__main__")
    if getattr(main, "__package__", None) not in (None, "") or os.path.basename(sys.argv[0]) != "stream-doctor":
        return None
    if _completing() or _columns() < 80:
        return None
    from stream_doctor.cli._fast_argv import HELP

    return HELP


def _columns() -> int:
    """The terminal's width as ``shutil.get_terminal_size`` gives it (``COLUMNS``, then standard
    output's terminal, else 80), without importing shutil."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        stdout = sys.__stdout__
        try:
            columns = os.get_terminal_size(stdout.fileno()).columns if stdout is not None else 0
        except (AttributeError, ValueError, OSError):
            columns = 0
        columns = columns or 80
    return columns


def run(argv: list[str]) -> None:
    """Run ``argv`` and exit when the fast path understands it completely; otherwise return."""
    parsed = parse(argv)
    if parsed is None:
        return
    command, values = parsed
    _exit(command, values)


def _exit(command: str, values: dict[str, Any]) -> NoReturn:
    """The command's work, with the exit typer's standalone mode gives each outcome."""
    import gc
    import importlib

    # A command line is one short process: the collector's young-generation passes over what the
    # imports build (classes, functions, tables, all kept) cost it a few milliseconds and find
    # nothing. Collecting every 100,000 allocations instead still bounds cyclic garbage; the
    # replay's own pause (gcpause.no_gc) is unchanged.
    gc.set_threshold(100_000, *gc.get_threshold()[1:])
    work = importlib.import_module(f"stream_doctor.cli.{command}_run").run
    try:
        code: str | int | None = work(**values)
    except SystemExit as exit_:  # output.fail: its line is written
        code = exit_.code
    except EOFError:
        from stream_doctor.cli.output import error_line

        error_line("")
        error_line("Aborted!")
        code = 1
    except KeyboardInterrupt:
        code = 130
    except Exception as error:  # noqa: BLE001 - a bug of ours: one line and exit 2 (output.internal_error)
        from stream_doctor.cli.output import broken_pipe

        if broken_pipe(error):
            sys.stdout = _QuietFlush(sys.stdout)
            sys.stderr = _QuietFlush(sys.stderr)
            code = 1
        else:
            code = _internal(error)
    leave(code)


def _internal(error: Exception) -> int:
    """The exit code of ``output.internal_error`` (its line written), as the typer path exits."""
    from stream_doctor.cli.output import internal_error

    try:
        internal_error(error)
    except SystemExit as exit_:
        return exit_.code  # type: ignore[return-value]


def leave(code: str | int | None) -> NoReturn:
    """``sys.exit(code)``; when stream-doctor is the program (its script or ``python -m
    stream_doctor``), without the interpreter's teardown: freeing every module and object one by
    one and a last full collection cost a short run about 10 ms, and a one-shot command has nothing
    left to release. Its output is flushed and the ``atexit`` functions run first, as at a normal
    exit; a flush that fails (a closed pipe) exits normally, so Python reports it as it would."""
    if not isinstance(code, str) and _is_program():
        try:
            for stream in (sys.stdout, sys.stderr):
                if stream is not None:
                    stream.flush()
        except Exception:  # noqa: BLE001 - reported by the normal exit below
            sys.exit(code)
        import atexit

        atexit._run_exitfuncs()
        os._exit(code or 0)
    sys.exit(code)


def _is_program() -> bool:
    """Whether this process is the ``stream-doctor`` command, not a program that called ``main``."""
    main = sys.modules.get("__main__")
    spec = getattr(main, "__spec__", None)
    if spec is not None and spec.name == "stream_doctor.__main__":
        return True
    script = getattr(main, "__file__", None)
    return isinstance(script, str) and os.path.splitext(os.path.basename(script))[0] in (
        "stream-doctor",
        "stream-doctor-script",
    )


def _completing() -> bool:
    """A shell-completion request (``_STREAM_DOCTOR_COMPLETE``, ``_TYPER_COMPLETE_ARGS`` …) is typer's."""
    return any(name.startswith("_") and "COMPLETE" in name for name in os.environ)


def _integer(value: str, low: int | None, high: int | None) -> int | None:
    """``value`` as click converts an integer in a range, or ``None`` where it would refuse it."""
    try:
        number = int(value)
    except ValueError:
        return None
    if (low is not None and number < low) or (high is not None and number > high):
        return None
    return number


def _place(arguments: tuple[tuple[str, int, bool], ...], given: list[str], values: dict[str, Any]) -> bool:
    """The positional words onto the arguments (one each, or all for nargs -1), as click does."""
    for name, nargs, required in arguments:
        if nargs == -1:
            if not given and required:
                return False
            values[name] = list(given) if given else values[name]
            given = []
        elif given:
            values[name] = given.pop(0)
        elif required:
            return False
    return not given


class _QuietFlush:
    """A stream whose flush ignores a closed pipe (click's ``PacifyFlushWrapper``), so exiting after
    ``head`` closed standard output prints no second error."""

    def __init__(self, wrapped: Any) -> None:
        self.wrapped = wrapped

    def flush(self) -> None:
        import errno

        try:
            self.wrapped.flush()
        except OSError as error:
            if error.errno != errno.EPIPE:
                raise

    def __getattr__(self, name: str) -> Any:
        return getattr(self.wrapped, name)
