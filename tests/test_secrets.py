"""Captures hold credentials; no report, in any format, and no converted envelope may print one.

The fixtures below carry fake but real-looking keys in every place captures keep them: the
``Authorization``, ``x-api-key``, ``x-goog-api-key`` and ``cookie`` headers, ``set-cookie`` in a
response, a SigV4 signature and session token, and keys in URLs (Gemini's ``key=``, a telemetry
``api_key=``). They are redacted when the capture is read, so nothing downstream sees them.
"""

from __future__ import annotations

import contextlib
import shutil
from pathlib import Path

import pytest

from stream_doctor.check.run import execute, prepare
from stream_doctor.engine import convert, replay
from stream_doctor.options import CheckOptions, Options
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
    from stream_doctor.capture.exchange import redact_headers, redact_url

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
