"""``stream-doctor fixture``: the pytest module written beside a minimized, redacted capture.

The capture was recorded while the application had the bug, so it shows the finding for as long as
it is this capture. The test asserts it is clean under the project's pytest plugin
(``stream_doctor.assert_clean``, at the kept findings' severity): it fails today, naming the finding,
and passes once the application's accumulator is fixed and the same scenario, recorded again from
the fixed application, is minimized over this file. What it guards from then on is the fix.

The module is built as a syntax tree and written by ``ast.unparse``, so the capture's name (which
may hold quotes, backslashes, line breaks or bytes that are not UTF-8) is only ever a string literal:
the module compiles for any name and runs nothing but its test. Its first line is a marker with the
digest of the rest: a module whose marker holds is one ``fixture`` wrote and nobody edited since,
which ``fixture`` may replace; any other file at that path is the user's (docs/minimize.md).
"""

from __future__ import annotations

import ast
import hashlib
import keyword
import os
import re
from typing import TYPE_CHECKING

from stream_doctor.reporters._neutral import text

if TYPE_CHECKING:
    from stream_doctor.minimizer.run import Minimized

#: The first line of every module ``fixture`` writes, before the digest of the lines after it.
MARKER = "# Written by `stream-doctor fixture`, which replaces this file while it is unedited; sha256:"

_DOCSTRING = """Regression test for {codes} ({names}), from a production capture.

Written by `stream-doctor fixture`: {fixture} is {source} minimized to {keep}
({size_before:,} -> {size_after:,} bytes) and redacted. It was recorded while the application
had the bug, so this test fails for as long as the bug is in the capture. Once the application is
fixed, record the same scenario again and save it over {fixture} (`stream-doctor minimize NEW
--redact` cuts it down when it shows findings you keep); the test then passes and guards the fix.
To keep the suite green until then, mark it `@pytest.mark.xfail(strict=True)` (the module is then
yours: `stream-doctor fixture` no longer replaces it without --force).
"""

#: The module's code: in its tree, ``CAPTURE_NAME`` and ``FAIL_ON`` become string constants and the
#: test function is named after the capture.
_BODY = """
from pathlib import Path

CAPTURE = Path(__file__).with_name(CAPTURE_NAME)


def test_capture_is_clean(stream_doctor):
    stream_doctor.assert_clean(CAPTURE, fail_on=FAIL_ON)
"""


_SERVED_DOCSTRING = """Regression test for {codes}: the application run against {fixture}, served.

Written by `stream-doctor fixture --serve`: {fixture} is {source} as an envelope
with its credentials masked (as `stream-doctor convert` writes it; nothing is cut).
The test serves it on a loopback port (`stream_doctor_server`), points every SDK's
base URL at it and calls {target}; what the application sent back is judged,
and the test fails with the verdicts while the bug is there. Once the application
is fixed it passes, and guards the fix.
"""

#: The served test's code: ``CAPTURE_NAME`` and ``TARGET`` (``module:function``) become string constants.
_SERVED_BODY = """
import importlib
from pathlib import Path

CAPTURE = Path(__file__).with_name(CAPTURE_NAME)


def test_served(stream_doctor_server, monkeypatch):
    server = stream_doctor_server(str(CAPTURE))
    for name, value in server.environment().items():
        monkeypatch.setenv(name, value)
    module, _, function = TARGET.partition(":")
    getattr(importlib.import_module(module), function)()
    assert server.worst() != "error", server.report()
"""


def module_path(fixture: str) -> str:
    """Where the test goes: beside the capture, ``test_<its name>.py``."""
    folder, name = os.path.split(fixture)
    return os.path.join(folder, f"test_{_identifier(os.path.splitext(name)[0])}.py")


def module_source(fixture: str, source: str, result: Minimized) -> str:
    """The pytest module for ``fixture`` (the minimized capture, written beside the test)."""
    codes = sorted({finding.code for finding in result.kept})
    name = os.path.basename(fixture)
    docstring = _DOCSTRING.format(
        codes=", ".join(codes),
        names=", ".join(sorted({finding.name for finding in result.kept})),
        source=text(os.path.basename(source)),  # prose for the reader: one line, whatever the name holds
        keep=",".join(codes),
        fixture=text(name),
        size_before=result.size_before,
        size_after=result.size_after,
    )
    constants = {"CAPTURE_NAME": name, "FAIL_ON": min(finding.severity for finding in result.kept).label}
    return _module(_BODY, constants, docstring, f"test_{_identifier(os.path.splitext(name)[0])}_is_clean")


