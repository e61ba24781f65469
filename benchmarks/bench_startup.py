"""Start-up time of whole processes against ``python -c 'import orjson'``.

Each round runs the floor and every command once, in turn (paired runs); the ratio quoted for a
command is the median over rounds of (command time / floor time in the same round), next to the
median times. Targets: ``--version`` (answered before the CLI loads) at most 1.5x the floor; every
other command line loads the typer application, and a small replay, like ``--help``, stays
within 4x.

The package's bytecode is compiled first (``compileall``), as ``pip install`` does: with
``PYTHONDONTWRITEBYTECODE`` set (this development machine sets it) an editable install would
otherwise compile every module from source on every run, some 100 ms that no installed copy pays.

Usage: python benchmarks/bench_startup.py [--rounds 15] [--exe .venv/bin/stream-doctor]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SMALL = ROOT / "fixtures" / "anthropic" / "one_call.sse"


def commands(exe: str) -> dict[str, tuple[list[str], float | None]]:
    """Name -> (argv, target ratio or None: shown, not targeted)."""
    return {
        "--version": ([exe, "--version"], 1.5),
        "--help": ([exe, "--help"], 4.0),
        "replay small": ([exe, "replay", str(SMALL)], 4.0),
        "replay small --format json": ([exe, "replay", str(SMALL), "--format", "json"], 4.0),
        # check replays each capture in a forked child (a capture that crashes costs itself only)
        "check small": ([exe, "check", "--isolated", str(SMALL)], None),
    }


def timed(argv: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    default_exe = shutil.which("stream-doctor", path=str(Path(sys.executable).parent)) or "stream-doctor"
    parser.add_argument("--exe", default=default_exe, help="the stream-doctor executable to time")
    args = parser.parse_args()
    floor_argv = [sys.executable, "-c", "import orjson"]
    chosen = commands(args.exe)
    env_note = f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, {args.rounds} paired rounds"
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "stream_doctor")], check=True)
    for argv in [floor_argv, *(argv for argv, _ in chosen.values())]:
        timed(argv)  # warm the file cache
    floors: list[float] = []
    times: dict[str, list[float]] = {name: [] for name in chosen}
    ratios: dict[str, list[float]] = {name: [] for name in chosen}
    for _ in range(args.rounds):
        floor = timed(floor_argv)
        floors.append(floor)
        for name, (argv, _) in chosen.items():
            took = timed(argv)
            times[name].append(took)
            ratios[name].append(took / floor)
    print(f"start-up ({env_note}); floor: python -c 'import orjson' = {statistics.median(floors) * 1000:.0f} ms")
    print(f"{'command':<28} {'median ms':>10} {'ratio':>7} {'target':>7}")
    for name, (_, target) in chosen.items():
        ratio = statistics.median(ratios[name])
        shown = f"{target:>6.1f}x {'ok' if ratio <= target else 'OVER'}" if target is not None else f"{'-':>7}"
        print(f"{name:<28} {statistics.median(times[name]) * 1000:>10.0f} {ratio:>6.2f}x {shown}")


if __name__ == "__main__":
    main()
