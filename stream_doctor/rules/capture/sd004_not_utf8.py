"""Bytes in the capture are not valid UTF-8.

What it checks:
    Every line of a text capture must be UTF-8, as SSE and JSON require.

Why it matters:
    A multi-byte character split between two network reads and decoded separately turns into
    replacement characters or a decode error: a tool argument can silently change.

Severity:
    warning. Decoding the bytes as UTF-8, as httpx's ``iter_lines`` under openai-python and
    anthropic-sdk-python does, replaces them with U+FFFD: an argument changes without any error. Not
    an error: the bytes may be outside every argument.
    What if the request asked for this? No request setting asks for bytes that are not UTF-8: SSE
    and JSON are UTF-8 by definition.

Example:
    data: {"type":"content_block_delta",...,"partial_json":"caf\\xc3"}

How to fix:
    Decode the byte stream incrementally (an incremental UTF-8 decoder, or decode only whole lines),
    never chunk by chunk; and save captures as raw bytes.
"""

from __future__ import annotations

from typing import Iterator

from stream_doctor.accumulate.stream import AccumulatedStream
from stream_doctor.rules.base import Rule, rule
from stream_doctor.rules.capture._problems import problems_of
from stream_doctor.values.findings import Finding, Severity


@rule("Capture bytes that are not valid UTF-8", Severity.WARNING, reads=("not-utf8",))
def check(stream: AccumulatedStream, self: Rule) -> Iterator[Finding]:
    return problems_of(stream, self, "Decode the stream incrementally and save captures as raw bytes")
