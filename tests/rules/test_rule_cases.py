"""Every rule's case table (``tests/rules/cases/SDxxx.yml``, sqlfluff's std_rule_cases style).

Each table lists captures where the rule fires and near misses where it must not: usually a
fixture, and the same fixture with the one thing that makes the rule fire undone (``replace``:
``[old, new]`` pairs, or ``[old, new, count]``; a string starting ``hex:`` is raw bytes; ``cut``:
the fixture up to that text; ``append``: text added at the end; ``clients``: the client profiles
the SD8xx rules judge, as ``--client``; ``client_mode``: as ``--client-mode`` (default ``model``);
``severity``: each finding's, for a rule that picks it per
instance), or a
capture written in the table (``capture`` with a ``file`` name). Only the rule itself runs
(``--select CODE``), so a case shows that rule's verdict and nothing else's.

The rules ``check`` raises itself (scope ``"check"``: SD000, SD900) are not run by replay: their
cases run ``check`` on the capture, with its expectation sidecar when the case gives one
(``expect``: the ``.expect.toml`` text), and count that rule's findings.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from stream_doctor.engine.pipeline import replay
from stream_doctor.rules import lookup
from stream_doctor.values.command_options import CheckOptions
from stream_doctor.values.options import Given, Options
from tests.conftest import FIXTURES

CASES = Path(__file__).parent / "cases"


def tables() -> dict[str, list[dict[str, Any]]]:
    found = {}
    for path in sorted(CASES.glob("SD*.yml")):
        table = yaml.safe_load(path.read_text(encoding="utf-8"))  # the file's name is the rule's code
        found[path.stem] = table["cases"]
    return found


TABLES = tables()


def _bytes(text: str) -> bytes:
    return bytes.fromhex(text[4:]) if text.startswith("hex:") else text.encode("utf-8")


def capture(case: dict[str, Any], tmp_path: Path) -> Path:
    """The case's capture written to a file: the fixture (edited) or the text in the table."""
    if "fixture" in case:
        name = case["fixture"]
        data = (FIXTURES / name).read_bytes()
        for old, new, *count in case.get("replace", []):
            old_bytes = _bytes(old)
            assert old_bytes in data, f"{name}: {old!r} is not in the fixture"
            data = data.replace(old_bytes, _bytes(new), *count)
        if "cut" in case:
            data = data[: data.index(_bytes(case["cut"]))]
        data += _bytes(case.get("append", ""))
    else:
        name = case["file"]
        data = case["capture"].encode("utf-8")
    path = tmp_path / Path(name).name
    path.write_bytes(data)
    return path


def _param(code: str, case: dict[str, Any]) -> Any:
    """A case whose client is run (``client_mode`` ``run`` or ``both``) runs the installed library in a child
    process: ``slow`` (SD809's two: 5 s of CPU)."""
    slow = case.get("client_mode", "model") != "model"
    return pytest.param(code, case, id=f"{code}-{case['name']}", marks=[pytest.mark.slow] if slow else [])


@pytest.mark.parametrize(("code", "case"), [_param(code, case) for code, cases in TABLES.items() for case in cases])
def test_rule_case(code: str, case: dict[str, Any], tmp_path: Path) -> None:
    if lookup(code).scope == "check":  # type: ignore[union-attr]
        _check_case(code, case, tmp_path)
        return
    options = Options(
        select=(code,),
        provider=case.get("provider"),
        container=case.get("container"),
        clients=tuple(case.get("clients", ())),  # the SD8xx rules judge a named client (--client)
        # its profile: the libraries' runs are tests/clients/test_client_runs.py's, but for SD809, the model
        # set against the installed library's run (``client_mode: both``)
        client_mode=case.get("client_mode", "model"),
    )
    report = replay(str(capture(case, tmp_path)), options)
    found = [f for f in report.findings if f.code == code]
    assert len(found) == case["fires"], [f.message for f in found]
    for words in case.get("says", []):
        assert any(words in f.message for f in found), (words, [f.message for f in found])
    if "severity" in case:  # a rule whose severity depends on the instance
        assert [f.severity.name.lower() for f in found] == [case["severity"]] * len(found)
    if "fixture" in case and not code.startswith("SD0") and ("replace" in case or "append" in case or "cut" in case):
        # An edit must not fix the verdict by breaking the capture: it still reads the same way.
        edited, original = (
            replay(str(capture(case, tmp_path)), Options()),
            replay(str(FIXTURES / case["fixture"]), Options()),
        )
        assert len(edited.turns) == len(original.turns)
        assert [t.request is None for t in edited.turns] == [t.request is None for t in original.turns]
        assert len(edited.calls) == len(original.calls)
        assert {f.code for f in edited.findings if f.code.startswith("SD0")} <= {
            f.code for f in original.findings if f.code.startswith("SD0")
        }


def _check_case(code: str, case: dict[str, Any], tmp_path: Path) -> None:
    from stream_doctor.check.run import execute, prepare

    path = capture(case, tmp_path)
    if "expect" in case:
        path.with_name(path.name + ".expect.toml").write_text(case["expect"], encoding="utf-8")
    result = execute(
        prepare(CheckOptions(paths=(str(path),), isolated=True, given=Given(provider=case.get("provider"))))
    )
    found = [f for c in result.captures for f in c.reported if f.code == code]
    assert len(found) == case["fires"], [f.message for f in found]
    for words in case.get("says", []):
        assert any(words in f.message for f in found), (words, [f.message for f in found])
