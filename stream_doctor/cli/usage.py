"""Usage errors as one line: what click refuses (an unknown command or option, a missing or extra
argument, a value of the wrong kind) said as ``stream-doctor: error: ...`` with a suggestion, exit 2.

click prints its usage block and ``Error: ...`` over three or four lines; the README promises one.
The typer application is built from ``Group`` and ``Command`` (``cli/typer_app.py``), which turn
every ``ClickException`` into a line written by ``output.fail``, the one place an error line is
written (it escapes what came from the command line).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import typer.core

try:  # typer 0.28 carries its own copy of click, and its commands raise that copy's exceptions
    from typer._click import core, exceptions, types
except ImportError:  # older typer uses click itself
    from click import core, exceptions, types  # type: ignore[no-redef]

from stream_doctor.cli.output import fail

# click 8.2+ raises it for a group called with no arguments; its ``show`` prints the help, as asked
_HELP_INSTEAD = getattr(exceptions, "NoArgsIsHelpError", ())


class UnknownCommand(exceptions.UsageError):
    def __init__(self, name: str, ctx: core.Context) -> None:
        super().__init__(f"No such command {name!r}.", ctx)
        self.name = name


class ExtraArguments(exceptions.UsageError):
    def __init__(self, extra: Sequence[str], ctx: core.Context) -> None:
        super().__init__(f"Got unexpected extra arguments ({' '.join(extra)})", ctx)
        self.extra = list(extra)


class Group(typer.core.TyperGroup):
    """The ``stream-doctor`` group: its own usage errors and its commands' as one line."""

    def make_context(
        self, info_name: str | None, args: list[str], parent: core.Context | None = None, **extra: Any
    ) -> core.Context:
        with one_line():
            return super().make_context(info_name, args, parent, **extra)

    def invoke(self, ctx: core.Context) -> Any:
        with one_line():  # a command's context is made here: its parsing errors come out of this
            return super().invoke(ctx)

    def resolve_command(self, ctx: core.Context, args: list[str]) -> tuple[str | None, core.Command | None, list[str]]:
        try:
            return super().resolve_command(ctx, args)
        except exceptions.UsageError as error:
            if isinstance(error, exceptions.NoSuchOption) or not args:
                raise
            raise UnknownCommand(args[0], ctx) from None


class Command(typer.core.TyperCommand):
    """A command whose extra arguments are named one by one (click words them as one string)."""

    def parse_args(self, ctx: core.Context, args: list[str]) -> list[str]:
        # the words after ``--`` (``serve --matrix -- COMMAND...``): click hands them on as positional
        # arguments like any other, so the command that runs a program is told which they were
        ctx.meta["after --"] = args[args.index("--") + 1 :] if "--" in args else None
        allowed = ctx.allow_extra_args
        ctx.allow_extra_args = True
        try:
            rest = super().parse_args(ctx, args)
        except exceptions.UsageError as error:
            error.ctx = error.ctx or ctx  # the option parser raises some without it
            raise
        finally:
            ctx.allow_extra_args = allowed
        if rest and not allowed and not ctx.resilient_parsing:
            raise ExtraArguments(rest, ctx)
        return rest


@contextmanager
def one_line() -> Iterator[None]:
    """Any ``ClickException`` raised inside as one error line and exit 2 (``output.fail``)."""
    try:
        yield
    except _HELP_INSTEAD:
        raise
    except exceptions.ClickException as error:
        fail(line(error))


