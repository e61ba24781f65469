"""Scale inside one capture: time and peak memory of ``replay`` and ``check`` on one big capture.

(For ``check`` the peak is its worker's: the replay runs in a forked child.)

Writes an Anthropic SSE capture of N tool calls (each a few argument deltas) sized to about 20 MB
and 200 MB, then runs the CLI on it in a child process and prints wall time and peak resident
memory (the child's VmHWM, counted from exec) for each, with the ratio of memory to file size.
The 100,000-call case is the 200 MB capture::

    .venv/bin/python benchmarks/bench_scale.py            # 20 MB and 200 MB
    .venv/bin/python benchmarks/bench_scale.py --sizes 20  # only 20 MB
    .venv/bin/python benchmarks/bench_scale.py --sizes --small-frames 9999990  # pings up to the frame cap
    .venv/bin/python benchmarks/bench_scale.py --only json timeline html       # some of the commands

Peak memory should be bounded by the largest call plus a small cost per call and per finding,
not by the file; time should grow linearly (200 MB about 10 times 20 MB). The JSON report is
written as it is built, so it peaks where the replay does; ``--timeline`` and the HTML report keep
a compact row per event or run of deltas (at most 100,000), not the events. The last lines state
each command's peak at every size. ``--small-frames N`` adds a capture of N pings (one 37-byte
SSE event each) replayed under the default caps: the frame cap (10 M) counts frames, and memory
must not follow them (nothing is kept per frame).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from captures import write_calls

_LAUNCHER = """
import atexit, resource, runpy, sys
def _peak(path=sys.argv[1]):
    # this process's peak (VmHWM, from exec) or its workers' (check replays in forked children)
    with open("/proc/self/status") as status, open(path, "w") as out:
        own = int(next(line.split()[1] for line in status if line.startswith("VmHWM:")))
        out.write(str(max(own, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)))
atexit.register(_peak)
sys.argv = ["stream-doctor", *sys.argv[2:]]
runpy.run_module("stream_doctor", run_name="__main__")  # the CLI as ``python -m stream_doctor`` runs it
"""


def write_pings(path: Path, count: int) -> None:
    """An Anthropic turn of ``count`` pings (after its message start) and its end."""
    ping = b'event: ping\ndata: {"type": "ping"}\n\n'
    start = (
        b'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_1","type":"message",'
        b'"role":"assistant","content":[],"model":"claude","stop_reason":null,'
        b'"usage":{"input_tokens":1,"output_tokens":1}}}\n\n'
    )
    with path.open("wb") as out:
        out.write(start)
        for _ in range(count // 100_000):
            out.write(ping * 100_000)
        out.write(ping * (count % 100_000))
        out.write(b'event: message_stop\ndata: {"type":"message_stop"}\n\n')


def run(args: list[str], cwd: Path, timeout: float | None = None) -> tuple[float, int, int, str]:
    """Wall seconds, peak RSS in MB, exit code and standard error of the CLI run in a child process."""
    with tempfile.TemporaryDirectory() as scratch:
        peak = Path(scratch) / "peak"
        started = time.perf_counter()
        process = subprocess.run(
            [sys.executable, "-c", _LAUNCHER, str(peak), *args],
            cwd=cwd,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            env={**os.environ, "STREAM_DOCTOR_DEBUG": ""},
            timeout=timeout,
        )
        elapsed = time.perf_counter() - started
        megabytes = int(peak.read_text()) // 1024 if peak.exists() else -1
        return elapsed, megabytes, process.returncode, process.stderr.decode("utf-8", "replace")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", nargs="*", type=int, default=[20, 200], help="capture sizes in MB")
    parser.add_argument("--small-frames", type=int, default=0, help="also replay a capture of this many pings")
    parser.add_argument(
        "--only", nargs="*", default=[], help="run only the commands whose label holds one of these (e.g. json)"
    )
    options = parser.parse_args()
    calls_per_mb = 500  # about 2 KB of events per call
    peaks: dict[str, list[str]] = {}
    with tempfile.TemporaryDirectory() as folder:
        where = Path(folder)
        print(f"{'capture':>9} {'calls':>8} {'command':<28} {'time':>8} {'peak RSS':>9} {'RSS/file':>8}")
        for size in options.sizes:
            calls = size * calls_per_mb
            path = where / f"scale_{size}mb.sse"
            write_calls(path, calls)
            megabytes = path.stat().st_size / 1e6
            for label, args in (
                ("replay --format json", ["replay", str(path), "--format", "json"]),
                ("replay (terminal)", ["replay", str(path), "--width", "100"]),
                ("check", ["check", str(path), "--isolated"]),
                ("replay --timeline", ["replay", str(path), "--timeline", "--width", "100"]),
                ("replay --format html", ["replay", str(path), "--format", "html", "-o", str(where / "r.html")]),
            ):
                if options.only and not any(wanted in label for wanted in options.only):
                    continue
                elapsed, peak, code, _ = run(args, where)
                print(
                    f"{megabytes:7.0f}MB {calls:>8,} {label:<28} {elapsed:7.1f}s {peak:7,}MB {peak / megabytes:7.1f}x  (exit {code})"
                )
                sys.stdout.flush()
                peaks.setdefault(label, []).append(f"{megabytes:.0f} MB capture: {peak:,} MB in {elapsed:.1f} s")
            path.unlink()
        if options.small_frames:
            path = where / "pings.sse"
            write_pings(path, options.small_frames)
            megabytes = path.stat().st_size / 1e6
            elapsed, peak, code, _ = run(["replay", str(path)], where)
            label = f"replay, {options.small_frames:,} pings"
            print(
                f"{megabytes:7.0f}MB {0:>8,} {label:<28} {elapsed:7.1f}s {peak:7,}MB {peak / megabytes:7.1f}x  (exit {code})"
            )
            peaks.setdefault(label, []).append(
                f"{megabytes:.0f} MB capture: {peak:,} MB in {elapsed:.1f} s (exit {code})"
            )
            path.unlink()
    print("\npeak memory (resident, the whole process):")
    for label, figures in peaks.items():
        print(f"  {label:<28} " + "; ".join(figures))


if __name__ == "__main__":
    main()
