"""Positions inside YAML quoted scalars and JSON documents, checked against PyYAML and orjson themselves."""

from __future__ import annotations

import json
import random

import pytest
import yaml

from stream_doctor.capture._text_places import Source, json_places, quoted_places
from stream_doctor.capture.base import Pos


def _body(rng: random.Random) -> str:
    pieces = []
    for number in range(rng.randint(1, 10)):
        text = "x" * rng.randint(0, 90) + rng.choice(["", " é ", "  ", "\t", "\\", '"q"', "日本", "'"])
        pieces.append(
            "data: " + json.dumps({"k": text, "n": number}, ensure_ascii=False) + rng.choice(["\n\n", "\n", "  \n\n"])
        )
    return "".join(pieces)


@pytest.mark.parametrize("seed", range(40))
@pytest.mark.parametrize("style", ['"', "'"])
def test_quoted_scalars_are_reread_as_yaml_reads_them(seed: int, style: str) -> None:
    rng = random.Random(seed)
    body = _body(rng)

    class Dumper(yaml.SafeDumper):
        pass

    Dumper.add_representer(
        str, lambda d, s: d.represent_scalar("tag:yaml.org,2002:str", s, style=style if "\n" in s else None)
    )
    text = yaml.dump(
        {"response": {"body": {"string": body}}},
        Dumper=Dumper,
        width=rng.choice([40, 80, 120]),
        allow_unicode=rng.random() < 0.5,
    )
    data = text.encode()
    loader = yaml.SafeLoader(data)
    root = loader.get_single_node()
    node = root.value[0][1].value[0][1].value[0][1]
    assert node.style in ('"', "'")  # PyYAML falls back to double quotes where single quotes cannot say it
    folded = quoted_places(Source(data), node.start_mark.line, node.start_mark.column, body)
    assert folded is not None
    encoded = body.encode()
    lines = text.splitlines()
    # every "data:" of the body is placed on a line of the file that holds it (escapes never touch "data:")
    start = 0
    while (start := encoded.find(b"data:", start)) >= 0:
        line = folded.place(Pos(1, 1, start), encoded).line
        assert "data:" in lines[line - 1], (start, line, lines[line - 1])
        start += 1
    assert folded.lines == sorted(folded.lines) and folded.body_offsets == sorted(folded.body_offsets)


def test_a_scalar_that_is_not_quoted_is_not_mapped() -> None:
    data = b"body: plain text\n"
    assert quoted_places(Source(data), 0, 6, "plain text") is None


def test_json_places_finds_values_by_path() -> None:
    document = {"log": {"entries": [{"request": {"a": [1, "x,]}"]}, "response": {"content": {"text": "hello"}}}]}}
    data = json.dumps(document, indent=2).encode()
    found = json_places(data, lambda path: path[-1:] in (("request",), ("text",)))
    assert data[found[("log", "entries", 0, "request")] :].startswith(b"{")
    assert data[found[("log", "entries", 0, "response", "content", "text")] :].startswith(b'"hello"')
