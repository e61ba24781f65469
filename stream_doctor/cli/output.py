"""Where output goes: standard output, a file written atomically, or one error line and exit 2.

It imports no CLI framework: the commands' work (``cli/*_run.py``) uses it as well as the typer commands.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Iterable, Mapping, NoReturn

if TYPE_CHECKING:
    from stream_doctor.reporters import RenderOptions

EXIT_OK, EXIT_FINDINGS, EXIT_COULD_NOT_RUN = 0, 1, 2


def emit(
    output: str | Iterable[bytes], output_file: str | None, quiet: bool, inputs: tuple[str, ...] | list[str] = ()
) -> None:
    """The report (its text, or its pieces as a reporter writes them) on standard output, or in
    ``--output-file`` (written even with --quiet)."""
    if output_file is not None and output_file != "-":
        write_file(output_file, output, "cannot write the report", inputs)
    elif not quiet:
        write_stdout(output)


def write_stdout(output: str | Iterable[bytes]) -> None:
    """Text, or pieces of UTF-8 bytes written one at a time (a large report is never whole in memory)."""
    if isinstance(output, str):
        sys.stdout.write(output)
        return
    sys.stdout.flush()
    binary = getattr(sys.stdout, "buffer", None)
    for piece in output:
        if binary is not None:
            binary.write(piece)
        else:  # a text-only stream (an embedding application's)
            sys.stdout.write(piece.decode("utf-8"))
    if binary is not None:
        binary.flush()


def write_file(
    path: str, data: str | bytes | Iterable[bytes], what: str, inputs: tuple[str, ...] | list[str] = ()
) -> None:
    """Write an output through a temporary file and a rename (see ``atomic``); a failure is one line, exit 2."""
    from stream_doctor.util.atomic import OutputError, write

    try:
        write(path, data, inputs)
    except OutputError as error:
        fail(f"{path}: {what}: {error}" if "input" not in str(error) else f"{path}: {error}")


def refuse_inputs(path: str, inputs: tuple[str, ...] | list[str]) -> None:
    from stream_doctor.util.atomic import OutputError, refuse_inputs

    try:
        refuse_inputs(path, inputs)
    except OutputError as error:
        fail(f"{path}: {error}")


def refuse_existing(path: str, force: bool) -> None:
    """Exit 2 when a file is at ``path`` and --force was not given: a capture or an envelope holds no
    mark of the tool that wrote it, so replacing one is the user's call (docs/minimize.md)."""
    import os

    if not force and os.path.lexists(path):
        fail(f"{path}: exists; refusing to replace it (--force does)")


#: Each container stream-doctor writes a capture in: what it is called and the file name extensions
#: that say it (the first is the one suggested).
WRITTEN = {
    "sse": ("SSE text", ("sse", "txt")),
    "jsonl": ("JSON Lines", ("jsonl",)),
    "envelope": ("an envelope (JSON Lines)", ("jsonl",)),
    "json": ("a JSON array", ("json",)),
}


def says_container(path: str, container: str) -> bool:
    """Whether ``path``'s extension is one that says ``container`` (False for no extension)."""
    import os

    return os.path.splitext(path)[1].lstrip(".").lower() in WRITTEN.get(container, ("", ()))[1]


def refuse_misnamed(path: str, container: str) -> None:
    """Exit 2 when ``path``'s extension says another format than ``container``, the one written (an
    envelope in ``x.sse``): the name would mislead every reader of the file. No extension says nothing."""
    import os

    stem, extension = os.path.splitext(path)
    what, fitting = WRITTEN.get(container, ("", ()))
    if extension and fitting and not says_container(path, container):
        fail(f"{path}: the output is {what}; name it {stem}.{fitting[0]}, as its extension must say")


