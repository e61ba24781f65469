"""A minimized capture still reads as the original: each call keeps its tool's name and its id its
provider's prefix (docs/minimize.md), whatever key the provider writes them under; ``--redact`` masks
both (a tool's name is a name however it is keyed)."""

from __future__ import annotations

import re

import pytest

import stream_doctor
from stream_doctor.minimizer.whitelist import is_masked
from stream_doctor.values.findings import Severity
from tests.conftest import FIXTURES

#: One capture of each way a provider writes a call's name and id (``name``, the AI SDK's ``toolName``;
#: ``id``, ``call_id``, ``toolUseId``, ``toolCallId``; Cohere's ids begin with the tool's name).
CASES = [
    "anthropic/empty_input_bug.jsonl",
    "openai/id_changes_within_call.sse",
    "openai-responses/done_arguments_differ.sse",
    "bedrock/converse_max_tokens_mid_call.jsonl",
    "cohere/max_tokens_mid_call.jsonl",
    "ollama/stream_cut_before_done.jsonl",
    "vercel-ai/abort_mid_call.sse",
    "vercel-ai/data_stream_v4_error_mid_call.txt",
]
_PREFIX = re.compile(r"[A-Za-z]{1,12}[_-]")


def _calls(data: bytes, name: str) -> tuple[list[tuple[str | None, str | None]], list[str]]:
    with stream_doctor.replay(data, name=name) as report:
        keep = sorted({f.code for f in report.findings if f.severity >= Severity.WARNING})
        return [(call.call_id, call.name) for call in report.calls], keep


@pytest.mark.parametrize("fixture", CASES)
def test_a_minimized_call_keeps_its_tool_name_and_its_id_prefix(fixture: str) -> None:
    data = (FIXTURES / fixture).read_bytes()
    before, keep = _calls(data, fixture)
    names = {name for _, name in before}
    prefixes = {match.group() for call_id, _ in before if call_id and (match := _PREFIX.match(call_id))}

    result = stream_doctor.minimize(data, keep, name=fixture)

    after, _ = _calls(result.data, fixture)
    assert after
    for call_id, name in after:
        assert name in names  # "writeFile", never "w"
        assert call_id is not None and any(call_id.startswith(prefix) for prefix in prefixes)


@pytest.mark.parametrize("fixture", ["vercel-ai/abort_mid_call.sse", "anthropic/empty_input_bug.jsonl"])
def test_redact_masks_the_tool_name_and_the_id_past_its_prefix(fixture: str) -> None:
    data = (FIXTURES / fixture).read_bytes()
    before, keep = _calls(data, fixture)

    result = stream_doctor.minimize(data, keep, name=fixture, redact=True)

    (call_id, name), *_ = _calls(result.data, fixture)[0]
    assert name is not None and name not in {name for _, name in before} and is_masked(name)
    assert call_id is not None and _PREFIX.match(call_id) and "names" in result.replaced
