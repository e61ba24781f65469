"""What each (fixture, client profile) pair must be diagnosed with, among the SD8xx codes.

Every SD8xx rule has a pair where it fires and a near miss: the same fixture (or the same client)
where it must not. The registry test reads this table for the client rules.
"""

from __future__ import annotations

CLIENT_EXPECTED: dict[tuple[str, str], set[str]] = {
    # SD801: the start placeholder {} instead of the streamed input; the SDK gets it right
    ("anthropic/one_call.sse", "naive-start-placeholder"): {"SD801"},
    ("anthropic/one_call.sse", "anthropic-python"): set(),
    ("anthropic/empty_input_bug.jsonl", "naive-parse-each-fragment"): {"SD801"},
    ("anthropic/empty_input_bug.jsonl", "anthropic-typescript"): set(),
    # SD802: arguments.done on the next index under interleaving; not without interleaving
    ("openai/parallel_calls_interleaved.sse", "openai-python"): {"SD802"},
    # openai-node 7.57.0 marks a call done only at finish_reason: each switch of index fires it again (checked
    # against the real package, tests/clients/test_node_agreement.py)
    ("openai/parallel_calls_interleaved.sse", "openai-node"): {"SD802", "SD808"},
    ("openai/parallel_calls_interleaved.sse", "langchain"): set(),
    ("openai/parallel_calls.sse", "openai-python"): set(),
    # SD803: the final message still holds the cut call; the AI SDK checks the finish reason
    ("anthropic/abandoned_at_max_tokens.sse", "anthropic-python"): {"SD803"},
    ("anthropic/abandoned_at_max_tokens.sse", "vercel-ai"): set(),
    # SD804: no finish_reason, so the OpenAI SDK never fires arguments.done for the call
    ("openai/done_without_finish_reason.sse", "openai-python"): {"SD804"},
    ("openai/one_call.sse", "langchain"): set(),
    # SD805: a skipped block index is an IndexError; an error event is the provider's, not a client defect
    ("anthropic/skipped_block_index.sse", "anthropic-python"): {"SD805"},
    ("anthropic/overloaded_error_mid_stream.sse", "anthropic-python"): set(),
    # SD806: repeated id and name concatenated by openai-python; openai-node keeps the last
    ("openai/id_and_name_on_every_fragment.sse", "openai-python"): {"SD806"},
    ("openai/id_and_name_on_every_fragment.sse", "openai-node"): set(),
    # SD807: calls on one index fused by index-keyed clients; the AI SDK starts a call per id
    ("openai/whole_calls_same_index.sse", "litellm"): {"SD807"},
    ("openai/whole_calls_same_index.sse", "vercel-ai"): set(),
    # SD808: a reused block index stops (and hands) the first block again
    ("anthropic/block_index_reused.sse", "anthropic-python"): {"SD801", "SD808"},
    ("anthropic/parallel_calls.sse", "anthropic-python"): set(),
    # every profile agrees with the correct client on a clean stream of its provider
    ("openai/one_call.sse", "openai-python"): set(),
    ("openai/one_call.sse", "pydantic-ai"): set(),
    ("openai/one_call.sse", "naive-next-index"): set(),
    ("openai/one_call.sse", "naive-index-concat"): set(),
    ("openai/one_call.sse", "naive-parse-until-valid"): set(),
}
