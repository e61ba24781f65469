"""The harness the two differential modules share: a profile against the real library it models, on the
original response bytes.

``test_library_differential.py`` (the Python libraries, in this process) and ``test_node_differential.py``
(the TypeScript libraries, in one Node process) each describe their side as a ``Side``: which of its
profiles read a provider, and what one profile and its library disagree on for one response body. The
comparisons, the tests' checks (fixtures and corpus captures, bodies inside containers, generated streams)
and ``tests/differential_tally.py``'s totals are written once, here. The inputs are ``streams.py``'s.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import event
from hypothesis import strategies as st

from stream_doctor.api import replay
from stream_doctor.clients import PROFILES
from tests.clients.streams import CORPUS, ContainerCase, Fed, byte_cuts, capture_name, fed_bodies, fed_sse, seeded_cuts


@dataclass(frozen=True)
class Side:
    """One language's libraries, each beside the profile that models it."""

    #: in a skip's reason: "no {language} library profile reads 'bedrock'"
    language: str
    #: the profiles of this side that read a provider, sorted
    clients: Callable[[str], list[str]]
    #: every disagreement of one profile with its library on one response body (cut at these offsets as well,
    #: when given), a sentence each, starting with the client's name
    disagreements: Callable[[str, Fed, tuple[int, ...] | None], list[str]]

    def compare_fed(self, fed: Fed, clients: list[str] | None = None, cuts: tuple[int, ...] | None = None) -> list[str]:
        """Every disagreement between a profile and its library on one response body, as a sentence each."""
        found = []
        for client in clients if clients is not None else self.clients(fed.provider):
            if PROFILES[client].applies_to(fed.provider):
                found += self.disagreements(client, fed, cuts)
        return found

    def compare(
        self, data: bytes, name: str, clients: list[str] | None = None, cuts: tuple[int, ...] | None = None
    ) -> list[str]:
        """Every disagreement between a profile and its library on the SSE capture ``data``, as a sentence each."""
        return self.compare_fed(fed_sse(data, name), clients, cuts)

    def check_capture(self, path: Path, known_divergences: dict[tuple[str, str], str]) -> None:
        """A fixture or corpus capture: every profile that reads its provider agrees, but the known divergences,
        which still disagree."""
        data = path.read_bytes()
        provider = replay(data, keep_events=True, name=str(path)).stream.capture.provider
        clients = self.clients(provider)
        if not clients:
            pytest.skip(f"no {self.language} library profile reads {provider!r}")
        known = {client: why for (client, name), why in known_divergences.items() if name == capture_name(path)}
        cuts = seeded_cuts(path, data)  # one arbitrary split as well, the same for every run
        assert self.compare(data, str(path), [c for c in clients if c not in known], cuts) == []
        for client, why in known.items():
            assert self.compare(data, str(path), [client]), f"fixed? remove it from KNOWN_DIVERGENCES: {why}"

    def check_container(self, case: ContainerCase, container_divergences: dict[tuple[str, str], str]) -> None:
        """A HAR entry's, a cassette interaction's or a recording's SSE body, decoded as its reader decodes it
        (base64, ``!binary``, hex, gzip), is fed to the library as the HTTP client receives it."""
        if case.interaction is None:
            provider = replay(str(case.path)).stream.capture.provider
            if not self.clients(provider):
                pytest.skip(f"no {self.language} library profile reads {provider!r}")
            pytest.skip(f"not the response bytes: {case.skipped}")
        fed = fed_bodies(case.path)[case.interaction]
        known = {client: why for (client, name), why in container_divergences.items() if name == case.name}
        clients = [c for c in self.clients(fed.provider) if c not in known]
        if not clients and not known:
            pytest.skip(f"no {self.language} library profile reads {fed.provider!r}")
        assert self.compare_fed(fed, clients, seeded_cuts(case.path, fed.data)) == []
        for client, why in known.items():
            assert self.compare_fed(fed, [client]), f"fixed? remove it from CONTAINER_DIVERGENCES: {why}"

    def check_generated(
        self, data: st.DataObject, shapes: set[str], stream: bytes, unfixed: dict[tuple[str, str], str]
    ) -> None:
        """A generated stream: every profile agrees, but a client ``unfixed`` excuses for a shape the stream
        holds, whose disagreement is counted (``--hypothesis-show-statistics``), not failed."""
        found = self.compare(stream, "generated.sse", cuts=byte_cuts(data.draw, stream))
        for shape in sorted(shapes):
            event(f"shape: {shape}")
        known = {client for shape, client in unfixed if shape in shapes}
        excused = [line for line in found if line.split(" ", 1)[0] in known]
        for line in excused:
            event(f"known disagreement: {line.split(' ', 1)[0]}")
        assert [line for line in found if line not in excused] == [], stream.decode()


def assert_corpus_compared(captures: list[Path]) -> None:
    """The corpus's captures were among those compared, or its absence is said."""
    if not CORPUS.is_dir():
        pytest.skip(f"{CORPUS} is absent: only the project's fixtures were compared")
    assert any(CORPUS in p.parents for p in captures)
