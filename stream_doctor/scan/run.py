"""Run a scan on Dask: the cluster, one task per batch, results written as they arrive.

A ``LocalCluster`` of worker processes (one per CPU, or ``--workers``) unless ``--scheduler``
names an existing one. Every batch is one ``scan_batch`` task; a worker that dies has its tasks
rescheduled by Dask's scheduler (up to ``distributed.scheduler.allowed-failures`` times), and a
batch Dask gives up on becomes ``lost`` status rows, not a failed scan. Ctrl-C stops submitting,
writes what finished and closes both tables, so they are valid and ``--resume`` continues.
"""

from __future__ import annotations

import logging
import os
import signal
import threading
import time
import uuid
import warnings
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Iterator

from stream_doctor.config.resolve import checked
from stream_doctor.scan import ScanError, output, require, sources
from stream_doctor.scan.summary import Summary
from stream_doctor.scan.task import Settings, lost, scan_batch

if TYPE_CHECKING:
    from distributed import Client

    from stream_doctor.scan.sources import Plan
    from stream_doctor.values.command_options import ScanOptions

#: How often the result loop looks at the Ctrl-C flag while no batch is ready.
POLL_SECONDS = 0.05
#: Loggers whose chatter (connection closed, worker restarted …) is not the user's business.
QUIET_LOGGERS = ("distributed", "dask", "tornado", "asyncio", "bokeh")


@dataclass(frozen=True)
class ScanResult:
    summary: Summary
    plan: Plan
    scanned: int  # captures this run replayed (with --resume: not counting earlier runs)
    interrupted: bool
    seconds: float
    where: str  # the cluster, for humans


def scan(
    options: ScanOptions,
    started: Callable[[Plan, str], None] = lambda plan, where: None,
    advance: Callable[[int], None] = lambda count: None,
) -> ScanResult:
    """Scan every capture of ``options.inputs``; ScanError when it cannot start (exit 2)."""
    require()
    output.check_meta_columns(options.meta_columns)
    try:
        checked(options.given)  # an unknown provider, format or selector, before any work
    except ValueError as error:
        raise ScanError(str(error)) from None
    settings = Settings(
        options.given,
        options.body_column,
        options.id_column,
        options.model_column,
        options.meta_columns,
    )
    found = sources.listing(options)  # list first: a typo fails before a cluster starts
    # --resume trusts the status table only about captures of this input: what it keeps is bounded by them
    done, ignored = output.done_keys(options.status_path, found.holds) if options.resume else (set(), 0)
    _quiet()
    plan = None
    if options.scheduler is None:
        plan = sources.plan(options, done, options.workers or os.cpu_count() or 1, found, ignored)
    with _client(options) as (client, where, workers):
        if plan is None:
            plan = sources.plan(options, done, workers, found, ignored)
        summary = Summary()
        writers = _writers(options, done, summary)
        started(plan, where)
        begun = time.perf_counter()
        try:
            scanned, interrupted = _run(client, plan, settings, writers, summary, advance)
        finally:
            for writer in writers:
                writer.close()  # also on failure: what finished stays, valid
        return ScanResult(summary, plan, scanned, interrupted, time.perf_counter() - begun, where)


def _run(
    client: Client,
    plan: Plan,
    settings: Settings,
    writers: tuple[output.TableWriter, output.TableWriter],
    summary: Summary,
    advance: Callable[[int], None],
) -> tuple[int, bool]:
    """Submit every batch and write results as they arrive; (captures scanned, interrupted)."""
    from distributed import as_completed
    from distributed.scheduler import KilledWorker

    findings_writer, status_writer = writers
    scanned = 0
    futures: dict[Any, Any] = {}
    with _interrupt_flag() as interrupted:
        run_id = uuid.uuid4().hex  # keys are the scheduler's: two scans on one cluster must never share one
        for batch in plan.batches:
            key = f"scan-batch-{run_id}-{batch.number}"
            futures[client.submit(scan_batch, batch, settings, pure=False, key=key)] = batch
        arrivals = as_completed(futures, loop=client.loop)
        try:
            while not arrivals.is_empty():
                if interrupted.is_set():
                    client.cancel(list(futures), force=True)
                    return scanned, True
                if not arrivals.has_ready():
                    time.sleep(POLL_SECONDS)  # a Ctrl-C is seen within this
                    continue
                for future in arrivals.next_batch(block=False):
                    batch = futures.pop(future)
                    if future.status == "error":
                        error = future.exception()
                        if not isinstance(error, KilledWorker):
                            raise ScanError(_task_error(error))
                        columns = lost(
                            batch, "the workers replaying its batch kept dying (Dask gave up on it)", settings
                        )
                    else:
                        columns = future.result()
                    future.release()
                    findings_writer.write(columns["findings"])
                    status_writer.write(columns["status"])
                    summary.add(columns["findings"], columns["status"])
                    scanned += batch.count
                    advance(batch.count)
        except ScanError:
            client.cancel(list(futures), force=True)
            raise
    return scanned, False


