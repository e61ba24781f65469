"""Finding the configuration: a pyproject.toml counts only with a [tool.stream-doctor] table, and
one that cannot have it is not parsed at all (``locate._may_define_table``)."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from stream_doctor.config import locate
from tests.conftest import ROOT

# every way TOML can write the table (or a key in it), and near misses that only name the project
WRITTEN = [
    "[tool.stream-doctor]\nselect = ['SD2']\n",
    '[ tool . "stream-doctor" ]  # ours\n',
    "[\"tool\".'stream-doctor'.per-file-ignores]\n'a' = ['SD1']\n",
    "[tool]\nstream-doctor = { select = ['SD2'] }\n",
    '[tool]\n"stream-doctor".select = ["SD2"]\n',
    "tool.stream-doctor.select = ['SD2']\n",
    'tool = { "stream-doctor" = {} }\n',
    '[project]\nname = "stream-doctor"\n[tool."stream\\u002Ddoctor"]\nx = 1\n',
    "[[tool.stream-doctor]]\nx = 1\n",
]
NOT_WRITTEN = [
    '[project]\nname = "stream-doctor"\ndependencies = ["stream-doctor>=0.1"]\n',
    '[project.scripts]\nstream-doctor = "stream_doctor.launch:main"\n[tool.ruff]\nline-length = 120\n',
    '[tool.other]\nnote = "stream-doctor"\n',
]


@pytest.mark.parametrize("text", WRITTEN)
def test_every_way_of_writing_the_table_is_parsed(text: str, tmp_path: Path) -> None:
    assert locate._may_define_table(text)
    document = tomllib.loads(text)
    path = tmp_path / "pyproject.toml"
    path.write_text(text)
    assert locate._has_table(path) == ("stream-doctor" in document.get("tool", {}))


@pytest.mark.parametrize("text", NOT_WRITTEN)
def test_a_file_that_only_names_the_project_is_not_parsed(text: str, tmp_path: Path) -> None:
    assert not locate._may_define_table(text)
    assert "stream-doctor" not in tomllib.loads(text).get("tool", {})
    path = tmp_path / "pyproject.toml"
    path.write_text(text)
    assert not locate._has_table(path)


def test_this_projects_own_pyproject_is_not_a_configuration() -> None:
    text = (ROOT / "pyproject.toml").read_text()
    assert not locate._may_define_table(text)
    assert "stream-doctor" not in tomllib.loads(text).get("tool", {})
