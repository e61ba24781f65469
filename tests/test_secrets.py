"""Captures hold credentials; no report, in any format, and no converted envelope may print one.

The fixtures below carry fake but real-looking keys in every place captures keep them: the
``Authorization``, ``x-api-key``, ``x-goog-api-key`` and ``cookie`` headers, ``set-cookie`` in a
response, a SigV4 signature and session token, and keys in URLs (Gemini's ``key=``, a telemetry
``api_key=``). They are redacted when the capture is read, so nothing downstream sees them.
"""

from __future__ import annotations

import contextlib
import json
import re
import shutil
from pathlib import Path

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stream_doctor.check.run import execute, prepare
from stream_doctor.engine.convert import convert
from stream_doctor.engine.pipeline import replay
from stream_doctor.reporters import (
    RenderOptions,
    check_json,
    check_terminal,
    github,
    json_report,
    junit,
    markdown,
    sarif,
    terminal,
)
from stream_doctor.values.command_options import CheckOptions
from stream_doctor.values.options import Options
from tests.conftest import FIXTURES

WITH_SECRETS = {
    "conversations/gemini_secrets.har": [
        "AIzaSyD3x4mPl3K3yN0tR3alBuTL00ksL1k3It",
        "g.a000qAhY3x4mPl3S3ss10nC00k13V4lu3",
        "sidts-CjEB7pHptExampleExample",
        "ya29.a0AfB_byExampleAccessTokenValue0123456789",
        "phc_Xk2mQ9vR7tL3pN8wB1cZ5yF0dH4jG6sA",
    ],
    "conversations/bedrock_two_turns.har": [
        "AKIAZ7XQ3MNB4EXAMPLE",
        "3f1c9a7e5b2d8f0a6c4e1b9d7f3a5c8e0b2d4f6a8c1e3b5d7f9a0c2e4b6d8f1a",
        "IQoJb3JpZ2luX2VjEJr",
    ],
    "conversations/gateway_prefixed_ids.har": ["sk-ant-api03-Qm9vZ2x5LWJvb2dseS1ib29nbHktYm9vZ2x5"],
    "conversations/openai_echo_input_differs.har": ["sk-proj-4fV8kQ2mN7xR1tZ9yB3cD6hJ0pL5wS8aE2uG7iK4oM1nT6vX9"],
    "conversations/positional_ids_reused.yaml": ["sk-gw-7Hq2LmX9vT4pN8cR1sK6wZ3yB5dF0gJ"],
    "conversations/anthropic_unknown_tool.yaml": ["sk-ant-api03-R29waGVyLWdvcGhlci1nb3BoZXIt"],
}


def _assert_clean(text: str | bytes, secrets: list[str], what: str) -> None:
    data = text.decode("utf-8", "replace") if isinstance(text, bytes) else text
    leaked = [secret for secret in secrets if secret in data]
    assert not leaked, f"{what} prints {leaked}"


@pytest.mark.parametrize("name", sorted(WITH_SECRETS))
def test_the_fixture_really_holds_its_secrets(name: str) -> None:
    raw = (FIXTURES / name).read_text()
    assert all(secret in raw for secret in WITH_SECRETS[name])


@pytest.mark.parametrize("name", sorted(WITH_SECRETS))
def test_replay_reports_and_the_envelope_print_no_secret(name: str) -> None:
    secrets = WITH_SECRETS[name]
    report = replay(f"fixtures/{name}", Options(keep_events=True))
    _assert_clean(json_report.render(report, RenderOptions()), secrets, "the JSON report")
    text = terminal.render(report, RenderOptions(width=200, timeline=True))
    _assert_clean(text, secrets, "the terminal report with --timeline")
    _assert_clean(convert(f"fixtures/{name}", Options()), secrets, "the converted envelope")


def test_check_reports_print_no_secret(tmp_path: Path) -> None:
    for name in WITH_SECRETS:
        shutil.copy(FIXTURES / name, tmp_path / Path(name).name)
    with contextlib.chdir(tmp_path):
        result = execute(prepare(CheckOptions(paths=(".",), isolated=True)))
    secrets = [secret for listed in WITH_SECRETS.values() for secret in listed]
    assert len(result.captures) == len(WITH_SECRETS) and not any(c.unreadable for c in result.captures)
    for module in (check_json, sarif, junit, github, markdown):
        _assert_clean(module.render(result, RenderOptions()), secrets, module.__name__)
    _assert_clean(check_terminal.render(result, RenderOptions(width=200)), secrets, "the check terminal report")


