"""``record --client``: once an exchange is written, the installed library is run over the envelope on a
thread of its own, and its verdict is the live finding, as ``replay --client`` gives on the written file;
the live thread never waits for it, a run that does not answer by the stop leaves the model's verdict,
and without the library the model answers and says why."""

from __future__ import annotations

import time
from pathlib import Path

import httpx2
import pytest

from stream_doctor import replay
from stream_doctor.record import live as live_module
from stream_doctor.values.options import Options
from tests.clients.test_client_runs import _stand_in
from tests.record.proxy_server import RunningProxy
from tests.record.test_live import found, wait_for
from tests.record.upstream import FakeUpstream

#: the recording proxy before a loopback upstream; the installed libraries run in child processes (6 s of CPU for 3 tests)
pytestmark = [pytest.mark.external, pytest.mark.slow]

pytest.importorskip("aiohttp")

#: the SDK raises IndexError at the delta for a block it never started: SD805
RAISES = Path("fixtures/anthropic/delta_for_unstarted_block.sse")
RAN = "installed anthropic 2.12.0 (run) would raise IndexError"
MODELLED = "model of anthropic-python 2.12.0 would raise IndexError"


def _record(tmp_path: Path, options: Options) -> tuple[RunningProxy, Path]:
    out = tmp_path / "out"
    with (
        FakeUpstream(RAISES.read_bytes()) as upstream,
        RunningProxy(upstream.url, str(out), options=options) as proxy,
        httpx2.Client(base_url=proxy.url, timeout=30) as client,
    ):
        client.post("/v1/messages", json={"model": "m", "stream": True, "messages": []}).read()
        wait_for(lambda: len(proxy.lines) == 1)
    [envelope] = sorted(out.glob("*.jsonl"))
    return proxy, envelope


def test_the_installed_library_gives_the_live_verdict(tmp_path: Path) -> None:
    proxy, envelope = _record(tmp_path, Options(clients=("anthropic-python",)))  # drained on exit: runs included
    [conversation] = proxy.live.conversations
    (raised,) = [f for f in conversation.findings if f.code == "SD805"]
    assert raised.message.startswith(RAN)
    expected = replay(str(envelope), clients="anthropic-python").findings  # the run, on the written file
    assert found(conversation.findings) == found(expected)
    assert "1 exchange" in proxy.live_lines[-1]  # the summary comes after the run's finding


def test_without_the_library_the_model_answers_and_says_why(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _stand_in(tmp_path, monkeypatch, "anthropic", "raise ImportError('not installed here')\n")
    proxy, _ = _record(tmp_path, Options(clients=("anthropic-python",)))
    [conversation] = proxy.live.conversations
    (raised,) = [f for f in conversation.findings if f.code == "SD805"]
    assert raised.message.startswith(MODELLED)
    assert "`pip install anthropic` to run it" in raised.hint


def test_a_run_that_has_not_answered_by_the_stop_leaves_the_models_verdict(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _stand_in(tmp_path, monkeypatch, "anthropic", "import time\ntime.sleep(600)\n")
    monkeypatch.setattr(live_module, "RUNS_DRAIN", 1.0)  # the stop waits 1 s for the runs
    began = time.monotonic()
    proxy, _ = _record(tmp_path, Options(clients=("anthropic-python",)))
    assert time.monotonic() - began < 30
    [conversation] = proxy.live.conversations
    (raised,) = [f for f in conversation.findings if f.code == "SD805"]
    assert raised.message.startswith(MODELLED)
    assert "the library's run had not answered by the stop; this is the model's answer" in raised.hint
    assert any("1 library runs did not answer within 1 s of the stop" in line for line in proxy.lines)
    assert proxy.live.verdicts == [] and proxy.live_lines[-1].count("1 exchange")  # the summary, last
