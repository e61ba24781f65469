"""A cassette's start: a top-level ``interactions`` (or Ruby's ``http_interactions``) key, in YAML or JSON, or
LangChain's ``requests:`` list."""

from __future__ import annotations

import re

# vcrpy: a top-level "interactions:" key (vcrpy sorts keys, so it comes first); go-vcr: "---\nversion: N\ninteractions:".
YAML_START = re.compile(
    rb"\A(?:\xef\xbb\xbf)?(?:[ \t]*(?:#[^\n]*)?\r?\n)*(?:---[ \t]*\r?\n)?(?:(?:version|recorded_with):[^\n]*\r?\n)?(?:http_)?interactions:"
)
# LangChain's standard tests: yaml.safe_dump of {"requests": [{body, headers, method, uri}], "responses": [...]}.
LANGCHAIN_START = re.compile(rb"\A(?:\xef\xbb\xbf)?requests:\r?\n- (?:body|headers|method|uri):")
# JSON: "interactions" first (vcrpy's json serializer sorts keys), or after a "version" number and a "metadata"
# object (nested one level at most), as @opencode-ai/http-recorder writes them ({"version": 1, "metadata": {…}, …}).
JSON_START = re.compile(
    rb'\A(?:\xef\xbb\xbf)?\s*\{\s*(?:"version"\s*:\s*\d+\s*,\s*)?(?:"metadata"\s*:\s*\{(?:[^{}]|\{[^{}]*\})*\}\s*,\s*)?'
    rb'"(?:http_)?interactions"\s*:'
)


def could_be(head: bytes) -> bool:
    return any(words.match(head) for words in (YAML_START, JSON_START, LANGCHAIN_START))
