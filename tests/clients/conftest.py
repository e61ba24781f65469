"""Fixtures of the client tests: the Node harness, started once per session when a test needs it."""

from __future__ import annotations

from typing import Iterator

import pytest

from tests.clients.node_harness import NodeHarness, node_executable


@pytest.fixture(scope="session")
def node_harness() -> Iterator[NodeHarness]:
    harness = NodeHarness(node_executable())
    try:
        yield harness
    finally:
        harness.close()
