"""A loopback upstream that answers with whatever a generator yields, for the proxy's attack tests.

It reads each request whole (counting its bytes and hashing its body, never keeping it), then writes
the response head and the body chunks a ``respond`` function yields, and closes: so a test can
stream gigabytes through the proxy without this side holding them either.
"""

from __future__ import annotations

import hashlib
import re
import socket
import threading
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator


@dataclass
class Received:
    head: bytes
    body_size: int
    body_sha256: str
    body_start: bytes  # its first 4 KiB


Respond = Callable[[Received], tuple[list[tuple[str, str]], Iterator[bytes]]]


@dataclass
class HostileUpstream:
    respond: Respond
    received: list[Received] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.listener.settimeout(0.1)
        self.port = self.listener.getsockname()[1]
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _serve(self) -> None:
        while not self.stopped.is_set():
            try:
                connection, _ = self.listener.accept()
            except TimeoutError:
                continue
            threading.Thread(target=self._one, args=(connection,), daemon=True).start()

    def _one(self, connection: socket.socket) -> None:
        connection.settimeout(30)
        with connection:
            try:
                received = self._read(connection)
                if received is None:
                    return
                self.received.append(received)
                headers, body = self.respond(received)
                head = b"HTTP/1.1 200 OK\r\nconnection: close\r\n"
                head += b"".join(f"{name}: {value}\r\n".encode() for name, value in headers)
                connection.sendall(head + b"\r\n")
                for chunk in body:
                    if self.stopped.is_set():
                        return
                    connection.sendall(chunk)
            except OSError:
                pass  # the proxy went away first

    def _read(self, connection: socket.socket) -> Received | None:
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = connection.recv(65536)
            if not chunk:
                return None
            data += chunk
        head, _, rest = data.partition(b"\r\n\r\n")
        digest = hashlib.sha256()
        size = 0
        start = b""
        length = re.search(rb"(?im)^content-length:\s*(\d+)", head)
        chunked = re.search(rb"(?im)^transfer-encoding:\s*chunked", head) is not None
        if chunked:
            stream = _Stream(connection, rest)
            while True:
                line = stream.line()
                count = int(line.split(b";")[0], 16)
                if count == 0:
                    stream.line()
                    break
                piece = stream.take(count)
                stream.take(2)
                digest.update(piece)
                size += len(piece)
                start = (start + piece)[:4096]
        elif length is not None:
            want = int(length.group(1))
            pending = rest
            while True:
                digest.update(pending)
                size += len(pending)
                start = (start + pending)[:4096]
                if size >= want:
                    break
                pending = connection.recv(1 << 20)
                if not pending:
                    break
        return Received(head, size, digest.hexdigest(), start)

    def __enter__(self) -> HostileUpstream:
        self.thread.start()
        return self

    def __exit__(self, *args: Any) -> None:
        self.stopped.set()
        self.thread.join(10)
        self.listener.close()


class _Stream:
    def __init__(self, connection: socket.socket, buffered: bytes) -> None:
        self.connection = connection
        self.buffer = bytearray(buffered)

    def _fill(self) -> None:
        chunk = self.connection.recv(1 << 20)
        if not chunk:
            raise ConnectionError("the body ended early")
        self.buffer += chunk

    def line(self) -> bytes:
        while b"\r\n" not in self.buffer:
            self._fill()
        at = self.buffer.index(b"\r\n")
        line = bytes(self.buffer[:at])
        del self.buffer[: at + 2]
        return line

    def take(self, count: int) -> bytes:
        while len(self.buffer) < count:
            self._fill()
        piece = bytes(self.buffer[:count])
        del self.buffer[:count]
        return piece
