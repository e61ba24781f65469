"""A ``content_block_start`` reused an index that was already started in this message.

What it checks:
    Within one message each block index is started once.

Why it matters:
    Clients key buffers by index: the second block's fragments are appended to the first one's,
    producing ``{...}{...}`` (two calls merged), or the first call is lost.

Severity:
    error. Clients that key by index (anthropic-sdk-python, the AI SDK) merge two blocks into one
    buffer: a wrong call.

Example:
    content_block_start {"index":1,"content_block":{"type":"tool_use","id":"toolu_A",...}}
    content_block_start {"index":1,"content_block":{"type":"tool_use","id":"toolu_B",...}}

How to fix:
    Fix the server or translator to number blocks by their position in the message.
"""

from __future__ import annotations

from typing import Iterator

from stream_doctor.accumulate.irregularities import IndexReused
from stream_doctor.accumulate.stream import AccumulatedStream
from stream_doctor.rules.base import Rule, rule
from stream_doctor.rules.structure._problems import block, problems_of
from stream_doctor.values.findings import Finding, Severity


@rule("A block start reused an index already started in the message", Severity.ERROR, reads=(IndexReused,))
def check(stream: AccumulatedStream, self: Rule) -> Iterator[Finding]:
    return problems_of(
        stream,
        self,
        lambda problem: f"{block(problem.key)} was started again (first started at line {problem.previous.line})",
        "Each block needs its own index; index-keyed clients merge the two blocks",
        lambda problem: [("first start", problem.previous)],
    )
