"""What ``stream-doctor serve`` costs on loopback: the time it adds per event over a plain aiohttp server
writing the same reads, and many conversations at once.

The capture is ``captures.write_calls`` (``--calls`` tool calls, ten events each; or ``--size`` MB of
them). A plain aiohttp server (no matching, no recording, no judging) writes its recorded events one
read each, as the served plan does; ``RunningServer`` serves the same capture, recording every event
into the conversation's envelope and following it with the live diagnosis. A client reads each whole
response (``--repeat`` times from each server, in turn: paired in one run); the cost per event is the
difference of the medians divided by the events. Between two reads the server is let finish what it
does after the stream (it records the reads into the envelope, and the live thread diagnoses them:
off the write path), so no read shares the machine with the other's work; that time is given too, as
what serving costs in all. Then ``--clients`` clients ask at once, and the time until every one has
its whole stream is given, each stream checked byte for byte.

Usage: python benchmarks/bench_serve.py [--calls 1000 | --size 10] [--repeat 5] [--clients 100 (0: none)]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import threading
import time
from pathlib import Path

import httpx
from aiohttp import web
from captures import write_calls
from loopback import on_thread

from stream_doctor.serve.load import load_script
from stream_doctor.serve.running import RunningServer


def plain_server(events: tuple[bytes, ...]) -> str:
    """A plain aiohttp server on a thread writing ``events`` one read each; its base URL."""

    async def handle(request: web.Request) -> web.StreamResponse:
        await request.read()
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        for data in events:
            await response.write(data)
        await response.write_eof()
        return response

    return on_thread(handle)


def read_whole(client: httpx.Client, url: str) -> tuple[float, bytes]:
    began = time.perf_counter()
    with client.stream("POST", url + "/v1/messages", content=b"{}") as response:
        body = b"".join(response.iter_raw())
    return time.perf_counter() - began, body


def settle(client: httpx.Client, served: RunningServer) -> float:
    """Seconds until ``served`` has recorded and diagnosed what it wrote: a request on the same connection
    is answered once the last one's handler returned (aiohttp answers a connection's requests in order),
    then the live thread catches up."""
    began = time.perf_counter()
    client.get(served.url + "/v1/messages")  # 405, after the last answer's handler
    served.watching.drain(600)
    return time.perf_counter() - began


def calls_for(folder: Path, megabytes: float) -> int:
    """How many of ``write_calls``'s calls make ``megabytes`` MB."""
    sample = folder / "sample.sse"
    write_calls(sample, 100)
    return max(1, round(megabytes * 1e6 * 100 / sample.stat().st_size))


def concurrent(served: RunningServer, body: bytes, clients: int) -> None:
    """``clients`` clients ask ``served`` at once; the time until each has its whole stream."""
    answers: list[bytes] = []
    barrier = threading.Barrier(clients)

    def one() -> None:
        with httpx.Client(timeout=600) as own:
            barrier.wait(60)
            answers.append(read_whole(own, served.url)[1])

    threads = [threading.Thread(target=one) for _ in range(clients)]
    began = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    took = time.perf_counter() - began
    whole = sum(answer == body for answer in answers)
    print(f"{clients} concurrent conversations: {whole} whole streams in {took:.2f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--size", type=float, metavar="MB", help="a capture of this many MB (instead of --calls)")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--clients", type=int, default=100)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        capture = Path(folder) / "calls.sse"
        write_calls(capture, args.calls if args.size is None else calls_for(Path(folder), args.size))
        recorded = load_script(str(capture)).turns[0].recorded
        events = tuple(data for _, data in recorded.events)
        plain = plain_server(events)
        served = RunningServer(str(capture), out=str(Path(folder) / "runs"))
        times: dict[str, list[float]] = {"plain": [], "serve": []}
        after: list[float] = []
        with httpx.Client(timeout=600) as client:
            for _ in range(args.repeat):
                for name, url in (("plain", plain), ("serve", served.url)):
                    took, body = read_whole(client, url)
                    assert body == recorded.body, name
                    times[name].append(took)
                after.append(settle(client, served))
        print(f"{len(events)} events, {len(recorded.body) / 1e6:.1f} MB, {args.repeat} reads from each server:")
        for name, values in times.items():
            median = statistics.median(values)
            print(f"  {name:6} median {median:7.3f} s  {len(recorded.body) / 1e6 / median:7.1f} MB/s")
        added = (statistics.median(times["serve"]) - statistics.median(times["plain"])) / len(events)
        print(f"  added by serve: {added * 1000:.3f} ms per event")
        recorded_in = statistics.median(after)
        whole = (statistics.median(times["serve"]) + recorded_in - statistics.median(times["plain"])) / len(events)
        print(
            f"  then recorded and diagnosed in {recorded_in:.3f} s (median); serve in all adds "
            f"{whole * 1000:.3f} ms per event"
        )
        if args.clients:
            concurrent(served, recorded.body, args.clients)
        served.stop()


if __name__ == "__main__":
    main()
