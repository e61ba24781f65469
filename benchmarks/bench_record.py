"""The recording proxy's cost on loopback: what it adds to each event's latency, with live findings
on and off, and its memory against response length.

Three processes on loopback, as in real use: an upstream (aiohttp) that streams a whole Anthropic
tool call (message_start, content_block_start, ``--events`` input_json_delta events ``--gap`` ms
apart, content_block_stop, message_delta, message_stop), each delta stamped with
``time.monotonic_ns()`` as it is written; ``stream-doctor record`` between them, started with
``--live`` (each finding printed as it is found) or ``--no-live``; and a client here that reads
the raw socket and stamps each event as it arrives (CLOCK_MONOTONIC is one clock for every process
of the machine). Latency = arrival - sent; what the proxy adds is the proxied latency less the
direct one, each taken as the median and the 99th percentile of every event of ``--repeat``
streams, read directly and through the proxy in turn.

The proxy always runs the live replay (it groups exchanges into conversations by the calls each
response streamed, and ``--fail-on`` needs the findings), on a thread of its own (``stream_doctor.record.live``);
``--no-live`` leaves out the printing. ``--alongside N``: meanwhile another process streams a call
of N events, unpaced, through the same proxy over and over (another conversation, whose records are
diagnosed and whose turns are judged while the measured events pass; e.g. 100000). Each proxy's peak
resident size is read from /proc (Linux) after its streams.

Memory: the proxy's peak resident size (``VmHWM``) after responses of growing length (``--lengths``
events each, unpaced); flat means nothing grows with a response.

Usage: python benchmarks/bench_record.py [--events 2000] [--gap 1] [--repeat 5] [--alongside 0]
       [--lengths 1000,100000,1000000]
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
import threading
import time

HEAD = (
    b'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_bench","type":"message",'
    b'"role":"assistant","model":"claude-haiku-4-5","content":[],"stop_reason":null,"usage":{"input_tokens":9,'
    b'"output_tokens":1}}}\n\n'
    b'event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"tool_use",'
    b'"id":"toolu_bench","name":"write_file","input":{}}}\n\n'
)
DELTA = (
    b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta",'
    b'"partial_json":"%s"},"sent":%d}\n\n'
)
TAIL = (
    b'event: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\n'
    b'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":9}}\n\n'
    b'event: message_stop\ndata: {"type":"message_stop"}\n\n'
)


#: Bytes of one delta event on the wire (the stamp is 13 to 16 digits; 15 assumed).
EVENT_SIZE = len(DELTA % (b"lorem ", 10**14))


def fragment(number: int, events: int) -> bytes:
    """The call's arguments, ``{"text": "lorem lorem …"}``, cut into ``events`` fragments."""
    if number == 0:
        return b'{\\"text\\": \\"'
    if number == events - 1:
        return b'\\"}'
    return b"lorem "


def upstream(port_queue: multiprocessing.Queue) -> None:  # type: ignore[type-arg]
    from aiohttp import web
    from loopback import serve_forever

    async def handle(request: web.Request) -> web.StreamResponse:
        await request.read()
        events, gap = int(request.query["events"]), float(request.query["gap"]) / 1000
        response = web.StreamResponse(headers={"content-type": "text/event-stream"})
        await response.prepare(request)
        try:
            await response.write(HEAD)
            next_at = time.monotonic()
            for number in range(events):
                if gap:
                    next_at += gap
                    await asyncio.sleep(max(0.0, next_at - time.monotonic()))
                await response.write(DELTA % (fragment(number, events), time.monotonic_ns()))
            await response.write(TAIL)
            await response.write_eof()
        except ConnectionError:
            pass  # an --alongside stream stopped with its proxy
        return response

    serve_forever(handle, port_queue.put)


