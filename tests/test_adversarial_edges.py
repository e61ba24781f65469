"""Issue 31's typed edges under the address-space limit of ``test_adversarial.py``: a request body whose
fields have the wrong type, in every container that records one, and the ``--client`` crashes. Each
attack is the CLI in a subprocess answering with findings (never "internal error", never a traceback)
within the memory bound, beside a near miss that still reads as before. The proxy's rows run the real
proxy under an address-space limit in ``tests/record/test_proxy_edges.py``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT
from tests.request_bodies import rewritten, set_field
from tests.test_adversarial import PEAK_BOUND_KB, run_cli

#: each attack run by the CLI in a subprocess under an address-space limit
pytestmark = [pytest.mark.slow]

#: A capture of each container that records a request body, and the field its reader reads (issue 31's list).
CONTAINERS = [
    ("fixtures/conversations/envelope_two_turns.jsonl", ("tools",)),
    ("fixtures/conversations/anthropic_text_before_result.har", ("messages",)),
    ("fixtures/conversations/anthropic_two_turns.yaml", ("messages",)),
    ("fixtures/conversations/gemini_response_by_name.yaml", ("contents",)),
    ("fixtures/conversations/anthropic_req_llm_transcript.json", ("tools",)),  # ReqLLM canonical_json.tools
    ("fixtures/conversations/anthropic_mastra_recording_chunks.json", ("messages",)),  # Mastra body.messages
    ("fixtures/conversations/responses_session_records.json", ("tools",)),  # SessionRecords RequestBody.tools
    ("fixtures/conversations/openai_llama_stack_recording.json", ("tools",)),  # llama-stack body.tools
]


def _written(tmp_path: Path, name: str, path: tuple[Any, ...], value: Any) -> Path:
    data = rewritten(name, (ROOT / name).read_bytes(), lambda body: set_field(body, path, value))
    assert data is not None, name
    out = tmp_path / Path(name).name
    out.write_bytes(data)
    return out


@pytest.mark.parametrize(("name", "path"), CONTAINERS, ids=[Path(n).name for n, _ in CONTAINERS])
def test_a_request_field_of_the_wrong_type_is_a_finding_in_every_container(
    tmp_path: Path, name: str, path: tuple[Any, ...]
) -> None:
    expected = run_cli("replay", name, "--format", "json")
    for value in (True, 7):
        ran = run_cli("replay", str(_written(tmp_path, name, path, value)), "--format", "json")
        assert ran.code == expected.code and "internal error" not in ran.err, ran.err
        found = [(f["code"], f["message"]) for f in json.loads(ran.out)["findings"]]
        assert (("SD001", f"the request's {path[0]} is not a list: read as none")) in found
        # the streams' findings are still reported (those of the requests' pairing and schemas read the field)
        before = {f["code"] for f in json.loads(expected.out)["findings"] if f["code"][:3] not in ("SD6", "SD7")}
        assert before <= {code for code, _ in found}
        assert ran.peak_kb < PEAK_BOUND_KB
    near = run_cli("replay", str(_written(tmp_path, name, path, [])), "--format", "json")  # a list: no SD001
    assert near.code == 0 or near.code == expected.code
    assert not any(f["code"] == "SD001" for f in json.loads(near.out)["findings"])


def _anthropic_call(arguments: str) -> bytes:
    from tests.clients.test_library_agreement import _anthropic_call as call

    return call(arguments)


@pytest.mark.parametrize("client", ["anthropic-python", "anthropic-typescript", "all"])
def test_arguments_nested_5000_deep_through_the_client_profiles(tmp_path: Path, client: str) -> None:
    deep = tmp_path / "deep.sse"
    deep.write_bytes(_anthropic_call("[" * 5000))
    ran = run_cli("replay", str(deep), "--client", client)
    assert ran.code == 1 and "SD201" in ran.out and "internal error" not in ran.err, ran.err
    assert ("SD805" in ran.out) == (client != "anthropic-typescript")  # jiter raises past 201 levels; V8 reads on
    assert ran.peak_kb < PEAK_BOUND_KB
    near = tmp_path / "near.sse"
    near.write_bytes(_anthropic_call("[" * 201))  # the near miss: jiter reads 201 levels
    ran = run_cli("replay", str(near), "--client", client)
    assert "SD805" not in ran.out and "internal error" not in ran.err, ran.err


@pytest.mark.parametrize("index", [[], {}, 0])
def test_a_tool_call_index_that_is_no_number_through_pydantic_ai(tmp_path: Path, index: Any) -> None:
    from tests.clients.test_library_agreement import _chat_call

    path = tmp_path / "index.sse"
    path.write_bytes(_chat_call(index))
    ran = run_cli("replay", str(path), "--client", "pydantic-ai")
    assert "internal error" not in ran.err, ran.err
    raises = "pydantic-ai" in ran.out and "would raise TypeError" in ran.out
    assert raises == (index != 0)  # the near miss: an integer index is read
    assert ran.peak_kb < PEAK_BOUND_KB
