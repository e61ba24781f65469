"""How long ``stream_doctor.minimize`` takes: a 20 MB, 300-turn conversation cut down to its one SD102,
and a capture of 40 calls in one turn cut down to one SD201.

The conversation is ``sessions.session``'s (``personal``: a person's text, a planted key, ids as the
API writes them): an Anthropic envelope whose every request carries the whole history (so it grows
with the square of the turns, as production captures do), one ``write_file`` call per turn, and in
turn ``--broken`` the call executed with ``{}``. The 40 calls are ``captures.write_calls``'s (an SSE
stream of one message, every tenth call's arguments cut: SD201). The script prints the sizes,
events, replays and time of the public API's ``minimize`` (and with ``--redact``), best of
``--repeat`` runs, in this process (interpreter start-up and imports not included: one warm-up
minimization of a small capture first).

``--redact --max-seconds 0`` times redaction alone, on the whole conversation (``--tags N`` gives each
call N more argument values to mask).

Usage: python benchmarks/bench_minimize.py [--turns 300] [--broken 150] [--words 1] [--tags 0]
    [--calls 40] [--repeat 1] [--redact] [--max-seconds N]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from captures import write_calls
from sessions import session

import stream_doctor


def timed(data: bytes, keep: str, name: str, args: argparse.Namespace) -> tuple[stream_doctor.Minimized, float]:
    """The result of minimizing ``data`` and the best time of ``--repeat`` runs."""
    best, result = None, None
    for _ in range(args.repeat):
        started = time.perf_counter()
        result = stream_doctor.minimize(data, keep, name=name, redact=args.redact, max_seconds=args.max_seconds)
        elapsed = time.perf_counter() - started
        best = elapsed if best is None else min(best, elapsed)
    assert best is not None and result is not None
    return result, best


def line(what: str, result: stream_doctor.Minimized, seconds: float, repeat: int) -> str:
    return (
        f"{what}: {result.size_before:,} -> {result.size_after:,} bytes, "
        f"{result.frames_before:,} -> {result.frames_after:,} events, {result.checks} replays "
        f"({result.windowed} of a window), "
        f"{seconds:.2f} s (best of {repeat}){', stopped early' if result.stopped_early else ''}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=300)
    parser.add_argument(
        "--broken", default="150", help="the turn whose call ran with {} (several: 100,500,900, each an SD102)"
    )
    parser.add_argument("--words", type=int, default=1, help="words per argument line (1: about 21 MB at 300 turns)")
    parser.add_argument("--tags", type=int, default=0, help="more distinct argument values per call")
    parser.add_argument("--calls", type=int, default=40, help="calls in one turn (0: leave that capture out)")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--redact", action="store_true")
    parser.add_argument("--max-seconds", type=float, default=None)
    args = parser.parse_args()

    stream_doctor.minimize(session("anthropic", 3, broken=2, personal=True), "SD102", name="warm-up.jsonl")
    broken = [int(turn) for turn in args.broken.split(",")]
    data = session("anthropic", args.turns, broken=broken, personal=True, words=args.words, tags=args.tags)
    result, seconds = timed(data, "SD102", "conversation.jsonl", args)
    turns = f"turn {broken[0]}" if len(broken) == 1 else f"turns {args.broken}"
    print(line(f"{args.turns} turns, SD102 in {turns}", result, seconds, args.repeat))
    if args.redact:
        print(f"replaced {dict(result.replaced)}, kept {dict(result.kept_values)}")
    if args.calls:
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "calls.sse"
            write_calls(path, args.calls)
            data = path.read_bytes()
        result, seconds = timed(data, "SD201", "calls.sse", args)
        print(line(f"{args.calls} calls in one turn, SD201", result, seconds, args.repeat))


if __name__ == "__main__":
    main()