def line(error: exceptions.ClickException) -> str:
    """What went wrong, in one line without the ``stream-doctor: error:`` prefix, with a suggestion."""
    ctx: core.Context | None = getattr(error, "ctx", None)
    path = ctx.command_path if ctx is not None else "stream-doctor"
    command = f" for {ctx.info_name}" if ctx is not None and ctx.parent is not None else ""
    usage = f"usage: {_usage(ctx)}" if ctx is not None else f"see `{path} --help`"
    if isinstance(error, UnknownCommand) and ctx is not None:
        names = list(ctx.command.list_commands(ctx)) if isinstance(ctx.command, typer.core.TyperGroup) else []
        from stream_doctor.util.choices import unknown

        return unknown(error.name, names, "command")
    if isinstance(error, exceptions.NoSuchOption):
        known = _options(ctx) if ctx is not None else list(error.possibilities or ())
        closest = _closest(error.option_name, known)
        if closest is not None:
            return f"unknown option {error.option_name!r}{command}; did you mean {closest!r}?"
        return f"unknown option {error.option_name!r}{command} (`{path} --help` lists them)"
    if isinstance(error, ExtraArguments):
        plural = "s" if len(error.extra) > 1 else ""
        extra = ", ".join(repr(word) for word in error.extra)
        return f"unexpected extra argument{plural} {extra}{command} ({usage})"
    if isinstance(error, exceptions.MissingParameter) and error.param is not None:
        param = error.param
        if param.param_type_name == "argument" or ctx is None:
            return f"missing argument {_argument(param)}{command} ({usage})"
        named = f"{_option_name(param)} {param.metavar}" if param.metavar else _option_name(param)
        return f"missing option {named}{command} ({_sentence(_help_of(param)) or usage})"
    if isinstance(error, exceptions.BadParameter) and error.param is not None:
        param = error.param
        name = _argument(param) if param.param_type_name == "argument" else _option_name(param)
        wanted = _range(param.type) or f"`{path} --help` says what it takes"
        return f"{name}: {_sentence(error.message)} ({wanted})"
    return f"{_sentence(error.format_message())} (see `{path} --help`)"


def _sentence(message: str) -> str:
    """click's message as a clause: lower-case first letter (not of a quoted name), no final stop."""
    message = message.strip().rstrip(".")
    return message[:1].lower() + message[1:] if message[:2].isalpha() else message


def _options(ctx: core.Context) -> list[str]:
    """Every option string the command takes, as ``--help`` lists them (hidden ones left out)."""
    found: list[str] = []
    for param in ctx.command.get_params(ctx):
        if param.param_type_name == "option" and not getattr(param, "hidden", False):
            found.extend([*param.opts, *param.secondary_opts])
    return found


def _closest(given: str, options: Sequence[str]) -> str | None:
    """The option ``given`` most likely meant: the only one it begins, else the nearest spelling.

    Names are compared without their dashes, so ``--bogus`` is not "close" to ``--jobs`` because
    both begin with ``--`` (click's own suggestion compares them whole).
    """
    import difflib

    bare = given.split("=", 1)[0]
    starting = [o for o in options if o.startswith("--") and len(bare) > 3 and o.startswith(bare)]
    if len(starting) == 1:
        return starting[0]
    stripped = {o.lstrip("-"): o for o in options}
    close = difflib.get_close_matches(bare.lstrip("-"), list(stripped), n=1, cutoff=0.6)
    return stripped[close[0]] if close else None


def _usage(ctx: core.Context) -> str:
    """``stream-doctor replay [OPTIONS] CAPTURE``: the command and its arguments, as one short line."""
    pieces = [ctx.command_path, "[OPTIONS]"]
    pieces += [
        _argument(param) if param.required else f"[{_argument(param)}]"
        for param in ctx.command.get_params(ctx)
        if param.param_type_name == "argument"
    ]
    return " ".join(pieces)


def _argument(param: core.Parameter) -> str:
    name = param.metavar or (param.name or "").upper()
    return name if param.nargs == 1 or name.endswith("...") else f"{name}..."


def _option_name(param: core.Parameter) -> str:
    """The option's long name (``--width``), or its first."""
    long = [o for o in param.opts if o.startswith("--")]
    return (long or param.opts or [param.name or "?"])[0]


def _help_of(param: core.Parameter) -> str:
    text = getattr(param, "help", None) or ""
    return " ".join(text.split()).rstrip(".")


def _range(kind: types.ParamType) -> str:
    """What an integer range takes, in words: ``a whole number, at least 1``."""
    if not isinstance(kind, types.IntRange):
        return ""
    bounds = []
    if kind.min is not None:
        bounds.append(f"more than {kind.min}" if kind.min_open else f"at least {kind.min}")
    if kind.max is not None:
        bounds.append(f"less than {kind.max}" if kind.max_open else f"at most {kind.max}")
    return ", ".join(["a whole number", *bounds])