def served_module_source(fixture: str, source: str, codes: list[str], target: str) -> str:
    """The pytest module that serves ``fixture`` (``source`` as a masked envelope) to ``target`` (``module:function``)."""
    name = os.path.basename(fixture)
    docstring = _SERVED_DOCSTRING.format(
        codes=", ".join(codes), fixture=text(name), source=text(os.path.basename(source)), target=text(target)
    )
    constants = {"CAPTURE_NAME": name, "TARGET": target}
    return _module(_SERVED_BODY, constants, docstring, f"test_{_identifier(os.path.splitext(name)[0])}_served")


def _module(code: str, constants: dict[str, str], docstring: str, test: str) -> str:
    """A module ``fixture`` writes: ``code`` with its placeholders as string constants, the test function
    named ``test``, the docstring first, and the marker with the digest of the rest."""
    tree = ast.fix_missing_locations(_Constants(constants).visit(ast.parse(code)))
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            node.name = test
    tree.body.insert(0, ast.Expr(ast.Constant(docstring)))
    # each statement unparsed alone, so the module has PEP 8's blank lines (two before a function)
    statements = [
        _gap(before, node) + ast.unparse(ast.Module([node], []))
        for before, node in zip([None, *tree.body], tree.body, strict=False)  # a Module of one: a docstring stays one
    ]
    body = "".join(statements).lstrip("\n") + "\n"
    return f"{MARKER}{_digest(body)}\n{body}"


def _gap(before: ast.stmt | None, node: ast.stmt) -> str:
    """The line breaks before ``node``: two blank lines before a function, none between imports, else one."""
    imports = (ast.Import, ast.ImportFrom)
    if isinstance(node, ast.FunctionDef):
        return "\n\n\n"
    return "\n" if isinstance(node, imports) and isinstance(before, imports) else "\n\n"


def refusal(fixture: str, test: str) -> str | None:
    """Why writing ``fixture`` and its ``test`` would replace a file ``fixture`` did not write (the
    one-line error, --force overrides it), or None. The test module is ``fixture``'s when its marker
    holds and it names this capture; the capture, when such a module beside it names it."""
    from stream_doctor.util.opener import UnreadableFile, read_text

    name = os.path.basename(fixture)
    try:
        module: str | None = read_text(test)
    except UnreadableFile as error:
        module = None if error.missing else ""  # a folder, a FIFO, not UTF-8: not a module of ours
    if module is not None and not written_unedited(module):
        return f"{test}: exists, and is not a test `stream-doctor fixture` wrote (or was edited since); refusing to replace it (--force does)"
    tested = tested_capture(module) if module is not None else None
    if module is not None and tested != name:
        return f"{test}: is the test of {tested}, whose name gives the same module; name this fixture differently (--force replaces it)"
    if tested is None and os.path.lexists(fixture):
        return f"{fixture}: exists, and no test `stream-doctor fixture` wrote beside it names it; refusing to replace it (--force does)"
    return None


def written_unedited(source: str) -> bool:
    """Whether ``source`` is a module ``fixture`` wrote and nobody changed since (its marker holds)."""
    first, _, body = source.partition("\n")
    return first.startswith(MARKER) and first[len(MARKER) :] == _digest(body)


def tested_capture(source: str) -> str | None:
    """The file name the ``CAPTURE`` of a module ``fixture`` wrote names (what it tests)."""
    for node in ast.parse(source).body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and node.value.args:
            named = node.value.args[0]
            if isinstance(named, ast.Constant) and isinstance(named.value, str):
                return named.value
    return None


class _Constants(ast.NodeTransformer):
    """Each placeholder name in the tree replaced by its value as a string constant."""

    def __init__(self, values: dict[str, str]) -> None:
        self.values = values

    def visit_Name(self, node: ast.Name) -> ast.expr:
        return ast.Constant(self.values[node.id]) if node.id in self.values else node


def _digest(body: str) -> str:
    return hashlib.sha256(body.encode("utf-8")).hexdigest()


def _identifier(name: str) -> str:
    identifier = re.sub(r"[^a-z0-9_]+", "_", name.lower()).strip("_") or "capture"
    if identifier[0].isdigit() or keyword.iskeyword(identifier):
        identifier = f"capture_{identifier}"
    return identifier
