"""Captures of several conversations interleaved, made from the project's own cassettes: their interactions,
unchanged, put in one vcrpy cassette in an order that keeps each conversation's own (never committed as copies)."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import yaml
from hypothesis import strategies as st

from tests.conftest import FIXTURES

#: three conversations of two turns (one sends the call back by id with another input: SD608), then one of one turn
CASSETTES = (
    "anthropic_two_turns",
    "anthropic_echo_empty_input",
    "anthropic_partial_parse_hazard",
    "anthropic_schema_violations",
)
Order = list[tuple[int, dict[str, Any]]]


def interactions(name: str) -> list[dict[str, Any]]:
    """The interactions of ``fixtures/conversations/NAME.yaml``, as its YAML holds them (copy one to change it)."""
    return list(_read(name))


@cache
def _read(name: str) -> tuple[dict[str, Any], ...]:
    cassette = yaml.safe_load((FIXTURES / "conversations" / f"{name}.yaml").read_text())
    return tuple(cassette["interactions"])


def interleaved(folder: Path, order: Order, name: str = "agents.yaml") -> str:
    """A vcrpy cassette of ``order``'s interactions (conversation, interaction), in that order."""
    path = folder / name
    cassette = {"interactions": [one for _, one in order], "version": 1}
    path.write_text(yaml.dump(cassette, Dumper=getattr(yaml, "CSafeDumper", yaml.SafeDumper)))
    return str(path)


@st.composite
def orders(draw: st.DrawFn) -> Order:
    """``CASSETTES``' interactions, each conversation's in its own order, the conversations shuffled among each other."""
    queues = [[(number, one) for one in interactions(name)] for number, name in enumerate(CASSETTES)]
    order = []
    while any(queues):
        queue = draw(st.sampled_from([q for q in queues if q]))
        order.append(queue.pop(0))
    return order
