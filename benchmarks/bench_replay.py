"""Replay speed against a floor, at several sizes: is the whole replay linear and within 3x?

For each size the script writes a realistic stream whose single tool call carries that many bytes
of arguments in 5-40-byte fragments, then measures, in the same process and run:

* floor: read the file, ``orjson.loads`` every event's data line, join the argument fragments
  once and parse the result once — the least any replay has to do;
* replay: ``stream_doctor.engine.replay`` (capture, adapter, accumulator, every rule), no rendering;
* optionally (``--naive``) an accumulator that re-parses its buffer after every fragment, as the
  Anthropic SDK's does, to show what quadratic costs look like (skipped above 100 KB).

Usage: python benchmarks/bench_replay.py [--sizes 10000,100000,1000000] [--repeat 7] [--provider anthropic]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from stream_doctor.engine import replay  # noqa: E402
from stream_doctor.options import Options  # noqa: E402


def arguments_text(size: int, seed: int = 7) -> str:
    """A JSON object of about ``size`` bytes: a file write with escapes and non-ASCII text."""
    rng = random.Random(seed)
    words = ["def", "return", "café", "naïve", "x = 1", "\t", "\n", '"quoted"', "path\\to", "€", "lorem", "ipsum"]
    parts: list[str] = []
    total = 0
    while total < size:
        word = rng.choice(words)
        parts.append(word)
        total += len(orjson.dumps(word)) - 1
    return orjson.dumps({"path": "src/generated.py", "content": " ".join(parts)}).decode()


def split(text: str, seed: int = 11) -> list[str]:
    rng = random.Random(seed)
    fragments, start = [], 0
    while start < len(text):
        step = rng.randint(5, 40)
        fragments.append(text[start : start + step])
        start += step
    return fragments


def anthropic_stream(fragments: list[str]) -> bytes:
    def event(data: dict[str, object]) -> bytes:
        return b"event: " + str(data["type"]).encode() + b"\ndata: " + orjson.dumps(data) + b"\n\n"

    out = [
        event(
            {
                "type": "message_start",
                "message": {
                    "id": "msg_01Bench",
                    "type": "message",
                    "role": "assistant",
                    "model": "claude-sonnet-4-5-20250929",
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": {"input_tokens": 512, "output_tokens": 1},
                },
            }
        ),
        event(
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {
                    "type": "tool_use",
                    "id": "toolu_01BenchBenchBenchBench01",
                    "name": "write_file",
                    "input": {},
                },
            }
        ),
        event({"type": "ping"}),
    ]
    for fragment in fragments:
        out.append(
            event(
                {
                    "type": "content_block_delta",
                    "index": 0,
                    "delta": {"type": "input_json_delta", "partial_json": fragment},
                }
            )
        )
    out += [
        event({"type": "content_block_stop", "index": 0}),
        event(
            {
                "type": "message_delta",
                "delta": {"stop_reason": "tool_use", "stop_sequence": None},
                "usage": {"output_tokens": len(fragments)},
            }
        ),
        event({"type": "message_stop"}),
    ]
    return b"".join(out)


def anthropic_fragments(data: bytes) -> list[str]:
    return [e["delta"]["partial_json"] for e in _data_lines(data) if e.get("type") == "content_block_delta"]


def _data_lines(data: bytes) -> list[dict]:  # type: ignore[type-arg]
    return [orjson.loads(line[6:]) for line in data.split(b"\n") if line.startswith(b"data: ")]


#: provider -> (write a stream from fragments, floor: fragments from the file's parsed events)
PROVIDERS: dict[str, tuple[Callable[[list[str]], bytes], Callable[[bytes], list[str]]]] = {
    "anthropic": (anthropic_stream, anthropic_fragments),
}


def floor(path: Path, fragments_of: Callable[[bytes], list[str]]) -> None:
    data = path.read_bytes()
    orjson.loads("".join(fragments_of(data)))


def naive(path: Path, fragments_of: Callable[[bytes], list[str]]) -> None:
    buffer = ""
    for fragment in fragments_of(path.read_bytes()):
        buffer += fragment
        try:  # what a re-parse-per-fragment accumulator pays (a partial parser costs at least this)
            orjson.loads(buffer)
        except orjson.JSONDecodeError:
            pass


def timed(run: Callable[[], object], repeat: int) -> float:
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--provider", default="anthropic", choices=sorted(PROVIDERS))
    parser.add_argument("--naive", action="store_true", help="also time a re-parse-per-fragment accumulator")
    parser.add_argument("--max-ratio", type=float, default=3.0, help="exit 1 when replay/floor exceeds this")
    args = parser.parse_args()
    write, fragments_of = PROVIDERS[args.provider]
    options = Options(provider=args.provider)
    print(
        f"{'provider':<10} {'args bytes':>10} {'events':>7} {'floor ms':>9} {'replay ms':>10} {'ratio':>6} {'µs/event':>9}"
        + (f" {'naive ms':>9}" if args.naive else "")
    )
    worst = 0.0
    with tempfile.TemporaryDirectory() as tmp:
        for size in (int(s) for s in args.sizes.split(",")):
            fragments = split(arguments_text(size))
            path = Path(tmp) / f"{args.provider}-{size}.sse"
            path.write_bytes(write(fragments))
            report = replay(str(path), options)
            assert len(report.stream.calls) == 1 and report.stream.calls[0].parse_failure is None, report.findings
            base = timed(lambda path=path: floor(path, fragments_of), args.repeat)
            full = timed(lambda path=path: replay(str(path), options), args.repeat)
            events = report.stream.capture.frames
            ratio = full / base
            worst = max(worst, ratio)
            line = (
                f"{args.provider:<10} {size:>10} {events:>7} {base * 1e3:>9.1f} {full * 1e3:>10.1f} "
                f"{ratio:>6.2f} {full / events * 1e6:>9.2f}"
            )
            if args.naive:
                line += (
                    f" {timed(lambda path=path: naive(path, fragments_of), 1) * 1e3:>9.1f}"
                    if size <= 100_000
                    else f" {'skipped':>9}"
                )
            print(line, flush=True)
    print(f"worst ratio {worst:.2f} (target ≤ {args.max_ratio})")
    return 0 if worst <= args.max_ratio else 1


if __name__ == "__main__":
    raise SystemExit(main())
