"""How the generated streams of ``streams.py`` are written on the wire: every field of the WHATWG
event-stream grammar (https://html.spec.whatwg.org/multipage/server-sent-events.html#parsing-an-event-stream)
and JSON spelled as each library's parser accepts it.

Each stream draws its line end (LF, CR or CRLF), a leading BOM; each event comments before it, ``id``,
``retry`` and unknown fields, its ``event:`` line before or after its data, ``data:`` with or without
the space, its JSON over several data lines (indented), blank-line runs after it and comment-only
blocks between events. Each payload is JSON as ``orjson.dumps`` writes it, or with whitespace,
``\\u`` escapes of plain letters or a duplicate key (every parser keeps the last), and now and then
a stream holds what orjson refuses while ``json.loads`` (the Python SDKs' ``ServerSentEvent.json``)
and ``JSON.parse`` accept: a number past a double, a lone surrogate escape, ``NaN`` (which
``JSON.parse`` refuses too). Each variation drawn is added to the stream's shapes by name."""

from __future__ import annotations

import json
from typing import Any

import orjson
from hypothesis import strategies as st

BOM = b"\xef\xbb\xbf"
LINE_ENDS = (b"\n", b"\r", b"\r\n")
#: what orjson refuses in a number or a string that json.loads accepts (JSON.parse too, but NaN)
REFUSED = {
    "NaN": b"NaN",
    "a number past a double": b"1e400",
    "a lone surrogate escape": b'"\\ud800"',
}


def payload(draw: Any, value: Any, shapes: set[str]) -> bytes:
    """``value`` as JSON, spelled one of the ways every library's parser reads the same."""
    spelling = draw(st.integers(0, 15))
    if spelling == 0:
        shapes.add("JSON with whitespace")
        return json.dumps(value).encode()
    if spelling == 1:
        shapes.add("JSON over several data lines")
        return orjson.dumps(value, option=orjson.OPT_INDENT_2)
    data = orjson.dumps(value)
    at = data.find(b'"type":"') + 8
    if spelling == 2 and at >= 8 and data[at : at + 1].isalpha():
        shapes.add("JSON unicode escapes")
        return data[:at] + b"\\u%04x" % data[at] + data[at + 1 :]
    if spelling == 3 and isinstance(value, dict) and value:
        shapes.add("JSON with a duplicate key")
        first = next(iter(value))
        return b"{" + orjson.dumps(first) + b':"overwritten",' + data[1:]
    return data


def refused(draw: Any, payloads: list[bytes], shapes: set[str], field: bytes, spare: int | None = None) -> list[bytes]:
    """Now and then one payload's ``field`` (``"created":1``-like, its value replaced whole) holds what orjson
    refuses and ``json.loads`` accepts (``REFUSED``); never payload ``spare`` (the one that tells the provider)."""
    holding = [n for n, p in enumerate(payloads) if field in p and n != spare]
    if not holding or draw(st.integers(0, 11)) > 0:
        return payloads
    kind = draw(st.sampled_from(sorted(REFUSED)))
    at = draw(st.sampled_from(holding))
    shapes.add(f"JSON orjson refuses: {kind}")
    name, _ = field.split(b":", 1)
    spelled = payloads[at].replace(field, name + b":" + REFUSED[kind], 1)
    return [*payloads[:at], spelled, *payloads[at + 1 :]]


def wire(
    draw: Any,
    events: list[tuple[str | None, bytes]],
    shapes: set[str],
    *,
    names: bool,
    closed: bool,
    separated: bool = True,
) -> bytes:
    """The event stream of ``events`` (name, data), with the grammar's variations drawn, each now and then
    in one event of the stream: the ``event:`` line only when ``names``, the last blank line only when
    ``closed``, no blank line between the events unless ``separated`` (then no blank-line run either)."""
    eol = draw(st.sampled_from(LINE_ENDS))
    shapes.add({b"\n": "LF line ends", b"\r": "CR line ends", b"\r\n": "CRLF line ends"}[eol])
    space = b" "
    if draw(st.integers(0, 7)) == 0:
        shapes.add("data without a space after the colon")
        space = b""
    out = []
    if draw(st.integers(0, 11)) == 0:
        shapes.add("a BOM")
        out.append(BOM)
    where = {kind: draw(st.integers(0, len(events) - 1)) if draw(st.integers(0, 7)) == 0 else -1 for kind in _EXTRAS}
    for n, (name, data) in enumerate(events):
        # written without blank lines, the events' lines are one event already: each JSON on one line
        data = data if separated else data.replace(b"\n", b"")
        lines = [b"data:" + space + line for line in data.split(b"\n")]
        if name is not None and names:
            after = where["event line after the data"] == n
            lines.insert(len(lines) if after else 0, b"event: " + name.encode())
        for kind, line in _EXTRAS.items():
            if where[kind] == n and line:
                shapes.add(kind)
                lines.insert(draw(st.integers(0, len(lines))), line)
        out.append(eol.join(lines) + eol)
        if separated:
            out.append(eol)
            if where["a blank-line run"] == n:
                out.append(eol * draw(st.integers(1, 3)))
            if where["a comment-only block"] == n:
                out.append(b": keep-alive" + eol + eol)
    if where["event line after the data"] >= 0 and names and events[where["event line after the data"]][0]:
        shapes.add("event line after the data")
    if separated:
        shapes.update(kind for kind in ("a blank-line run", "a comment-only block") if where[kind] >= 0)
    written = b"".join(out)
    if separated and not closed:
        written = written.rstrip(eol) + eol  # the last event's own line ends, not its blank line
    elif not separated and closed:
        written += eol
    return written


#: the variations a stream may hold once, each in one event (a line of its own, or what is written there)
_EXTRAS = {
    "a comment line": b": ping",
    "an id field": b"id: 7",
    "a retry field": b"retry: 3000",
    "an unknown field": b"x-served-by: edge",
    "a field with no colon": b"x-flag",
    "event line after the data": b"",
    "a blank-line run": b"",
    "a comment-only block": b"",
}
