"""Replay speed against a floor, at several sizes: is the whole replay linear and within 3x?

For each size the script writes a realistic stream whose single tool call carries that many bytes
of arguments in 5-40-byte fragments, then measures, in the same process and run:

* floor: read the file, ``orjson.loads`` every event's data line, join the argument fragments
  once and parse the result once — the least any replay has to do;
* replay: ``stream_doctor.replay`` (capture, adapter, accumulator, every rule), no rendering;

the two alternate run by run and the ratio quoted is the median of the per-run ratios;
* optionally (``--naive``) an accumulator that re-parses its buffer after every fragment, as the
  Anthropic SDK's does, to show what quadratic costs look like (skipped above 100 KB).

Every row shows the target (1.5x for Anthropic and OpenAI Chat, 2x for the others) and the ratio
docs/performance.md's table quotes. ``--frozen N`` first freezes N objects with ``gc.freeze()``,
as a pre-forking server does (the collector pause must not walk them on every replay).

Usage: python benchmarks/bench_replay.py [--sizes 10000,100000,1000000] [--repeat 7]
       [--provider anthropic|openai|...|all] [--frozen 1000000]
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from pathlib import Path
from typing import Callable

import orjson

from stream_doctor import replay


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
    """The floor's work: parse every event's data line, keep only the argument fragments."""
    loads = orjson.loads
    fragments = []
    for line in data.split(b"\n"):
        if line.startswith(b"data: "):
            event = loads(line[6:])
            if event["type"] == "content_block_delta":
                fragments.append(event["delta"]["partial_json"])
    return fragments


def openai_stream(fragments: list[str]) -> bytes:
    """OpenAI Chat Completions as the API sends it today: every chunk with id, object, created,
    model, service_tier, system_fingerprint, choices, usage null and obfuscation; then the finish
    chunk, the usage chunk and data: [DONE]."""
    head = {
        "id": "chatcmpl-CBenchBenchBenchBenchBenchBe",
        "object": "chat.completion.chunk",
        "created": 1761734412,
        "model": "gpt-4o-2024-08-06",
        "service_tier": "default",
        "system_fingerprint": "fp_07871e2ad8",
    }

    def chunk(delta: dict[str, object], finish: str | None = None, obfuscation: str = "aB3x") -> bytes:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
        data = {**head, "choices": [choice], "usage": None, "obfuscation": obfuscation}
        return b"data: " + orjson.dumps(data) + b"\n\n"

    first = {"index": 0, "id": "call_BenchBenchBenchBenchBench", "type": "function"}
    out = [
        chunk(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [{**first, "function": {"name": "write_file", "arguments": ""}}],
                "refusal": None,
            }
        )
    ]
    for number, fragment in enumerate(fragments):
        delta = {"tool_calls": [{"index": 0, "function": {"arguments": fragment}}]}
        out.append(chunk(delta, obfuscation="xYz9Qw"[: 1 + number % 6]))
    usage = {"prompt_tokens": 512, "completion_tokens": len(fragments), "total_tokens": 512 + len(fragments)}
    out += [
        chunk({}, "tool_calls"),
        b"data: " + orjson.dumps({**head, "choices": [], "usage": usage, "obfuscation": "Qh"}) + b"\n\n",
        b"data: [DONE]\n\n",
    ]
    return b"".join(out)


def openai_fragments(data: bytes) -> list[str]:
    """The floor's work: parse every chunk's data line, keep only the argument fragments."""
    loads = orjson.loads
    fragments = []
    for line in data.split(b"\n"):
        if line.startswith(b"data: {"):
            choices = loads(line[6:])["choices"]
            if choices:
                calls = choices[0]["delta"].get("tool_calls")
                if calls:
                    fragments.append(calls[0]["function"]["arguments"])
    return fragments


def responses_stream(fragments: list[str]) -> bytes:
    """OpenAI Responses as the API sends it: named events with sequence numbers, argument deltas
    with item_id, output_index and obfuscation, then .done, output_item.done and response.completed."""
    sequence = 0

    def event(data: dict[str, object]) -> bytes:
        nonlocal sequence
        data = {"type": data["type"], "sequence_number": sequence, **data}
        sequence += 1
        return b"event: " + str(data["type"]).encode() + b"\ndata: " + orjson.dumps(data) + b"\n\n"

    response = {"id": "resp_Bench", "object": "response", "status": "in_progress", "model": "gpt-5.1", "output": []}
    item = {
        "id": "fc_Bench",
        "type": "function_call",
        "status": "in_progress",
        "arguments": "",
        "call_id": "call_Bench",
        "name": "write_file",
    }
    out = [
        event({"type": "response.created", "response": response}),
        event({"type": "response.in_progress", "response": response}),
    ]
    out.append(event({"type": "response.output_item.added", "output_index": 0, "item": item}))
    for number, fragment in enumerate(fragments):
        delta = {"item_id": "fc_Bench", "output_index": 0, "delta": fragment, "obfuscation": "xYz9Qw"[: 1 + number % 6]}
        out.append(event({"type": "response.function_call_arguments.delta", **delta}))
    arguments = "".join(fragments)
    done = {**item, "status": "completed", "arguments": arguments}
    out += [
        event(
            {
                "type": "response.function_call_arguments.done",
                "item_id": "fc_Bench",
                "output_index": 0,
                "arguments": arguments,
            }
        ),
        event({"type": "response.output_item.done", "output_index": 0, "item": done}),
        event({"type": "response.completed", "response": {**response, "status": "completed", "output": [done]}}),
    ]
    return b"".join(out)


def responses_fragments(data: bytes) -> list[str]:
    """The floor's work: parse every event's data line, keep only the argument fragments."""
    loads = orjson.loads
    fragments = []
    for line in data.split(b"\n"):
        if line.startswith(b"data: "):
            event = loads(line[6:])
            if event["type"] == "response.function_call_arguments.delta":
                fragments.append(event["delta"])
    return fragments


def ui_stream(fragments: list[str]) -> bytes:
    """The AI SDK UI message stream: data-only SSE parts keyed by toolCallId, ending with [DONE]."""

    def part(data: dict[str, object]) -> bytes:
        return b"data: " + orjson.dumps(data) + b"\n\n"

    out = [part({"type": "start", "messageId": "Bench0123456789a"}), part({"type": "start-step"})]
    out.append(part({"type": "tool-input-start", "toolCallId": "call_Bench", "toolName": "write_file"}))
    out += [part({"type": "tool-input-delta", "toolCallId": "call_Bench", "inputTextDelta": f}) for f in fragments]
    arguments = orjson.loads("".join(fragments))
    available = {
        "type": "tool-input-available",
        "toolCallId": "call_Bench",
        "toolName": "write_file",
        "input": arguments,
    }
    out += [part(available), part({"type": "finish-step"}), part({"type": "finish", "finishReason": "tool-calls"})]
    return b"".join(out) + b"data: [DONE]\n\n"


def ui_fragments(data: bytes) -> list[str]:
    """The floor's work: parse every part, keep only the argument fragments."""
    loads = orjson.loads
    fragments = []
    for line in data.split(b"\n"):
        if line.startswith(b"data: {"):
            part = loads(line[6:])
            if part["type"] == "tool-input-delta":
                fragments.append(part["inputTextDelta"])
    return fragments


