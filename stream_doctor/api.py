"""The library API: ``stream_doctor.replay`` (documented in docs/api.md).

It turns what a Python caller holds (a path, bytes, a text or binary stream, or an iterable of
decoded events) into what the engine reads, validates the options the way the CLI does, and
returns the engine's ``Report``. The CLI and the pytest plugin call it too.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from typing import IO, TYPE_CHECKING, Any, Union

if TYPE_CHECKING:
    from collections.abc import Callable

    from stream_doctor.config.file import Config
    from stream_doctor.minimizer.run import Minimized, Progress
    from stream_doctor.values.command_options import MinimizeOptions
    from stream_doctor.values.findings import Severity
    from stream_doctor.values.options import Given, Options
    from stream_doctor.values.report import Report

if TYPE_CHECKING:
    #: What ``replay`` accepts as a capture.
    Source = Union[str, "os.PathLike[str]", bytes, bytearray, memoryview, IO[str], IO[bytes], Iterable[Any]]


def __getattr__(name: str) -> Any:
    # ``Source`` is built on first use: subscripting typing's generics costs a millisecond or two
    # at start-up, and the annotations that name it are strings.
    if name == "Source":
        source = Union[str, "os.PathLike[str]", bytes, bytearray, memoryview, IO[str], IO[bytes], Iterable[Any]]
        globals()["Source"] = source
        return source
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


#: The name positions carry when the capture was not a file.
MEMORY_NAME = "<memory>"


def replay(
    source: Source,
    *,
    provider: str | None = None,
    container: str | None = None,
    tools: str | os.PathLike[str] | None = None,
    executions: Iterable[Mapping[str, Any]] | None = None,
    select: str | Iterable[str] = (),
    ignore: str | Iterable[str] = (),
    extend_select: str | Iterable[str] = (),
    per_file_ignores: Mapping[str, str | Iterable[str]] | None = None,
    fail_on: str | Severity | None = None,
    config: str | os.PathLike[str] | bool = False,
    name: str | None = None,
    keep_events: bool = False,
    executed: Iterable[str] = (),
    executions_file: str | os.PathLike[str] | None = None,
    max_bytes: int | None = None,
    max_frames: int | None = None,
    clients: str | Iterable[str] = (),
    client_mode: str = "auto",
    node_modules: str | os.PathLike[str] | None = None,
    timeline: bool = False,
) -> Report:
    """Replay one capture (or several of one session) through the reference accumulator and every selected rule.

    ``source`` is a path (``"-"``: standard input), the capture's bytes, an open text or binary stream,
    an iterable of already-decoded provider events (dicts as the wire carried them, or SDK event
    objects), or a folder or list of paths replayed as one conversation. Every argument is described
    in docs/api.md, as ``stream-doctor replay``'s option of the same name: ``executions`` is what the
    application ran (``{"call_id", "name", "input"}`` each, placed at the end of the turn of the call it
    names), ``name`` the file name positions carry for a capture that is not a file (``<memory>``).

    ``config``: ``True`` uses the ``[tool.stream-doctor]`` table nearest to the capture's folder, as
    ``stream-doctor replay`` does; a path uses that file; ``False`` (the default) none. The arguments
    given win over the file's settings, and the file's over the defaults (``config/resolve.py``, the
    resolver every command uses): ``fail_on``, ``max_bytes`` and ``max_frames`` default to the file's.

    Raises ``ValueError`` for an unknown provider, container, severity, client or rule selector or an
    execution that is not an ``execute`` record, and
    ``stream_doctor.RunError`` when the capture cannot be replayed at all.
    """
    said = given(
        select=select,
        ignore=ignore,
        extend_select=extend_select,
        per_file_ignores=per_file_ignores,
        fail_on=fail_on,
        provider=provider,
        container=container,
        max_bytes=max_bytes,
        max_frames=max_frames,
    )
    own = run_options(
        tools=tools,
        keep_events=keep_events,
        executed=executed,
        executions_file=executions_file,
        clients=clients,
        client_mode=client_mode,
        node_modules=node_modules,
        timeline=timeline,
        execution_records=tuple(_execute_record(record) for record in executions or ()),
    )
    return replay_given(source, said, own, config, name)


def replay_given(
    source: Source, said: Given, own: Options, config: str | os.PathLike[str] | bool = False, name: str | None = None
) -> Report:
    """``replay`` of options already gathered (internal: the CLI's ``replay`` calls it): ``said`` resolved
    over the configuration (``config``, as ``replay`` takes it) on top of ``own``."""
    from stream_doctor.config.resolve import checked, resolve
    from stream_doctor.engine.pipeline import replay as run

    several = _paths(source)
    path, data = (several[0], None) if several is not None else _read(source, name)
    options = resolve(checked(said), _configured(path if data is None else None, config), path, own)
    if several is not None and (len(several) > 1 or os.path.isdir(several[0])):
        if options.execution_records:
            raise ValueError("executions take one capture: give them with the capture that holds the call")
        from stream_doctor.engine.pipeline import replay_many

        return replay_many(several, options)
    return run(path, options, data)


def render(
    report: Report, format: str = "terminal", *, width: int = 100, max_rows: int = 200, timeline: bool = False
) -> str:
    """The report in one of ``stream-doctor replay``'s formats (``terminal``, ``json``, ``jsonl``,
    ``html``), the text the CLI writes with ``--format``, uncoloured.

    ``width`` and ``max_rows`` are ``--width`` and ``--max-rows`` (0: every row) of the text report;
    ``timeline`` is ``--timeline`` (the report must have been replayed with ``timeline=True``).
    Raises ``ValueError`` for an unknown format and ``RuntimeError`` naming the install command
    when ``html``'s extra is not installed.
    """
    from stream_doctor.reporters import REPLAY_FORMATS, RenderOptions

    if format not in REPLAY_FORMATS:
        raise ValueError(f"unknown format {format!r} (choose from {', '.join(REPLAY_FORMATS)})")
    reporter = REPLAY_FORMATS[format]
    text: str = reporter.render(report, RenderOptions(width=width, max_rows=max_rows, timeline=timeline))
    return text


def minimize(
    source: Source,
    keep: str | Iterable[str],
    *,
    call: str | int | None = None,
    provider: str | None = None,
    container: str | None = None,
    tools: str | os.PathLike[str] | None = None,
    select: str | Iterable[str] = (),
    ignore: str | Iterable[str] = (),
    max_seconds: float | None = None,
    redact: bool = False,
    name: str | None = None,
    max_bytes: int | None = None,
    max_frames: int | None = None,
    progress: Callable[[Progress], None] | None = None,
) -> Minimized:
    """The smallest capture on which the findings ``keep`` names still fire, as ``stream-doctor minimize``.

    ``source`` is a path or the capture's bytes (or a stream), as ``replay`` takes. ``keep`` names rule
    codes (``"SD102"``, ``["SD102", "SD301"]``, ``"SD102,SD301"``); ``call`` (a call id, or a call
    number as the report's table shows it) keeps them on that call. The result (``Minimized``) holds
    the capture's bytes in the same container where it can hold them (SSE, JSON Lines, the
    envelope, a JSON array), else as an envelope, and the sizes, frame counts, kept findings and time.
    ``max_seconds`` bounds the search: the best capture so far is returned, ``stopped_early`` set.
    ``redact`` replaces user text, ids, argument values and secrets that no kept finding depends on
    (``replaced`` and ``kept_values`` count them per kind). ``progress`` is called with a
    ``Progress`` each time the capture shrinks.

    Raises ``MinimizeError`` (a ``ValueError``) when a kept code does not fire in the capture or
    ``call`` names no call, ``ValueError`` for an unknown code, provider or container, and
    ``stream_doctor.RunError`` when the capture cannot be replayed at all.
    """
    from stream_doctor.config.selection import codes
    from stream_doctor.values.command_options import MinimizeOptions

    wanted = MinimizeOptions(
        keep=codes(keep),
        call=None if call is None else str(call),
        max_seconds=max_seconds,
        redact=redact,
        given=given(
            select=select,
            ignore=ignore,
            provider=provider,
            container=container,
            max_bytes=max_bytes,
            max_frames=max_frames,
        ),
        run=run_options(tools=tools),
    )
    return minimize_given(source, wanted, name, progress)


def minimize_given(
    source: Source,
    wanted: MinimizeOptions,
    name: str | None = None,
    progress: Callable[[Progress], None] | None = None,
) -> Minimized:
    """``minimize`` of options already gathered (internal: the CLI's ``minimize`` and ``fixture`` call it):
    the kept codes and the bound checked, ``wanted.given`` resolved (no configuration file) on ``wanted.run``."""
    from stream_doctor.config.resolve import checked, resolve
    from stream_doctor.config.selection import check_selectors, known_codes
    from stream_doctor.minimizer.run import minimize as run

    if not wanted.keep:
        raise ValueError('keep names no rule code (e.g. keep="SD102")')
    every = known_codes()
    for code in wanted.keep:
        if code not in every:
            check_selectors([code], "keep")  # a suggestion when it is nothing like a code
            raise ValueError(f"--keep {code}: name whole rule codes, such as SD102, not prefixes")
    if wanted.max_seconds is not None and wanted.max_seconds < 0:
        raise ValueError("max_seconds is negative")
    path, data = _read(source, name)
    options = resolve(checked(wanted.given), None, path, wanted.run)
    if data is None:
        data = _file_bytes(path, options)
    return run(data, path, wanted, options, progress)


def _file_bytes(path: str, options: Options) -> bytes:
    """The capture file's bytes (``-``: standard input), under the size cap; RunError when it cannot be read."""
    import sys

    from stream_doctor.capture.base import CaptureError
    from stream_doctor.capture.limits import read_file
    from stream_doctor.engine.stages import RunError

    try:
        return read_file(path, options.limits, sys.stdin.buffer if path == "-" else None)
    except CaptureError as error:
        raise RunError(path if path != "-" else "<stdin>", error.message, error.line) from None


def _configured(path: str | None, config: str | os.PathLike[str] | bool) -> Config | None:
    """The configuration to replay with: found from the capture's folder, named, or none."""
    if config is False:
        return None
    if config is True:
        from stream_doctor.config.locate import find, nearest

        found = nearest(path) if path is not None and path != "-" else find(".")
        if found is None:
            return None  # the defaults: nothing to read, and the configuration's parser stays unimported
    else:
        found = os.fspath(config)
        if not os.path.isfile(found):
            raise ValueError(f"{found}: no such configuration file")
    from stream_doctor.check import CheckError
    from stream_doctor.config import file as config_file

    try:
        return config_file.load(found)
    except CheckError as error:
        raise ValueError(str(error)) from None


def given(
    *,
    select: str | Iterable[str] = (),
    ignore: str | Iterable[str] = (),
    extend_select: str | Iterable[str] = (),
    per_file_ignores: Mapping[str, str | Iterable[str]] | None = None,
    fail_on: str | Severity | None = None,
    provider: str | None = None,
    container: str | None = None,
    max_bytes: int | None = None,
    max_frames: int | None = None,
) -> Given:
    """What the library API's arguments say of the options a configuration also sets, checked
    (ValueError with "did you mean" for an unknown name); ``config/resolve.resolve`` layers it."""
    from stream_doctor.config.resolve import checked
    from stream_doctor.config.selection import check_severity
    from stream_doctor.config.selection import codes as codes_of
    from stream_doctor.values.findings import Severity
    from stream_doctor.values.options import Given

    table = {pattern: codes_of(listed) for pattern, listed in (per_file_ignores or {}).items()}
    return checked(  # at once, before the configuration is read, as the command line is
        Given(
            select=codes_of(select) or None,
            ignore=codes_of(ignore),
            extend_select=codes_of(extend_select),
            per_file_ignores=tuple(table.items()),
            fail_on=fail_on if fail_on is None or isinstance(fail_on, Severity) else check_severity(str(fail_on)),
            provider=provider,
            container=container,
            max_bytes=max_bytes,
            max_frames=max_frames,
        )
    )


def run_options(
    *,
    tools: str | os.PathLike[str] | None = None,
    keep_events: bool = False,
    executed: Iterable[str] = (),
    executions_file: str | os.PathLike[str] | None = None,
    clients: str | Iterable[str] = (),
    client_mode: str = "auto",
    node_modules: str | os.PathLike[str] | None = None,
    timeline: bool = False,
    execution_records: tuple[dict[str, Any], ...] = (),
) -> Options:
    """The options no configuration sets (the library API's arguments), checked: what ``given`` is resolved on."""
    from stream_doctor.config.selection import check_client_mode, check_clients
    from stream_doctor.values.options import Options

    return Options(
        keep_events=keep_events,
        tools=os.fspath(tools) if tools is not None else None,
        executed=tuple(executed),
        executions=os.fspath(executions_file) if executions_file is not None else None,
        clients=check_clients(clients),
        client_mode=check_client_mode(client_mode),
        node_modules=os.fspath(node_modules) if node_modules is not None else None,
        timeline=timeline,
        execution_records=execution_records,
    )


def _paths(source: Source) -> list[str] | None:
    """The paths a list or tuple of paths names (several captures of one session), or a folder's path;
    None for any other source. Decoded events are never bare strings, so a list of them is paths."""
    if isinstance(source, (str, os.PathLike)):
        path = os.fspath(source)
        return [path] if isinstance(path, str) and path != "-" and os.path.isdir(path) else None
    if not isinstance(source, (list, tuple)) or not source:
        return None
    if not all(isinstance(item, (str, os.PathLike)) for item in source):
        return None
    paths = [os.fspath(item) for item in source]
    if not all(isinstance(path, str) for path in paths):
        raise TypeError("a path must be text, not bytes (pass the capture's content as bytes)")
    return paths


def _read(source: Source, name: str | None) -> tuple[str, bytes | None]:
    """The name the capture goes by and its content (None: the engine reads the file)."""
    if isinstance(source, (str, os.PathLike)):
        path = os.fspath(source)
        if not isinstance(path, str):
            raise TypeError("a path must be text, not bytes (pass the capture's content as bytes)")
        return path, None
    label = name or MEMORY_NAME
    if isinstance(source, (bytes, bytearray, memoryview)):
        return label, bytes(source)
    read = getattr(source, "read", None)
    if callable(read):
        content = read()
        label = name or str(getattr(source, "name", "") or MEMORY_NAME)
        if isinstance(content, str):
            return label, content.encode("utf-8", "surrogatepass")
        if isinstance(content, (bytes, bytearray)):
            return label, bytes(content)
        raise TypeError(f"the stream's read() returned {type(content).__name__}, not text or bytes")
    if isinstance(source, Iterable):
        return label, _events_envelope(source)
    raise TypeError(
        f"cannot replay a {type(source).__name__}: pass a path, bytes, a stream or an iterable of decoded events"
    )


def _events_envelope(events: Iterable[Any]) -> bytes:
    """Decoded events as an envelope (one ``event`` record each, positions counting from line 1).

    An item that already is an envelope record (it has an ``"sd"`` key) is kept as it is, so a
    conversation (requests, events, executions) can be handed over record by record.
    """
    import orjson

    lines: list[bytes] = []
    for event in events:
        record = _decoded(event)
        if not (isinstance(record, dict) and "sd" in record):
            record = {"sd": "event", "data": record}
        lines.append(orjson.dumps(record, default=_unserialisable))
    return b"\n".join(lines) + b"\n" if lines else b""


def _decoded(event: Any) -> Any:
    """An SDK event object as the JSON it was decoded from (the Anthropic and OpenAI SDKs' models)."""
    if isinstance(event, (dict, list, str, int, float, bool)) or event is None:
        return event
    to_dict = getattr(event, "to_dict", None)
    if callable(to_dict):
        return to_dict()
    model_dump = getattr(event, "model_dump", None)
    if callable(model_dump):
        return model_dump(mode="json", exclude_unset=True)
    raise TypeError(f"cannot replay an event of type {type(event).__name__}: pass dicts as decoded from the wire")


def _unserialisable(value: Any) -> Any:
    raise TypeError(f"an event holds a {type(value).__name__}, which is not JSON")


def _execute_record(record: Mapping[str, Any]) -> dict[str, Any]:
    if not isinstance(record, Mapping) or "input" not in record or not ("call_id" in record or "name" in record):
        raise ValueError('each execution is a mapping with "input" (and "call_id" and/or "name")')
    import orjson

    from stream_doctor.capture.envelope import check_record

    # as JSON carries it (a tuple is a list), so the input compares with the call's as --executions' would
    execute: dict[str, Any] = orjson.loads(
        orjson.dumps({"sd": "execute", **{k: v for k, v in record.items() if k != "sd"}}, default=_unserialisable)
    )
    problem = check_record(execute)
    if problem is not None:
        raise ValueError(f"an execution is not an execute record: {problem}")
    return execute
