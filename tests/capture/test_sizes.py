"""Sizes, read and written once (``capture/limits.parse_size`` and ``human``): every option and key that
takes a SIZE reads ``64MB`` as 64,000,000 bytes and ``64M``/``64MiB`` as 64 MiB (docs/captures.md)."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from stream_doctor.capture.limits import SIZE_UNITS, human, parse_size
from stream_doctor.cli import app

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

CLEAN = "fixtures/anthropic/one_call.sse"


@given(st.integers(min_value=1, max_value=1 << 50))
def test_what_is_written_reads_back_as_the_same_number_of_bytes(size: int) -> None:
    assert parse_size(human(size)) == size


@given(st.integers(min_value=1, max_value=10**6), st.sampled_from(sorted(SIZE_UNITS)), st.booleans())
def test_every_unit_in_either_case_with_or_without_a_space(count: int, unit: str, upper: bool) -> None:
    spelled = unit.upper() if upper else unit
    assert parse_size(f"{count}{spelled}") == parse_size(f"{count} {spelled}") == count * SIZE_UNITS[unit]


@pytest.mark.parametrize(
    ("text", "size"),
    [
        ("64MB", 64_000_000),  # SI, as record's --max-capture read it
        ("64MiB", 64 << 20),  # the near miss: IEC
        ("64M", 64 << 20),  # a bare letter is IEC, as --max-bytes always read it (and GNU dd does)
        ("1.5GiB", 3 << 29),
        ("1.1 GB", 1_100_000_000),  # exact, not a float's 1099999999
        ("1,048,576", 1 << 20),
        ("1_000kb", 1_000_000),
        ("2Gi", 2 << 30),
    ],
)
def test_si_and_iec_units(text: str, size: int) -> None:
    assert parse_size(text) == size


@given(st.text(alphabet="abcxyz!-+ ,.;", min_size=0, max_size=12))
def test_junk_is_refused_with_what_a_size_looks_like(junk: str) -> None:
    with pytest.raises(ValueError, match="65536, 512KiB or 64MiB"):
        parse_size(junk)


@pytest.mark.parametrize("text", ["0", "0.4", "-1", "1,5GB", "12zz", "1e6", "1.5.2M", "Inf"])
def test_no_size_at_all(text: str) -> None:
    with pytest.raises(ValueError, match="65536, 512KiB or 64MiB"):
        parse_size(text)


@pytest.mark.parametrize(
    "argv",
    [
        ["replay", CLEAN, "--max-bytes", "12zz"],
        ["check", CLEAN, "--max-bytes", "-3"],
        ["minimize", CLEAN, "--keep", "SD102", "--max-bytes", "lots"],
        ["record", "--upstream", "http://127.0.0.1:9", "--out", "envelopes", "--max-capture", "1,5GB"],
    ],
)
def test_junk_at_the_command_line_is_one_line_and_exit_2(argv: list[str]) -> None:
    ran = CliRunner().invoke(app, argv)
    assert ran.exit_code == 2
    option, value = argv[-2:]
    (line,) = ran.output.splitlines()
    assert line.startswith(f"stream-doctor: error: {option} {value}: ")
    assert line.endswith("expected a size such as 65536, 512KiB or 64MiB")


def test_a_size_with_a_decimal_is_taken_at_the_command_line() -> None:
    ran = CliRunner().invoke(app, ["replay", CLEAN, "--max-bytes", "0.5KiB"])
    assert ran.exit_code == 2
    assert "the capture is larger than 512 bytes" in ran.output
    assert CliRunner().invoke(app, ["replay", CLEAN, "--max-bytes", "1.5MB"]).exit_code == 0
