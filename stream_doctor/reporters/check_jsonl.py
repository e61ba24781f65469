"""JSON Lines of ``check``: one ``finding`` line per finding of every capture (with its ``capture``
path and how check judged it: ``status`` expected, failure or below-fail-on), then one ``summary``
line, last, so a reader knows the output is complete. A replay's are ``jsonl.py``'s.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterator

from stream_doctor.reporters import RenderOptions
from stream_doctor.reporters.jsonl import lined

if TYPE_CHECKING:
    from stream_doctor.check.result import CheckResult


def render(result: CheckResult, options: RenderOptions) -> str:
    return b"".join(pieces(result, options)).decode()


def pieces(result: CheckResult, options: RenderOptions) -> Iterator[bytes]:
    """The lines, each serialised when its turn comes."""
    return lined(lines(result))


def lines(result: CheckResult) -> Iterator[dict[str, Any]]:
    """The objects, one per line, in order."""
    for capture in result.captures:
        for finding in capture.reported:
            yield {
                "type": "finding",
                "capture": capture.path,
                "status": capture.status(finding),
                **finding.to_dict(),
            }
    yield {"type": "summary", "fail_on": result.fail_on.label, "failed": result.failed, "summary": result.summary()}
