"""A capture whose tool names, ids, arguments and event types carry terminal and workflow-command tricks."""

from __future__ import annotations

import json
from pathlib import Path

ESC_CSI = "\x1b[2J\x1b[31m"  # clear the screen, turn red
OSC_LINK = "\x1b]8;;https://evil.example\x07click\x1b]8;;\x07"  # a hyperlink, ended by BEL
C1_CSI = "\x9b31m"  # CSI as a single C1 character
NEL = "\x85"
LINE_SEP, PARA_SEP = "\u2028", "\u2029"
WORKFLOW = "::add-mask::hunter2"
TRICKS = (ESC_CSI, OSC_LINK, C1_CSI, NEL, LINE_SEP, PARA_SEP, "\n" + WORKFLOW, "\r##[error]legacy")

NAME = f"search{ESC_CSI}{NEL}{WORKFLOW}{LINE_SEP}::error::pwned"
CALL_ID = f"toolu_{OSC_LINK}{PARA_SEP}::warning::x"
ARGUMENT = f"{C1_CSI}{LINE_SEP}::set-output name=x::y\n{WORKFLOW}\x1b[0m"


def _event(kind: str, data: dict) -> str:  # type: ignore[type-arg]
    return f"event: {kind}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n"


def write(path: Path, name: str = NAME, call_id: str = CALL_ID, argument: str = ARGUMENT) -> Path:
    """An Anthropic stream: the same odd id twice (SD3xx), the second call's input cut (unparseable)."""
    start = {"type": "message", "id": "msg_1", "role": "assistant", "model": "m", "content": []}
    events = [_event("message_start", {"type": "message_start", "message": start})]
    for index, partial in ((0, json.dumps({"q": argument}, ensure_ascii=False)), (1, '{"q": "' + argument)):
        block = {"type": "tool_use", "id": call_id, "name": name, "input": {}}
        events.append(
            _event("content_block_start", {"type": "content_block_start", "index": index, "content_block": block})
        )
        delta = {"type": "input_json_delta", "partial_json": partial}
        events.append(_event("content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}))
        events.append(_event("content_block_stop", {"type": "content_block_stop", "index": index}))
    events.append(_event(f"odd{NEL}{WORKFLOW}", {"type": f"odd{ESC_CSI}{LINE_SEP}::error::type"}))
    stop = {"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 9}}
    events.append(_event("message_delta", stop))
    events.append(_event("message_stop", {"type": "message_stop"}))
    path.write_text("".join(events), encoding="utf-8")
    return path