def test_redaction_keeps_what_is_not_a_secret() -> None:
    from stream_doctor.capture.http_frames import redact_headers, redact_url

    assert redact_url("https://x.googleapis.com/v1/m:streamGenerateContent?alt=sse&key=AIzaSy123") == (
        "https://x.googleapis.com/v1/m:streamGenerateContent?alt=sse&key=[redacted]"
    )
    assert (
        redact_url("https://user:pw@host.example/path?sig=abc&x=1")
        == "https://redacted@host.example/path?sig=[redacted]&x=1"
    )
    headers = redact_headers(
        [("Authorization", "Bearer sk-1"), ("Content-Type", "application/json"), ("X-Custom-Token", "t")]
    )
    assert headers == {
        "authorization": "[redacted]",
        "content-type": "application/json",
        "x-custom-token": "[redacted]",
    }


# -- secrets the analysis must see real: tool inputs and results, response events -----------------
# tests/planted_secrets.py plants one secret in every such place; every output is searched for all.


def _planted(tmp_path: Path) -> list[Path]:
    from tests import planted_secrets

    folder = tmp_path / "captures"
    folder.mkdir()
    return planted_secrets.write_all(folder)


def _every_replay_output(path: Path) -> dict[str, str]:

    from stream_doctor.engine.redaction import redacted
    from stream_doctor.reporters import REPLAY_FORMATS, statistics

    report = redacted(replay(str(path), Options(keep_events=True)))
    outputs = {}
    for selected in (None, "1") if report.calls else (None,):  # --call 1 shows the call's fragments
        shown = report.select(selected) if selected else report
        for fmt, module in REPLAY_FORMATS.items():
            render = module.render
            outputs[f"{fmt} call={selected}"] = render(shown, RenderOptions(width=80, timeline=True, max_rows=0))
    outputs["statistics"] = statistics.render(report, RenderOptions()) + statistics.render_json(report, RenderOptions())
    outputs["convert"] = convert(str(path), Options()).decode()
    return outputs


def test_no_planted_secret_in_any_replay_format_or_converted_envelope(tmp_path: Path) -> None:
    from tests.planted_secrets import SECRETS

    everything = []
    for path in _planted(tmp_path):
        for what, text in _every_replay_output(path).items():
            _assert_clean(text, list(SECRETS), f"{path.name}: {what}")
            everything.append(text)
    joined = "\n".join(everything)
    assert "[redacted:1]" in joined and "[redacted]" in joined


def test_no_planted_secret_in_any_check_report(tmp_path: Path) -> None:

    from stream_doctor.reporters import CHECK_FORMATS
    from tests.planted_secrets import SECRETS

    paths = _planted(tmp_path)
    with contextlib.chdir(tmp_path):
        result = execute(prepare(CheckOptions(paths=("captures",), isolated=True)))
    assert len(result.captures) == len(paths) and not any(c.unreadable for c in result.captures)
    for fmt, module in CHECK_FORMATS.items():
        render = module.render
        _assert_clean(render(result, RenderOptions(width=80, max_rows=0)), list(SECRETS), f"check --report {fmt}")


def test_the_rules_compare_the_real_values(tmp_path: Path) -> None:
    """Masking is for output only: an exact echo is no SD609, a changed one is, and both values
    read as different secrets in the message."""
    from stream_doctor.engine.redaction import redacted

    folder = {p.name: p for p in _planted(tmp_path)}
    exact = replay(str(folder["planted.har"]), Options())
    assert "SD609" not in {f.code for f in exact.findings}  # the history echoes the input, secrets and all
    changed = redacted(replay(str(folder["planted_openai.har"]), Options()))
    (sd609,) = [f for f in changed.findings if f.code == "SD609"]
    sent, streamed = re.findall(r'\{"city":"Paris","token":"(\[redacted:\d+\])"\}', sd609.message)
    assert sent != streamed  # two different secrets read as two different labels
    executed = redacted(replay(str(folder["planted_envelope.jsonl"]), Options()))
    (sd103,) = [f for f in executed.findings if f.code == "SD103"]
    assert "keys differing: password" in sd103.message and "sk-stream-t" not in sd103.message  # clipped, still masked
    call = executed.calls[0]
    masked = re.fullmatch(
        r'\{"query": "Lisbon", "api_key": "(\[redacted:\d+\])", "auth": \{"token": "(\[redacted:\d+\])"\}\}',
        call.raw_arguments,
    )
    assert masked and masked.group(1) != masked.group(2), call.raw_arguments
    assert "".join(call.fragment_texts) == call.raw_arguments and len(call.fragment_texts) == 4
    assert call.arguments["auth"]["token"] == masked.group(2)


