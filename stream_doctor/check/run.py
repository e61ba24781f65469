"""Run ``check``: configuration and discovery first (``prepare``), then every capture through
``engine/pipeline.replay``.

A folder the governing configuration's ``sessions`` names is one entry: its captures go through
``engine/pipeline.replay_many`` as one conversation (docs/ci.md, "Sessions"), its sidecar sits beside it.

Replays may run in worker processes (``--jobs``); results are put back in path order, so every
report is the same whatever the number of workers. A worker sends back what check keeps of a
replay (``Replayed``), not the whole ``Report``: pickling thousands of fragment objects would
cost about as much as the replay itself.
"""

from __future__ import annotations

import os
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Callable, Iterator

from stream_doctor.check import CheckError
from stream_doctor.check.discover import discover, session_members
from stream_doctor.check.result import CaptureResult, CheckResult, Replayed, SpecialFile
from stream_doctor.config import expectations as expect
from stream_doctor.config import file as config_file
from stream_doctor.config.expectations import Expectation
from stream_doctor.config.gitignore import GitIgnored
from stream_doctor.config.globs import Glob
from stream_doctor.config.resolve import checked, resolve, selection
from stream_doctor.config.selection import check_selection
from stream_doctor.engine.pipeline import replay, replay_many
from stream_doctor.engine.redaction import redacted
from stream_doctor.engine.stages import RunError
from stream_doctor.rules.check import sd000_capture_unreadable as sd000
from stream_doctor.util.exits import how_it_ended
from stream_doctor.util.jsonpieces import pieces
from stream_doctor.values.command_options import CheckOptions
from stream_doctor.values.findings import Finding, Severity
from stream_doctor.values.options import Given, Options
from stream_doctor.values.report import json_document

if TYPE_CHECKING:
    import multiprocessing.context

#: Below this many captures a process pool costs more than it saves.
MIN_CAPTURES_PER_WORKER = 8


@dataclass(frozen=True)
class Task:
    """One capture to check (or one session: a folder the configuration's ``sessions`` names, its
    captures ``members`` replayed as one conversation): where it is, what to replay it with, what it must show."""

    path: str
    options: Options
    expectations: tuple[Expectation, ...]
    configured: tuple[Expectation, ...] = ()  # those of them the governing configuration's ``expect`` declares
    keep_report: bool = True  # serialise the replay's JSON report (only the JSON check report needs it)
    sidecar_problem: str | None = None  # why the sidecar could not be read: an SD000 finding, this capture only
    config_problem: str | None = None  # why its governing configuration could not be read: SD000, not replayed
    members: tuple[str, ...] = ()  # a session's captures (``path`` is its folder); () for one capture


@dataclass(frozen=True)
class Plan:
    config: config_file.Config
    tasks: tuple[Task, ...]
    skipped: tuple[str, ...]
    fail_on: Severity
    jobs: int
    update_expectations: bool
    special: tuple[SpecialFile, ...] = ()  # not regular files (FIFOs, devices, sockets), never opened


