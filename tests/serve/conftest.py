"""Fixtures of the serve tests: the Node harness of the client tests (one process per session)."""

from __future__ import annotations

from tests.clients.conftest import node_harness

__all__ = ["node_harness"]
