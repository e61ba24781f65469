"""A small agent loop on the OpenAI Python SDK's Chat Completions (``OPENAI_BASE_URL`` and ``OPENAI_API_KEY``
from the environment): one streamed turn, each tool call run, the results sent back, the answer printed.

Without ``--bug`` it is the fixed agent: it reads the raw chunks, finds each fragment's call by its id, then
its index, then the call last opened (never concatenating ids or names), and runs the calls once the choice
finished with ``tool_calls`` or ``stop``. ``--bug`` makes it one of the deliberately buggy agents:

- ``start-placeholder``: runs a call with ``{}`` when its first fragment (its id and name) arrives;
- ``index-keyed``: keys calls by ``index`` alone, concatenating fragments, and answers with ids of its own;
- ``parse-each-fragment``: parses each ``arguments`` fragment alone and keeps the last that parsed (else ``{}``);
- ``first-parse``: runs a call as soon as its buffer parses, before the choice finished, and when the stream
  breaks goes on with the calls it ran, sending their results back.
"""

from __future__ import annotations

import json
from typing import Any, Callable, Iterable, Iterator

import openai
from common import Call, answered, options, parsed, results, run, until_broken


def fragments(chunks: Iterable[Any]) -> Iterator[tuple[Any, str | None]]:
    """Each ``tool_calls`` entry of the first choice, and the choice's finish_reason (with a None entry)."""
    for chunk in chunks:
        for choice in chunk.choices:
            if choice.index != 0:
                continue
            for entry in choice.delta.tool_calls or []:
                yield entry, None
            if choice.finish_reason:
                yield None, choice.finish_reason


def _function(entry: Any) -> tuple[str | None, str]:
    function = getattr(entry, "function", None)
    return getattr(function, "name", None), getattr(function, "arguments", None) or ""


def fixed(chunks: Iterable[Any]) -> list[Call]:
    calls: list[tuple[Call, list[str]]] = []
    by_index: dict[int, int] = {}
    finish = None
    for entry, finish_reason in fragments(chunks):
        if entry is None:
            finish = finish_reason
            continue
        name, text = _function(entry)
        index, call_id = getattr(entry, "index", None), getattr(entry, "id", None)
        known = [n for n, (call, _) in enumerate(calls) if call_id and call.id == call_id]
        if known:
            at = known[0]
        elif index is not None and index in by_index and not (call_id and calls[by_index[index]][0].id):
            at = by_index[index]
        elif call_id or name or not calls:
            calls.append((Call(call_id, name, None), []))
            at = len(calls) - 1
        else:
            at = len(calls) - 1
        if index is not None:
            by_index[index] = at
        call = calls[at][0]
        call.id, call.name = call.id or call_id, call.name or name
        calls[at][1].append(text)
    if finish not in ("tool_calls", "stop"):
        return []
    return [run(Call(call.id, call.name, parsed("".join(texts)))) for call, texts in calls]


def start_placeholder(chunks: Iterable[Any]) -> list[Call]:
    return [run(Call(e.id, _function(e)[0], {})) for e, _ in fragments(chunks) if e is not None and e.id]


def index_keyed(chunks: Iterable[Any]) -> list[Call]:
    names: dict[int, str | None] = {}
    buffers: dict[int, str] = {}
    for entry, _ in fragments(chunks):
        if entry is not None:
            index = getattr(entry, "index", None) or 0
            name, text = _function(entry)
            names.setdefault(index, name)
            buffers[index] = buffers.get(index, "") + text
    return [run(Call(f"call_{index}", names[index], parsed(text))) for index, text in buffers.items()]


def parse_each_fragment(chunks: Iterable[Any]) -> list[Call]:
    open_calls: dict[int, Call] = {}
    for entry, _ in fragments(chunks):
        if entry is None:
            continue
        index = getattr(entry, "index", None) or 0
        name, text = _function(entry)
        call = open_calls.setdefault(index, Call(entry.id, name, {}))
        try:
            call.input = json.loads(text)
        except ValueError:
            pass
    return [run(call) for call in open_calls.values()]


def first_parse(chunks: Iterable[Any]) -> list[Call]:
    heads: dict[int, tuple[Call, str]] = {}
    calls, done = [], set()
    for entry, _ in fragments(until_broken(chunks)):
        index = getattr(entry, "index", None) or 0
        if entry is None or index in done:
            continue
        name, text = _function(entry)
        head, buffer = heads.get(index, (Call(entry.id, name, {}), ""))
        heads[index] = (head, buffer + text)
        try:
            head.input = json.loads(buffer + text)
        except ValueError:
            continue
        done.add(index)
        calls.append(run(head))
    return calls


AGENTS: dict[str | None, Callable[[Iterable[Any]], list[Call]]] = {
    None: fixed,
    "start-placeholder": start_placeholder,
    "index-keyed": index_keyed,
    "parse-each-fragment": parse_each_fragment,
    "first-parse": first_parse,
}


def main() -> None:
    args = options(tuple(b for b in AGENTS if b), "gpt-4o")
    client = openai.OpenAI(max_retries=0)
    tools = [{"type": "function", "function": {"name": n, "parameters": {"type": "object"}}} for n in args.tool]
    messages: list[dict[str, Any]] = [{"role": "user", "content": args.prompt}]
    request = {"model": args.model, "messages": messages, "tools": tools, "stream": True}
    calls = AGENTS[args.bug](client.chat.completions.create(**request))
    if not calls:
        answered("")
    used = [
        {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": json.dumps(c.input)}} for c in calls
    ]
    messages.append({"role": "assistant", "content": None, "tool_calls": used})
    messages += [{"role": "tool", "tool_call_id": c.id, "content": results[c.id]} for c in calls]
    text = [c.choices[0].delta.content or "" for c in client.chat.completions.create(**request) if c.choices]
    answered("".join(text))


if __name__ == "__main__":
    main()