def prepare(options: CheckOptions) -> Plan:
    """Read the configuration, merge the command line over it and find the captures. CheckError: exit 2.

    Each capture gets the configuration nearest to its own folder (as ruff finds it), unless
    ``--config`` names one for all or ``--isolated`` uses none; run-wide settings (jobs, the
    summary's fail-on) come from the configuration of the first path named.
    """
    paths = options.paths
    if not paths:
        raise CheckError("no paths to check: name capture files, folders or globs")
    configs = _Configs(options)
    config = configs.for_target(paths[0])
    for each in configs.every_for(paths):
        try:
            _validate(options.given.provider, options.given.container or each.container, each)
            _validate_selection(options.given, each)
        except CheckError as error:
            if each is config:
                raise  # the run's own configuration (that of the first path): the run cannot be set up
            configs.broken[each.path] = error  # a configuration below it: the captures it governs fail
    gitignored = GitIgnored() if options.respect_gitignore and config.respect_gitignore else None

    def excluded(path: str) -> bool:
        try:
            governing = configs.for_target(path)
        except CheckError:
            return False  # found, and failed with its configuration's error below
        if governing.path and governing.excluded(path):
            return True
        return gitignored is not None and gitignored(path)

    found = discover(paths, excluded)
    if not found.captures:
        skipped = f" ({len(found.skipped)} files skipped: not captures)" if found.skipped else ""
        if found.special:
            skipped += f" ({len(found.special)} skipped: not regular files)"
        raise CheckError(f"no captures found in {', '.join(paths)}{skipped}")
    entries = _sessions(found.captures, configs, excluded, _session_globs(options.sessions))
    return Plan(
        config,
        tuple(_task(path, members, configs, options) for path, members in entries),
        found.skipped,
        options.given.fail_on or config.fail_on,
        (options.jobs if options.jobs is not None else config.jobs) or os.cpu_count() or 1,
        options.update_expectations,
        found.special,
    )


def _task(path: str, members: tuple[str, ...], configs: _Configs, options: CheckOptions) -> Task:
    """One capture (or session) to check: its options resolved over the configuration governing it
    (``config/resolve.py``, as ``replay`` resolves them), its expectations, what could not be read."""
    try:
        governing = configs.for_target(path)
    except CheckError as error:  # one bad configuration fails the captures it governs, not the run
        return Task(path, Options(), (), config_problem=str(error), members=members)
    try:
        sidecar, sidecar_problem = expect.load_sidecar(path), None
    except CheckError as error:  # one bad sidecar fails its capture, not the run
        problem = str(error).removeprefix(f"{expect.sidecar_path(path)}: ")
        sidecar, sidecar_problem = (), problem.removeprefix("cannot read the expectations: ")
    configured = governing.expectations_for(path)
    return Task(
        path,
        resolve(options.given, governing, path, options.run),
        configured + sidecar,
        configured,
        options.keep_reports,
        sidecar_problem,
        members=members,
    )


def _session_globs(patterns: tuple[str, ...]) -> tuple[Glob, ...]:
    """``--session`` patterns, compiled; one that cannot mean anything: CheckError (exit 2)."""
    from stream_doctor.config.globs import GlobError

    globs = []
    for pattern in patterns:
        try:
            globs.append(Glob(pattern).check())
        except GlobError as error:
            raise CheckError(f"--session {pattern!r}: not a valid glob: {error}") from None
    return tuple(globs)


def _sessions(
    captures: tuple[str, ...],
    configs: _Configs,
    excluded: Callable[[str], bool],
    given: tuple[Glob, ...] = (),
) -> list[tuple[str, tuple[str, ...]]]:
    """What check replays, sorted: each capture alone, except the captures directly in a folder that
    the governing configuration's ``sessions`` (or ``--session``, ``given``) names, which are one entry,
    the folder (with every capture in it, not only those named: one exchange of a conversation cannot
    be judged alone)."""
    by_folder: dict[str, list[str]] = {}
    for path in captures:
        by_folder.setdefault(path.rpartition("/")[0], []).append(path)
    entries: dict[str, tuple[str, ...]] = {}
    for path in captures:
        folder = path.rpartition("/")[0]
        if folder in entries:
            continue
        try:
            session = bool(folder) and configs.for_target(path).is_session(folder)
        except CheckError:
            session = False  # failed with its configuration's error as a capture of its own
        session = session or (bool(folder) and any(glob.matches(folder) for glob in given))
        if session:
            entries[folder] = tuple(sorted({*by_folder[folder], *session_members(folder, excluded)}))
        else:
            entries[path] = ()
    return sorted(entries.items())


