"""Each profile that models a Python library agrees with that library, at its pinned version, on every
project fixture of its provider: what it hands over, at which event, and what it raises.

The libraries come with the test extra (``pip install -e '.[test]'``); the profiles do not import
them. A fixture where the two disagree fails here, so a profile cannot drift from the code it
claims to model. Conversations (HAR files, cassettes) are left out: the SDKs read one response.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from stream_doctor.api import replay
from stream_doctor.capture import load
from stream_doctor.clients import BY_NAME, run
from stream_doctor.clients.library import LIBRARIES, LibraryMissing, outcome_of
from stream_doctor.clients.library import load as load_library
from stream_doctor.install import REPOSITORY
from tests.clients.streams import written_back_framings

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
#: Where a profile is known to disagree with its library, and why (each one documented in the profile).
KNOWN_DIVERGENCES: dict[tuple[str, str], str] = {}


def _pairs() -> list[tuple[str, Path]]:
    pairs = []
    for name in sorted(LIBRARIES):
        for provider in BY_NAME[name].providers:
            pairs += [
                (name, path)
                for path in sorted((FIXTURES / provider).glob("*"))
                # an SDK helper-stream log is what the SDK wrote, not a response body it reads
                if path.suffix in (".sse", ".jsonl") and not path.name.startswith("sdk_helper_")
            ]
    return pairs


@pytest.mark.parametrize(("client", "path"), _pairs(), ids=lambda v: v if isinstance(v, str) else v.name)
def test_profile_agrees_with_the_library(client: str, path: Path) -> None:
    try:
        library = load_library(client)
    except LibraryMissing as missing:  # pragma: no cover - the test extra installs them
        pytest.skip(str(missing))
    report = replay(path, keep_events=True)
    events = [event for _, event in report.events]
    handoffs, error = run(BY_NAME[client], events, report.stream.capture.provider, written_back_framings(report))
    capture = load(str(path), None)
    expected = library(capture, capture.frames)
    known = KNOWN_DIVERGENCES.get((client, path.name))
    if known is not None:
        assert outcome_of(handoffs, error, client) != expected, f"fixed? remove it from KNOWN_DIVERGENCES: {known}"
        pytest.xfail(known)
    assert outcome_of(handoffs, error, client) == expected


def test_a_missing_library_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    import builtins

    real_import = builtins.__import__

    def no_openai(name: str, *args: object, **kwargs: object) -> object:
        if name == "openai" or name.startswith("openai."):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(builtins, "__import__", no_openai)
    monkeypatch.setattr("importlib.import_module", lambda name, *a: no_openai(name))
    with pytest.raises(LibraryMissing) as missing:
        load_library("openai-python")
    assert str(missing.value) == (
        'openai-python needs the openai package: pip install -e ".[clients]" in a clone of stream-doctor, '
        f'or pip install "stream-doctor[clients] @ git+{REPOSITORY}"'
    )
