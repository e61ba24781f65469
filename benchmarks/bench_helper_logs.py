"""SDK helper-stream logs: is checking every snapshot linear in the log?

A helper log restates the call (and the text) so far at every delta, so the log itself grows with
the square of the stream; what stream-doctor adds on top of reading it must not. For each size the
script runs the pinned Anthropic SDK's ``messages.stream()`` over a loopback server streaming a
text block and one tool call of ``n`` deltas each (``tools/sdk_helper_logs.py``, in a child process), writes the log,
then measures in the same process, alternating run by run:

* floor: read the file and ``orjson.loads`` every line (the least any replay has to do);
* replay: ``stream_doctor.replay`` (capture, adapter, accumulator with every text, partial
  and final snapshot compared, every rule), no rendering.

Linear means the ratio replay/floor stays flat as the log grows fourfold per doubling of ``n``.
Needs the ``test`` extra (the pinned SDK). Usage:
    python benchmarks/bench_helper_logs.py [--sizes 250,500,1000,2000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import orjson

from stream_doctor import replay

#: The tool that runs the SDK's helper and writes its log (its own command line, in a child process).
HELPER_LOGS = Path(__file__).resolve().parent.parent / "tools" / "sdk_helper_logs.py"


def wire(n: int) -> bytes:
    """A Messages stream: a text block of ``n`` deltas, then a tool call of about ``n`` fragments."""
    events: list[dict[str, object]] = [
        {
            "type": "message_start",
            "message": {
                "id": "msg_bench",
                "type": "message",
                "role": "assistant",
                "model": "claude-sonnet-4-5",
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": {"input_tokens": 1, "output_tokens": 1},
            },
        },  # fmt: skip
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
    ]
    for i in range(n):
        events.append(
            {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": f"word {i} then "}}
        )
    events.append({"type": "content_block_stop", "index": 0})
    events.append(
        {
            "type": "content_block_start",
            "index": 1,
            "content_block": {"type": "tool_use", "id": "toolu_bench", "name": "save", "input": {}},
        }
    )
    arguments = json.dumps({"items": [{"id": i, "name": f"item {i}", "tags": ["a", "b"]} for i in range(n // 4)]})
    step = max(1, len(arguments) // n)
    for k in range(0, len(arguments), step):
        delta = {"type": "input_json_delta", "partial_json": arguments[k : k + step]}
        events.append({"type": "content_block_delta", "index": 1, "delta": delta})
    events += [
        {"type": "content_block_stop", "index": 1},
        {"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": None}, "usage": {"output_tokens": 9}},
        {"type": "message_stop"},
    ]  # fmt: skip
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode()


def floor(path: Path) -> None:
    with path.open("rb") as f:
        for line in f:
            orjson.loads(line)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="250,500,1000,2000")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    print(f"{'deltas':>7} {'log MB':>8} {'floor ms':>9} {'replay ms':>10} {'ratio':>6}")
    with tempfile.TemporaryDirectory() as tmp:
        for n in (int(s) for s in args.sizes.split(",")):
            path, stream = Path(tmp) / f"helper_{n}.jsonl", Path(tmp) / f"wire_{n}.sse"
            stream.write_bytes(wire(n))
            with path.open("w") as log:
                subprocess.run([sys.executable, str(HELPER_LOGS), "anthropic", str(stream)], stdout=log, check=True)
            report = replay(str(path))
            assert not report.findings, [f.code for f in report.findings]  # a correct log: nothing to report
            floors, replays, ratios = [], [], []
            for _ in range(args.repeat):
                start = time.perf_counter()
                floor(path)
                middle = time.perf_counter()
                replay(str(path))
                end = time.perf_counter()
                floors.append(middle - start)
                replays.append(end - middle)
                ratios.append((end - middle) / (middle - start))
            size = path.stat().st_size / 1e6
            print(
                f"{n:>7} {size:>8.1f} {statistics.median(floors) * 1e3:>9.1f} "
                f"{statistics.median(replays) * 1e3:>10.1f} {statistics.median(ratios):>6.2f}"
            )


if __name__ == "__main__":
    main()
