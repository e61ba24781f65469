"""The package as it is published: what the sdist and the wheel hold, its metadata, its hook definitions.

The sdist and wheel are built offline (``python -m build --no-isolation``, the ``test`` extra has
``build`` and ``setuptools``) from a copy of the tree, so the build leaves nothing in the checkout.
"""

from __future__ import annotations

import importlib.util
import re
import shutil
import subprocess
import sys
import tarfile
import tomllib
import zipfile
from email.parser import Parser
from pathlib import Path
from typing import Any

import pytest
import yaml

import stream_doctor
from stream_doctor.util.install import REPOSITORY
from tests.conftest import ROOT

#: builds the sdist and the wheel, and installs the pre-commit hook from the checkout
pytestmark = [pytest.mark.slow]

NOT_SOURCES = shutil.ignore_patterns(
    ".git", ".venv", "*.egg-info", "build", "dist", "__pycache__", ".*_cache", "*.pyc", "benchmarks/out"
)


#: What running the tests, the linters and the harnesses leaves in a working tree: never in the sdist.
GENERATED = (
    "tests/clients/node/node_modules/@anthropic-ai/sdk/index.js",
    "tests/clients/node/node_modules/.package-lock.json",
    "tests/__pycache__/conftest.cpython-311-pytest-8.4.0.pyc",
    "tests/check/__pycache__/test_cli_check.cpython-311.pyc",
    "tests/.hypothesis/examples/0a1b/2c3d",
    "tests/.pytest_cache/v/cache/lastfailed",
    "tests/.venv/bin/python",
    "fixtures/.mypy_cache/3.11/cache.db",
    "docs/.ruff_cache/0.5.0/123",
    "benchmarks/out/replay.json",
    "benchmarks/.fuzz-corpus/0123abcd",
)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    if importlib.util.find_spec("build") is None:
        pytest.skip("the build package is not installed (pip install -e '.[test]')")
    tree = tmp_path_factory.mktemp("tree") / "stream-doctor"
    shutil.copytree(ROOT, tree, ignore=NOT_SOURCES)
    for generated in GENERATED:  # as a working tree has them after npm ci, pytest, mypy, ruff, the fuzzer
        (tree / generated).parent.mkdir(parents=True, exist_ok=True)
        (tree / generated).write_text("generated\n")
    out = tree / "dist"
    subprocess.run(
        [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out), str(tree)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    (sdist,) = out.glob("*.tar.gz")
    (wheel,) = out.glob("*.whl")
    return sdist, wheel


def _package_sources() -> set[str]:
    """Every file of the package folder: code, schemas, templates (a new data file must be declared in package-data)."""
    return {
        path.relative_to(ROOT).as_posix()
        for path in (ROOT / "stream_doctor").rglob("*")
        if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc"
    }


def test_the_wheel_holds_the_package_typed_with_its_schemas_and_nothing_else(built: tuple[Path, Path]) -> None:
    _, wheel = built
    assert wheel.name == f"stream_doctor-{stream_doctor.__version__}-py3-none-any.whl"
    names = set(zipfile.ZipFile(wheel).namelist())
    package = {n for n in names if n.startswith("stream_doctor/")}
    assert package == _package_sources()
    assert {"stream_doctor/py.typed", "stream_doctor/schemas/report-v1.schema.json"} <= package
    info = f"stream_doctor-{stream_doctor.__version__}.dist-info"
    assert f"{info}/licenses/LICENSE" in names
    assert not {n for n in names if n.startswith(("tests/", "fixtures/", "benchmarks/", "docs/"))}
    entry_points = zipfile.ZipFile(wheel).read(f"{info}/entry_points.txt").decode()
    assert "stream-doctor = stream_doctor.launch:main" in entry_points
    assert "stream_doctor = stream_doctor.pytest_plugin" in entry_points


def test_the_metadata_a_user_sees(built: tuple[Path, Path]) -> None:
    _, wheel = built
    info = f"stream_doctor-{stream_doctor.__version__}.dist-info"
    metadata = Parser().parsestr(zipfile.ZipFile(wheel).read(f"{info}/METADATA").decode())
    assert metadata["Version"] == stream_doctor.__version__
    assert metadata["License-Expression"] == "MIT"
    assert metadata["Requires-Python"] == ">=3.11"
    classifiers = metadata.get_all("Classifier")
    assert "Typing :: Typed" in classifiers and "Framework :: Pytest" in classifiers
    assert not [c for c in classifiers if c.startswith("License ::")]  # the SPDX expression says it (PEP 639)
    assert metadata["Keywords"] and metadata.get_all("Project-URL")
    extras = set(metadata.get_all("Provides-Extra"))
    assert {"dev", "test", "record", "scan", "clients"} <= extras
    core = [d for d in metadata.get_all("Requires-Dist") if "extra ==" not in d]
    assert not [d for d in core if d.startswith("pydantic")]  # a plain install never brings in pydantic
    assert [d for d in core if d.startswith("typer")] == ["typer<0.29,>=0.27"]  # 0.29 imports pydantic at start-up


def test_the_sdist_holds_what_the_test_suite_needs(built: tuple[Path, Path]) -> None:
    sdist, _ = built
    prefix = f"stream_doctor-{stream_doctor.__version__}/"
    names = {n.removeprefix(prefix) for n in tarfile.open(sdist).getnames()}
    for required in (
        "LICENSE",
        "README.md",
        "CONTRIBUTING.md",
        "pyproject.toml",
        ".pre-commit-hooks.yaml",
        "docs/api.md",
    ):
        assert required in names
    assert {n for n in names if n.startswith("stream_doctor/")} >= _package_sources()
    assert "tests/test_package.py" in names and "fixtures/anthropic/one_call.sse" in names
    # tests/providers/test_sdk_helpers.py loads it: without it the sdist's suite does not even collect
    assert "tools/sdk_helper_logs.py" in names
    assert "tests/check/schemas/sarif-schema-2.1.0.json" in names
    assert not [n for n in names if "__pycache__" in n or n.startswith((".venv", ".git/"))]


def test_the_sdist_holds_every_tracked_file_of_what_it_grafts(built: tuple[Path, Path]) -> None:
    """A file added to tests/, fixtures/, tools/ … is in the sdist without anyone remembering MANIFEST.in."""
    if not (ROOT / ".git").exists() or shutil.which("git") is None:
        pytest.skip("not a git checkout: no list of tracked files to compare with")
    sdist, _ = built
    prefix = f"stream_doctor-{stream_doctor.__version__}/"
    names = {n.removeprefix(prefix) for n in tarfile.open(sdist).getnames()}
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout.decode()
    tracked = {n for n in listed.split("\0") if n and (ROOT / n).is_file()}
    grafted = ("docs/", "tests/", "fixtures/", "benchmarks/", "tools/", "stream_doctor/")
    pruned = ("docs/screenshots/",)  # MANIFEST.in's one deliberate prune of tracked files: the report's pictures
    assert {n for n in tracked if n.startswith(grafted) and not n.startswith(pruned)} - names == set()
    assert not {n for n in names if n.startswith(pruned)}


def test_the_sdist_leaves_out_what_runs_leave_behind(built: tuple[Path, Path]) -> None:
    """node_modules (12 MB once npm ci has run), caches, environments: built from a tree that has them all."""
    sdist, _ = built
    prefix = f"stream_doctor-{stream_doctor.__version__}/"
    names = {n.removeprefix(prefix) for n in tarfile.open(sdist).getnames()}
    assert not set(GENERATED) & names
    generated = {
        "node_modules",
        "__pycache__",
        ".hypothesis",
        ".pytest_cache",
        ".mypy_cache",
        ".ruff_cache",
        ".venv",
        ".fuzz-corpus",
    }
    assert not [n for n in names if set(n.split("/")) & generated or n.startswith("benchmarks/out")]
    assert sdist.stat().st_size < 3_000_000  # about 1 MB: the sources, fixtures and snapshots


#: ``pip install stream-doctor`` or ``'stream-doctor[x]'`` without ``@ git+…``: a name no package index has.
BY_NAME = re.compile(r"""pip install\s+(?:-\S+\s+)*['"]?stream-doctor(?>(?:\[[^\]]*\])?['"]?)(?!\s*@)""")


def test_every_install_command_names_something_pip_can_install() -> None:
    """README, docs and every missing-extra message install from a clone (``-e ".[x]"``) or from the
    repository's URL, the one placeholder ``stream_doctor.util.install.REPOSITORY`` (README, "Installing")."""
    texts = [
        ROOT / "README.md",
        ROOT / "CONTRIBUTING.md",
        *sorted((ROOT / "docs").rglob("*.md")),
        *sorted((ROOT / "stream_doctor").rglob("*.py")),
    ]
    wrong = []
    for path in texts:
        text = path.read_text()
        wrong += [f"{path.relative_to(ROOT)}: {found.group(0)}" for found in BY_NAME.finditer(text)]
        urls = re.findall(r"git\+(https://[^\s\"'`@]+)", text)
        wrong += [f"{path.relative_to(ROOT)}: git+{url}" for url in urls if url != REPOSITORY]
    assert wrong == []
    assert BY_NAME.search("pip install 'stream-doctor[html]'") and BY_NAME.search("pip install -q stream-doctor")
    assert not BY_NAME.search(f'pip install "stream-doctor[html] @ git+{REPOSITORY}"')


def test_the_replay_page_lists_every_container_and_replay_format() -> None:
    from stream_doctor.capture import CONTAINERS
    from stream_doctor.reporters import FORMATS

    page = (ROOT / "docs" / "replay.md").read_text()
    (container_row,) = [line for line in page.splitlines() if line.startswith("| `--container NAME` |")]
    assert re.findall(r"`(\w+)`", container_row.split("|")[2].split("(")[0]) == list(CONTAINERS)
    (format_row,) = [line for line in page.splitlines() if line.startswith("| `--format ")]
    assert format_row.split("`")[1].removeprefix("--format ").split("\\|") == list(FORMATS)
    assert "the `html` extra" in format_row


def test_the_version_is_defined_once() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert "version" not in project and project["dynamic"] == ["version"]
    assert (ROOT / "LICENSE").read_text().startswith("MIT License")
    assert project["license"] == "MIT" and "dev" in project["optional-dependencies"]


def test_the_pre_commit_hook_definition() -> None:
    (hook,) = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    assert hook["id"] == "stream-doctor-check" and hook["entry"] == "stream-doctor check"
    files = re.compile(hook["files"])
    assert files.search("captures/a.sse") and files.search("x.jsonl.gz") and files.search("a.sse.expect.toml")
    assert not files.search("README.md")


#: pre-commit as installed beside this interpreter (the test extra has it), or on PATH.
PRE_COMMIT = shutil.which("pre-commit", path=str(Path(sys.executable).parent)) or shutil.which("pre-commit")


def readme_pre_commit_snippet() -> dict[str, Any]:
    """docs/ci.md's ``.pre-commit-config.yaml`` snippet, parsed: the one repository it lists."""
    page = (ROOT / "docs" / "ci.md").read_text()
    (block,) = [b for b in re.findall(r"```yaml\n(.*?)```", page, re.S) if b.startswith("repos:")]
    (repo,) = yaml.safe_load(block)["repos"]
    return repo  # type: ignore[no-any-return]


def test_the_readme_pre_commit_snippet_names_what_a_user_fills_in() -> None:
    """No tag exists (a submission carries commits only): the snippet pins a commit, and names the
    repository as the install instructions do."""
    repo = readme_pre_commit_snippet()
    assert repo["repo"] == REPOSITORY
    assert repo["rev"] == "<commit SHA>"
    (hook,) = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    assert [h["id"] for h in repo["hooks"]] == [hook["id"]]


@pytest.mark.skipif(PRE_COMMIT is None, reason="pre-commit is not installed (the test extra has it)")
def test_pre_commit_try_repo_runs_the_readme_snippet(tmp_path: Path) -> None:
    """docs/ci.md's snippet with its blanks filled in: this checkout as the repository, its HEAD as
    ``rev``. pre-commit checks that commit out and installs the hook from it into its own
    environment (that needs the package registry); the test extra installs pre-commit, so CI runs it."""
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout (an sdist): pre-commit installs hooks from a git repository")
    snippet = readme_pre_commit_snippet()
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True)
    filled = {snippet["repo"]: str(ROOT), snippet["rev"]: head.stdout.strip()}
    repo = tmp_path / "project"
    (repo / "captures").mkdir(parents=True)
    shutil.copy(ROOT / "fixtures/anthropic/one_call.sse", repo / "captures/clean.sse")
    shutil.copy(ROOT / "fixtures/anthropic/empty_input_bug.jsonl", repo / "captures/bug.jsonl")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid"]
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run([*git, "add", "."], cwd=repo, check=True)
    env = {"PRE_COMMIT_HOME": str(tmp_path / "cache"), "PATH": str(Path(sys.executable).parent) + ":/usr/bin:/bin"}
    for hook in snippet["hooks"]:
        result = subprocess.run(
            [str(PRE_COMMIT), "try-repo", filled[snippet["repo"]], hook["id"], "--ref", filled[snippet["rev"]]]
            + ["--all-files"],
            cwd=repo,
            capture_output=True,
            text=True,
            env=env,
            timeout=600,
        )
        assert result.returncode == 1, result.stdout + result.stderr  # bug.jsonl shows SD102
        assert "SD102" in result.stdout