def execute(plan: Plan, advance: Callable[[], None] = lambda: None) -> CheckResult:
    """Replay every capture, compare with its expectations, and (when asked) rewrite the sidecars."""
    results = [_judge(task, outcome) for task, outcome in zip(plan.tasks, _replays(plan, advance), strict=True)]
    updated: list[str] = []
    accepted: list[str] = []
    if plan.update_expectations:
        for number, (task, result) in enumerate(zip(plan.tasks, results, strict=True)):
            if result.failed and task.sidecar_problem is None and task.config_problem is None and _update(task, result):
                updated.append(expect.sidecar_path(task.path))
                reread = task.configured + expect.load_sidecar(task.path)
                results[number] = _result(replace(task, expectations=reread), result.replayed, result.findings)
                if results[number].accepted_unreadable and not result.accepted_unreadable:
                    accepted.append(task.path)  # said on its own line: an unreadable capture is never accepted quietly
    root, base = repository_root()
    return CheckResult(
        tuple(results),
        plan.skipped,
        plan.fail_on,
        plan.config.path,
        tuple(updated),
        plan.special,
        tuple(accepted),
        root,
        base,
    )


def repository_root() -> tuple[str, str]:
    """The repository root holding the working directory (the nearest folder with ``.git``, else the
    working directory itself), and the working directory relative to it ("" when it is the root)."""
    from pathlib import Path

    here = Path(os.getcwd())
    root = next((folder for folder in (here, *here.parents) if (folder / ".git").exists()), here)
    base = here.relative_to(root).as_posix()
    return str(root), "" if base == "." else base


OUT_OF_MEMORY = "the replay ran out of memory (lower --max-bytes or --max-frames, or split the capture)"

# the replay, or RunError's message and line, and the file it is about when a session's member is
Outcome = tuple[Replayed | None, str | None, int | None, str | None]


def replay_one(task: Task) -> Outcome:
    """One capture through the engine; a capture that cannot be replayed is an outcome, not an exception."""
    if task.config_problem is not None:
        return None, f"the configuration governing it cannot be read: {task.config_problem}", None, None
    try:
        # every check report is rendered from this
        if task.members:
            report = redacted(replay_many(list(task.members), task.options))
        else:
            report = redacted(replay(task.path, task.options))
        stream = report.stream
        declared = expect.from_header(task.path, stream.capture.header)
        # serialised a call at a time (util/jsonpieces.py): never a dict of every call as well
        report_json = b"".join(pieces(json_document(report), indent=False)) if task.keep_report else b"null"
        replayed = Replayed(stream.capture.provider, len(report.calls), report.findings, report_json, declared)
    except RunError as error:  # in a session, the member that failed is named: SD000 points at it
        return None, error.message, error.line, error.path if error.path in task.members else None
    except MemoryError:
        return None, OUT_OF_MEMORY, None, None
    except CheckError as error:  # the header's "expect" names no rule: the capture fails, the run goes on
        return None, str(error), 1, None
    except Exception as error:  # noqa: BLE001 - a bug of ours fails one capture, not the run
        if os.environ.get("STREAM_DOCTOR_DEBUG"):
            raise
        internal = f"internal error {type(error).__name__}: {error} (set STREAM_DOCTOR_DEBUG=1 for a traceback)"
        return None, internal, None, None
    return replayed, None, None, None


