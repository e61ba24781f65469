"""A run where only the fragment differs is read by one match and cut at its blank lines
(``capture/runs._events``): it must find what one match per event finds, over every framing.

hypothesis writes Bedrock (JSON Lines) and AI SDK (SSE) streams whose argument deltas are written
many ways: canonical, ``ensure_ascii`` escapes, escaped solidus, padding, a line cut in two, another
event between, empty fragments, CRLF or CR line ends. The runs found with the repeated template are
compared with those of the per-event scanner (the general path), and the replay with runs with the
replay without them (findings, positions, every call's fragments).
"""

from __future__ import annotations

import json
import re
from typing import Any

import orjson
import pytest

from stream_doctor.capture import runs
from stream_doctor.providers import bedrock, vercel_ai
from tests.capture.test_runs import _same_both_ways

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

pytestmark = [pytest.mark.slow]

FRAMINGS = ["canonical", "canonical", "canonical", "ensure_ascii", "solidus", "padding", "cut line", "between", "empty"]


def _literal(fragment: str, framing: str) -> bytes:
    if framing == "ensure_ascii":
        return json.dumps(fragment).encode()[1:-1]
    literal = orjson.dumps(fragment)[1:-1]
    return literal.replace(b"/", b"\\/") if framing == "solidus" else literal


def _bedrock_line(data: dict[str, Any]) -> bytes:
    return orjson.dumps(data) + b"\n"


def _bedrock(deltas: list[tuple[str, str]]) -> bytes:
    start = {"start": {"toolUse": {"toolUseId": "tooluse_R", "name": "write_file"}}, "contentBlockIndex": 0}
    out = [_bedrock_line({"messageStart": {"role": "assistant"}}), _bedrock_line({"contentBlockStart": start})]
    for fragment, framing in deltas:
        head = b'{"contentBlockDelta":{"delta":{"toolUse":{"input":"'
        tail = b'"}},"contentBlockIndex":0}}\n' if framing != "padding" else b'"}}, "contentBlockIndex":0}}\n'
        literal = b"" if framing == "empty" else _literal(fragment, framing)
        if framing == "cut line":
            head = head.replace(b'"delta":', b'"delta":\n')
        if framing == "between":
            out.append(_bedrock_line({"metadata": {"usage": {"inputTokens": 1}}}))
        out.append(head + literal + tail)
    out += [_bedrock_line({"contentBlockStop": {"contentBlockIndex": 0}})]
    out += [_bedrock_line({"messageStop": {"stopReason": "tool_use"}})]
    return b"".join(out)


def _vercel(deltas: list[tuple[str, str]]) -> bytes:
    def part(data: dict[str, Any]) -> bytes:
        return b"data: " + orjson.dumps(data) + b"\n\n"

    out = [part({"type": "start"}), part({"type": "start-step"})]
    out.append(part({"type": "tool-input-start", "toolCallId": "call_R", "toolName": "write_file"}))
    for fragment, framing in deltas:
        head = b'data: {"type":"tool-input-delta","toolCallId":"call_R","inputTextDelta":"'
        tail = b'"}\n\n' if framing != "padding" else b'" }\n\n'
        literal = b"" if framing == "empty" else _literal(fragment, framing)
        if framing == "cut line":
            tail = b'"\ndata: }\n\n'
        if framing == "between":
            out.append(b": keep-alive\n\n")
        out.append(head + literal + tail)
    out += [part({"type": "finish-step"}), part({"type": "finish"})]
    return b"".join(out) + b"data: [DONE]\n\n"


STREAMS = {"bedrock": (_bedrock, bedrock.run_form, True), "vercel-ai": (_vercel, vercel_ai.run_form, False)}


