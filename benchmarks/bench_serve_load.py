"""What ``stream-doctor serve`` costs to load a capture into the conversations it serves: is the grouping of a
capture's turns (``serve.load.load_scripts``, by ``record.echo.continues``) linear, however many turns a
conversation has and however many conversations a capture holds?

Two envelopes at each size: an agent session of ``--turns`` turns (``sessions.session``: one conversation, every
request carrying the whole history, each follow-up sending the previous call back by id) and ``--exchanges``
one-turn exchanges, each asking its own question (as many conversations as exchanges). For each the script
measures, alternating run by run in this process (CPU time, ``time.process_time``): the floor, the capture read
with its bodies and cut into turns (``capture.load`` and ``conversation.build.split``, what loading did before
the grouping), and ``load_scripts``; it prints the minimum of each, and the time per turn and per MB.

Usage: python benchmarks/bench_serve_load.py [--turns 100,200,400] [--exchanges 1000,2000,4000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import orjson
from sessions import session

from stream_doctor.capture import load
from stream_doctor.conversation.build import split
from stream_doctor.serve.load import load_scripts


def exchanges(count: int) -> bytes:
    """An envelope of ``count`` one-turn exchanges, each its own question answered with text."""
    lines: list[dict[str, object]] = [{"sd": "header", "version": 1, "provider": "anthropic"}]
    for number in range(count):
        body = {"model": "m", "stream": True, "messages": [{"role": "user", "content": f"Question {number}?"}]}
        lines.append({"sd": "request", "t": number, "body": body})
        for event in (
            {"type": "message_start", "message": {"id": f"msg_{number:08d}", "type": "message", "role": "assistant"}},
            {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
            {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "An answer."}},
            {"type": "content_block_stop", "index": 0},
            {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 3}},
            {"type": "message_stop"},
        ):
            lines.append({"sd": "event", "t": number + 0.5, "event": event["type"], "data": event})
    return b"".join(orjson.dumps(line) + b"\n" for line in lines)


def floor(path: str) -> None:
    split(load(path, bodies=True))


def measure(path: str, repeat: int) -> tuple[float, float, int]:
    floors, loads = [], []
    for _ in range(repeat):
        began = time.process_time()
        floor(path)
        floors.append(time.process_time() - began)
        began = time.process_time()
        scripts = load_scripts(path)
        loads.append(time.process_time() - began)
    return min(floors), min(loads), len(scripts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", default="100,200,400")
    parser.add_argument("--exchanges", default="1000,2000,4000")
    parser.add_argument("--repeat", type=int, default=5)
    given = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="bench-serve-load-"))
    cases = [(f"session, {n} turns", int(n), session("anthropic", int(n))) for n in given.turns.split(",")]
    cases += [(f"{n} one-turn exchanges", int(n), exchanges(int(n))) for n in given.exchanges.split(",")]
    print("| capture | MB | conversations | floor | load_scripts | per turn | per MB |")
    print("|---|---|---|---|---|---|---|")
    for name, turns, data in cases:
        path = folder / "capture.jsonl"
        path.write_bytes(data)
        least, loaded, count = measure(str(path), given.repeat)
        print(
            f"| {name} | {len(data) / 1e6:.1f} | {count} | {least:.3f} s | {loaded:.3f} s | "
            f"{loaded / turns * 1e3:.3f} ms | {loaded / len(data) * 1e9:.1f} ms |"
        )


if __name__ == "__main__":
    main()