def render_options(width: int | None, color: bool | None, timeline: bool = False, max_rows: int = 200) -> RenderOptions:
    """Render for standard output: its width and colours as the terminal shows them, unless forced.

    Decided as rich decides it (the text reports used a rich Console until issue 12), without
    importing rich: colour when standard output is a terminal (``--color``/``--no-color``, else
    ``TTY_COMPATIBLE=0/1``, else ``FORCE_COLOR`` set and not empty, else ``isatty()``), unless
    ``NO_COLOR`` is set and not empty (``--color`` overrides it) or ``TERM`` is ``dumb`` or
    ``unknown``. The width is ``--width``, else ``COLUMNS``, else 80 on a dumb terminal, else the
    terminal's (standard input, output or error, the first that is one), else 80.
    """
    import os

    from stream_doctor.reporters import RenderOptions

    environ = os.environ
    terminal = _is_terminal(color, environ)
    dumb = terminal and environ.get("TERM", "").strip().lower() in ("dumb", "unknown")
    no_color = not color if color is not None else environ.get("NO_COLOR", "") != ""
    system = None if not terminal or dumb or no_color else _color_system(environ)
    return RenderOptions(
        width=width or _width(dumb, environ), color_system=system, timeline=timeline, max_rows=max_rows
    )


def _is_terminal(color: bool | None, environ: Mapping[str, str]) -> bool:
    if color is not None:
        return color
    compatible = environ.get("TTY_COMPATIBLE", "")
    if compatible in ("0", "1"):
        return compatible == "1"
    force = environ.get("FORCE_COLOR")  # https://force-color.org/
    if force is not None:
        return force != ""
    try:
        return sys.stdout.isatty()
    except (AttributeError, ValueError):  # replaced by something without isatty, or closed
        return False


def _color_system(environ: Mapping[str, str]) -> str:
    """rich's names: ``truecolor`` (COLORTERM says so), ``256`` (a ``-256color`` or ``-kitty`` TERM), ``standard``."""
    if environ.get("COLORTERM", "").strip().lower() in ("truecolor", "24bit"):
        return "truecolor"
    colors = environ.get("TERM", "").strip().lower().rpartition("-")[2]
    return "256" if colors in ("256color", "kitty") else "standard"


def _width(dumb: bool, environ: Mapping[str, str]) -> int:
    import os

    columns = environ.get("COLUMNS", "")
    if columns.isdigit() and int(columns) > 0:
        return int(columns)
    if dumb:
        return 80
    for descriptor in (0, 1, 2):
        try:
            return os.get_terminal_size(descriptor).columns or 80
        except (AttributeError, ValueError, OSError):  # not a terminal
            continue
    return 80


def fail(message: str) -> NoReturn:
    """One error line on standard error (``error_line``, which escapes what it quotes), then exit 2
    (``SystemExit``, which typer passes through)."""
    error_line(f"stream-doctor: error: {message}")
    raise SystemExit(EXIT_COULD_NOT_RUN)


def broken_pipe(error: BaseException) -> bool:
    """Whether writing failed because the reader of standard output went away (``| head``)."""
    import errno

    return isinstance(error, OSError) and error.errno == errno.EPIPE


def internal_error(error: BaseException, subject: str | None = None) -> NoReturn:
    """A bug of ours (any exception no stage turned into a finding or a ``RunError``) as one line and
    exit 2, whatever ``--exit-zero`` says: CI must tell a crash from findings. ``subject``: the capture
    (or command) it happened on. With ``STREAM_DOCTOR_DEBUG`` set, the exception goes on, for its traceback."""
    import os

    if os.environ.get("STREAM_DOCTOR_DEBUG"):
        raise error
    where = f"{subject}: " if subject else ""
    fail(f"{where}internal error {type(error).__name__}: {error} (set STREAM_DOCTOR_DEBUG=1 for a traceback)")


def error_line(line: str) -> None:
    """``line`` and a line end on standard error, flushed: every line the CLI says there (an error, a
    summary of what it wrote, the recorder's log) goes through here.

    Such a line quotes what came from outside (a capture's path, a request's path, the text of an
    unexpected exception about a capture's content): its control, line-breaking and reordering
    characters are shown escaped, as the reports show capture content, and it never begins a GitHub
    Actions workflow command (``_neutral.one_line``), on a terminal or not: it stays one line that
    acts on no terminal or log.
    """
    from stream_doctor.reporters._neutral import one_line

    stream = sys.stderr
    if stream is None:
        return
    stream.write(one_line(line) + "\n")
    stream.flush()


def stdout_is_terminal() -> bool:
    return _isatty(sys.stdout)


def _isatty(stream: object) -> bool:
    try:
        return bool(stream.isatty())  # type: ignore[attr-defined]
    except Exception:  # noqa: BLE001 - a stream without isatty is not a terminal (as click's isatty says)
        return False
