"""A small agent loop with the empty-input bug, for docs/debugging-empty-input.md.

It streams a Messages request with one tool, get_weather, collects the tool_use blocks as their
``content_block_start`` events arrive, runs them once the message ends, sends the results back
and prints the answer. The bug: the block kept is the one ``content_block_start`` carried, whose
``input`` is always ``{}``; the ``input_json_delta`` fragments are collected but never used.
``--fixed`` parses them at ``content_block_stop``, as it should.

    python docs/examples/weather_agent.py [--record run.jsonl] [--fixed]

``--record`` records the run with stream_doctor.record: every request and event, and each tool
run (``recorder.executed``). ANTHROPIC_API_KEY and ANTHROPIC_BASE_URL are read as usual.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

import anthropic
import httpx2

from stream_doctor.record import Recorder

MODEL = "claude-haiku-4-5"
TOOLS = [
    {
        "name": "get_weather",
        "description": "The current weather at a place.",
        "input_schema": {
            "type": "object",
            "properties": {
                "location": {"type": "string"},
                "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
            },
            "required": ["location"],
        },
    }
]


def get_weather(location: str | None = None, unit: str = "celsius") -> str:
    if not location:
        return "error: location is required"
    return f"18 degrees {unit}, sunny, in {location}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--record", metavar="PATH", help="record the run into this envelope")
    parser.add_argument("--fixed", action="store_true", help="use the streamed input, not the start event's {}")
    args = parser.parse_args()

    recorder = Recorder(args.record) if args.record else None
    if recorder is not None:
        client = anthropic.Anthropic(http_client=httpx2.Client(transport=recorder.transport()))
    else:
        client = anthropic.Anthropic()
    messages: list[dict[str, Any]] = [{"role": "user", "content": "What's the weather in Lisbon?"}]
    while True:
        content: list[dict[str, Any]] = []
        fragments: dict[int, str] = {}
        stop_reason = None
        stream = client.messages.create(model=MODEL, max_tokens=1024, tools=TOOLS, messages=messages, stream=True)
        for event in stream:
            if event.type == "content_block_start":
                content.append(event.content_block.to_dict())
                fragments[event.index] = ""
            elif event.type == "content_block_delta" and event.delta.type == "text_delta":
                content[event.index]["text"] += event.delta.text
            elif event.type == "content_block_delta" and event.delta.type == "input_json_delta":
                fragments[event.index] += event.delta.partial_json
            elif event.type == "content_block_stop" and args.fixed and content[event.index]["type"] == "tool_use":
                content[event.index]["input"] = json.loads(fragments[event.index] or "{}")
            elif event.type == "message_delta":
                stop_reason = event.delta.stop_reason
        messages.append({"role": "assistant", "content": content})
        results = []
        for block in content:
            if block["type"] != "tool_use":
                continue
            if recorder is not None:
                recorder.executed(block["id"], block["name"], block["input"])
            output = get_weather(**block["input"])
            print(f"ran {block['name']}({json.dumps(block['input'])}) -> {output}")
            results.append({"type": "tool_result", "tool_use_id": block["id"], "content": output})
        if stop_reason != "tool_use" or not results:
            print("".join(block.get("text", "") for block in content if block["type"] == "text"))
            break
        messages.append({"role": "user", "content": results})
    if recorder is not None:
        recorder.close()


if __name__ == "__main__":
    main()
