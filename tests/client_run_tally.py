"""How many ``--client all`` verdicts come from a run of the installed library, and how many from its
model (and why), on the fixtures and on a corpus of other projects' recordings: issue 33's count. Run
from the repository root, with the ``clients`` extra and the Node harness installed::

    .venv/bin/python -m tests.client_run_tally [--corpus DIR]

Each capture is replayed with ``--client all`` through the engine, as ``replay`` does, inside one
``library_pool`` (``clients/pool.py``), as a ``check`` run is: one process per library answers every
capture of its providers, so a library's import is paid once. A verdict is one (call, library profile) pair of the report;
its source (``extras.clients.NAME.source.mode``) says run or model, its note why the model stands.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

from stream_doctor import replay
from stream_doctor.clients.library import LIBRARIES
from stream_doctor.clients.library.node import COMPARED
from stream_doctor.clients.pool import library_pool
from stream_doctor.engine.stages import RunError
from tests.conftest import CORPUS, fixture_files

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


def tally(paths: dict[str, str], clients: str = "all") -> dict[str, Counter[str]]:
    """Per library profile: its verdicts' sources over these captures (``run``, ``run, written back``, or
    ``model: why``), each library's process kept for every capture (the caller's pool, else one here)."""
    with library_pool():
        return _counted(paths, clients)


def _counted(paths: dict[str, str], clients: str) -> dict[str, Counter[str]]:
    counts: dict[str, Counter[str]] = {profile: Counter() for profile in LIBRARY_PROFILES}
    for path in paths:
        report = replay(path, clients=clients)
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
    given = parser.parse_args()
    fixtures = fixture_files(check_tree=True)  # the captures, not the check tree's TOML sidecars
    sets = {"fixtures/": providers(fixtures), f"{given.corpus}": providers(captures(given.corpus))}
    with library_pool():  # one for both sets: each library imported once
        for title, found in sets.items():
            print(table(f"{title} ({len(found)} captures)", tally(found)) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