def test_a_converted_envelope_replays_to_the_same_findings(tmp_path: Path) -> None:
    for path in _planted(tmp_path):
        envelope = tmp_path / f"{path.name}.envelope.jsonl"
        envelope.write_bytes(convert(str(path), Options()))
        original = sorted(f.code for f in replay(str(path), Options()).findings)
        assert sorted(f.code for f in replay(str(envelope), Options()).findings) == original, path.name


def test_fragments_keep_joining_to_the_masked_arguments() -> None:
    from stream_doctor.engine.redaction import SecretRedactor

    redactor = SecretRedactor(["sk-long-secret-value", "pw-other"])
    texts = ('{"a": "sk-lo', "ng-sec", 'ret-value", "p": "pw-other"}')
    masked = redactor.fragments("".join(texts), texts)
    assert masked == ('{"a": "[redacted:1]', "", '", "p": "[redacted:2]"}')
    assert redactor.text("sent sk-long-secr… then …ret-value") == "sent [redacted:1]… then …[redacted:1]"
    assert redactor.text("no secret here, 1234 is short") == "no secret here, 1234 is short"
    assert redactor.value({"Api-Key": 12345678, "nested": {"token": "x"}, "note": "pw-other!"}) == {
        "Api-Key": "[redacted]",  # a credential field whose value no rule saw: plain [redacted]
        "nested": {"token": "[redacted]"},
        "note": "[redacted:2]!",
    }


def test_the_pytest_plugin_prints_no_planted_secret(tmp_path: Path) -> None:
    """A test log is output too: the fixture's reports and its failure text are masked like the CLI's."""
    from stream_doctor.pytest_plugin import StreamDoctor
    from tests.planted_secrets import SECRETS

    paths = {p.name: p for p in _planted(tmp_path)}
    doctor = StreamDoctor(tmp_path)
    for name in ("planted.har", "planted_openai.har", "planted_envelope.jsonl"):
        _assert_clean(doctor.terminal_report(paths[name]), list(SECRETS), f"terminal_report({name})")
        _assert_clean(
            json.dumps(doctor.json_report(paths[name]), ensure_ascii=False), list(SECRETS), f"json_report({name})"
        )
        with pytest.raises(pytest.fail.Exception) as failed:
            doctor.assert_clean(paths[name], expect=["SD999"])  # never met: the failure text is printed
        _assert_clean(str(failed.value), list(SECRETS), f"assert_clean({name}) failing")
        assert "[redacted:" in str(failed.value) or name == "planted.har"
    assert doctor.replay(paths["planted_openai.har"]).calls[0].arguments["token"] == "tk-openai-stream-args"


# -- a request body is read as sent and redacted where something is written ------------------------


@pytest.mark.parametrize("name", ["planted.har", "planted.yaml", "planted_envelope.jsonl"])
def test_the_request_body_is_read_as_sent_and_every_writer_redacts_it(tmp_path: Path, name: str) -> None:
    """The rules (and the library API) see a request body's credential fields as sent; the report
    every format renders, and the envelope ``convert`` writes, show ``[redacted]`` in their place."""
    from stream_doctor.engine.redaction import redacted
    from tests.planted_secrets import BODY_CREDENTIALS

    path = {p.name: p for p in _planted(tmp_path)}[name]
    report = replay(str(path), Options(keep_events=True))
    body = report.turns[0].request.body  # type: ignore[union-attr]
    assert body["api_key"] == BODY_CREDENTIALS["api_key"]  # real while the analysis runs
    shown = redacted(report).turns[0].request.body  # type: ignore[union-attr]
    assert shown["api_key"] == "[redacted]" and shown["metadata"]["client"]["token"] == "[redacted]"
    assert shown["metadata"]["client"].keys() == body["metadata"]["client"].keys()  # the near miss: only values go
    assert body["api_key"] == BODY_CREDENTIALS["api_key"]  # masking the report did not write into the replay's body
    written = [orjson.loads(line) for line in convert(str(path), Options()).splitlines()]
    (request,) = [record for record in written if record["sd"] == "request"][:1]
    assert request["body"]["api_key"] == "[redacted]" and request["body"]["model"] == body["model"]