def _task_error(error: BaseException | None) -> str:
    if isinstance(error, ModuleNotFoundError | ImportError):
        return (
            f"the workers cannot run stream-doctor ({type(error).__name__}: {error}): "
            "install the same stream-doctor with its scan extra on every worker"
        )
    return f"a task failed on a worker: {type(error).__name__}: {error}"


def _writers(
    options: ScanOptions, done: set[sources.Key], summary: Summary
) -> tuple[output.TableWriter, output.TableWriter]:
    findings_schema = output.schema("findings", options.meta_columns)
    status_schema = output.schema("status", options.meta_columns)
    findings = output.TableWriter(options.out, findings_schema)
    status = output.TableWriter(options.status_path, status_schema)
    if done:  # --resume: keep what the earlier run wrote, and count it in the summary
        try:
            for batch in output.previous(options.out, findings_schema, done):
                findings.copy(iter([batch]))
                summary.add(batch.to_pydict(), _empty_status())
            for batch in output.previous(options.status_path, status_schema, done, once=True):
                status.copy(iter([batch]))
                summary.add(_empty_findings(), batch.to_pydict())
        except ScanError:
            findings.discard()  # the earlier outputs stay as they were
            status.discard()
            raise
    return findings, status


def _empty_status() -> dict[str, list[Any]]:
    return {"status": [], "codes": [], "provider": [], "error": []}


def _empty_findings() -> dict[str, list[Any]]:
    return {name: [] for name in ("code", "name", "severity", "provider", "model", "tool")}


@contextmanager
def _client(options: ScanOptions) -> Iterator[tuple[Client, str, int]]:
    """A client on the cluster the options name; the cluster this started is closed on the way out."""
    import dask
    from distributed import Client, LocalCluster

    from stream_doctor.scan.workers import IgnoreCtrlC

    # Dask warns about things a scan user can do nothing about (a port in use for a dashboard we do not start).
    warnings.filterwarnings("ignore", category=UserWarning, module=r"distributed(\..*)?$")
    if options.scheduler is not None:
        try:
            client = Client(options.scheduler, timeout="20s", set_as_default=False)
        except (OSError, TimeoutError) as error:
            raise ScanError(f"cannot reach the Dask scheduler at {options.scheduler}: {error}") from None
        try:
            workers = len(client.scheduler_info().get("workers", {}))
            waiting = "" if workers else ": the scan waits for workers to join"
            yield client, f"the Dask scheduler at {options.scheduler} ({workers} workers{waiting})", max(1, workers)
        finally:
            _close(client)
        return
    workers = options.workers or os.cpu_count() or 1
    # The workers' sampling profiler feeds a dashboard this cluster does not start; it would take the
    # GIL a hundred times a second from replays that are pure Python.
    with _sigint_ignored(), dask.config.set({"distributed.worker.profile.enabled": False}):
        cluster = LocalCluster(
            n_workers=workers,
            threads_per_worker=1,  # replay holds the GIL: one process per core
            processes=True,
            host="127.0.0.1",
            dashboard_address=None,
            silence_logs=logging.ERROR,
        )
        client = Client(cluster, set_as_default=False)
        client.register_plugin(IgnoreCtrlC())
    try:
        yield client, f"a local Dask cluster ({workers} worker process{'es' if workers != 1 else ''})", workers
    finally:
        _close(client, cluster)


def _close(client: Client, cluster: Any = None) -> None:
    for name in QUIET_LOGGERS:  # shutting down reports every connection it closes
        logging.getLogger(name).setLevel(logging.CRITICAL)
    try:
        client.close(timeout=10)
    except Exception:  # noqa: BLE001, S110 - already gone: nothing to close
        pass
    if cluster is not None:
        try:
            cluster.close(timeout=10)
        except Exception:  # noqa: BLE001, S110
            pass


def _quiet() -> None:
    for name in QUIET_LOGGERS:
        logging.getLogger(name).setLevel(logging.ERROR)


@contextmanager
def _sigint_ignored() -> Iterator[None]:
    """Start the local workers with SIGINT ignored (they inherit it): Ctrl-C in a terminal signals the
    whole process group, and only this process should act on it. Workers restarted later get the same
    from the ``IgnoreCtrlC`` plugin."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


@contextmanager
def _interrupt_flag() -> Iterator[threading.Event]:
    """Ctrl-C sets the flag instead of raising: the loop stops between two batches, never inside a
    write and never inside one of Dask's blocking calls (which do not survive being interrupted)."""
    flag = threading.Event()
    if threading.current_thread() is not threading.main_thread():
        yield flag
        return
    previous = signal.signal(signal.SIGINT, lambda signum, frame: flag.set())
    try:
        yield flag
    finally:
        signal.signal(signal.SIGINT, previous)
