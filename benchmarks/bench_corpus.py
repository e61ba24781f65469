"""Real recordings of other projects replayed: how long each file of ``../shared/corpus`` takes.

The corpus (never copied into the project: ``--corpus``, else ``$STREAM_DOCTOR_CORPUS``, else
``../shared/corpus`` beside the clone, where the tests look for it too; every file but its README) holds SSE files, JSON lines,
envelopes and VCR cassettes as other projects recorded them. For each file the script replays it with
``stream_doctor.replay`` in this process (capture, adapters, accumulator, every rule, the pairing of a
cassette's requests; no rendering) ``--repeat`` times after one warm-up replay, and prints the medians
of its wall time and of this process's CPU time (on a shared machine the wall time counts the other
processes' turns too: the CPU time is the figure to compare), and the CPU time per MB, the slowest
first. ``--largest N`` keeps the N largest files only.

The largest file, pydantic-ai's ``test_pause_turn_web_search_streaming_vcr.yaml`` (0.7 MB: two turns of
web searches, the second response a double-quoted YAML scalar), has a target: a replay in well under
a second, 0.5 s of CPU (the row says whether it meets it). This replaces a timed test, which the project does
not keep (docs/performance.md).

Usage: python benchmarks/bench_corpus.py [--repeat 5] [--largest 10] [--corpus PATH]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

from stream_doctor import replay

#: where the tests look for the corpus too (tests/conftest.py): the environment's, else beside the clone
DEFAULT_CORPUS = os.environ.get("STREAM_DOCTOR_CORPUS") or str(
    Path(__file__).resolve().parents[2] / "shared" / "corpus"
)

#: CPU seconds a replay of the corpus's largest cassette may take (the bound the timed test held)
TARGETS = {"pydantic-ai/tests/models/cassettes/test_anthropic/test_pause_turn_web_search_streaming_vcr.yaml": 0.5}


def timed(path: Path, repeat: int) -> tuple[float, float]:
    """The median wall and CPU seconds of ``repeat`` replays, after one that pays for imports and caches."""
    replay(path)
    walls, cpus = [], []
    for _ in range(repeat):
        started, used = time.perf_counter(), time.process_time()
        replay(path)
        walls.append(time.perf_counter() - started)
        cpus.append(time.process_time() - used)
    return statistics.median(walls), statistics.median(cpus)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--largest", type=int, default=0, help="only the N largest files (0: every file)")
    parser.add_argument("--corpus", type=Path, default=Path(DEFAULT_CORPUS), help="the corpus folder")
    args = parser.parse_args()
    corpus: Path = args.corpus
    if not corpus.is_dir():
        parser.error(f"the corpus is not at {corpus} (give --corpus PATH or set STREAM_DOCTOR_CORPUS)")
    files = [p.relative_to(corpus).as_posix() for p in corpus.rglob("*") if p.is_file() and p.name != "README.md"]
    names = sorted(files, key=lambda name: -(corpus / name).stat().st_size)
    names = names[: args.largest] if args.largest else names
    rows = []
    for name in names:
        path = corpus / name
        wall, cpu = timed(path, args.repeat)
        rows.append((cpu, wall, path.stat().st_size / 1e6, name))
    print(f"{'CPU':>8} {'wall':>8} {'size':>8} {'CPU s/MB':>8}  file (target)")
    for cpu, wall, megabytes, name in sorted(rows, reverse=True):
        target = TARGETS.get(name)
        verdict = "" if target is None else f"  (target {target:g} s: {'met' if cpu < target else 'NOT met'})"
        print(f"{cpu:7.3f}s {wall:7.3f}s {megabytes:7.3f}M {cpu / megabytes:8.3f}  {name}{verdict}")
    print(
        f"\n{len(rows)} files, {sum(row[2] for row in rows):.1f} MB: medians of {sum(row[0] for row in rows):.2f} s "
        f"of CPU, {sum(row[1] for row in rows):.2f} s of wall"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