def _replays(plan: Plan, advance: Callable[[], None]) -> Iterator[Outcome]:
    """Every capture's outcome, in order. Replays run in worker processes, so that a capture that
    crashes the interpreter (a native crash) or gets it killed (memory) costs that capture only."""
    workers = min(plan.jobs, len(plan.tasks) // MIN_CAPTURES_PER_WORKER)
    if workers <= 1:
        for outcome in _in_turn(plan.tasks):
            yield outcome
            advance()
        return
    from concurrent.futures import ProcessPoolExecutor  # only a pool of workers needs them
    from concurrent.futures.process import BrokenProcessPool

    _warm()
    answered = 0
    try:
        keeping = _pooled_worker if _runs_libraries(plan.tasks) else None
        with ProcessPoolExecutor(max_workers=workers, mp_context=_context(), initializer=keeping) as pool:
            chunk = max(1, min(32, len(plan.tasks) // (workers * 4)))
            for outcome in pool.map(_guarded, plan.tasks, chunksize=chunk):  # map keeps the order
                yield outcome
                answered += 1
                advance()
    except BrokenProcessPool:
        # Which capture broke the pool is unknown: replay the unanswered ones in turn, where it shows.
        for outcome in _in_turn(plan.tasks[answered:]):
            yield outcome
            advance()


def _in_turn(tasks: tuple[Task, ...]) -> Iterator[Outcome]:
    """``replay_one`` of each task, in order, in one forked child; when the child dies, the capture it
    was replaying gets an SD000 outcome saying how, and a new child takes the rest."""
    context = _context()
    start = 0
    while start < len(tasks):
        receiver, sender = context.Pipe(duplex=False)
        process = context.Process(target=_answer, args=(tasks[start:], sender), daemon=True)  # type: ignore[attr-defined]
        process.start()
        sender.close()
        try:
            while start < len(tasks):
                outcome: Outcome = receiver.recv()
                start += 1
                yield outcome
        except EOFError:
            process.join()
            death = how_it_ended(process.exitcode)
            crashed = f"the replay crashed the process running it ({death}); the other captures were checked"
            yield None, crashed, None, None
            start += 1
        finally:
            receiver.close()
            if process.is_alive():
                process.join()


def _warm() -> None:
    """Import the adapters before forking a pool: each worker would otherwise import them again (0.1 s
    each). One child replaying every capture in turn imports what its captures need, as a replay does."""
    from stream_doctor.providers import ADAPTERS

    for name in ADAPTERS:
        ADAPTERS.get(name)


def _context() -> multiprocessing.context.BaseContext:
    # fork: a worker starts in milliseconds with everything imported (and the tests' patches kept)
    import multiprocessing

    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("fork" if "fork" in methods else None)


def _answer(tasks: tuple[Task, ...], sender: Any) -> None:
    with _library_processes(tasks):
        for task in tasks:
            sender.send(_guarded(task))
    sender.close()


def _library_processes(tasks: tuple[Task, ...]) -> AbstractContextManager[object]:
    """--client's library processes, each started once for every capture this child replays."""
    if not _runs_libraries(tasks):
        return nullcontext()
    from stream_doctor.clients.pool import library_pool

    return library_pool()


def _runs_libraries(tasks: tuple[Task, ...]) -> bool:
    """Whether a capture names ``--client`` in a mode that may run a library (importing ``clients`` costs
    a run without it a second)."""
    return any(task.options.clients and task.options.client_mode != "model" for task in tasks)


def _pooled_worker() -> None:
    """A worker of the process pool keeps --client's library processes for every capture it replays."""
    from stream_doctor.clients.pool import open_for_process

    open_for_process()


def _guarded(task: Task) -> Outcome:
    """``replay_one`` in a worker, which answers for every capture whatever happens to the replay."""
    try:
        return replay_one(task)
    except MemoryError:
        return None, OUT_OF_MEMORY, None, None
    except Exception as error:  # noqa: BLE001
        if os.environ.get("STREAM_DOCTOR_DEBUG"):
            raise
        return None, f"internal error {type(error).__name__}: {error}", None, None


def _judge(task: Task, outcome: Outcome) -> CaptureResult:
    replayed, message, line, member = outcome
    findings = replayed.findings if replayed is not None else (sd000.finding(member or task.path, message or "", line),)
    if task.sidecar_problem is not None:
        findings += (sd000.unreadable_sidecar(expect.sidecar_path(task.path), task.sidecar_problem),)
    return _result(task, replayed, findings)


def _result(task: Task, replayed: Replayed | None, findings: tuple[Finding, ...]) -> CaptureResult:
    declared = task.expectations + (replayed.expected if replayed is not None else ())
    verdict = expect.compare(task.path, findings, declared, expect.selector(task.options))
    return CaptureResult(
        task.path, task.options, replayed, findings, verdict.expected, verdict.unexpected, verdict.stale, task.members
    )


def _update(task: Task, result: CaptureResult) -> bool:
    """Rewrite the capture's sidecar so that what fails it now is expected; True when the file changed."""
    sidecar = expect.load_sidecar(task.path)
    verdict = expect.Verdict(result.expected, result.unexpected, result.stale)
    entries = expect.updated_entries(sidecar, verdict, result.findings, lambda f: f.severity >= task.options.fail_on)
    return expect.write_sidecar(task.path, entries)


class _Configs:
    """The configuration governing each path: nearest to it, or the one ``--config`` names, or none."""

    def __init__(self, options: CheckOptions) -> None:
        self.fixed: config_file.Config | None = None
        if options.isolated:
            self.fixed = config_file.Config()
        elif options.config is not None:
            if not os.path.isfile(options.config):
                raise CheckError(f"{options.config}: no such configuration file")
            self.fixed = config_file.load(options.config)
        self.loaded: dict[str | None, config_file.Config | CheckError] = {}
        self.by_folder: dict[str, str | None] = {}
        self.broken: dict[str | None, CheckError] = {}  # loaded, but a value in it is invalid

    def for_target(self, target: str) -> config_file.Config:
        if self.fixed is not None:
            return self.fixed
        folder = target if os.path.isdir(target) else (os.path.dirname(target) or ".")
        if not os.path.isdir(folder):  # a glob: its configuration is the one above its fixed part
            folder = _fixed_part(target)
        if folder not in self.by_folder:
            self.by_folder[folder] = config_file.find(folder)
        found = self.by_folder[folder]
        if found not in self.loaded:
            try:
                self.loaded[found] = config_file.load(found)
            except CheckError as error:
                self.loaded[found] = error
        loaded = self.loaded[found]
        if isinstance(loaded, CheckError):
            raise loaded
        if found in self.broken:
            raise self.broken[found]
        return loaded

    def every_for(self, paths: tuple[str, ...]) -> list[config_file.Config]:
        """The configurations the paths named are governed by, read (the first path's failure is
        the run's: CheckError; those of the others are kept for the captures they govern)."""
        for number, path in enumerate(paths):
            try:
                self.for_target(path)
            except CheckError:
                if number == 0:
                    raise
        if self.fixed is not None:
            return [self.fixed]
        return [each for each in self.loaded.values() if not isinstance(each, CheckError)]


def _fixed_part(pattern: str) -> str:
    parts = []
    for part in pattern.replace(os.sep, "/").split("/"):
        if set(part) & set("*?[{"):
            break
        parts.append(part)
    folder = "/".join(parts) or "."
    return folder if os.path.isdir(folder) else "."


def _validate_selection(given: Given, config: config_file.Config) -> None:
    """Unknown codes and a selection that leaves no rule are bad options (exit 2), as in ruff."""
    try:
        checked(given)
        check_selection(*selection(given, config))
    except ValueError as error:
        where = f"{config.path}: " if config.path and (given.select is None or not given.ignore) else ""
        raise CheckError(f"{where}{error}") from None


def _validate(provider: str | None, container: str | None, config: config_file.Config) -> None:
    """A provider or container that does not exist is a bad option (exit 2), not a thousand SD000 findings."""
    from stream_doctor.capture import CONTAINERS
    from stream_doctor.providers import ADAPTERS

    named = [(provider, "--provider")] + [
        (name, f"{config.path}: per-path-provider") for _, name in config.per_path_provider
    ]
    named.append((config.provider, f"{config.path}: provider"))
    from stream_doctor.config.selection import check_container, check_provider

    for name, where in named:
        if name is not None and name not in ADAPTERS:
            try:
                check_provider(name)
            except ValueError as error:
                raise CheckError(f"{where}: {error}") from None
    if container is not None and container not in CONTAINERS:
        try:
            check_container(container)
        except ValueError as error:
            raise CheckError(str(error)) from None
