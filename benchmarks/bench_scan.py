"""Captures per second of ``stream-doctor scan`` on 1 and 2 Dask workers, and of ``check`` in one process.

The script writes ``--count`` captures (default 10,000) into a temporary folder, cycling through the
project's own fixtures of every provider (Anthropic, OpenAI Chat and Responses, Gemini, Bedrock,
Cohere, Mistral, Ollama, Vercel AI SDK; clean streams and broken ones alike, 0.3-20 KB each), in
folders of 500. It then runs, each in a fresh process, as the median of ``--repeat`` runs (interleaved):

* ``check DIR --isolated --jobs 1``: the single-process baseline;
* ``scan DIR --workers 1`` and ``scan DIR --workers 2``: a LocalCluster of that many worker processes.

For each it prints the wall time end to end (interpreter and cluster start-up included) and the
captures per second that gives; for ``scan`` also the rate of the scan itself (from the moment the
cluster is up to the last batch written), which is what a long scan converges to, and the CPU
milliseconds per capture and worker that ``docs/scan.md`` turns into a cost per million captures.

Usage: python benchmarks/bench_scan.py [--count 10000] [--repeat 3] [--workers 1,2]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROVIDERS = ("anthropic", "openai", "openai-responses", "gemini", "bedrock", "cohere", "mistral", "ollama", "vercel-ai")
SCANNED = re.compile(r"scanned (\d+) of \d+ captures in ([\d.]+) s")


def templates() -> list[Path]:
    return sorted(p for name in PROVIDERS for p in (ROOT / "fixtures" / name).iterdir() if p.suffix != ".md")


def write_captures(folder: Path, count: int) -> int:
    sources = templates()
    size = 0
    for number in range(count):
        source = sources[number % len(sources)]
        target = folder / f"part{number // 500:03d}" / f"{number:06d}_{source.parent.name}_{source.name}"
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
        size += target.stat().st_size
    return size


def run(command: list[str], cwd: Path) -> tuple[float, str]:
    began = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - began
    if done.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(command)} failed ({done.returncode}):\n{done.stderr[-2000:]}")
    return wall, done.stderr


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--workers", default="1,2", help="comma-separated worker counts for scan")
    args = parser.parse_args()
    executable = [sys.executable, "-m", "stream_doctor"]
    with tempfile.TemporaryDirectory(prefix="bench-scan-") as temporary:
        work = Path(temporary)
        size = write_captures(work / "captures", args.count)
        print(
            f"{args.count} captures ({len(templates())} fixtures of {len(PROVIDERS)} providers), {size / 1e6:.1f} MB;"
        )
        print(f"{os.cpu_count()} CPUs, Python {sys.version.split()[0]}, median of {args.repeat} runs\n")
        configurations = [
            ("check --jobs 1 (one process)", [*executable, "check", "captures", "--isolated", "--jobs", "1"])
        ]
        for workers in (int(w) for w in args.workers.split(",")):
            command = [*executable, "scan", "captures", "--workers", str(workers), "--out", "f.parquet"]
            configurations.append((f"scan --workers {workers}", command))
        walls: dict[str, list[float]] = {name: [] for name, _ in configurations}
        rates: dict[str, list[float]] = {name: [] for name, _ in configurations}
        for _ in range(args.repeat):  # interleaved, so that a busy moment of the machine hits every configuration
            for name, command in configurations:
                wall, stderr = run(command, work)
                walls[name].append(wall)
                if name.startswith("scan"):
                    found = SCANNED.search(stderr)
                    if found is None:
                        raise SystemExit(f"no 'scanned … in … s' line in scan's output:\n{stderr[-2000:]}")
                    rates[name].append(int(found.group(1)) / float(found.group(2)))
        rows = [
            (name, statistics.median(walls[name]), statistics.median(rates[name]) if rates[name] else None)
            for name, _ in configurations
        ]
    print("| configuration | wall time | captures/s end to end | captures/s scanning | worker-ms per capture |")
    print("|---|--:|--:|--:|--:|")
    for name, wall, rate in rows:
        workers = int(name.rsplit(" ", 1)[1]) if name.startswith("scan") else 1
        steady = rate if rate is not None else args.count / wall
        print(
            f"| {name} | {wall:.1f} s | {args.count / wall:,.0f} | "
            f"{f'{rate:,.0f}' if rate is not None else '-'} | {1000 * workers / steady:.2f} |"
        )


if __name__ == "__main__":
    main()
