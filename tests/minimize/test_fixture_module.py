"""The pytest module ``stream-doctor fixture`` writes, for any file name the capture may have.

Before, the module was a template with the name pasted in: a name holding ``\"\"\"`` ran code when
pytest collected the module, a backslash (``cap\\N.sse``) made it fail to compile, and a name that is
not UTF-8 was an internal error after the fixture was written.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import stream_doctor
from stream_doctor.minimizer import fixture
from stream_doctor.minimizer.run import Minimized
from tests.conftest import ROOT

EMPTY_INPUT = ROOT / "fixtures/anthropic/empty_input_bug.jsonl"
#: What a hostile name would run at collection, were it pasted into the module: it makes ``PWNED``.
PAYLOADS = (
    '""";open(\'PWNED\',\'w\');"""',
    "''';open('PWNED','w');'''",
    "');open('PWNED','w');('",
    "\");open('PWNED','w');(\"",
    "\\\n__import__('os').system('touch PWNED')\n#",
)

#: A file name as a file system holds it (no ``/``, no NUL, not ``.`` or ``..``): any code point,
#: the characters that matter to Python literals weighted in, or bytes that are not UTF-8 (as
#: ``os.fsdecode`` gives them: lone surrogates).
_NAMES = st.one_of(
    st.text(
        # no lone surrogates here: the file system gives only U+DC80-U+DCFF (the bytes below)
        st.one_of(
            st.sampled_from("\"'\\\n\r\t\x00\x1b\x7f{}%#N\u2028é😀"), st.characters(blacklist_categories=("Cs",))
        ),
        min_size=1,
        max_size=30,
    ).map(lambda name: name.replace("/", "_").replace("\x00", "_")),
    st.binary(min_size=1, max_size=30).map(lambda raw: os.fsdecode(raw.replace(b"/", b"_").replace(b"\0", b"_"))),
    st.sampled_from(PAYLOADS),
).filter(lambda name: name not in (".", "..") and len(os.fsencode(name)) < 200)


@cache
def _minimized() -> Minimized:
    return stream_doctor.minimize(EMPTY_INPUT.read_bytes(), "SD102", name="bug.jsonl", max_seconds=60)


def _module(name: str) -> str:
    return fixture.module_source(f"tests/{name}.jsonl", f"{name}.har", _minimized())


@settings(max_examples=300, deadline=None)
@given(name=_NAMES)
def test_the_module_compiles_for_any_name_and_names_exactly_that_capture(name: str) -> None:
    source = _module(name)
    tree = ast.parse(source)  # compiles: a SyntaxError fails here
    compile(tree, "test_x.py", "exec")
    source.encode("utf-8")  # writable as UTF-8, whatever the name held
    assert fixture.tested_capture(source) == f"{name}.jsonl"
    assert fixture.written_unedited(source)
    # what runs at import: a docstring, one import, one assignment, one test function; nothing else
    kinds = [type(node).__name__ for node in tree.body]
    assert kinds == ["Expr", "ImportFrom", "Assign", "FunctionDef"], kinds
    (function,) = [node for node in tree.body if isinstance(node, ast.FunctionDef)]
    assert function.name.isidentifier() and function.name.isascii() and not function.decorator_list


def test_an_edited_module_is_no_longer_one_fixture_wrote() -> None:
    source = _module("weather")
    assert fixture.written_unedited(source)
    edited = source.replace("def test_", "@pytest.mark.xfail(strict=True)\ndef test_")
    assert not fixture.written_unedited(edited)
    assert not fixture.written_unedited(source.split("\n", 1)[1])  # the marker line removed
    assert not fixture.written_unedited("# hand-written\ndef test_weather():\n    pass\n")


@settings(max_examples=3, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(names=st.lists(_NAMES, min_size=10, max_size=12, unique_by=lambda name: os.fsencode(name).lower()))
@pytest.mark.slow  # pytest run in a child process on the written modules (14 s of CPU)
def test_collecting_the_modules_of_hostile_names_runs_nothing_but_their_tests(
    tmp_path_factory: object, names: list[str]
) -> None:
    names = [*PAYLOADS, *names]
    folder = Path(tmp_path_factory.mktemp("collect"))  # type: ignore[attr-defined]
    for number, name in enumerate(names):
        place = folder / f"case{number}"
        place.mkdir()
        capture = os.path.join(os.fsencode(place), os.fsencode(f"{name}.jsonl"))
        with open(capture, "wb") as file:
            file.write(b"")
        (place / f"test_case{number}.py").write_text(fixture.module_source(os.fsdecode(capture), "x", _minimized()))
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", "--import-mode=importlib"],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert f"{len(names)} tests collected" in run.stdout, run.stdout
    assert not any(path.name == "PWNED" for path in folder.rglob("*")) and not (ROOT / "PWNED").exists()
