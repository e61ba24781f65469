"""The library processes of ``--client``'s run mode, each started once and fed one capture at a time.

A library's process (``python -m stream_doctor.clients.library``) pays its start-up (the import: 1 to
6 s of CPU, docs/replay.md) once, then answers one JSON request line per capture file with one JSON
answer line. A ``LibraryPool`` keeps those processes between captures: a ``check`` run, a session's
replay or the live proxy opens one (``library_pool``) and every replay inside uses it (``scan`` has no
``--client``); a replay outside any opens its own and closes it when it ends, which is the pool that
lives for one replay.

Every bound stays per capture (``clients/runs.py`` applies them): a process that breaks one (no answer
in time, killed, out of memory) is killed or left, that capture gets the note, and the next capture of
that library starts a fresh process. A process whose library could be hurt by the capture it ran (a
MemoryError) says so in its answer (``spent``) and ends; the pool never hands it out again.
"""

from __future__ import annotations

import os
import select
import subprocess
import sys
import threading
import time
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any, Iterator

import orjson

#: a worker is known by the library it imports and the node_modules folder a TypeScript one reads
Key = tuple[str, str | None]


class Worker:
    """One library's process: fed a request line, it answers one line; ``kill`` ends it whatever it does."""

    def __init__(self, pool: LibraryPool, key: Key) -> None:
        root = str(Path(__file__).resolve().parents[2])  # this copy of stream_doctor, whatever the path says
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
        self.pool, self.key = pool, key
        self.process = subprocess.Popen(
            [sys.executable, "-m", "stream_doctor.clients.library"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
        )
        self.timed_out = False  # killed at the time bound of the capture it was on

    def send(self, request: dict[str, Any]) -> None:
        """Give it one capture's request; a process that already ended answers nothing (``answer`` says how)."""
        assert self.process.stdin is not None
        try:
            self.process.stdin.write(orjson.dumps(request) + b"\n")
            self.process.stdin.flush()
        except (BrokenPipeError, OSError):
            pass

    def answer(self, deadline: float) -> bytes | None:
        """Its answer line, or None when it ended first or ``deadline`` (monotonic) passed (then it is killed)."""
        stdout = self.process.stdout
        assert stdout is not None
        out = b""
        while not out.endswith(b"\n"):
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([stdout], [], [], left)[0]:
                self.timed_out = True
                self.stop()
                return None
            piece = os.read(stdout.fileno(), 1 << 16)
            if not piece:
                self.stop()
                return None
            out += piece
        return out

    def returncode(self) -> int | None:
        return self.process.returncode

    def kill(self) -> None:
        """End the process now (its answer no longer wanted); the pool forgets it. The live proxy's stop
        calls it from another thread than the one reading the answer, so its pipes are left to ``stop``."""
        self.pool.forget(self)
        self.process.kill()
        self.process.wait()

    def stop(self) -> None:
        """``kill``, and its pipes closed (by the thread that reads its answers)."""
        self.kill()
        for pipe in (self.process.stdin, self.process.stdout):
            if pipe is not None:
                with suppress(OSError):
                    pipe.close()

    def close(self) -> None:
        """Let an idle process end on its own (its requests end), killed if it does not within a second."""
        assert self.process.stdin is not None
        try:
            self.process.stdin.close()
            self.process.wait(timeout=1.0)
        except (OSError, subprocess.TimeoutExpired):
            self.process.kill()
            self.process.wait()
        if self.process.stdout is not None:
            self.process.stdout.close()


class LibraryPool:
    """The library processes of one run: at most one per library busy on a capture (``clients/runs.py``
    schedules them), kept idle between captures, and ``running`` alive at most (the least recently
    used idle ones closed to make room)."""

    def __init__(self, running: int) -> None:
        self.running = running
        self.pid = os.getpid()  # a forked child starts its own: pipes are never shared between processes
        self.idle: dict[Key, Worker] = {}  # in the order they were given back: the first is the least recently used
        self.busy: set[Worker] = set()
        self.started = 0  # the processes this pool started (a run's start-ups)
        self.lock = threading.Lock()  # the live proxy reviews turns on threads of their own

    def take(self, key: Key) -> Worker:
        """The idle process of ``key``'s library, else a new one (an idle one of another closed first if
        ``running`` are alive)."""
        with self.lock:
            worker = self.idle.pop(key, None)
            if worker is not None and worker.process.poll() is not None:
                worker.close()  # it ended while idle (killed from outside): a fresh one answers
                worker = None
            if worker is None:
                while self.idle and len(self.idle) + len(self.busy) >= self.running:
                    self.idle.pop(next(iter(self.idle))).close()
                worker = Worker(self, key)
                self.started += 1
            self.busy.add(worker)
            return worker

    def give(self, worker: Worker) -> None:
        """A process that answered, kept for the next capture of its library."""
        with self.lock:
            self.busy.discard(worker)
            if worker.key in self.idle:  # never two idle of one library
                worker.close()
            else:
                self.idle[worker.key] = worker

    def forget(self, worker: Worker) -> None:
        with self.lock:
            self.busy.discard(worker)
            if self.idle.get(worker.key) is worker:
                del self.idle[worker.key]

    def close(self) -> None:
        """End every process: the idle ones let go, any still busy killed (the live proxy's stop: a verdict
        thread may still be reading it, so its pipes are left to that thread)."""
        with self.lock:
            idle, busy = list(self.idle.values()), list(self.busy)
            self.idle.clear()
        for worker in busy:
            worker.kill()
        for worker in idle:
            worker.close()


_shared: list[LibraryPool] = []  # the pool every replay in this process uses, while one is open


def shared() -> LibraryPool | None:
    """The pool opened by ``library_pool`` in this process (a forked child's parent's is not its own)."""
    return _shared[0] if _shared and _shared[0].pid == os.getpid() else None


@contextmanager
def library_pool() -> Iterator[LibraryPool]:
    """Library processes shared by every replay run inside (a ``check`` run or worker, a session):
    each library started once, on the first capture that needs it, all closed at the end."""
    from stream_doctor.clients import runs

    outer = shared()
    if outer is not None:
        yield outer
        return
    pool = LibraryPool(runs.RUNNING)
    _shared[:] = [pool]
    try:
        yield pool
    finally:
        _shared.clear()
        pool.close()


def open_for_process() -> None:
    """A pool for the rest of this process's life (a ``check`` worker of a process pool), closed as it exits."""
    from multiprocessing.util import Finalize

    from stream_doctor.clients import runs

    pool = LibraryPool(runs.RUNNING)
    _shared[:] = [pool]
    Finalize(pool, pool.close, exitpriority=10)