@pytest.fixture(scope="module")
def editable(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh environment holding the README's ``pip install -e .`` of a copy of the tree, offline.

    pip runs from the test's interpreter (its setuptools builds, as ``--no-build-isolation``) and
    installs into the new venv's site-packages (``--prefix``); ``--ignore-installed`` leaves the
    interpreter's own install alone. Only stream_doctor itself is installed: what mypy needs.
    """
    if importlib.util.find_spec("mypy") is None:
        pytest.skip("mypy is not installed (the test extra has it)")
    base = tmp_path_factory.mktemp("editable")
    tree = base / "stream-doctor"
    shutil.copytree(ROOT, tree, ignore=NOT_SOURCES, symlinks=True)
    venv = base / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    install = ["install", "-q", "--no-deps", "--no-build-isolation", "--no-index", "--ignore-installed"]
    subprocess.run(
        [sys.executable, "-m", "pip", *install, "--prefix", str(venv), "-e", str(tree)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    return venv


def _mypy_strict(venv: Path, scripts: dict[str, str], folder: Path) -> subprocess.CompletedProcess[str]:
    """``mypy --strict`` on a user's scripts, run outside the tree, finding packages as the venv's Python does."""
    folder.mkdir()
    for name, text in scripts.items():
        (folder / name).write_text(text)
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--no-incremental",
            "--python-executable",
            str(venv / "bin" / "python"),
        ]
        + sorted(scripts),
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_an_editable_install_type_checks_the_docs_api_examples_strictly(editable: Path, tmp_path: Path) -> None:
    """docs/api.md's examples are what a user's script does; after ``pip install -e .`` mypy finds
    the package (not an import hook it cannot follow) and they pass ``--strict``."""
    blocks = re.findall(r"```python\n(.*?)```", (ROOT / "docs" / "api.md").read_text(encoding="utf-8"), re.S)
    scripts = {f"example_{number}.py": block for number, block in enumerate(blocks, 1)}
    result = _mypy_strict(editable, scripts, tmp_path / "user")
    assert result.returncode == 0, result.stdout
    assert f"no issues found in {len(scripts)} source files" in result.stdout


def test_an_editable_install_is_typed_so_mypy_catches_a_misuse(editable: Path, tmp_path: Path) -> None:
    """The near miss: the package is not merely found (which ``Any`` would also pass) but typed."""
    script = 'from stream_doctor import replay\n\nfailed: str = replay("capture.sse").failed\n'
    result = _mypy_strict(editable, {"user.py": script}, tmp_path / "user")
    assert result.returncode == 1
    assert 'user.py:3: error: Incompatible types in assignment (expression has type "bool"' in result.stdout
    assert "import-not-found" not in result.stdout


def test_docs_api_md_names_exactly_what_all_exports() -> None:
    page = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    (sentence,) = re.findall(r"exports exactly what its `__all__` names: (.*?)\. The", page, re.S)
    assert sorted(re.findall(r"`(\w+)`", sentence)) == sorted(stream_doctor.__all__)
