"""How long ``stream_doctor.minimize`` takes to cut a 20 MB, 300-turn conversation down to its one SD102.

The capture is ``tests/minimize/long_conversation.py``'s: an Anthropic envelope whose every request
carries the whole history (so it grows with the square of the turns, as production captures do),
one ``write_file`` call per turn, and in turn ``--broken`` the call executed with ``{}``. The script
prints the sizes, events, replays and time of the public API's ``minimize`` (and with ``--redact``),
best of ``--repeat`` runs, in this process (interpreter start-up and imports not included: one
warm-up minimization of a small capture first).

``--redact --max-seconds 0`` times redaction alone, on the whole capture (``--tags N`` gives each call
N more argument values to mask).

Usage: python benchmarks/bench_minimize.py [--turns 300] [--broken 150] [--words 1] [--tags 0] [--repeat 1]
    [--redact] [--max-seconds N]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import stream_doctor  # noqa: E402
from tests.minimize.long_conversation import conversation  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=300)
    parser.add_argument("--broken", type=int, default=150)
    parser.add_argument("--words", type=int, default=1, help="words per argument line (1: about 21 MB at 300 turns)")
    parser.add_argument("--tags", type=int, default=0, help="more distinct argument values per call")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--redact", action="store_true")
    parser.add_argument("--max-seconds", type=float, default=None)
    args = parser.parse_args()

    stream_doctor.minimize(conversation(3, 2), "SD102", name="warm-up.jsonl")
    data = conversation(args.turns, args.broken, args.words, args.tags)
    best = None
    for _ in range(args.repeat):
        started = time.perf_counter()
        result = stream_doctor.minimize(
            data, "SD102", name="conversation.jsonl", redact=args.redact, max_seconds=args.max_seconds
        )
        elapsed = time.perf_counter() - started
        best = elapsed if best is None else min(best, elapsed)
    assert best is not None
    print(
        f"{args.turns} turns, SD102 in turn {args.broken}: {result.size_before:,} -> {result.size_after:,} bytes, "
        f"{result.frames_before:,} -> {result.frames_after:,} events, {result.checks} replays, "
        f"{best:.2f} s (best of {args.repeat}){', stopped early' if result.stopped_early else ''}"
    )
    if args.redact:
        print(f"replaced {dict(result.replaced)}, kept {dict(result.kept_values)}")


if __name__ == "__main__":
    main()
