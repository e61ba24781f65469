"""How long ``stream-doctor check`` takes over a folder of 1,000 captures, with and without ``--jobs``.

The script writes ``--count`` small Anthropic captures (a text block and one tool call in 10-30
fragments, 3-5 KB each; every tenth cut at max_tokens, so it has an SD301 finding and an
``.expect.toml`` declaring it, and every 25th also a README-like file to skip) into a temporary
folder, then times the command a CI job runs, end to end in a fresh process (interpreter start-up
included), as the median of ``--repeat`` runs:

* ``check DIR`` with the terminal report, ``--jobs 1`` and ``--jobs 2``;
* the same with JSON, JUnit and SARIF reports written as well.

Usage: python benchmarks/bench_check.py [--count 1000] [--repeat 5] [--words 60] [--client PROFILES]

``--client all --count 20 --repeat 3`` times ``check DIR --client all`` instead: each library's process
starts once per run (per ``--jobs`` worker), not once per capture (docs/replay.md, "Run mode"), so
"beyond one" is what a capture costs once the libraries are imported. CPU is the run's and its
children's (the library processes), user + system.

``--count 200 --words 20000`` (captures of about 680 KB) shows where ``--jobs`` pays: with small
captures a run is mostly start-up, discovery and reporting, which stay in one process.
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parent.parent


def event(data: dict[str, object]) -> bytes:
    return b"event: " + str(data["type"]).encode() + b"\ndata: " + orjson.dumps(data) + b"\n\n"


def capture(number: int, rng: random.Random, cut: bool, words: int) -> bytes:
    arguments = orjson.dumps(
        {
            "path": f"src/module_{number}.py",
            "content": " ".join(rng.choice(["def", "x = 1", "café", "\n"]) for _ in range(words)),
        }
    ).decode()
    fragments, start = [], 0
    while start < len(arguments):
        step = rng.randint(8, 30)
        fragments.append(arguments[start : start + step])
        start += step
    if cut:
        fragments = fragments[: len(fragments) // 2]
    call_id = f"toolu_01Bench{number:06d}abcdefghijk"
    out = [
        event(
            {
                "type": "message_start",
                "message": {
                    "model": "claude-sonnet-4-5-20250929",
                    "id": f"msg_01Bench{number:06d}",
                    "type": "message",
                    "role": "assistant",
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": {"input_tokens": 512, "output_tokens": 1},
                },
            }
        ),
        event({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        event({"type": "ping"}),
        event({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Writing it."}}),
        event({"type": "content_block_stop", "index": 0}),
        event(
            {
                "type": "content_block_start",
                "index": 1,
                "content_block": {"type": "tool_use", "id": call_id, "name": "write_file", "input": {}},
            }
        ),
    ]
    out += [
        event({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": f}})
        for f in fragments
    ]
    if not cut:
        out.append(event({"type": "content_block_stop", "index": 1}))
    stop = "max_tokens" if cut else "tool_use"
    out.append(
        event(
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop, "stop_sequence": None},
                "usage": {"output_tokens": 90},
            }
        )
    )
    out.append(event({"type": "message_stop"}))
    return b"".join(out)


def write_tree(folder: Path, count: int, words: int = 60) -> None:
    rng = random.Random(5)
    for number in range(count):
        sub = folder / f"group_{number // 100:02d}"
        sub.mkdir(exist_ok=True)
        cut = number % 10 == 9
        path = sub / f"capture_{number:04d}.sse"
        path.write_bytes(capture(number, rng, cut, words))
        if cut:
            (sub / f"capture_{number:04d}.sse.expect.toml").write_text('[[expect]]\ncode = "SD301"\n')
        if number % 25 == 0:
            (sub / f"notes_{number:04d}.md").write_text("# Notes\n\nNot a capture.\n")


def timed(command: list[str], repeat: int, cwd: Path) -> tuple[float, float, int]:
    """The median wall time and the median CPU time (the command and every process it waited for) of ``repeat`` runs."""
    samples, cpu, code = [], [], 0
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        done = subprocess.run(command, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        samples.append(time.perf_counter() - start)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
        code = done.returncode
        if code not in (0, 1):
            raise SystemExit(f"{' '.join(command)} exited {code}: {done.stderr}")
    return statistics.median(samples), statistics.median(cpu), code


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--words", type=int, default=60, help="words in each call's content (60: about 4 KB a capture)")
    parser.add_argument("--client", help="time `check DIR --client PROFILES` (the installed libraries run) instead")
    args = parser.parse_args()
    cli = [sys.executable, "-m", "stream_doctor", "check"]
    if args.client:
        cli.append(f"--client={args.client}")
    env_note = f"{os.cpu_count()} CPUs, Python {sys.version.split()[0]}"
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "captures"
        folder.mkdir()
        write_tree(folder, args.count, args.words)
        size = sum(p.stat().st_size for p in folder.rglob("*.sse"))
        print(f"{args.count} captures, {size / 1e6:.1f} MB, in {folder} ({env_note})")
        reports = [
            "-r",
            "terminal",
            "-r",
            f"json:{tmp}/r.json",
            "-r",
            f"junit:{tmp}/r.xml",
            "-r",
            f"sarif:{tmp}/r.sarif",
        ]
        runs = [
            ("check DIR --jobs 1", [*cli, "captures", "--jobs", "1"]),
            ("check DIR --jobs 2", [*cli, "captures", "--jobs", "2"]),
        ]
        if not args.client:
            runs += [
                ("+ json, junit, sarif --jobs 1", [*cli, "captures", "--jobs", "1", *reports]),
                ("+ json, junit, sarif --jobs 2", [*cli, "captures", "--jobs", "2", *reports]),
            ]
        startup, _, _ = timed([sys.executable, "-m", "stream_doctor", "--version"], args.repeat, Path(tmp))
        one, one_cpu, _ = timed([*cli, "captures/group_00/capture_0000.sse"], args.repeat, Path(tmp))
        print(f"{'run':<32} {'seconds':>8} {'CPU s':>8} {'ms/capture':>11} {'beyond one':>11} {'exit':>5}")
        print(f"{'start-up (--version)':<32} {startup:>8.2f}")
        print(f"{'check one capture':<32} {one:>8.2f} {one_cpu:>8.2f}")
        for label, command in runs:
            seconds, cpu, code = timed(command, args.repeat, Path(tmp))
            per_capture, marginal = seconds / args.count * 1e3, (seconds - one) / (args.count - 1) * 1e3
            print(
                f"{label:<32} {seconds:>8.2f} {cpu:>8.2f} {per_capture:>11.2f} {marginal:>11.2f} {code:>5}", flush=True
            )
        print("beyond one: ms per capture once the fixed cost of a run (start-up, imports) is taken off")
    return 0


if __name__ == "__main__":
    sys.exit(main())
