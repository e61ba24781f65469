"""Mistral chat completions streaming (``POST /v1/chat/completions`` on api.mistral.ai, ``"stream": true``).

Wire format: ../shared/reference/wire-formats.md §7.1 and mistralai/client-python
(``models/completionresponsestreamchoice.py``, ``toolcall.py``, ``deltamessage.py``,
``thinkchunk.py``). The framing and the chunk are OpenAI's (``data:`` lines, ``data: [DONE]``), so
the OpenAI translator does the work, with Mistral's differences:

* a call usually arrives whole in one chunk with no ``index`` and no ``type``, and that chunk also
  carries ``finish_reason: "tool_calls"`` and ``usage``; the id is the correlator;
* ``finish_reason`` may be ``error`` (client-python's enum: stop, length, error, tool_calls);
* ``function.arguments`` may be an object as well as a string (client-python ``FunctionCall``);
* ``content`` may be a list of chunks, thinking included (Magistral).

Telling Mistral from OpenAI: both say ``"object": "chat.completion.chunk"``. Mistral's chunk ids are
32 lowercase hex digits with no ``chatcmpl-`` prefix (older responses: ``cmpl-`` + 32 hex), and a
chunk also shows one of: a Mistral model name, a tool call in Mistral's own shape (no index, no
type), a delta carrying its own ``index`` (captured: vercel/ai ``mistral-incremental-tool-call``),
or content as a list of typed chunks. With both, Mistral scores above OpenAI; otherwise it scores 0
and the capture is read as OpenAI-compatible (SGLang, for one, also uses bare hex ids), which
``--provider mistral`` overrides.
"""

from __future__ import annotations

import re
from typing import Any, Sequence

from stream_doctor.capture.base import Frame
from stream_doctor.providers import openai_chat, openai_chat_protocol
from stream_doctor.values.events import FinishCategory

name = "mistral"
title = "Mistral chat completions"
protocol = openai_chat.protocol

FINISH_CATEGORIES: dict[str, FinishCategory] = {**openai_chat_protocol.FINISH_CATEGORIES, "model_length": "length"}

_MISTRAL_ID = re.compile(r"(?:cmpl-)?[0-9a-f]{32}")
_MISTRAL_MODELS = re.compile(
    r"(?:open-)?(?:mistral|mixtral|magistral|codestral|devstral|ministral|pixtral|voxtral)", re.IGNORECASE
)


def sniff(frames: Sequence[Frame]) -> int:
    score = openai_chat.sniff(frames)
    if not score:
        return 0
    ids = evidence = False
    for frame in frames:
        value = frame.value
        if not isinstance(value, dict):
            continue
        chunk_id = value.get("id")
        if isinstance(chunk_id, str) and _MISTRAL_ID.fullmatch(chunk_id):
            ids = True
        evidence = evidence or _mistral_evidence(value)
        if ids and evidence:
            return min(100, score + 5)
    return 0


def _mistral_evidence(value: dict[str, Any]) -> bool:
    model = value.get("model")
    if isinstance(model, str) and _MISTRAL_MODELS.match(model):
        return True
    choices = value.get("choices")
    if not isinstance(choices, list):
        return False
    for choice in choices:
        delta = choice.get("delta") if isinstance(choice, dict) else None
        if not isinstance(delta, dict):
            continue
        if "index" in delta or isinstance(delta.get("content"), list):
            return True
        calls = delta.get("tool_calls")
        if isinstance(calls, list) and any(
            isinstance(c, dict) and "index" not in c and "type" not in c and "function" in c for c in calls
        ):
            return True
    return False


def translator() -> MistralTranslator:
    return MistralTranslator()


class MistralTranslator(openai_chat.OpenAIChatTranslator):
    finish_categories = FINISH_CATEGORIES
    object_arguments_allowed = True
