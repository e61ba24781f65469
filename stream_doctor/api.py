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
    from stream_doctor.findings import Severity
    from stream_doctor.minimizer.run import Minimized, Progress
    from stream_doctor.options import ClientMode, Options
    from stream_doctor.report import Report

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

    ``source`` is a path (``str`` or ``os.PathLike``; ``"-"`` is standard input), the capture's
    bytes, an open text or binary stream, or an iterable of already-decoded provider events (dicts
    as the wire carried them, or SDK event objects with ``to_dict()``/``model_dump()``).
    ``executions`` lists what the application ran (``{"call_id", "name", "input"}`` each, as the
    envelope's ``execute`` records): each is placed at the end of the turn of the call it names, as
    ``--executions`` places a file's records, so positions stay the capture's own lines and events,
    and a finding about an execution itself points at ``executions[i]``. ``name`` is the file name
    positions carry for a capture that is not a file (default ``<memory>``).

    ``source`` may also be a folder, or a list of paths (the envelopes the recording proxy writes,
    one per conversation): they are replayed as one conversation in the order they were recorded
    (their recorded start, else their file names), positions pointing into each file (docs/api.md).

    ``select``, ``ignore`` and ``extend_select`` take rule codes or prefixes; the most specific
    one matching a code decides (docs/api.md). ``per_file_ignores`` maps globs (``"captures/relay/**"``)
    to codes ignored when the capture's path matches.

    ``fail_on`` defaults to the configuration's, else ``"error"``. ``config``: ``True`` uses the
    ``[tool.stream-doctor]`` table (pyproject.toml or stream-doctor.toml) nearest to the capture's
    folder, as ``stream-doctor replay`` does; a path uses that file; ``False`` (the default) none.
    The arguments given win over the file's settings (``extend_select`` adds to its).

    ``executed`` (``"CALL=JSON"`` each, as ``--executed``) and ``executions_file`` (a JSONL file of
    execute records, as ``--executions``) add executions to the capture as it is, positions kept.
    ``max_bytes`` and ``max_frames`` bound what one capture may hold (default 1 GiB decompressed and
    10,000,000 frames); a capture over one is a ``RunError``.

    ``clients`` names client profiles (``stream-doctor clients`` lists them; ``"all"``): each turn is
    also replayed through them, their differences from the correct calls become SD8xx findings and
    each call carries what they would hand the tool (``report.extras``, key ``"clients"``).
    ``client_mode`` says how a library's verdict is made (``--client-mode``): ``"auto"`` runs the
    installed library over the capture when it imports (in a process of its own, bounded in time and
    memory), else its model; ``"run"`` requires the library; ``"model"`` never runs it; ``"both"``
    runs it and shows, per call, where the model differs (docs/replay.md). ``node_modules`` is the
    folder the TypeScript libraries are run from under Node (``--node-modules``; default: the project's
    own harness in a source checkout).

    ``timeline`` keeps what ``--timeline`` and the HTML report show of the events, compactly
    (``report.timeline``: a row per event or run of deltas, at most ``timeline.MAX_ROWS``);
    ``keep_events`` keeps every frame and event as well (``report.events``), at about ten times the
    capture's size in memory.

    Raises ``ValueError`` for an unknown provider, container, severity or rule selector or an
    execution that is not an ``execute`` record, and
    ``stream_doctor.RunError`` when the capture cannot be replayed at all.
    """
    from stream_doctor.engine import replay as run

    several = _paths(source)
    path, data = (several[0], None) if several is not None else _read(source, name)
    settings = _configured(path if data is None else None, config)
    if settings is not None:
        # As ruff layers them: a select given here starts afresh (the file's select and ignore no
        # longer apply); an ignore given here adds to the file's.
        if codes_of(select):
            ignore = codes_of(ignore)
        else:
            select, ignore = settings.select, (*settings.ignore, *codes_of(ignore))
        ignore = (*ignore, *settings.ignores_for(path))
        extend_select = (*settings.extend_select, *codes_of(extend_select))
        fail_on = fail_on if fail_on is not None else settings.fail_on
        provider = provider or settings.provider_for(path)
        container = container or settings.container
    options = build_options(
        provider=provider,
        container=container,
        tools=tools,
        select=select,
        ignore=(*codes_of(ignore), *_per_file(path, per_file_ignores)),
        extend_select=extend_select,
        fail_on=fail_on if fail_on is not None else "error",
        keep_events=keep_events,
        executed=executed,
        executions_file=executions_file,
        max_bytes=max_bytes,
        max_frames=max_frames,
        clients=clients,
        client_mode=client_mode,
        node_modules=node_modules,
        timeline=timeline,
        execution_records=tuple(_execute_record(record) for record in executions or ()),
    )
    if several is not None and (len(several) > 1 or os.path.isdir(several[0])):
        if options.execution_records:
            raise ValueError("executions take one capture: give them with the capture that holds the call")
        from stream_doctor.engine import replay_many

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
    from stream_doctor.config.selection import check_selectors, known_codes
    from stream_doctor.minimizer.run import minimize as run

    codes = codes_of(keep)
    if not codes:
        raise ValueError('keep names no rule code (e.g. keep="SD102")')
    every = known_codes()
    for code in codes:
        if code not in every:
            check_selectors([code], "keep")  # a suggestion when it is nothing like a code
            raise ValueError(f"--keep {code}: name whole rule codes, such as SD102, not prefixes")
    if max_seconds is not None and max_seconds < 0:
        raise ValueError("max_seconds is negative")
    path, data = _read(source, name)
    options = build_options(
        provider=provider,
        container=container,
        tools=tools,
        select=select,
        ignore=ignore,
        max_bytes=max_bytes,
        max_frames=max_frames,
    )
    if data is None:
        data = _file_bytes(path, options)
    wanted = None if call is None else str(call)
    return run(data, path, codes, options, call=wanted, max_seconds=max_seconds, redact=redact, progress=progress)


def _file_bytes(path: str, options: Options) -> bytes:
    """The capture file's bytes (``-``: standard input), under the size cap; RunError when it cannot be read."""
    import sys

    from stream_doctor.capture.base import CaptureError
    from stream_doctor.capture.limits import read_file
    from stream_doctor.stages import RunError

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


def build_options(
    *,
    provider: str | None = None,
    container: str | None = None,
    tools: str | os.PathLike[str] | None = None,
    select: str | Iterable[str] = (),
    ignore: str | Iterable[str] = (),
    extend_select: str | Iterable[str] = (),
    fail_on: str | Severity = "error",
    keep_events: bool = False,
    executed: Iterable[str] = (),
    executions_file: str | os.PathLike[str] | None = None,
    max_bytes: int | None = None,
    max_frames: int | None = None,
    clients: str | Iterable[str] = (),
    client_mode: str = "auto",
    node_modules: str | os.PathLike[str] | None = None,
    timeline: bool = False,
    execution_records: tuple[dict[str, Any], ...] = (),
) -> Options:
    """Validated options for the engine (internal: the CLI and the pytest plugin share it)."""
    from stream_doctor.config.selection import check_container, check_provider, check_selection, check_selectors, codes
    from stream_doctor.findings import Severity
    from stream_doctor.options import Options

    severity = fail_on if isinstance(fail_on, Severity) else Severity.parse(str(fail_on))
    selected, ignored, extended = codes(select), codes(ignore), codes(extend_select)
    check_selectors(selected, "select")
    check_selectors(ignored, "ignore")
    check_selectors(extended, "extend-select")
    if extended:
        selected = (*(selected or ("ALL",)), *extended)
    check_selection(selected, ignored)
    return Options(
        container=check_container(container),
        provider=check_provider(provider),
        fail_on=severity,
        select=selected,
        ignore=ignored,
        keep_events=keep_events,
        tools=os.fspath(tools) if tools is not None else None,
        executed=tuple(executed),
        executions=os.fspath(executions_file) if executions_file is not None else None,
        **{key: value for key, value in (("max_bytes", max_bytes), ("max_frames", max_frames)) if value is not None},
        clients=_clients(clients),
        client_mode=_client_mode(client_mode),
        node_modules=os.fspath(node_modules) if node_modules is not None else None,
        timeline=timeline,
        execution_records=execution_records,
    )


def codes_of(value: str | Iterable[str]) -> tuple[str, ...]:
    from stream_doctor.config.selection import codes

    return codes(value)


def _per_file(path: str, table: Mapping[str, str | Iterable[str]] | None) -> tuple[str, ...]:
    """The codes ``per_file_ignores`` (glob -> codes, as ruff's) ignores for this capture's path."""
    if not table:
        return ()
    from stream_doctor.config.selection import per_file_codes

    return per_file_codes(path, table)


def _clients(names: str | Iterable[str]) -> tuple[str, ...]:
    """The profile names ``clients`` selects; ValueError with a suggestion for an unknown one."""
    names = (names,) if isinstance(names, str) else tuple(names)
    if not names:
        return ()
    from stream_doctor.clients import UnknownClient, resolve

    try:
        return tuple(profile.name for profile in resolve(names))
    except UnknownClient as error:
        raise ValueError(str(error)) from None


def _client_mode(mode: str) -> ClientMode:
    """``client_mode`` checked against ``--client-mode``'s choices; ValueError with a suggestion."""
    from stream_doctor.config.selection import check_choice
    from stream_doctor.options import CLIENT_MODES

    checked = check_choice(mode.lower(), CLIENT_MODES, "client mode")
    return next(m for m in CLIENT_MODES if m == checked)


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
