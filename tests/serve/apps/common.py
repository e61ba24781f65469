"""What the demo agents share: their command line, the one tool they run and the line each run prints.

Each agent prints one JSON line per tool it runs, ``{"ran": name, "id": id, "input": input}``, when it runs
it, and ``{"answer": text}`` once the model answered the results: the record a test (or ``--matrix``) reads.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from typing import Any, Iterable, Iterator


@dataclass
class Call:
    """One tool call as the agent runs it: the id it answers with, the tool's name and the input it gets."""

    id: str | None
    name: str | None
    input: Any


def options(bugs: tuple[str, ...], model: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--bug", choices=bugs, help="run as the deliberately buggy agent; without it, the fixed twin")
    parser.add_argument("--tool", action="append", default=[], help="a tool the request declares (repeatable)")
    parser.add_argument("--model", default=model)
    parser.add_argument("--prompt", default="Use the tools you need.")
    return parser.parse_args()


#: what each call run gave, by the id the agent answers with
results: dict[str | None, str] = {}


def run(call: Call) -> Call:
    """Run the tool (it only says what it got), printing the record of the run."""
    print(json.dumps({"ran": call.name, "id": call.id, "input": call.input}), flush=True)
    results[call.id] = json.dumps({"ok": True})
    return call


def answered(text: str) -> None:
    print(json.dumps({"answer": text}), flush=True)
    sys.exit(0)


def parsed(text: str) -> Any:
    """The arguments as JSON, ``{}`` for none (as the providers mean an empty buffer)."""
    return json.loads(text) if text.strip() else {}


def until_broken(events: Iterable[Any]) -> Iterator[Any]:
    """The events until the stream breaks, then none: the loop goes on with the calls it already ran (as the
    first-parse bug report's agent did), so the server sees their results sent back for a stream that was cut.
    What broke is printed, never silent."""
    try:
        yield from events
    except Exception as error:  # noqa: BLE001 - the demo's bug: any break of the stream is swallowed
        print(json.dumps({"stream broke": type(error).__name__}), flush=True)
