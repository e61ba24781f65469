"""How many ``--client all`` verdicts come from a run of the installed library, and how many from its
model (and why), on the fixtures and on a corpus of other projects' recordings: issue 33's count. Run
from the repository root, with the ``clients`` extra and the Node harness installed::

    .venv/bin/python -m tests.client_run_tally [--corpus DIR] [--jobs N]

Each capture is replayed with ``--client all`` through the engine, as ``replay`` does; only the
libraries' processes are pooled: one process per library answers every capture of its providers (the
driver ``clients/library/__main__.py`` runs, per capture, as it does in its own process), so a
library's import is paid once, not once per capture, and ``clients/runs.py`` is handed those answers
in place of one process per capture. A verdict is one (call, library profile) pair of the report;
its source (``extras.clients.NAME.source.mode``) says run or model, its note why the model stands.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import orjson

from stream_doctor import replay
from stream_doctor.clients import runs
from stream_doctor.clients.library import LIBRARIES
from stream_doctor.clients.library.node import COMPARED
from stream_doctor.engine.stages import RunError
from tests.conftest import CORPUS, fixture_files

ROOT = Path(__file__).resolve().parents[1]
LIBRARY_PROFILES = (*LIBRARIES, *COMPARED)
SKIPPED = {"README.md", ".gitattributes"}


def captures(folder: Path) -> list[Path]:
    """A corpus folder's files (the fixtures are ``conftest.fixture_files``'s)."""
    return sorted(p for p in folder.rglob("*") if p.is_file() and p.name not in SKIPPED and ".expect." not in p.name)


def providers(paths: list[Path]) -> dict[str, str]:
    """Each capture that replays, by its absolute path: its provider."""
    found = {}
    for path in paths:
        try:
            report = replay(str(path))
        except (RunError, ValueError):
            continue
        stream = report.turns[0].stream if report.turns else report.stream
        found[str(path.resolve())] = stream.capture.provider
    return found


def answers(profile: str, paths: dict[str, str]) -> dict[str, Any]:
    """The library's answer on each capture whose provider its profile reads, from one process."""
    from stream_doctor.clients import PROFILES

    mine = {path: provider for path, provider in paths.items() if PROFILES[profile].applies_to(provider)}
    if not mine:
        return {}
    request = orjson.dumps({"profile": profile, "captures": mine})
    done = subprocess.run(
        [sys.executable, "-m", "tests.client_run_tally", "--answer"],
        input=request,
        capture_output=True,
        cwd=ROOT,
        check=False,
    )
    found: dict[str, Any] = orjson.loads(done.stdout) if done.stdout else {}
    return found


def answer_each() -> None:
    """The pooled library process: one answer per capture, each bounded by the run's time."""
    from stream_doctor.clients.library.__main__ import _run

    asked = orjson.loads(sys.stdin.buffer.read())
    out = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())  # what the libraries print is no part of the answer

    def late(*_: object) -> None:
        raise TimeoutError(f"no answer within {runs.RUN_SECONDS:g} s")

    signal.signal(signal.SIGALRM, late)
    found = {}
    for path, provider in asked["captures"].items():
        request = {"profile": asked["profile"], "path": path, "container": None, "provider": provider}
        request |= {"seconds": runs.RUN_SECONDS - 5, "node_heap": runs.NODE_HEAP_MIB, "node_modules": None}
        signal.alarm(int(runs.RUN_SECONDS))
        try:
            found[path] = _run(request)
        except Exception as error:  # noqa: BLE001 - as the library's own process answers
            found[path] = {"failed": f"{type(error).__name__}: {str(error)[:200]}"}
        finally:
            signal.alarm(0)
    out.write(orjson.dumps(found, default=repr, option=orjson.OPT_NON_STR_KEYS))
    out.flush()


def tally(paths: dict[str, str], pooled: dict[str, dict[str, Any]]) -> dict[str, Counter[str]]:
    """Per library profile: its verdicts' sources over these captures (``run``, ``run, written back``, or
    ``model: why``), ``clients/runs.py`` handed the pooled answers for as long as it takes."""
    kept = runs._start, runs._collect, runs._stop
    runs._start = lambda profile, path, *rest: (profile, os.path.abspath(path))  # type: ignore[assignment,misc]
    runs._collect = lambda token, started: pooled.get(token[0], {}).get(  # type: ignore[assignment]
        token[1], {"failed": "not answered by the pooled process"}
    )
    runs._stop = lambda process: None  # type: ignore[assignment]
    try:
        return _counted(paths)
    finally:
        runs._start, runs._collect, runs._stop = kept


def _counted(paths: dict[str, str]) -> dict[str, Counter[str]]:
    counts: dict[str, Counter[str]] = {profile: Counter() for profile in LIBRARY_PROFILES}
    for path in paths:
        report = replay(path, clients="all")
        for call in report.calls:
            for extra in report.extras.get(report.number(call), ()):
                if extra.key != "clients":
                    continue
                for name, data in extra.data.items():
                    source = data.get("source")
                    if source is None:
                        continue
                    if source["mode"] == "run":  # fed the capture's response bytes, or (no bytes held) its frames
                        counts[name]["run" if source["note"] is None else "run, written back"] += 1
                    else:
                        counts[name][f"model: {source['note']}"] += 1
    return counts


def table(title: str, counts: dict[str, Counter[str]]) -> str:
    rows = [
        f"### {title}",
        "",
        "| library profile | verdicts | from a run | of which fed frames written back | from the model | why the model |",
        "|---|---|---|---|---|---|",
    ]
    total_run = total_model = 0
    for name, counted in counts.items():
        ran, written_back = counted["run"] + counted["run, written back"], counted["run, written back"]
        modelled = sum(n for key, n in counted.items() if key.startswith("model: "))
        why = "; ".join(
            f"{key.removeprefix('model: ')} ({n})" for key, n in counted.most_common() if key.startswith("model")
        )
        rows.append(f"| {name} | {ran + modelled} | {ran} | {written_back} | {modelled} | {why or '-'} |")
        total_run, total_model = total_run + ran, total_model + modelled
    rows.append(f"| **all** | {total_run + total_model} | {total_run} | | {total_model} | |")
    return "\n".join(rows)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--jobs", type=int, default=2, help="library processes at once")
    parser.add_argument("--answer", action="store_true", help=argparse.SUPPRESS)
    given = parser.parse_args()
    if given.answer:
        answer_each()
        return 0
    fixtures = fixture_files(check_tree=True)  # the captures, not the check tree's TOML sidecars
    sets = {"fixtures/": providers(fixtures), f"{given.corpus}": providers(captures(given.corpus))}
    every = {path: provider for found in sets.values() for path, provider in found.items()}
    with ThreadPoolExecutor(given.jobs) as pool:
        pooled = dict(zip(LIBRARY_PROFILES, pool.map(lambda p: answers(p, every), LIBRARY_PROFILES), strict=True))
    for title, found in sets.items():
        print(table(f"{title} ({len(found)} captures)", tally(found, pooled)) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
