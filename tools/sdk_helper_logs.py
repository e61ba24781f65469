"""Write SDK helper-stream logs: run the real SDK stream helpers against a loopback server.

The server streams one of our own ``.sse`` fixtures; the Anthropic SDK's ``messages.stream()``,
the OpenAI SDK's ``chat.completions.stream()`` or ``responses.stream()`` iterate it, and every
event the helper yields is written as ``event.model_dump_json()``, one per line, the way an
application logs them. Usage (from the repository root, with the ``test`` extra installed):

    python tools/sdk_helper_logs.py anthropic fixtures/anthropic/one_call.sse > out.jsonl

``openai-strict`` declares the tools ``strict``, so openai-python also reports ``parsed_arguments``
(its partial parse of the arguments so far) on every fragment. ``--without-raw-deltas`` (after the
fixture) leaves out the raw events that carry the fragments (Anthropic ``content_block_delta``,
OpenAI ``chunk``), as an application that logs only the helper's own events does.
"""

from __future__ import annotations

import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}]
#: With ``strict`` the helper parses the arguments so far after every fragment (``parsed_arguments``).
STRICT_TOOLS = [
    {
        "type": "function",
        "function": {
            "name": name,
            "strict": True,
            "parameters": {"type": "object", "properties": {}, "additionalProperties": True},
        },
    }
    for name in ("get_weather", "list_issues")
]


def serve(body: bytes) -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (http.server's name)
            self.rfile.read(int(self.headers.get("content-length", 0)))
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


#: The raw events that carry the fragments, per helper: what ``--without-raw-deltas`` leaves out.
RAW_DELTAS = {"anthropic": "content_block_delta", "openai": "chunk", "openai-strict": "chunk"}


def helper_log(kind: str, body: bytes, without_raw_deltas: bool = False) -> str:
    """The log an application writes while the ``kind`` helper reads ``body`` (one JSON line per event);
    ``without_raw_deltas``: the log of an application that writes only the helper's own events."""
    server = serve(body)
    base = f"http://127.0.0.1:{server.server_address[1]}"
    lines: list[str] = []
    print = lines.append  # noqa: A001 (the lines an application would print)
    try:
        if kind == "anthropic":
            import anthropic

            client = anthropic.Anthropic(api_key="test", base_url=base, max_retries=0)
            with client.messages.stream(
                model="claude-haiku-4-5", max_tokens=1024, messages=[{"role": "user", "content": "hi"}]
            ) as stream:
                for event in stream:
                    print(event.model_dump_json())
        elif kind in ("openai", "openai-strict"):
            import openai

            client = openai.OpenAI(api_key="test", base_url=base + "/v1", max_retries=0)
            with client.chat.completions.stream(
                model="gpt-4o",
                messages=[{"role": "user", "content": "hi"}],
                tools=STRICT_TOOLS if kind == "openai-strict" else TOOLS,  # type: ignore[arg-type]
            ) as stream:
                for event in stream:
                    print(event.model_dump_json())
        elif kind == "responses":
            import openai

            client = openai.OpenAI(api_key="test", base_url=base + "/v1", max_retries=0)
            with client.responses.stream(model="gpt-4o", input="hi") as stream:
                for event in stream:
                    print(event.model_dump_json())
        else:
            raise SystemExit(f"unknown kind {kind!r}: anthropic, openai, openai-strict or responses")
    finally:
        server.shutdown()
        server.server_close()
    if without_raw_deltas:
        left_out = RAW_DELTAS.get(kind)
        lines = [line for line in lines if json.loads(line).get("type") != left_out]
    return "".join(line + "\n" for line in lines)


def main(kind: str, fixture: str, *options: str) -> None:
    if set(options) - {"--without-raw-deltas"}:
        raise SystemExit(f"unknown options {options!r}: --without-raw-deltas")
    sys.stdout.write(helper_log(kind, Path(fixture).read_bytes(), "--without-raw-deltas" in options))


if __name__ == "__main__":
    main(*sys.argv[1:])
