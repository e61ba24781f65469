"""A small agent loop with the empty-input bug, for docs/prove-the-fix.md.

It asks for a notes/todo.md through one tool, write_file, and streams the answer with the Anthropic
SDK's raw events. The bug: it runs each tool when the call's ``content_block_start`` arrives, with
the ``input`` that event carries, which is always ``{}``; the ``input_json_delta`` fragments that
follow are never used. ``--fixed`` uses the stream helper's final message instead, whose inputs the
SDK has accumulated. Either way it sends the results back until the model stops calling tools.

    python docs/examples/todo_agent.py [--fixed]

ANTHROPIC_API_KEY and ANTHROPIC_BASE_URL are read as usual (``stream-doctor serve`` prints both).
"""

from __future__ import annotations

import argparse
from typing import Any

import anthropic

REQUEST: dict[str, Any] = {
    "model": "claude-sonnet-4-5-20250929",
    "max_tokens": 4096,
    "tools": [
        {
            "name": "write_file",
            "description": "Write a text file in the workspace, replacing it if it exists.",
            "input_schema": {
                "type": "object",
                "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
                "required": ["path", "content"],
            },
        }
    ],
}
QUESTION = "Start a notes/todo.md with one item: renew the TLS certificate for api.example.com."


def write_file(path: str | None = None, content: str | None = None) -> str:
    if not path or content is None:
        return "error: path and content are required"
    return f"wrote {len(content)} characters to {path}"


def buggy_turn(client: anthropic.Anthropic, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    content: list[dict[str, Any]] = []
    for event in client.messages.create(**REQUEST, messages=messages, stream=True):
        if event.type == "content_block_start":
            content.append(event.content_block.to_dict())  # a tool_use block's input is {} here
        elif event.type == "content_block_delta" and event.delta.type == "text_delta":
            content[event.index]["text"] += event.delta.text
    return content


def fixed_turn(client: anthropic.Anthropic, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    with client.messages.stream(**REQUEST, messages=messages) as stream:
        return [block.to_dict() for block in stream.get_final_message().content]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--fixed", action="store_true", help="run each tool with the input the stream carried")
    args = parser.parse_args()
    client = anthropic.Anthropic(max_retries=0)
    messages: list[dict[str, Any]] = [{"role": "user", "content": QUESTION}]
    while True:
        content = (fixed_turn if args.fixed else buggy_turn)(client, messages)
        messages.append({"role": "assistant", "content": content})
        results = []
        for block in (b for b in content if b["type"] == "tool_use"):
            output = write_file(**block["input"])
            print(f"ran {block['name']} with {block['input']} -> {output}")
            results.append({"type": "tool_result", "tool_use_id": block["id"], "content": output})
        if not results:
            print("".join(block.get("text", "") for block in content if block["type"] == "text"))
            break
        messages.append({"role": "user", "content": results})


if __name__ == "__main__":
    main()