def _data_line(data: dict[str, object]) -> bytes:
    return b"data: " + orjson.dumps(data) + b"\n\n"


def cohere_stream(fragments: list[str]) -> bytes:
    def call(delta: dict[str, object]) -> dict[str, object]:
        return {"message": {"tool_calls": delta}}

    out = [
        _data_line(
            {
                "id": "5c1f2a9e-0d1b-4c61-9a77-1f0e3c2b8d41",
                "type": "message-start",
                "delta": {
                    "message": {"role": "assistant", "content": [], "tool_plan": "", "tool_calls": [], "citations": []}
                },
            }
        ),
        _data_line({"type": "tool-plan-delta", "delta": {"message": {"tool_plan": "I will write the file."}}}),
        _data_line(
            {
                "type": "tool-call-start",
                "index": 0,
                "delta": call(
                    {
                        "id": "write_file_k2j8d7x1q0pz",
                        "type": "function",
                        "function": {"name": "write_file", "arguments": ""},
                    }
                ),
            }
        ),
    ]
    out += [
        _data_line({"type": "tool-call-delta", "index": 0, "delta": call({"function": {"arguments": f}})})
        for f in fragments
    ]
    out += [
        _data_line({"type": "tool-call-end", "index": 0}),
        _data_line(
            {
                "type": "message-end",
                "delta": {
                    "finish_reason": "TOOL_CALL",
                    "usage": {
                        "billed_units": {"input_tokens": 512, "output_tokens": len(fragments)},
                        "tokens": {"input_tokens": 1800, "output_tokens": len(fragments) + 40},
                    },
                },
            }
        ),
    ]
    return b"".join(out)


