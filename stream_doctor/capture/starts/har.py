"""A HAR file's start: ``{"log":``."""

from __future__ import annotations

import re

START = re.compile(rb'\A(?:\xef\xbb\xbf)?\s*\{\s*"log"\s*:')


def could_be(head: bytes) -> bool:
    return START.match(head) is not None
