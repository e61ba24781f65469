"""SD102 and SD103 over generated neighbours of the empty-input bug: argument text that parses, is cut
short, is blank or is not an object, run with ``{}``, with the reassembled input, with some of its keys
or with a repair; the verdicts are compared with the reference parser's (Python's ``json``) reading of
the same bytes: a run with nothing (or fewer keys) is the bug (SD102) exactly when the stream carried
input; any other run with another input than the stream's, or of text that does not parse, is SD103."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stream_doctor.engine.pipeline import replay
from stream_doctor.values.options import Options

_KEYS = st.sampled_from(["path", "content", "mode", "line"])
_VALUES = st.one_of(st.text(max_size=12), st.integers(-5, 5), st.booleans())
_OBJECTS = st.dictionaries(_KEYS, _VALUES, max_size=3)


@st.composite
def _argument_texts(draw: Any) -> str:
    """The text a call's fragments carry: a whole object, one cut short, blank, or not an object."""
    whole = json.dumps(draw(_OBJECTS))
    return draw(
        st.sampled_from(
            [whole, whole[: draw(st.integers(1, max(1, len(whole) - 1)))], "", "  ", "[1, 2]", '"text"', whole + "}"]
        )
    )


def _envelope(path: Path, fragments: list[str], executed: Any) -> Path:
    def event(name: str, data: dict[str, Any]) -> dict[str, Any]:
        return {"sd": "event", "event": name, "data": {"type": name, **data}}

    message = {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude", "content": [],
               "stop_reason": None, "usage": {"input_tokens": 1, "output_tokens": 1}}  # fmt: skip
    tool = {"type": "tool_use", "id": "toolu_1", "name": "write_file", "input": {}}
    delta = {"type": "input_json_delta"}
    records = [
        {"sd": "header", "version": 1, "provider": "anthropic"},
        event("message_start", {"message": message}),
        event("content_block_start", {"index": 0, "content_block": tool}),
        *(event("content_block_delta", {"index": 0, "delta": {**delta, "partial_json": f}}) for f in fragments),
        event("content_block_stop", {"index": 0}),
        event("message_delta", {"delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 1}}),
        event("message_stop", {}),
        {"sd": "execute", "call_id": "toolu_1", "name": "write_file", "input": executed},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def _reference(raw: str, executed: Any) -> tuple[int, int]:
    """(SD102, SD103) as Python's json reads the stream. SD102: a run with {} (or fewer keys) while the
    fragments carried an object, or with {} while they carried text that is no object at all. SD103:
    any other run with another input, a run with anything of text that is no object among them."""
    try:
        real = json.loads(raw) if raw.strip() else {}
    except ValueError:
        real = None
    if not isinstance(real, dict):
        return int(executed == {} and bool(raw.strip())), int(executed != {})
    empty_bug = bool(real) and isinstance(executed, dict) and executed != real and set(executed) <= set(real)
    return int(empty_bug), int(not empty_bug and executed != real)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(raw=_argument_texts(), cuts=st.lists(st.integers(0, 60), max_size=4), choice=st.integers(0, 3), data=st.data())
def test_sd102_and_sd103_fire_exactly_when_the_reference_parser_says_the_tool_ran_otherwise(
    tmp_path: Path, raw: str, cuts: list[int], choice: int, data: Any
) -> None:
    points = sorted({min(c, len(raw)) for c in cuts} | {0, len(raw)})
    fragments = [raw[a:b] for a, b in zip(points, points[1:], strict=False)] or [""]
    try:
        parsed = json.loads(raw)
    except ValueError:
        parsed = None
    keys = sorted(parsed) if isinstance(parsed, dict) else []
    subset = {k: parsed[k] for k in keys[: data.draw(st.integers(0, len(keys)))]} if isinstance(parsed, dict) else {}
    executed = [{}, parsed if parsed is not None else {}, subset, {"repaired": True}][choice]
    report = replay(str(_envelope(tmp_path / "run.jsonl", fragments, executed)), Options(select=("SD102", "SD103")))
    fired = (report.codes.count("SD102"), report.codes.count("SD103"))
    assert fired == _reference(raw, executed), (raw, executed, [f.message for f in report.findings])