def test_minimize_and_fixture_write_no_planted_secret(tmp_path: Path) -> None:
    """A HAR file is minimized as an envelope (``convert``), with the request history the kept SD609
    needs: what ``minimize`` returns and what ``fixture`` writes (the capture and its test) hold no
    planted secret, request body credentials included."""
    from typer.testing import CliRunner

    from stream_doctor import api
    from stream_doctor.cli import app
    from tests.planted_secrets import SECRETS

    path = {p.name: p for p in _planted(tmp_path)}["planted_openai.har"]
    minimized = api.minimize(str(path), "SD609", max_seconds=30)
    assert minimized.converted and b'"sd":"request"' in minimized.data
    _assert_clean(minimized.data, list(SECRETS), "minimize")
    out = tmp_path / "fixtures" / "leak.jsonl"
    out.parent.mkdir()
    result = CliRunner().invoke(app, ["fixture", str(path), "--keep", "SD609", "-o", str(out)])
    assert result.exit_code == 0, result.output
    for written in out.parent.iterdir():
        _assert_clean(written.read_bytes(), list(SECRETS), f"fixture: {written.name}")
    _assert_clean(result.output, list(SECRETS), "fixture's summary")


def test_a_short_credential_in_a_request_body_is_written_redacted_too(tmp_path: Path) -> None:
    """Values under four characters are no secret to look for in text (``redaction.MIN_LENGTH``), so
    only the writer's own pass over the body (``redact_body``) keeps one out of a written envelope."""
    from stream_doctor.engine.redaction import redacted

    records = [
        {"sd": "header", "version": 1, "provider": "anthropic"},
        {"sd": "request", "method": "POST", "url": "https://api.anthropic.com/v1/messages",
         "body": {"model": "m", "token": "ab1", "messages": [{"role": "user", "content": "hi"}]}},
        {"sd": "event", "data": {"type": "message_start", "message": {"id": "msg_1", "role": "assistant", "content": []}}},
        {"sd": "event", "data": {"type": "message_stop"}},
    ]  # fmt: skip
    path = tmp_path / "short.jsonl"
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in records))
    assert replay(str(path), Options()).turns[0].request.body["token"] == "ab1"  # type: ignore[union-attr]
    assert redacted(replay(str(path), Options())).turns[0].request.body["token"] == "[redacted]"  # type: ignore[union-attr]
    written = [orjson.loads(line) for line in convert(str(path), Options()).splitlines()]
    assert written[1]["body"] == {"model": "m", "token": "[redacted]", "messages": [{"role": "user", "content": "hi"}]}


_KEYS = st.sampled_from(["api_key", "token", "input", "args", "type", "text", "content", "name", "password"])
_SCALARS = st.one_of(
    st.sampled_from(["sk-value-1", "tool_use", "function", "", "[redacted]", '{"token": "sk-in-json"}', "ab"]),
    st.integers(-2, 123456789),
    st.booleans(),
    st.none(),
)
_BODIES = st.recursive(
    _SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(_KEYS, inner, max_size=5)),
    max_leaves=25,
)


@pytest.mark.slow  # hypothesis: 400 lists of generated bodies, each searched two ways (2.7 s of CPU)
@settings(max_examples=400, deadline=None)
@given(st.lists(_BODIES, min_size=1, max_size=3))
def test_a_reports_secrets_are_found_in_the_bodies_as_the_writer_writes_them(bodies: list[object]) -> None:
    """``collect_body`` (no copy, each shared part once) finds what ``collect`` finds in each body as
    ``redact_body`` writes it, in the same order (the labels' numbers), and the values it replaces."""
    from stream_doctor.capture.http_frames import redact_body
    from stream_doctor.engine.redaction import collect, collect_body

    bodies = bodies + [bodies[0]]  # a body again: its parts are the same objects
    found: dict[str, None] = {}
    plain: set[str] = set()
    seen: set[tuple[int, bool]] = set()
    expected: dict[str, None] = {}
    replaced: set[str] = set()
    for body in bodies:
        collect_body(body, found, plain, seen)
        collect(redact_body(body, replaced), expected)
    assert list(found) == list(expected)
    assert plain == replaced