def cohere_fragments(data: bytes) -> list[str]:
    loads = orjson.loads
    fragments = []
    for line in data.split(b"\n"):
        if line.startswith(b"data: "):
            event = loads(line[6:])
            if event["type"] == "tool-call-delta":
                fragments.append(event["delta"]["message"]["tool_calls"]["function"]["arguments"])
    return fragments


def bedrock_stream(fragments: list[str]) -> bytes:
    """ConverseStream as boto3 yields it, one wrapped event per line."""

    def line(data: dict[str, object]) -> bytes:
        return orjson.dumps(data) + b"\n"

    out = [
        line({"messageStart": {"role": "assistant"}}),
        line(
            {
                "contentBlockStart": {
                    "start": {"toolUse": {"toolUseId": "tooluse_Bench0Bench0Bench0Ben01", "name": "write_file"}},
                    "contentBlockIndex": 0,
                }
            }
        ),
    ]
    out += [
        line({"contentBlockDelta": {"delta": {"toolUse": {"input": f}}, "contentBlockIndex": 0}}) for f in fragments
    ]
    out += [
        line({"contentBlockStop": {"contentBlockIndex": 0}}),
        line({"messageStop": {"stopReason": "tool_use"}}),
        line(
            {
                "metadata": {
                    "usage": {"inputTokens": 512, "outputTokens": len(fragments), "totalTokens": 512 + len(fragments)},
                    "metrics": {"latencyMs": 2400},
                }
            }
        ),
    ]
    return b"".join(out)


def bedrock_fragments(data: bytes) -> list[str]:
    loads = orjson.loads
    fragments = []
    for raw in data.split(b"\n"):
        if raw:
            event = loads(raw)
            delta = event.get("contentBlockDelta")
            if delta is not None:
                fragments.append(delta["delta"]["toolUse"]["input"])
    return fragments


def gemini_stream(fragments: list[str]) -> bytes:
    """Vertex AI streamed arguments: the file content string in 5-40-character stringValue pieces."""
    content = orjson.loads("".join(fragments))["content"]
    pieces, start, step = [], 0, 5
    while start < len(content):
        step = 5 + (step * 7 + 3) % 36
        pieces.append(content[start : start + step])
        start += step

    def chunk(part: dict[str, object], finish: str | None = None) -> bytes:
        candidate: dict[str, object] = {"content": {"role": "model", "parts": [part]}}
        if finish:
            candidate["finishReason"] = finish
        body = {
            "candidates": [candidate],
            "usageMetadata": {"trafficType": "ON_DEMAND"},
            "modelVersion": "gemini-3.1-pro-preview",
            "createTime": "2026-05-12T09:14:27.518204Z",
            "responseId": "BenchBenchBenchBench012",
        }
        return b"data: " + orjson.dumps(body) + b"\r\n\r\n"

    def partial(path: str, value: str, more: bool) -> dict[str, object]:
        piece: dict[str, object] = {"jsonPath": path, "stringValue": value}
        if more:
            piece["willContinue"] = True
        return {"functionCall": {"partialArgs": [piece], "willContinue": True}}

    out = [chunk({"functionCall": {"name": "write_file", "willContinue": True}, "thoughtSignature": "c2lnbmF0dXJl"})]
    out.append(chunk(partial("$.path", "src/generated.py", False)))
    out += [chunk(partial("$.content", p, True)) for p in pieces]
    out.append(chunk(partial("$.content", "", False)))
    out.append(chunk({"functionCall": {}}))
    out.append(chunk({"text": ""}, "STOP"))
    return b"".join(out)


def gemini_fragments(data: bytes) -> list[str]:
    """The floor: parse every chunk, join the string pieces per path, serialise the object once."""
    loads = orjson.loads
    values: dict[str, list[str]] = {}
    for line in data.split(b"\r\n"):
        if line.startswith(b"data: "):
            part = loads(line[6:])["candidates"][0]["content"]["parts"][0]
            for piece in part.get("functionCall", {}).get("partialArgs", ()):
                values.setdefault(piece["jsonPath"][2:], []).append(piece["stringValue"])
    return [orjson.dumps({key: "".join(parts) for key, parts in values.items()}).decode()]


