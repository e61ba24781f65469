"""Which request is the application's retry of a turn already answered, so that it is answered as that turn
again, in its own conversation, instead of starting a new one.

A retry sends the very body of the conversation's latest request again. The official SDKs built by
Stainless (anthropic, openai, in Python and TypeScript) say which attempt a request is in the
``x-stainless-retry-count`` header (``_base_client.py``: 0 on the first attempt, then 1, 2 …): where it is
present it decides (0 is a first attempt, however alike the body: fifty clients asking the same question
are fifty conversations). Without it, the same body is a retry only when the conversation's latest
attempt failed as a client sees a failure (an error status, a connection closed or dropped before the
stream's end) and is over: an identical request while that attempt is still answered, or after it
succeeded, is another conversation's first.
"""

from __future__ import annotations

import hashlib
from typing import Callable, Mapping

#: The request header in which the Stainless-built SDKs count their retries.
RETRY_HEADER = "x-stainless-retry-count"


def digest(body: bytes) -> bytes:
    """What identifies a request body: a retry sends the same bytes."""
    return hashlib.blake2b(body, digest_size=16).digest()


def retry_count(headers: Mapping[str, str]) -> int | None:
    """The attempt's retry count where the SDK says it (None: it does not, or not as a number)."""
    value = headers.get(RETRY_HEADER)
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


class Latest:
    """The digest of each conversation's latest request served, and the conversations by it."""

    def __init__(self) -> None:
        self._of: dict[int, bytes] = {}  # conversation number -> its latest request's digest
        self._by: dict[bytes, dict[int, None]] = {}  # digest -> the conversations whose latest it is, oldest first

    def served(self, conversation: int, body: bytes) -> None:
        old = self._of.get(conversation)
        if old is not None:
            self._by[old].pop(conversation, None)
            if not self._by[old]:
                del self._by[old]
        self._of[conversation] = body
        self._by.setdefault(body, {})[conversation] = None

    def retried(self, body: bytes, count: int | None, failed: Callable[[int], bool]) -> int | None:
        """The conversation whose latest request this one retries (the most recent), or None."""
        if count == 0:
            return None
        for conversation in reversed(self._by.get(body, {})):
            if count is not None or failed(conversation):
                return conversation
        return None