def read_stream(port: int, events: int, gap: float) -> list[int]:
    """POST, then each delta's latency in nanoseconds, read from the raw socket as it arrives
    (HTTP/1.0: the body comes unframed until the server closes)."""
    latencies: list[int] = []
    body = b'{"model":"claude-haiku-4-5","stream":true,"messages":[{"role":"user","content":"write"}]}'
    with socket.create_connection(("127.0.0.1", port)) as sock:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.sendall(
            f"POST /v1/messages?events={events}&gap={gap} HTTP/1.0\r\nHost: x\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode()
            + body
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


def neighbour(port: int, events: int) -> None:
    """Streams of ``events`` unpaced events through the proxy, read and dropped, until terminated."""
    body = b'{"model":"claude-haiku-4-5","stream":true,"messages":[{"role":"user","content":"neighbour"}]}'
    while True:
        with socket.create_connection(("127.0.0.1", port)) as sock:
            sock.sendall(
                f"POST /v1/messages?events={events}&gap=0 HTTP/1.0\r\nHost: x\r\nContent-Type: application/json\r\n"
                f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode()
                + body
            )
            while sock.recv(1 << 16):
                pass


def start_proxy(upstream_port: int, out: str, live: bool) -> tuple[subprocess.Popen[str], int]:
    command = [sys.executable, "-m", "stream_doctor", "record", "--upstream", f"http://127.0.0.1:{upstream_port}"]
    command += ["--listen", "127.0.0.1:0", "--out", out, "--live" if live else "--no-live"]
    process = subprocess.Popen(command, stderr=subprocess.PIPE, text=True)
    assert process.stderr is not None
    line = process.stderr.readline()
    port = int(line.split("http://127.0.0.1:")[1].split(",")[0])
    # the live lines go on stderr: read them as they come, so that a full pipe never holds the proxy up
    threading.Thread(target=process.stderr.read, daemon=True).start()
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
    parser.add_argument("--alongside", type=int, default=0, help="events of a concurrent unpaced stream (0: none)")
    parser.add_argument("--lengths", default="1000,100000,1000000", help="events per response for the memory test")
    args = parser.parse_args()

    queue: multiprocessing.Queue = multiprocessing.Queue()  # type: ignore[type-arg]
    server = multiprocessing.Process(target=upstream, args=(queue,), daemon=True)
    server.start()
    upstream_port = queue.get(timeout=30)
    print(f"latency per event, {args.repeat} x {args.events} events {args.gap} ms apart (ms):")
    if args.alongside:
        print(f"  (alongside: streams of {args.alongside} unpaced events through the same proxy)")
    print(f"  {'':22} {'median':>8} {'p99':>8}   peak RSS")
    try:
        read_stream(upstream_port, 50, 0)  # warm the direct path up
        for live in (True, False):
            with tempfile.TemporaryDirectory() as out:
                proxy, proxy_port = start_proxy(upstream_port, out, live)
                other = multiprocessing.Process(target=neighbour, args=(proxy_port, args.alongside), daemon=True)
                try:
                    read_stream(proxy_port, 50, 0)
                    if args.alongside:
                        other.start()
                    direct: list[float] = []
                    proxied: list[float] = []
                    for _ in range(args.repeat):
                        direct += [n / 1e6 for n in read_stream(upstream_port, args.events, args.gap)]
                        proxied += [n / 1e6 for n in read_stream(proxy_port, args.events, args.gap)]
                    peak = peak_rss_kib(proxy.pid)
                finally:
                    if other.is_alive():
                        other.terminate()
                    proxy.terminate()
                    proxy.wait(10)
            name = "live on" if live else "live off"
            for label, values in ((f"direct ({name} run)", direct), (f"proxied, {name}", proxied)):
                print(f"  {label:22} {statistics.median(values):8.3f} {percentile(values, 0.99):8.3f}")
            added = statistics.median(proxied) - statistics.median(direct)
            added99 = percentile(proxied, 0.99) - percentile(direct, 0.99)
            print(f"  {'added, ' + name:22} {added:8.3f} {added99:8.3f}   {peak / 1024:.1f} MiB")
        print(f"proxy peak resident memory after a response of N events (unpaced, {EVENT_SIZE} bytes each):")
        for length in (int(n) for n in args.lengths.split(",")):
            with tempfile.TemporaryDirectory() as out:
                proxy, proxy_port = start_proxy(upstream_port, out, live=False)
                try:
                    read_stream(proxy_port, 10, 0)
                    before = peak_rss_kib(proxy.pid)
                    received = len(read_stream(proxy_port, length, 0))
                    after = peak_rss_kib(proxy.pid)
                    megabytes = received * EVENT_SIZE / 1e6
                    print(
                        f"  {length:>8} events ({megabytes:7.1f} MB): {before / 1024:6.1f} -> {after / 1024:6.1f} MiB"
                    )
                finally:
                    proxy.terminate()
                    proxy.wait(10)
    finally:
        server.terminate()


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    main()
