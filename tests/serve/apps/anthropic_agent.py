"""A small agent loop on the Anthropic Python SDK (``ANTHROPIC_BASE_URL`` and ``ANTHROPIC_API_KEY`` from the
environment): one streamed turn, each tool call run, the results sent back, the answer printed.

Without ``--bug`` it is the fixed agent: ``messages.stream()`` accumulates the calls and each runs once the
message ended with ``stop_reason: tool_use``. ``--bug`` makes it one of the deliberately buggy agents, each
reading the raw events (``messages.create(stream=True)``) the way a bug report did:

- ``start-placeholder``: runs the tool at ``content_block_start`` with the block's ``input`` (``{}``);
- ``index-keyed``: keys calls by block index, concatenating fragments, and answers with ids of its own;
- ``parse-each-fragment``: parses each ``partial_json`` alone and keeps the last that parsed (else ``{}``);
- ``first-parse``: runs a call as soon as its buffer parses, before its ``content_block_stop``, and when the
  stream breaks goes on with the calls it ran, sending their results back.
"""

from __future__ import annotations

import json
from typing import Any, Callable, Iterable

import anthropic
from common import Call, answered, options, parsed, results, run, until_broken


def fixed(client: anthropic.Anthropic, request: dict[str, Any]) -> list[Call]:
    with client.messages.stream(**request) as stream:
        message = stream.get_final_message()
    if message.stop_reason != "tool_use":
        return []
    return [run(Call(b.id, b.name, b.input)) for b in message.content if b.type == "tool_use"]


def start_placeholder(events: Iterable[Any]) -> list[Call]:
    return [
        run(Call(e.content_block.id, e.content_block.name, e.content_block.input))
        for e in events
        if e.type == "content_block_start" and e.content_block.type == "tool_use"
    ]


def index_keyed(events: Iterable[Any]) -> list[Call]:
    names: dict[int, str] = {}
    buffers: dict[int, str] = {}
    for event in events:
        if event.type == "content_block_start" and event.content_block.type == "tool_use":
            names.setdefault(event.index, event.content_block.name)
            buffers.setdefault(event.index, "")
        elif event.type == "content_block_delta" and event.delta.type == "input_json_delta":
            buffers[event.index] = buffers.get(event.index, "") + event.delta.partial_json
    return [run(Call(f"call_{index}", names.get(index), parsed(text))) for index, text in buffers.items()]


def parse_each_fragment(events: Iterable[Any]) -> list[Call]:
    open_calls: dict[int, Call] = {}
    calls = []
    for event in events:
        if event.type == "content_block_start" and event.content_block.type == "tool_use":
            open_calls[event.index] = Call(event.content_block.id, event.content_block.name, {})
        elif event.type == "content_block_delta" and event.delta.type == "input_json_delta":
            try:
                open_calls[event.index].input = json.loads(event.delta.partial_json)
            except (ValueError, KeyError):
                pass
        elif event.type == "content_block_stop" and event.index in open_calls:
            calls.append(run(open_calls.pop(event.index)))
    return calls


def first_parse(events: Iterable[Any]) -> list[Call]:
    heads: dict[int, Call] = {}
    buffers: dict[int, str] = {}
    calls = []
    for event in until_broken(events):
        if event.type == "content_block_start" and event.content_block.type == "tool_use":
            heads[event.index], buffers[event.index] = Call(event.content_block.id, event.content_block.name, {}), ""
        elif event.type == "content_block_delta" and event.delta.type == "input_json_delta" and event.index in heads:
            buffers[event.index] += event.delta.partial_json
            try:
                heads[event.index].input = json.loads(buffers[event.index])
            except ValueError:
                continue
            calls.append(run(heads.pop(event.index)))
    return calls


BUGGY: dict[str, Callable[[Iterable[Any]], list[Call]]] = {
    "start-placeholder": start_placeholder,
    "index-keyed": index_keyed,
    "parse-each-fragment": parse_each_fragment,
    "first-parse": first_parse,
}


def main() -> None:
    args = options(tuple(BUGGY), "claude-haiku-4-5")
    client = anthropic.Anthropic(max_retries=0)
    tools = [{"name": name, "description": name, "input_schema": {"type": "object"}} for name in args.tool]
    messages: list[dict[str, Any]] = [{"role": "user", "content": args.prompt}]
    request = {"model": args.model, "max_tokens": 1024, "messages": messages, "tools": tools}
    calls = (
        fixed(client, request) if args.bug is None else BUGGY[args.bug](client.messages.create(**request, stream=True))
    )
    if not calls:
        answered("")
    used = [{"type": "tool_use", "id": c.id, "name": c.name, "input": c.input} for c in calls]
    answers = [{"type": "tool_result", "tool_use_id": c.id, "content": results[c.id]} for c in calls]
    messages += [{"role": "assistant", "content": used}, {"role": "user", "content": answers}]
    with client.messages.stream(**request) as stream:
        answered("".join(stream.text_stream))


if __name__ == "__main__":
    main()
