"""Shared test fixtures: run the pipeline from the repository root, render reports reproducibly."""

from __future__ import annotations

import functools
import os
import ssl
from collections.abc import Collection
from dataclasses import replace
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
#: Real recordings of other projects (never copied into the project), beside the repository as
#: ``../shared/corpus``, or where ``STREAM_DOCTOR_CORPUS`` says (a worktree, another checkout).
CORPUS = Path(os.environ.get("STREAM_DOCTOR_CORPUS") or ROOT.parent / "shared" / "corpus")
#: What a test that needs the corpus says when it skips.
NO_CORPUS = f"the shared capture corpus is not at {CORPUS} (set STREAM_DOCTOR_CORPUS to where it is)"


def fixture_files(
    *folders: str,
    suffixes: Collection[str] | None = None,
    check_tree: bool = False,
    notes: bool = False,
    sidecars: bool = False,
    max_size: int | None = None,
) -> list[Path]:
    """The files under ``fixtures/``, absolute and sorted: the one enumeration every test of "each fixture" uses.

    Of ``folders`` (``anthropic``, ``conversations`` …; every folder when none is named), whose names end in one
    of ``suffixes`` (any when None), no larger than ``max_size`` bytes; ``fixtures/check-tree/`` (``check``'s
    small project, tested in tests/check/) only with ``check_tree``, the folders' ``README.md`` only with
    ``notes``, the TOML files (the check tree's configuration and its ``*.expect.toml`` expectation sidecars)
    only with ``sidecars``.
    """
    roots = [FIXTURES / folder for folder in folders] if folders else [FIXTURES]
    return sorted(
        path
        for root in roots
        for path in root.rglob("*")
        if path.is_file()
        and (check_tree or "check-tree" not in path.relative_to(FIXTURES).parts)
        and (notes or path.name != "README.md")
        and (sidecars or path.suffix != ".toml")
        and (suffixes is None or path.name.endswith(tuple(suffixes)))
        and (max_size is None or path.stat().st_size <= max_size)
    )


def corpus_files(*folders: str, suffixes: Collection[str] | None = None, notes: bool = False) -> list[Path]:
    """The files of the shared corpus (``CORPUS``), absolute and sorted, none when it is absent: the one
    enumeration every test of "each corpus capture" uses, as ``fixture_files`` is of the fixtures.

    Of ``folders`` (paths under the corpus, such as ``vercel-ai/packages/mistral``; the whole corpus when none
    is named), whose names end in one of ``suffixes`` (any when None); its ``README.md`` only with ``notes``.
    """
    roots = [CORPUS / folder for folder in folders] if folders else [CORPUS]
    return sorted(
        path
        for root in roots
        if root.is_dir()
        for path in root.rglob("*")
        if path.is_file()
        and (notes or path.name != "README.md")
        and (suffixes is None or path.name.endswith(tuple(suffixes)))
    )


def first_in_the_inner_loop(
    values: Collection[object], ids: Collection[str] | None = None, *, several: bool = False
) -> list[object]:
    """``values`` as parameters of a test that starts the CLI in a child process per value (about half a second
    of CPU each): the first runs in the inner loop, the rest, each a case of the same check, are marked slow.
    With ``several``, each value is the tuple of a case's arguments (a parametrize of several names)."""
    names = list(ids) if ids is not None else [None] * len(values)
    return [
        pytest.param(*(value if several else (value,)), id=name, marks=[pytest.mark.slow] if number else [])
        for number, (value, name) in enumerate(zip(values, names, strict=True))
    ]


@functools.cache
def plain_http_tls() -> ssl.SSLContext:
    """httpx's default TLS settings, built once per session, for the ``verify`` of a test's httpx client: loading
    the CA bundle is most of what a client costs (45 ms of CPU each), and the tests' requests are plain HTTP on
    loopback, where the settings never apply."""
    import httpx

    return httpx.create_ssl_context()


#: The fixtures that need more than the Python packages (the Node harness and its npm packages, a Chromium,
#: a Dask cluster): a test that uses one is ``external`` wherever it is (pyproject.toml registers the markers).
EXTERNAL_FIXTURES = frozenset({"node_harness", "browser", "cluster"})


@pytest.hookimpl(tryfirst=True)  # before ``-m`` deselects by marker
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if EXTERNAL_FIXTURES.intersection(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.external)


@pytest.fixture(autouse=True)
def _at_repository_root(monkeypatch: pytest.MonkeyPatch) -> None:
    """Reports carry paths as the user typed them; tests type them relative to the root."""
    monkeypatch.chdir(ROOT)


def render_terminal(report: object, width: int = 110, call: str | None = None, timeline: bool = False) -> str:
    from stream_doctor.reporters import RenderOptions, terminal

    if call is not None:
        report = replace(report, selected=call)  # type: ignore[type-var]
    return terminal.render(report, RenderOptions(width=width, timeline=timeline))
