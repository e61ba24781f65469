"""``stream-doctor fixture``: the pytest module written beside a minimized, redacted capture.

The capture was recorded while the application had the bug, so it shows the finding for as long as
it is this capture. The test asserts it is clean under the project's pytest plugin
(``stream_doctor.assert_clean``, at the kept findings' severity): it fails today, naming the finding,
and passes once the application's accumulator is fixed and the same scenario, recorded again from
the fixed application, is minimized over this file. What it guards from then on is the fix.
"""

from __future__ import annotations

import json
import keyword
import os
import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from stream_doctor.minimizer.run import Minimized

_TEMPLATE = '''"""Regression test for {codes} ({names}), from a production capture.

Written by `stream-doctor fixture`: {fixture} is {source} minimized to {keep}
({size_before:,} -> {size_after:,} bytes) and redacted. It was recorded while the application
had the bug, so this test fails for as long as the bug is in the capture. Once the application is
fixed, record the same scenario again and save it over {fixture} (`stream-doctor minimize NEW
--redact` cuts it down when it shows findings you keep); the test then passes and guards the fix.
To keep the suite green until then, mark it `@pytest.mark.xfail(strict=True)`.
"""

from pathlib import Path

CAPTURE = Path(__file__).with_name({fixture_literal})


def test_{function}_is_clean(stream_doctor):
    stream_doctor.assert_clean(CAPTURE, fail_on="{fail_on}")
'''


def module_path(fixture: str) -> str:
    """Where the test goes: beside the capture, ``test_<its name>.py``."""
    folder, name = os.path.split(fixture)
    return os.path.join(folder, f"test_{_identifier(os.path.splitext(name)[0])}.py")


def module_source(fixture: str, source: str, result: Minimized) -> str:
    """The pytest module for ``fixture`` (the minimized capture, written beside the test)."""
    codes = sorted({finding.code for finding in result.kept})
    names = sorted({finding.name for finding in result.kept})
    lowest = min(finding.severity for finding in result.kept)
    name = os.path.basename(fixture)
    return _TEMPLATE.format(
        codes=", ".join(codes),
        names=", ".join(names),
        source=os.path.basename(source),
        keep=",".join(codes),
        fixture=name,
        fixture_literal=json.dumps(name),
        size_before=result.size_before,
        size_after=result.size_after,
        function=_identifier(os.path.splitext(name)[0]),
        fail_on=lowest.label,
    )


def _identifier(text: str) -> str:
    name = re.sub(r"[^a-z0-9_]+", "_", text.lower()).strip("_") or "capture"
    if name[0].isdigit() or keyword.iskeyword(name):
        name = f"capture_{name}"
    return name
