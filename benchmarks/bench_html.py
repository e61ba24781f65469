"""The HTML report against the number of turns: render time per turn should stay flat (linear).

Writes an Anthropic envelope of N turns (each a request, one call streamed in a few fragments and
the application's execute record; every 10th run with {} so SD102 findings grow with the turns),
replays it once per size with the timeline kept, then times rendering the page alone
(``stream_doctor.render(report, "html")``)::

    .venv/bin/python benchmarks/bench_html.py                 # 200, 800 and 3,200 turns
    .venv/bin/python benchmarks/bench_html.py --turns 100 1000
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from stream_doctor import render, replay


def write_envelope(path: Path, turns: int) -> None:
    def event(name: str, data: dict) -> dict:  # type: ignore[type-arg]
        return {"sd": "event", "event": name, "data": {"type": name, **data}}

    records: list[dict] = [{"sd": "header", "version": 1, "provider": "anthropic"}]  # type: ignore[type-arg]
    for n in range(turns):
        call = f"toolu_{n:08d}"
        message = {"id": f"msg_{n}", "type": "message", "role": "assistant", "model": "claude", "content": [],
                   "stop_reason": None, "usage": {"input_tokens": 1, "output_tokens": 1}}  # fmt: skip
        tool = {"type": "tool_use", "id": call, "name": "read_file", "input": {}}
        pieces = ['{"path": ', f'"notes/{n}', '.md"}']
        records += [
            {"sd": "request", "body": {"model": "claude", "stream": True, "messages": []}},
            event("message_start", {"message": message}),
            event("content_block_start", {"index": 0, "content_block": tool}),
            *(
                event("content_block_delta", {"index": 0, "delta": {"type": "input_json_delta", "partial_json": p}})
                for p in pieces
            ),
            event("content_block_stop", {"index": 0}),
            event("message_delta", {"delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 1}}),
            event("message_stop", {}),
            {
                "sd": "execute",
                "call_id": call,
                "name": "read_file",
                "input": {} if n % 10 == 0 else {"path": f"notes/{n}.md"},
            },  # fmt: skip
        ]
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", nargs="*", type=int, default=[200, 800, 3200])
    options = parser.parse_args()
    print(f"{'turns':>7} {'calls':>7} {'findings':>9} {'page':>9} {'render':>8} {'per turn':>9}")
    with tempfile.TemporaryDirectory() as folder:
        for turns in options.turns:
            path = Path(folder) / f"turns_{turns}.jsonl"
            write_envelope(path, turns)
            report = replay(str(path), timeline=True)
            started = time.perf_counter()
            page = render(report, "html", max_rows=0)
            elapsed = time.perf_counter() - started
            print(
                f"{len(report.turns):>7,} {len(report.calls):>7,} {len(report.findings):>9,} "
                f"{len(page) / 1e6:>7.1f}MB {elapsed:>7.2f}s {1e3 * elapsed / turns:>7.2f}ms"
            )


if __name__ == "__main__":
    main()
