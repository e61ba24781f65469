"""Every fixture with a finding at warning or above, minimized to those findings.

What a user relies on when they commit the result: it still gives those findings, gives no new
warning or error, is no larger than what they started from, is a capture of the same provider
(in the same container, or an envelope when that container cannot hold the result), and
minimizing it again changes nothing (so a fixture made once stays as it is).
"""

from __future__ import annotations

import pytest

import stream_doctor
from stream_doctor.values.findings import Severity
from tests.conftest import FIXTURES
from tests.expected_findings import EXPECTED


def _warned(fixture: str) -> bool:
    """Whether the fixture shows a finding at warning or above (a rule's severity can depend on the
    capture: SD304 is info when the request forced the tool), so it is replayed to tell."""
    with stream_doctor.replay(FIXTURES / fixture) as report:
        return any(f.severity >= Severity.WARNING for f in report.findings)


CASES = sorted(path for path, codes in EXPECTED.items() if codes and _warned(path))

#: Far above what any fixture takes (at most about 2 s on a loaded machine); a bound, not a timing.
BOUND = 120


@pytest.mark.slow  # every fixture with a warning minimized, then minimized again (10 s of CPU)
@pytest.mark.parametrize("fixture", CASES)
def test_the_minimized_fixture_keeps_its_findings_and_nothing_new(fixture: str) -> None:
    data = (FIXTURES / fixture).read_bytes()
    with stream_doctor.replay(data, name=fixture) as original:
        keep = sorted({f.code for f in original.findings if f.severity >= Severity.WARNING})
        provider, container = original.stream.capture.provider, original.source.container
    assert keep

    result = stream_doctor.minimize(data, keep, name=fixture, max_seconds=BOUND)

    assert not result.stopped_early
    assert result.size_after <= result.size_before
    assert {f.code for f in result.kept} == set(keep)
    with stream_doctor.replay(result.data, name=fixture) as small:
        assert small.stream.capture.provider == provider
        assert small.source.container == ("envelope" if result.converted else container) == result.container
        assert set(keep) <= {f.code for f in small.findings}
        assert {f.code for f in small.findings if f.severity >= Severity.WARNING} <= set(keep)
    again = stream_doctor.minimize(result.data, keep, name=fixture, max_seconds=BOUND)
    assert again.data == result.data


def test_every_fixture_with_a_warning_is_a_case() -> None:
    # the table is the reviewable statement of which fixtures show what; a new fixture joins here
    assert len(CASES) >= 100
    assert "anthropic/empty_input_bug.jsonl" in CASES and "conversations/anthropic_echo_empty_input.yaml" in CASES
