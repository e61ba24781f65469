"""The severity contract (docs/severity.md): every rule says why it has its severity, and rules that claim how
an API reacts check that claim against the answer the capture recorded."""

from __future__ import annotations

from stream_doctor.engine.pipeline import replay
from stream_doctor.rules import RULES
from stream_doctor.values.findings import Severity
from stream_doctor.values.options import Options
from tests.conftest import ROOT


def test_every_rule_states_its_severity_and_why() -> None:
    for r in RULES.values():
        reasoning = r.sections()["Severity"]
        assert reasoning.split(".")[0].split()[0].strip(",") in ("error", "warning", "info"), r.code
        assert r.severity.label in reasoning.split(".")[0], (r.code, "the default severity comes first")


def test_the_contract_is_written_down_and_linked() -> None:
    doc = (ROOT / "docs" / "severity.md").read_text()
    for heading in ("## error", "## warning", "## info"):
        assert heading in doc
    assert "docs/severity.md" in (ROOT / "README.md").read_text()


def _severities(name: str, code: str) -> list[Severity]:
    report = replay(f"fixtures/{name}", Options())
    return [f.severity for f in report.findings if f.code == code]


def test_a_rejection_the_capture_shows_stays_an_error() -> None:
    # The follow-up of these cassettes got the provider's 400.
    assert _severities("conversations/anthropic_result_missing.yaml", "SD602") == [Severity.ERROR]
    assert _severities("conversations/openai_tool_message_after_user.yaml", "SD604") == [Severity.ERROR]
    assert _severities("conversations/responses_item_id_as_call_id.yaml", "SD605") == [Severity.ERROR]


def test_a_request_the_capture_shows_accepted_is_info() -> None:
    # The follow-up got a 200 and a normal streamed answer: "the provider rejects it" is not what happened,
    # and no client breaks on a request the API accepted (issue 33)
    report = replay("fixtures/conversations/anthropic_duplicate_result.yaml", Options())
    (finding,) = [f for f in report.findings if f.code == "SD603"]
    assert finding.severity is Severity.INFO
    assert "the capture shows the API accepted this request" in finding.message


def test_a_converted_capture_keeps_the_status_that_proves_the_rejection(tmp_path: object) -> None:
    from pathlib import Path

    from stream_doctor.engine.convert import convert

    envelope = Path(str(tmp_path)) / "converted.jsonl"
    envelope.write_bytes(convert("fixtures/conversations/responses_item_id_as_call_id.yaml", Options()))
    assert b'"status":400' in envelope.read_bytes()
    report = replay(str(envelope), Options())
    assert [f.severity for f in report.findings if f.code == "SD605"] == [Severity.ERROR]


def test_an_item_id_the_api_accepted_is_info() -> None:
    # chatlas-style history (store: false): the function_call and its output both carry the fc_ item id as
    # call_id, the API pairs them and answers normally; nothing broke, so not a warning.
    report = replay("fixtures/conversations/responses_item_id_echoed_accepted.yaml", Options())
    (finding,) = [f for f in report.findings if f.code == "SD605"]
    assert finding.severity is Severity.INFO
    assert "the capture shows the API accepted this request" in finding.message


def test_every_warning_rule_answers_what_if_the_request_asked_for_it() -> None:
    """docs/severity.md: anything the request itself asked for is at most info. Every warning rule says,
    in its Severity section, whether a request setting can explain what it reports (and what it does then)."""
    for r in RULES.values():
        if r.severity is Severity.WARNING:
            assert "What if the request asked for this?" in r.sections()["Severity"], r.code


def test_a_deviation_no_widely_used_client_breaks_on_is_info() -> None:
    # A later fragment's "name": "" (SD505): openai-python appends it, openai-node ignores it, LangChain,
    # LiteLLM and the AI SDK keep the first name; a late name stays a warning (the AI SDK threw on it).
    assert _severities("mistral/incremental_call_blank_name.sse", "SD505") == [Severity.INFO]
    assert _severities("openai/name_arrives_late.sse", "SD505") == [Severity.WARNING]
    # A call_id that output_item.done restates differently (SD511): the AI SDK emits the call at
    # output_item.done with its call_id; openai-python's final response is response.completed's.
    assert _severities("openai-responses/call_id_rewritten.sse", "SD511") == [Severity.INFO]
    # No delta, the input only in function_call_arguments.done (SD518): both read the completion event.
    assert set(_severities("openai-responses/only_done_no_deltas.sse", "SD518")) == {Severity.INFO}
    # A streamed Gemini call that ends without the empty functionCall part (SD521): the AI SDK finalizes it.
    assert set(_severities("gemini/streamed_args_missing_terminal.sse", "SD521")) == {Severity.INFO}
