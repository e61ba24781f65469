"""End to end: every fixture through the whole pipeline, its findings checked and its reports snapshotted.

A change in a reader, an adapter, the accumulator or a rule shows up here as a reviewable diff, in the
snapshot file of the fixture's folder (``__snapshots__/test_golden/<provider>.ambr``). Update with
``pytest --snapshot-update`` and read the diff before committing it.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

import jsonschema
import pytest
from syrupy.assertion import SnapshotAssertion
from syrupy.extensions.amber import AmberSnapshotExtension
from syrupy.location import PyTestLocation
from syrupy.types import SnapshotIndex

from stream_doctor.engine.pipeline import replay
from stream_doctor.reporters import RenderOptions, json_report
from stream_doctor.values.options import Options
from stream_doctor.values.report import Report
from tests.conftest import FIXTURES, ROOT, fixture_files, render_terminal
from tests.expected_findings import EXPECTED

CAPTURES = sorted(
    p.relative_to(FIXTURES).as_posix()
    # fixtures/<provider>/ only: check's fixture tree is tested in tests/check/
    for p in fixture_files(
        suffixes=(".sse", ".jsonl", ".json", ".gz", ".txt", ".eventstream", ".har", ".yaml", ".responses", ".httprr")
    )
)
REPORT_SCHEMA = json.loads((ROOT / "stream_doctor/schemas/report-v1.schema.json").read_text())
#: ``jsonschema.validate`` checked the schema and built a validator on every call (0.1 s of CPU each, 20 s over
#: the fixtures); the schema is checked once here and every report validated by the one validator it gives.
REPORT_VALIDATOR = jsonschema.validators.validator_for(REPORT_SCHEMA)(REPORT_SCHEMA)
REPORT_VALIDATOR.check_schema(REPORT_SCHEMA)


@functools.cache
def replayed(name: str) -> Report:
    """A fixture's report under the default options, replayed once a session: the report is frozen and the
    reporters are pure, so the checks that read it (findings, JSON, terminal, conversion, pieces) share it."""
    return replay(f"fixtures/{name}", Options())


class _ByProvider(AmberSnapshotExtension):
    """Each fixture folder's snapshots in a file of their own, ``__snapshots__/test_golden/<folder>.ambr``, so a
    change in one adapter is a diff in one file; a snapshot's name is its test's, as syrupy gives it."""

    @classmethod
    def dirname(cls, *, test_location: PyTestLocation) -> str:
        return str(Path(super().dirname(test_location=test_location)) / "test_golden")

    @classmethod
    def get_file_basename(cls, *, test_location: PyTestLocation, index: SnapshotIndex) -> str:
        return _folder(test_location)

    @classmethod
    def matches_test_location(cls, *, test_location: PyTestLocation, snapshot_location: str) -> bool:
        """A snapshot test owns its folder's file: what a run of those tests leaves unused there is obsolete."""
        if not _folder(test_location):
            return False  # a test of this module without a fixture (and without snapshots)
        return Path(snapshot_location) == Path(cls.get_location(test_location=test_location, index=0))


def _folder(test_location: PyTestLocation) -> str:
    """The fixture folder (a provider, or ``conversations``) of a test's ``name`` parameter, "" for a test
    without one."""
    callspec = getattr(test_location.item, "callspec", None)
    return str(callspec.params["name"]).split("/", 1)[0] if callspec and "name" in callspec.params else ""


@pytest.fixture
def snapshot(snapshot: SnapshotAssertion) -> SnapshotAssertion:
    return snapshot.use_extension(_ByProvider)


def test_every_fixture_has_expectations() -> None:
    assert sorted(EXPECTED) == CAPTURES


@pytest.mark.parametrize("name", CAPTURES)
def test_findings(name: str) -> None:
    report = replayed(name)
    assert {f.code for f in report.findings} == EXPECTED[name]


@pytest.mark.parametrize("name", CAPTURES)
def test_json_report(name: str, snapshot: SnapshotAssertion) -> None:
    report = replayed(name)
    text = json_report.render(report, RenderOptions())
    REPORT_VALIDATOR.validate(json.loads(text))
    assert text == snapshot


@pytest.mark.parametrize("name", CAPTURES)
def test_terminal_report(name: str, snapshot: SnapshotAssertion) -> None:
    report = replayed(name)
    assert render_terminal(report) == snapshot


def test_json_report_is_deterministic() -> None:
    name = "fixtures/anthropic/premature_execution_partial_buffer.jsonl"
    assert json_report.render(replay(name, Options()), RenderOptions()) == json_report.render(
        replay(name, Options()), RenderOptions()
    )


def test_capture_fixture_paths_exist() -> None:
    assert all((FIXTURES / name).is_file() for name in EXPECTED), [n for n in EXPECTED if not (FIXTURES / n).is_file()]


def test_fixture_readme_lists_every_fixture() -> None:
    for folder in {Path(n).parent for n in CAPTURES}:
        readme = (FIXTURES / folder / "README.md").read_text()
        missing = [n for n in CAPTURES if Path(n).parent == folder and Path(n).name not in readme]
        assert not missing, f"{folder}/README.md does not describe {missing}"
