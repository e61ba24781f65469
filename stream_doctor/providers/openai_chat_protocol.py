"""The OpenAI Chat Completions stream's protocol as data: its detection words (``sniffing.Words``, read
without importing the adapter), finish reasons and what they mean, the delta fields that carry content,
the fields the protocol defines and the documented extension fields of compatible servers
(``openai_chat`` translates with them; SD006 reports any other field).

Sources: ../shared/reference/wire-formats.md §2 and openai-python's ``types/chat/chat_completion_chunk.py``;
each extension names the server that documents it.
"""

from __future__ import annotations

from stream_doctor.providers.sniffing import Words
from stream_doctor.values.events import FinishCategory

#: The delta types of an argument fragment: ``tool_calls[].function.arguments`` and the legacy
#: single-function form's ``function_call.arguments``.
ARGS = "function.arguments"
LEGACY_ARGS = "function_call.arguments"

#: A chunk has a ``choices`` list (Mistral's chunks are OpenAI's, told apart by ``mistral.sniff``).
WORDS = Words(keys=frozenset({"choices"}))

#: The helper's argument events (openai-python 3.54 ``lib/streaming/chat/_events.py``).
HELPER_ARGUMENTS = ("tool_calls.function.arguments.delta", "tool_calls.function.arguments.done")

#: The helper's own events, built from the chunk before them.
HELPER_EVENTS = frozenset(
    {
        *HELPER_ARGUMENTS,
        "content.delta",
        "content.done",
        "refusal.delta",
        "refusal.done",
        "logprobs.content.delta",
        "logprobs.content.done",
        "logprobs.refusal.delta",
        "logprobs.refusal.done",
    }
)

#: The helper log of ``chat.completions.stream()`` (``openai_sdk``): ``chunk`` events and the helper's own.
SDK_WORDS = Words(names=HELPER_EVENTS | {"chunk"})

#: finish_reason -> neutral category. ``function_call`` is the legacy single-function form; the
#: others are what compatible servers send (DeepSeek ``insufficient_system_resource``).
FINISH_CATEGORIES: dict[str, FinishCategory] = {
    "tool_calls": "tool_calls",
    "function_call": "tool_calls",
    "stop": "end",
    "length": "length",
    "content_filter": "filter",
    "error": "error",
    "insufficient_system_resource": "error",
}

#: Categories whose finish_reason ends the choice without completing its open calls.
CUTTING = frozenset({"length", "filter", "error", "refusal"})

#: With n > 1 the message takes the most severe reason of its choices.
SEVERITY: dict[str, int] = {"error": 6, "filter": 5, "length": 4, "refusal": 3, "tool_calls": 2, "end": 1}

#: delta fields that carry non-tool content: field -> (block type, delta type).
CONTENT_FIELDS: dict[str, tuple[str, str]] = {
    "content": ("text", "content"),
    "reasoning_content": ("reasoning", "reasoning_content"),  # DeepSeek, xAI, Qwen
    "reasoning": ("reasoning", "reasoning"),  # OpenRouter, vLLM, Ollama /v1
    "reasoning_details": ("reasoning", "reasoning_details"),  # OpenRouter
    "refusal": ("refusal", "refusal"),
    "audio": ("audio", "audio"),
}

#: delta fields that carry nothing to diagnose (Mistral puts ``index`` and ``metadata`` in the
#: delta; LiteLLM adds ``provider_specific_fields``; web search adds ``annotations``).
IGNORED_DELTA_FIELDS = frozenset(
    {"role", "index", "metadata", "annotations", "tool_call_id", "name", "provider_specific_fields", "images"}
)

#: Documented extension fields of compatible servers, in a chunk, a choice or a delta: read as part of
#: the event they ride on, never as an unknown event. Other fields are counted once per capture (SD006).
DOCUMENTED_EXTENSIONS: dict[str, str] = {
    # chunk level
    "x_groq": "Groq (request id, usage, ``x_groq.usage``)",
    "provider": "OpenRouter (the upstream provider's name)",
    "citations": "xAI live search, Perplexity",
    "search_results": "Perplexity",
    "prompt_filter_results": "Azure OpenAI",
    # the older name of prompt_filter_results, in Azure's own Asynchronous Filter sample stream
    # (learn.microsoft.com/azure/foundry/openai/concepts/content-streaming, "Sample response stream")
    "prompt_annotations": "Azure OpenAI (the older name of prompt_filter_results)",
    "system_fingerprint": "OpenAI",
    "service_tier": "OpenAI",
    "obfuscation": "OpenAI (stream obfuscation padding)",
    "p": "Mistral (random padding against token-length side channels, like OpenAI's obfuscation)",
    "prompt_logprobs": "vLLM",
    "prompt_token_ids": "vLLM",
    "kv_transfer_params": "vLLM",
    "timings": "llama.cpp server",
    "time_info": "Cerebras (queue, prompt and completion times)",
    "stats": "LM Studio",
    "warning": "Together",
    # choice level
    "native_finish_reason": "OpenRouter (the upstream provider's own finish reason)",
    "stop_reason": "vLLM (the stop token or string that ended the choice)",
    "token_ids": "vLLM",
    "matched_stop": "SGLang",
    "content_filter_results": "Azure OpenAI",
    # Azure's Asynchronous Filter annotation message: a choice with no delta, carrying the results,
    # the raw results and the offsets they apply to (learn.microsoft.com/azure/foundry/openai/concepts/
    # content-streaming, "Annotation message")
    "content_filter_offsets": "Azure OpenAI (Asynchronous Filter: the text range an annotation applies to)",
    "content_filter_raw": "Azure OpenAI (Asynchronous Filter annotations)",
    "seed": "Together",
    "text": "Together (the choice's text, beside its delta)",
    "logprobs": "OpenAI",
    # Writer: writer-python (generated from Writer's OpenAPI spec) ``types/chat_completion_chunk.py``
    # ``Choice.message`` ("deprecated for streaming. Use `delta` instead") and ``ChoiceDelta``
    # graph_data, llm_data. The ``trace_details``, ``image_data``, ``translation_data`` and
    # ``web_search_data`` keys that Writer's recorded streams carry (openllmetry's writer cassettes)
    # are in no version of those types nor in Writer's docs: undocumented, so listed (SD006) when
    # one carries something; in the recorded streams every one of them is null.
    "message": "Writer (the message so far beside the delta; deprecated for streaming)",
    "raw_output": "Fireworks",
    # delta level (besides CONTENT_FIELDS)
    "channel": "gpt-oss servers (the harmony channel: analysis, commentary, final)",
    "reasoning_signature": "vLLM",
    "token_id": "Together",
    "executed_tools": "Groq (compound models: tools the server ran)",
    "extra_content": "Gemini's OpenAI compatibility (thought signatures)",
    "thinking_blocks": "LiteLLM",
    "reasoning_items": "LiteLLM",
    "audio_content": "OpenAI",
    "graph_data": "Writer (Knowledge Graph answers, ChoiceDelta.graph_data)",
    "llm_data": "Writer (the model and prompt an LLM tool used, ChoiceDelta.llm_data)",
}

#: Keys of a chunk and of a choice that the Chat Completions protocol itself defines.
CHUNK_FIELDS = frozenset(
    {"id", "object", "created", "model", "choices", "usage", "error", "service_tier", "system_fingerprint"}
)
CHOICE_FIELDS = frozenset({"index", "delta", "finish_reason", "logprobs"})