#: provider -> (write a stream from fragments, floor: fragments from the file's parsed events)
PROVIDERS: dict[str, tuple[Callable[[list[str]], bytes], Callable[[bytes], list[str]]]] = {
    "anthropic": (anthropic_stream, anthropic_fragments),
    "openai": (openai_stream, openai_fragments),
    "openai-responses": (responses_stream, responses_fragments),
    "vercel-ai": (ui_stream, ui_fragments),
    "gemini": (gemini_stream, gemini_fragments),
    "cohere": (cohere_stream, cohere_fragments),
    "bedrock": (bedrock_stream, bedrock_fragments),
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


def paired(first: Callable[[], object], second: Callable[[], object], repeat: int) -> tuple[float, float, float]:
    """Median times of both, and the median of their per-pair ratio second/first.

    The two run in turn (A B A B …), so load that comes and goes on a shared machine hits both
    sides of a pair alike; the ratio of each pair is what is compared, not two separate medians.
    """
    first_times, second_times, ratios = [], [], []
    for _ in range(repeat):
        start = time.perf_counter()
        first()
        middle = time.perf_counter()
        second()
        end = time.perf_counter()
        first_times.append(middle - start)
        second_times.append(end - middle)
        ratios.append((end - middle) / (middle - start))
    return statistics.median(first_times), statistics.median(second_times), statistics.median(ratios)


#: Targets: replay work at most this many times the floor.
TARGETS = {"anthropic": 1.5, "openai": 1.5}
DEFAULT_TARGET = 2.0
QUOTED = Path(__file__).resolve().parent.parent / "docs" / "performance.md"


def readme_ratios() -> dict[tuple[str, int], str]:
    """The ratios docs/performance.md's table quotes, by (provider, argument bytes)."""
    quoted: dict[tuple[str, int], str] = {}
    units = {"KB": 1000, "MB": 1000_000}
    for line in QUOTED.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 5 and len(cells[1].split(" ")) == 2 and cells[1].split(" ")[1] in units:
            number, unit = cells[1].split(" ")  # "100 KB" (another table's header cell may be a bare "MB")
            try:
                size = int(float(number) * units[unit])
            except ValueError:
                continue
            quoted[(cells[0].strip("`"), size)] = cells[4]
    return quoted


def freeze_objects(count: int) -> list[object]:
    """What a pre-forking server does before forking: freeze a large heap (``gc.freeze()``)."""
    import gc

    heap: list[object] = [[i] for i in range(count)]
    gc.freeze()
    return heap


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--provider", default="anthropic", choices=[*sorted(PROVIDERS), "all"])
    parser.add_argument("--naive", action="store_true", help="also time a re-parse-per-fragment accumulator")
    parser.add_argument(
        "--frozen",
        type=int,
        default=0,
        help="first freeze this many objects with gc.freeze(), as a forking server does",
    )
    parser.add_argument("--max-ratio", type=float, default=None, help="exit 1 when replay/floor exceeds this")
    args = parser.parse_args()
    providers = sorted(PROVIDERS) if args.provider == "all" else [args.provider]
    keep = freeze_objects(args.frozen) if args.frozen else None
    quoted = readme_ratios()
    print(
        f"{'provider':<17} {'args bytes':>10} {'events':>7} {'floor ms':>9} {'replay ms':>10} {'ratio':>6} "
        f"{'target':>6} {'quoted':>6} {'µs/event':>9}"
        + (f" {'naive ms':>9}" if args.naive else "")
        + (f"   ({args.frozen:,} objects frozen)" if args.frozen else "")
    )
    failed = False
    with tempfile.TemporaryDirectory() as tmp:
        for provider in providers:
            write, fragments_of = PROVIDERS[provider]
            target = args.max_ratio or TARGETS.get(provider, DEFAULT_TARGET)
            for size in (int(s) for s in args.sizes.split(",")):
                fragments = split(arguments_text(size))
                path = Path(tmp) / f"{provider}-{size}.sse"
                path.write_bytes(write(fragments))
                report = replay(str(path), provider=provider)
                assert len(report.stream.calls) == 1 and report.stream.calls[0].parse_failure is None, report.findings
                base, full, ratio = paired(
                    lambda path=path, fragments_of=fragments_of: floor(path, fragments_of),
                    lambda path=path, provider=provider: replay(str(path), provider=provider),
                    args.repeat,
                )
                events = report.stream.capture.frames
                failed |= ratio > target
                line = (
                    f"{provider:<17} {size:>10} {events:>7} {base * 1e3:>9.1f} {full * 1e3:>10.1f} "
                    f"{ratio:>6.2f} {target:>6.1f} {quoted.get((provider, size), '-'):>6} {full / events * 1e6:>9.2f}"
                )
                if args.naive:
                    line += (
                        f" {timed(lambda path=path, fragments_of=fragments_of: naive(path, fragments_of), 1) * 1e3:>9.1f}"
                        if size <= 100_000
                        else f" {'skipped':>9}"
                    )
                print(line, flush=True)
    del keep
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
