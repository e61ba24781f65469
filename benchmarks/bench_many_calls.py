"""``check`` and ``replay`` on one capture holding very many tool calls: is reporting linear?

The script writes one Anthropic capture of ``--calls`` tool calls (default 100,000; about 55 MB),
each in two ``input_json_delta`` fragments; with ``--unparseable`` (the default) every call's input
is cut inside a string, so every call has an SD201 finding and the reports hold as many findings
as calls. It then times, in a fresh process each (interpreter start-up included), the median of
``--repeat`` runs of:

* ``check FILE`` with its terminal report (rows capped at ``--max-rows``, default 200);
* ``check FILE --report json:OUT --report sarif:OUT --report junit:OUT`` (every finding written);
* ``replay FILE`` (terminal) and ``replay FILE --format json``.

Usage: python benchmarks/bench_many_calls.py [--calls 100000] [--repeat 3] [--clean]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import orjson


def event(data: dict[str, object]) -> bytes:
    return b"event: " + str(data["type"]).encode() + b"\ndata: " + orjson.dumps(data) + b"\n\n"


def write_capture(path: Path, calls: int, unparseable: bool) -> None:
    message = {"type": "message", "id": "msg_1", "role": "assistant", "model": "m", "content": []}
    with path.open("wb") as out:
        out.write(event({"type": "message_start", "message": message}))
        for index in range(calls):
            block = {"type": "tool_use", "id": f"toolu_{index:08d}", "name": "lookup", "input": {}}
            out.write(event({"type": "content_block_start", "index": index, "content_block": block}))
            first = '{"key": "x' if unparseable else f'{{"key": {index}'
            for partial in (first, "}"):
                delta = {"type": "input_json_delta", "partial_json": partial}
                out.write(event({"type": "content_block_delta", "index": index, "delta": delta}))
            out.write(event({"type": "content_block_stop", "index": index}))
        stop = {"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 9}}
        out.write(event(stop))
        out.write(event({"type": "message_stop"}))


def timed(args: list[str], repeat: int) -> float:
    runs = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        runs.append(time.perf_counter() - start)
    return statistics.median(runs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--clean", action="store_true", help="calls that parse (no findings)")
    args = parser.parse_args()
    cli = [sys.executable, "-m", "stream_doctor"]
    with tempfile.TemporaryDirectory() as folder:
        capture = Path(folder) / "many_calls.sse"
        write_capture(capture, args.calls, unparseable=not args.clean)
        size = capture.stat().st_size / 1e6
        print(f"{args.calls:,} calls, {size:.1f} MB, {'no findings' if args.clean else 'one finding per call'}")
        out = Path(folder)
        cases = {
            "check (terminal)": [*cli, "check", str(capture), "--no-color"],
            "check (json+sarif+junit)": [
                *cli,
                "check",
                str(capture),
                "--report",
                f"json:{out / 'r.json'}",
                "--report",
                f"sarif:{out / 'r.sarif'}",
                "--report",
                f"junit:{out / 'r.xml'}",
            ],  # fmt: skip
            "replay (terminal)": [*cli, "replay", str(capture), "--no-color"],
            "replay --format json": [*cli, "replay", str(capture), "--format", "json"],
        }
        for name, command in cases.items():
            print(f"{name:<26} {timed(command, args.repeat):7.2f} s  (median of {args.repeat})")


if __name__ == "__main__":
    main()
