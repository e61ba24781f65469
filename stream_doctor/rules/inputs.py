"""What a rule needs beyond the provider's stream, and how to give it (``stream-doctor explain``).

A raw stream holds what the provider sent. The execution rules also need what the application
ran; the pairing and schema rules need the requests. Without them these rules have nothing to
check and stay silent, so ``explain`` says how to supply them.
"""

from __future__ import annotations

from stream_doctor.rules.base import Rule

_EXECUTIONS = """\
What the application ran: each tool it executed and the input it passed. A raw stream (curl -N,
an SDK's chunk log) does not hold that; without it this rule does not run, and replay says so.
Give it in any of these ways:

  stream-doctor replay capture.sse --executed 1='{}'
  stream-doctor replay capture.sse --executed write_file='{"path": "notes.md"}'
  stream-doctor replay capture.sse --executions executions.jsonl
  echo '{"sd": "execute", "call_id": "toolu_01…", "input": {}}' >> chunks.jsonl

--executed takes a call (its number in the report's table, its id, or its tool name) and the
input as JSON; --executions a JSONL file of execute records (call_id or name, input); execute
records may be appended to any JSONL capture. To record the next run with everything, wrap the
Python SDK's HTTP client with stream_doctor.record.Recorder and call
recorder.executed(call_id, name, input) where your code runs a tool (docs/envelope.md).

The recording proxy (stream-doctor record, any language) cannot record executions: it sees the
requests and the streams that pass through it, not what the application runs. What it does see
is each call as the next request sends it back. Replay the session's envelopes together and
SD608 shows a call sent back with {} while its stream carried the input:

  stream-doctor record --upstream https://api.anthropic.com --listen 127.0.0.1:8080 --out captures/
  stream-doctor replay captures/"""

_REQUESTS = """\
The requests: the tools each request declares and, across turns, the results the next request
carries back. Record them in an envelope (stream-doctor record, stream_doctor.record.Recorder;
docs/envelope.md), a HAR file or a cassette; for a single stream, --tools FILE gives the tool definitions."""

_CLIENTS = """\
A client to judge: these rules say what a named client library (or a naive pattern) would hand
the tool, so they run only for the clients --client names (repeatable, or all):

  stream-doctor clients
  stream-doctor replay capture.sse --client openai-python
  stream-doctor replay capture.sse --client all

Each call in the report then shows, per client, what it would run, with which input and at
which event; the JSON report carries it as the call's extras.clients."""

#: By code prefix: which inputs a family of rules needs.
_NEEDS = {"SD1": _EXECUTIONS, "SD6": _REQUESTS, "SD7": _REQUESTS, "SD8": _CLIENTS}


def needs(rule: Rule) -> str | None:
    """What ``rule`` needs beyond the stream, with the commands that supply it; None: the stream is enough."""
    return _NEEDS.get(rule.code[:3])
