"""The recording proxy's cost on loopback: added latency per event, and memory against response length.

Three processes, as in real use: a fake upstream (aiohttp) that streams Anthropic-shaped SSE
events, each stamped with ``time.monotonic_ns()`` when it is written; ``stream-doctor record``
between them; and a client here that reads the raw socket and stamps each event as it arrives
(CLOCK_MONOTONIC is one clock for every process of the machine). Latency = arrival - sent.

* latency: the same stream (``--events`` events, ``--gap`` ms apart) read directly from the
  upstream and through the proxy, alternating, ``--repeat`` times; quoted are the median and the
  99th percentile of every event's latency, direct and proxied, and their differences (what the
  proxy adds).
* memory: the proxy's peak resident size (``VmHWM`` from /proc, Linux) after streaming responses
  of growing length through it, unpaced; flat means nothing grows with a response.

Usage: python benchmarks/bench_record.py [--events 2000] [--gap 1] [--repeat 5] [--lengths 1000,100000,1000000]
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time

DELTA = (
    b'{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta",'
    b'"partial_json":"lorem ipsum dolor sit amet, consectetur"},"sent":%d}'
)


#: Bytes of one delta event on the wire (the stamp is 13 to 16 digits; 15 assumed).
EVENT_SIZE = len(b"event: content_block_delta\ndata: " + DELTA % (10**14) + b"\n\n")


def upstream(port_queue: multiprocessing.Queue) -> None:  # type: ignore[type-arg]
    from aiohttp import web

    async def handle(request: web.Request) -> web.StreamResponse:
        events, gap = int(request.query["events"]), float(request.query["gap"]) / 1000
        response = web.StreamResponse(headers={"content-type": "text/event-stream"})
        await response.prepare(request)
        next_at = time.monotonic()
        for _ in range(events):
            if gap:
                next_at += gap
                await asyncio.sleep(max(0.0, next_at - time.monotonic()))
            await response.write(b"event: content_block_delta\ndata: " + DELTA % time.monotonic_ns() + b"\n\n")
        await response.write(b'event: message_stop\ndata: {"type":"message_stop"}\n\n')
        await response.write_eof()
        return response

    async def main() -> None:
        app = web.Application()
        app.router.add_post("/v1/messages", handle)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        port_queue.put(site._server.sockets[0].getsockname()[1])  # type: ignore[union-attr]
        await asyncio.Event().wait()

    asyncio.run(main())


def read_stream(port: int, events: int, gap: float) -> list[int]:
    """POST, then each event's latency in nanoseconds, read from the raw socket as it arrives.

    HTTP/1.0, so the body comes unframed (no chunk sizes between the bytes) until the server closes."""
    latencies: list[int] = []
    with socket.create_connection(("127.0.0.1", port)) as sock:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.sendall(
            f"POST /v1/messages?events={events}&gap={gap} HTTP/1.0\r\nHost: x\r\n"
            "Content-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}".encode()
        )
        buffer = b""
        while True:
            chunk = sock.recv(1 << 16)
            now = time.monotonic_ns()
            if not chunk:
                break
            buffer += chunk
            while True:
                marker = buffer.find(b',"sent":')
                if marker < 0:
                    break
                end = buffer.find(b"}", marker)
                if end < 0:
                    break  # the stamp is cut: the rest comes with the next chunk
                latencies.append(now - int(buffer[marker + 8 : end]))
                buffer = buffer[end:]
    return latencies


def start_proxy(upstream_port: int, out: str) -> tuple[subprocess.Popen[str], int]:
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "stream_doctor",
            "record",
            "--upstream",
            f"http://127.0.0.1:{upstream_port}",
            "--listen",
            "127.0.0.1:0",
            "--out",
            out,
        ],
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stderr is not None
    line = process.stderr.readline()
    port = int(line.split("http://127.0.0.1:")[1].split(",")[0])
    return process, port


def peak_rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return -1


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=2000)
    parser.add_argument("--gap", type=float, default=1.0, help="milliseconds between events")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--lengths", default="1000,100000,1000000", help="events per response for the memory test")
    args = parser.parse_args()

    queue: multiprocessing.Queue = multiprocessing.Queue()  # type: ignore[type-arg]
    server = multiprocessing.Process(target=upstream, args=(queue,), daemon=True)
    server.start()
    upstream_port = queue.get(timeout=30)
    with tempfile.TemporaryDirectory() as out:
        proxy, proxy_port = start_proxy(upstream_port, out)
        try:
            read_stream(proxy_port, 50, 0)  # warm both paths up
            read_stream(upstream_port, 50, 0)
            direct: list[float] = []
            proxied: list[float] = []
            for _ in range(args.repeat):
                direct += [n / 1e6 for n in read_stream(upstream_port, args.events, args.gap)]
                proxied += [n / 1e6 for n in read_stream(proxy_port, args.events, args.gap)]
            print(f"latency per event, {args.repeat} x {args.events} events {args.gap} ms apart (ms):")
            print(f"  {'':9} {'median':>8} {'p99':>8}")
            for name, values in (("direct", direct), ("proxied", proxied)):
                print(f"  {name:9} {statistics.median(values):8.3f} {percentile(values, 0.99):8.3f}")
            print(
                f"  {'added':9} {statistics.median(proxied) - statistics.median(direct):8.3f} "
                f"{percentile(proxied, 0.99) - percentile(direct, 0.99):8.3f}"
            )
        finally:
            proxy.terminate()
            proxy.wait(10)
        print(f"proxy peak resident memory after a response of N events (unpaced, {EVENT_SIZE} bytes each):")
        for length in (int(n) for n in args.lengths.split(",")):
            proxy, proxy_port = start_proxy(upstream_port, out)
            try:
                read_stream(proxy_port, 10, 0)
                before = peak_rss_kib(proxy.pid)
                received = len(read_stream(proxy_port, length, 0))
                after = peak_rss_kib(proxy.pid)
                print(
                    f"  {length:>8} events ({received * EVENT_SIZE / 1e6:7.1f} MB): {before / 1024:6.1f} -> {after / 1024:6.1f} MiB"
                )
            finally:
                proxy.terminate()
                proxy.wait(10)
    server.terminate()


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    main()
