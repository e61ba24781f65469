"""Whole agent sessions against their parse floor: is a replay linear in the bytes of a session?

Every request of an agent session carries the whole history, so its bytes grow with the square of
its turns (``sessions.py`` writes them). For each provider and number of turns the script writes
the session, then measures in this process, the two alternating run by run:

* floor: read the file and ``orjson.loads`` every line, the least any replay has to do;
* replay: ``stream_doctor.replay`` (capture, adapters, accumulator, every rule, the pairing of the
  requests), no rendering;

and prints the median of both and the median of the per-run ratios (the target: 1.5x), with the
replay's time per MB (linear: the same at every size). ``--memory`` also runs the CLI
(``replay --format json``) on the largest session in a child process and prints its peak
resident memory against the file's size (the target: at most 2x).

Usage: python benchmarks/bench_conversation.py [--turns 10,100,300,1000] [--provider all]
       [--repeat 5] [--memory]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import orjson
from bench_scale import run
from sessions import PROVIDERS, session

from stream_doctor import replay


def floor(path: Path) -> None:
    for line in path.read_bytes().splitlines():
        orjson.loads(line)


def paired(path: Path, repeat: int) -> tuple[float, float, float]:
    """Median floor and replay seconds, and the median of the per-run ratios."""
    floors, replays = [], []
    for _ in range(repeat):
        started = time.perf_counter()
        floor(path)
        floors.append(time.perf_counter() - started)
        started = time.perf_counter()
        replay(path)
        replays.append(time.perf_counter() - started)
    ratios = [r / f for r, f in zip(replays, floors, strict=True)]
    return statistics.median(floors), statistics.median(replays), statistics.median(ratios)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", default="10,100,300,1000")
    parser.add_argument("--provider", default="all", choices=("all", *PROVIDERS))
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--memory", action="store_true", help="peak memory of the CLI on the largest session")
    args = parser.parse_args()
    sizes = [int(turns) for turns in args.turns.split(",")]
    providers = PROVIDERS if args.provider == "all" else (args.provider,)
    replay(session("anthropic", 2))  # warm-up: imports are start-up's cost, not the replay's
    print(f"{'provider':<17} {'turns':>6} {'size':>8} {'floor':>8} {'replay':>8} {'ratio':>6} {'s/MB':>7}")
    with tempfile.TemporaryDirectory() as folder:
        for provider in providers:
            for turns in sizes:
                path = Path(folder) / f"{provider}-{turns}.jsonl"
                path.write_bytes(session(provider, turns))
                megabytes = path.stat().st_size / 1e6
                base, whole, ratio = paired(path, args.repeat)
                print(
                    f"{provider:<17} {turns:>6} {megabytes:7.1f}M {base:7.3f}s {whole:7.3f}s "
                    f"{ratio:5.2f}x {whole / megabytes:7.4f}",
                    flush=True,
                )
            if args.memory:
                largest = Path(folder) / f"{provider}-{max(sizes)}.jsonl"
                megabytes = largest.stat().st_size / 1e6
                elapsed, peak, code, _ = run(["replay", str(largest), "--format", "json"], Path(folder))
                print(
                    f"  CLI replay --format json, {max(sizes)} turns: {elapsed:.1f} s, peak {peak:,} MB "
                    f"({peak / megabytes:.2f}x the file), exit {code}",
                    flush=True,
                )
            for turns in sizes:
                (Path(folder) / f"{provider}-{turns}.jsonl").unlink()


if __name__ == "__main__":
    main()
