"""A fake LLM upstream on a bare loopback socket, for how a response's connection ends.

``FakeUpstream`` (aiohttp) always ends a body cleanly. This one writes the HTTP response by hand:
the head, then the capture one event per write, and its last write together with the end of the
connection, so the client and the recorder see the last bytes and the close at once. It answers
every request with its ``script`` (a test may replace it between requests): a capture and two
choices. ``stop`` says where the connection ends: ``after`` the capture's last event, ``before`` it (after the event
before it), or ``inside`` it (after its first half). ``framing`` says how the body is delimited
and how it ends:

- ``close``: no length and no chunks, the close ends the body (RFC 9112 §6.3): a clean end;
- ``chunked``: chunks, the last one and the terminating ``0`` chunk in the final write: a clean end;
- ``chunked-cut``: chunks, and the connection closes without the ``0`` chunk: the client sees an
  incomplete body, a broken connection.
"""

from __future__ import annotations

import re
import socket
import threading
from dataclasses import dataclass, field
from typing import Any, Literal

Framing = Literal["close", "chunked", "chunked-cut"]
Stop = Literal["after", "before", "inside"]


@dataclass(frozen=True)
class Script:
    """What the upstream answers: a capture, how its body is framed, where the connection ends."""

    body: bytes = b""
    framing: Framing = "close"
    stop: Stop = "after"  # the near misses end "before" or "inside" the last event

    def events(self) -> list[bytes]:
        """The writes of the body, one event each: up to where the connection ends."""
        parts = [p for p in re.split(rb"(?<=\n\n)", self.body) if p]
        if self.stop == "before":
            return parts[:-1]
        if self.stop == "inside":
            return parts[:-1] + [parts[-1][: len(parts[-1]) // 2]]
        return parts


@dataclass
class RawUpstream:
    script: Script = field(default_factory=Script)
    content_type: str = "text/event-stream"

    def __post_init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.listener.settimeout(0.1)  # so the thread sees ``stopped`` (closing does not wake accept)
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
            connection.settimeout(10)
            with connection:
                try:
                    self._answer(connection)
                except OSError:
                    pass  # the client went away first

    def _answer(self, connection: socket.socket) -> None:
        request = b""
        while b"\r\n\r\n" not in request:
            chunk = connection.recv(65536)
            if not chunk:
                return
            request += chunk
        head, _, body = request.partition(b"\r\n\r\n")
        length = re.search(rb"(?im)^content-length:\s*(\d+)", head)
        while length is not None and len(body) < int(length.group(1)):
            body += connection.recv(65536)  # read it all: closing on unread bytes would send a reset
        script = self.script
        chunked = script.framing != "close"
        connection.sendall(
            b"HTTP/1.1 200 OK\r\ncontent-type: "
            + self.content_type.encode()
            + (b"\r\ntransfer-encoding: chunked" if chunked else b"")
            + b"\r\nconnection: close\r\nrequest-id: req_raw\r\n\r\n"
        )
        events = script.events()
        for number, event in enumerate(events):
            data = b"%x\r\n%s\r\n" % (len(event), event) if chunked else event
            if number == len(events) - 1:
                if script.framing == "chunked":
                    data += b"0\r\n\r\n"
                connection.sendall(data)  # the last write, and at once the close
                connection.shutdown(socket.SHUT_WR)
            else:
                connection.sendall(data)

    def __enter__(self) -> RawUpstream:
        self.thread.start()
        return self

    def __exit__(self, *args: Any) -> None:
        self.stopped.set()
        self.thread.join(10)
        self.listener.close()