def _found(data: bytes, form: runs.RunForm, line_end: bytes, per_line: bool) -> list[Any]:
    reading = runs.RunReading()
    reading.form, reading.pending = form, False
    found = runs.find_runs(reading, data, 0, len(data), line_end, per_line)
    return [(start, end, run.literals, run.last, run.end) for start, end, _, run in found]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    provider=st.sampled_from(sorted(STREAMS)),
    deltas=st.lists(st.tuples(st.text(max_size=12), st.sampled_from(FRAMINGS)), min_size=1, max_size=30),
    line_end=st.sampled_from([b"\n", b"\r\n", b"\r"]),
)
def test_one_match_finds_what_one_match_per_event_finds(
    provider: str, deltas: list[tuple[str, str]], line_end: bytes
) -> None:
    write, form, per_line = STREAMS[provider]
    data = write(deltas).replace(b"\n", line_end)
    at_blanks = _found(data, form, line_end, per_line)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(runs, "_cut_at_blanks", lambda before, after, blank: False)
        patch.setattr(runs, "_COMPILED", {})  # the templates this process built read the run at blank lines
        assert _found(data, form, line_end, per_line) == at_blanks
    with pytest.MonkeyPatch.context() as patch:
        _same_both_ways("t.sse" if provider == "vercel-ai" else "t.jsonl", patch, data)


def test_a_long_canonical_run_is_read_by_one_match() -> None:
    fragments = [f'part {i} é/\\"' for i in range(500)]
    for provider, (write, form, per_line) in STREAMS.items():
        data = write([(fragment, "canonical") for fragment in fragments])
        reading = runs.RunReading()
        reading.form, reading.pending = form, False
        ((_, _, _, run),) = runs.find_runs(reading, data, 0, len(data), b"\n", per_line)
        assert run.matches is None, provider  # the repeated template read it, no match an event
        assert [orjson.loads(b'"' + literal + b'"') for literal in run.literals] == fragments[1:]


def test_blank_lines_inside_a_template_keep_one_match_per_event() -> None:
    """Near misses: where the fixed bytes could hold a blank line away from the event's end, cutting
    at blank lines could cut inside an event, so the per-event scanner reads the run."""
    assert runs._cut_at_blanks(b'{"a":"', b'"}\n', b"\n")
    assert runs._cut_at_blanks(b'data: {"a":"', b'"}\r\n\r\n', b"\r\n\r\n")
    assert not runs._cut_at_blanks(b'{"a":"', b'"}\n\n', b"\n")  # a blank before the event's end
    assert not runs._cut_at_blanks(b'\n{"a":"', b'"}\n', b"\n")  # the next event starts with one
    assert not runs._cut_at_blanks(b'{"a":\n', b'\n"}\n', b"\n\n")  # an empty literal makes one


def test_a_template_is_built_once_a_process() -> None:
    """Every replay of one kind of capture finds its run template built; a head that differs in a
    byte, in its line ends or in a free group's pattern gets its own; never more than MAX_COMPILED."""
    write, form, per_line = STREAMS["vercel-ai"]
    data = write([(f"part {i}", "canonical") for i in range(20)])

    def template(data: bytes, line_end: bytes, form: runs.RunForm = form) -> runs.Template:
        reading = runs.RunReading()
        reading.form, reading.pending = form, False
        assert len(list(runs.find_runs(reading, data, 0, len(data), line_end, per_line))) == 1
        (built,) = reading.templates.values()
        return built

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(runs, "_COMPILED", {})
        first = template(data, b"\n")
        assert template(data, b"\n") is first  # the second reading builds nothing
        other = template(data.replace(b"call_R", b"call_S"), b"\n")
        crlf = template(data.replace(b"\n", b"\r\n"), b"\r\n")
        assert len({id(first), id(other), id(crlf)}) == 3 and len(runs._COMPILED) == 3
        assert crlf.events is not None and crlf.events.pattern.endswith(re.escape(b'"}\r\n\r\n') + b")*+")
        free = runs.RunForm(
            form.name, form.source.replace(b"(?P<fragment>", b"(?P<free_pad>x*+)(?P<fragment>"), {"free_pad": b"x*+"}
        )
        loose = runs.RunForm(free.name, free.source, {"free_pad": b"[xy]*+"})
        assert template(data, b"\n", free) is not template(data, b"\n", loose)  # the same bytes, groups
        patch.setattr(runs, "MAX_COMPILED", 3)
        template(data.replace(b"call_R", b"call_T"), b"\n")
        assert len(runs._COMPILED) == 1  # full: what was kept is dropped, the new one kept
