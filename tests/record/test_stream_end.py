"""Recording never invents a cut: a stream that ends with the provider's last event is complete,
however the connection then stops; bytes missing before that event are a cut (SD003).

The real Anthropic and OpenAI SDKs, sync and async, through ``Recorder`` and through the recording
proxy run as ``stream-doctor record``, against a loopback upstream that writes its last event and
the end of the connection at once (tests/record/raw_upstream.py). The OpenAI SDK closes the
response at ``[DONE]``, before the body's end; both SDKs raise at an error event and close. Each
envelope is replayed: a complete stream shows the findings its capture shows on its own, and
nothing of the recorder's (no SD001, no SD003).
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Callable, Iterator

import orjson
import pytest

from stream_doctor import replay
from tests.conftest import plain_http_tls
from tests.record.raw_upstream import Framing, RawUpstream, Script

#: the recording proxy before a loopback upstream, with the real SDKs
pytestmark = [pytest.mark.external]

anthropic = pytest.importorskip("anthropic")
openai = pytest.importorskip("openai")
httpx2 = pytest.importorskip("httpx2")
pytest.importorskip("aiohttp")

FIXTURES = Path("fixtures")
ONE_CALL = {"anthropic": FIXTURES / "anthropic/one_call.sse", "openai": FIXTURES / "openai/one_call.sse"}
#: Streams that end with an error event: the SDK raises there and closes the response.
ERROR_END = {
    "anthropic": FIXTURES / "anthropic/overloaded_error_mid_stream.sse",
    "openai": FIXTURES / "openai/error_object_mid_stream.sse",
}
#: What the replay says of a stream whose connection closed cleanly just before the last event.
MISSING_END = {"anthropic": "SD303", "openai": "SD508"}  # no message_stop; finish_reason but no [DONE]
RECORDER_CODES = {"SD001", "SD003"}  # what a cut record (an unreadable, unfinished frame) shows


# -- the clients --------------------------------------------------------------------------------


def consume(sdk: str, url: str, http_client: Any) -> list[str]:
    """Stream one turn with the SDK as an application does; what it received, and how it ended."""
    if sdk == "anthropic":
        client: Any = anthropic.Anthropic(api_key="k", base_url=url, http_client=http_client, max_retries=0)
        create = client.messages.create
        arguments: dict[str, Any] = {"model": "m", "max_tokens": 100}
    else:
        client = openai.OpenAI(api_key="k", base_url=f"{url}/v1", http_client=http_client, max_retries=0)
        create, arguments = client.chat.completions.create, {"model": "m"}
    received: list[str] = []
    try:
        for event in create(messages=[{"role": "user", "content": "Weather?"}], stream=True, **arguments):
            received.append(getattr(event, "type", "chunk"))
    except (anthropic.APIError, openai.APIError, httpx2.HTTPError) as error:  # an error event, a broken connection
        received.append(type(error).__name__)
    finally:
        http_client.close()
    return received


def consume_async(sdk: str, url: str, http_client: Any) -> list[str]:
    async def main() -> list[str]:
        if sdk == "anthropic":
            client: Any = anthropic.AsyncAnthropic(api_key="k", base_url=url, http_client=http_client, max_retries=0)
            create = client.messages.create
            arguments: dict[str, Any] = {"model": "m", "max_tokens": 100}
        else:
            client = openai.AsyncOpenAI(api_key="k", base_url=f"{url}/v1", http_client=http_client, max_retries=0)
            create, arguments = client.chat.completions.create, {"model": "m"}
        received: list[str] = []
        try:
            stream = await create(messages=[{"role": "user", "content": "Weather?"}], stream=True, **arguments)
            async for event in stream:
                received.append(getattr(event, "type", "chunk"))
        except (anthropic.APIError, openai.APIError, httpx2.HTTPError) as error:
            received.append(type(error).__name__)
        finally:
            await http_client.aclose()
        return received

    return asyncio.run(main())


# -- the two ways of recording ----------------------------------------------------------------


def through_recorder(tmp_path: Path, sdk: str, way: str, upstream: RawUpstream) -> tuple[list[str], Path]:
    from stream_doctor.record import Recorder

    envelope = tmp_path / "run.jsonl"
    with Recorder(envelope) as recorder:
        if way == "sync":
            received = consume(sdk, upstream.url, httpx2.Client(transport=recorder.transport()))
        else:
            received = consume_async(sdk, upstream.url, httpx2.AsyncClient(transport=recorder.async_transport()))
    return received, envelope


class ProxyProcess:
    """``stream-doctor record`` in a subprocess, forwarding to one upstream whose script each test sets."""

    def __init__(self, out: Path) -> None:
        self.upstream = RawUpstream()
        self.lines: list[str] = []
        self.out = out

    def __enter__(self) -> ProxyProcess:
        self.upstream.__enter__()
        self.process = subprocess.Popen(
            [sys.executable, "-m", "stream_doctor", "record", "--upstream", self.upstream.url]
            + ["--listen", "127.0.0.1:0", "--out", str(self.out)],
            stderr=subprocess.PIPE,
            text=True,
        )
        assert self.process.stderr is not None
        started = self.process.stderr.readline()
        assert "listening on http://127.0.0.1:" in started, started
        self.url = "http://127.0.0.1:" + started.split("http://127.0.0.1:")[1].split(",")[0]
        threading.Thread(target=self._read, args=(self.process.stderr,), daemon=True).start()
        return self

    def _read(self, stream: Any) -> None:
        for line in stream:
            self.lines.append(line.rstrip("\n"))

    def envelope(self, before: int) -> Path:
        """The envelope of the exchange logged after the first ``before`` lines (written and closed by then)."""
        deadline = time.monotonic() + 10
        while len(self.lines) <= before:
            assert time.monotonic() < deadline, f"the proxy logged no exchange: {self.lines}"
            time.sleep(0.01)
        return Path(self.lines[before].rsplit(" → ", 1)[1])

    def __exit__(self, *args: Any) -> None:
        self.process.terminate()
        self.process.wait(10)
        self.upstream.__exit__()


@pytest.fixture(scope="module")
def proxy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ProxyProcess]:
    with ProxyProcess(tmp_path_factory.mktemp("captures")) as running:
        yield running


def through_proxy(proxy: ProxyProcess, sdk: str, way: str) -> tuple[list[str], Path]:
    before = len(proxy.lines)
    if way == "sync":
        received = consume(sdk, proxy.url, httpx2.Client(verify=plain_http_tls()))
    else:
        received = consume_async(sdk, proxy.url, httpx2.AsyncClient(verify=plain_http_tls()))
    return received, proxy.envelope(before)


Record = Callable[[str, str, Script], tuple[list[str], Path]]


@pytest.fixture(params=["recorder", "proxy"])
def record(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Record]:
    """Record one SDK turn (``sdk``, ``way``) from an upstream so scripted, by either means."""
    if request.param == "recorder":

        def by_recorder(sdk: str, way: str, script: Script) -> tuple[list[str], Path]:
            with RawUpstream(script) as upstream:
                return through_recorder(tmp_path, sdk, way, upstream)

        yield by_recorder
    else:
        running: ProxyProcess = request.getfixturevalue("proxy")

        def by_proxy(sdk: str, way: str, script: Script) -> tuple[list[str], Path]:
            running.upstream.script = script
            return through_proxy(running, sdk, way)

        yield by_proxy


def event_records(envelope: Path) -> list[dict[str, Any]]:
    records = [orjson.loads(line) for line in envelope.read_bytes().splitlines() if line.strip()]
    return [r for r in records if r["sd"] == "event"]


# -- complete streams -------------------------------------------------------------------------


@pytest.mark.parametrize("way", ["sync", "async"])
@pytest.mark.parametrize("framing", ["close", "chunked", "chunked-cut"])
@pytest.mark.parametrize("sdk", ["anthropic", "openai"])
def test_a_stream_that_reached_its_last_event_is_recorded_complete(
    record: Record, sdk: str, framing: Framing, way: str
) -> None:
    capture = ONE_CALL[sdk]
    received, envelope = record(sdk, way, Script(capture.read_bytes(), framing))
    if sdk == "anthropic":  # it reads to the body's end: an incomplete one is its error, after the last event
        ending = ["message_stop", "RemoteProtocolError"] if framing == "chunked-cut" else ["message_stop"]
        assert received[-len(ending) :] == ending
    else:  # it stops at [DONE] and closes the response, whatever follows
        assert received == ["chunk"] * (len(event_records(envelope)) - 1)
    records = event_records(envelope)
    assert [r for r in records if "error" in r or "problems" in r] == []
    assert records[-1] == {"sd": "event", "t": records[-1]["t"], **last_record(capture)}
    report = replay(str(envelope))
    assert report.codes == replay(str(capture)).codes == ()


@pytest.mark.parametrize("way", ["sync", "async"])
@pytest.mark.parametrize("sdk", ["anthropic", "openai"])
def test_an_error_event_ends_the_stream_and_the_sdk_closing_on_it_cuts_nothing(
    record: Record, sdk: str, way: str
) -> None:
    capture = ERROR_END[sdk]
    received, envelope = record(sdk, way, Script(capture.read_bytes(), "close"))
    assert received[-1] in ("APIStatusError", "InternalServerError", "APIError", "OverloadedError"), received
    report = replay(str(envelope))
    assert report.codes == replay(str(capture)).codes  # the call the error abandoned (SD301, SD302), nothing more
    assert not RECORDER_CODES & set(report.codes)


# -- near misses: the connection ends before the last event -----------------------------------


@pytest.mark.parametrize("way", ["sync", "async"])
@pytest.mark.parametrize("framing", ["close", "chunked-cut"])
@pytest.mark.parametrize("sdk", ["anthropic", "openai"])
def test_a_connection_that_ends_inside_the_last_event_is_a_cut(
    record: Record, sdk: str, framing: Framing, way: str
) -> None:
    capture = ONE_CALL[sdk]
    script = Script(capture.read_bytes(), framing, "inside")
    received, envelope = record(sdk, way, script)
    assert "message_stop" not in received
    cut = event_records(envelope)[-1]
    half = script.events()[-1].decode()  # the bytes that did arrive are in the record: its name, its data so far
    assert cut["raw"] and cut["raw"] in half
    assert cut.get("event") == ("message_stop" if sdk == "anthropic" else None)
    assert cut["problems"][0]["kind"] == "unterminated-event"
    report = replay(str(envelope))
    cut_finding = next(f for f in report.findings if f.code == "SD003")  # the cut, and why
    assert ("the body ended inside an event" if framing == "close" else "connection failed") in cut_finding.message


@pytest.mark.parametrize("way", ["sync", "async"])
@pytest.mark.parametrize("sdk", ["anthropic", "openai"])
def test_a_body_that_ends_cleanly_before_the_last_event_is_reported_without_an_invented_frame(
    record: Record, sdk: str, way: str
) -> None:
    capture = ONE_CALL[sdk]
    received, envelope = record(sdk, way, Script(capture.read_bytes(), "close", "before"))
    assert "message_stop" not in received
    assert [r for r in event_records(envelope) if "error" in r] == []  # every byte formed a whole event
    report = replay(str(envelope))
    assert MISSING_END[sdk] in report.codes  # the stream's own end is missing, and the replay says so
    assert not RECORDER_CODES & set(report.codes)


def last_record(capture: Path) -> dict[str, Any]:
    """The envelope fields of the capture's last event."""
    last = [p for p in capture.read_bytes().split(b"\n\n") if p.strip()][-1]
    fields = dict(line.split(b": ", 1) for line in last.splitlines())
    out: dict[str, Any] = {}
    if b"event" in fields:
        out["event"] = fields[b"event"].decode()
    try:
        out["data"] = orjson.loads(fields[b"data"])
    except orjson.JSONDecodeError:
        out["raw"] = fields[b"data"].decode()
    return out


def test_a_recorded_openai_turn_passes_check_and_assert_clean_at_fail_on_warning(
    tmp_path: Path, stream_doctor: Any
) -> None:
    """The user's view of the fix: a correct stream recorded around the OpenAI SDK fails nothing."""
    from typer.testing import CliRunner

    from stream_doctor.cli import app

    with RawUpstream(Script(ONE_CALL["openai"].read_bytes(), "chunked")) as upstream:
        through_recorder(tmp_path, "openai", "sync", upstream)
    stream_doctor.assert_clean(tmp_path / "run.jsonl", fail_on="warning")
    result = CliRunner().invoke(app, ["check", "--fail-on", "warning", str(tmp_path)])
    assert result.exit_code == 0, result.output
